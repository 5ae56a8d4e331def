package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// denseTicks labels an axis every 1, 2 or 5 × 10^k, with 5 to 10 labels
// (gonum's default labels about 3).
type denseTicks struct{}

// Ticks implements plot.Ticker.
func (denseTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/5)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; (hi-lo)/step <= 10 {
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v, step)})
		minor := v + step/2
		if minor <= hi {
			ticks = append(ticks, plot.Tick{Value: minor})
		}
	}
	return ticks
}

// tickLabel prints v, a multiple of step, with the decimals step has and no
// rounding noise: "0.7", not "0.7000000000000001".
func tickLabel(v, step float64) string {
	scale := math.Pow(10, max(0, -math.Floor(math.Log10(step))))
	return strconv.FormatFloat(math.Round(math.Round(v/step)*step*scale)/scale+0, 'f', -1, 64)
}
