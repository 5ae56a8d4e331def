package report

import (
	"image/color"
	"sort"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// restartXYs returns where the runs of group restarted (train.Restart: a
// curve line with "restarted": true), at the training episodes of the
// restart, on the mean curve (x, y) drawn for the group.
func restartXYs(group []Run, x, y []float64) plotter.XYs {
	var out plotter.XYs
	for _, r := range group {
		for _, pt := range r.Curve {
			if !pt.Restarted || len(x) == 0 {
				continue
			}
			ex := float64(pt.Episodes)
			i := sort.SearchFloat64s(x, ex)
			if i == len(x) {
				i--
			}
			out = append(out, plotter.XY{X: ex, Y: y[i]})
		}
	}
	return out
}

// restartMarks draws restarts as open triangles in the group's colour;
// nil when there are none.
func restartMarks(xys plotter.XYs, c color.NRGBA) (*plotter.Scatter, error) {
	if len(xys) == 0 {
		return nil, nil
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: draw.TriangleGlyph{}}
	return s, nil
}
