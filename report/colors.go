package report

import (
	"image/color"
	"maps"
	"slices"
)

// methodColors is the fixed palette: the same method has the same colour in
// every plot.
var methodColors = map[string]color.NRGBA{
	"STP fixed":       {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	"STP_IS fixed":    {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	"STP adaptive":    {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	"STP_IS adaptive": {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	"ARS V2-t":        {R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
	"ARS V1-t":        {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
}

// extraColors are used, by a hash of the label, for labels not in
// methodColors, so that they too keep their colour across plots.
var extraColors = []color.NRGBA{
	{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
	{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
	{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
}

// MethodColor returns the fixed colour of a method label.
func MethodColor(label string) color.NRGBA {
	if c, ok := methodColors[label]; ok {
		return c
	}
	h := uint32(2166136261)
	for i := 0; i < len(label); i++ {
		h = (h ^ uint32(label[i])) * 16777619
	}
	return extraColors[h%uint32(len(extraColors))]
}

// plotColor returns label's colour unless another curve of the plot
// already has it; then the first colour of the palettes that none has.
func plotColor(label string, used map[color.NRGBA]bool) color.NRGBA {
	c := MethodColor(label)
	if !used[c] {
		return c
	}
	for _, alt := range extraColors {
		if !used[alt] {
			return alt
		}
	}
	for _, k := range slices.Sorted(maps.Keys(methodColors)) {
		if alt := methodColors[k]; !used[alt] {
			return alt
		}
	}
	return c
}
