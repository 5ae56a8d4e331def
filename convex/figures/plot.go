package figures

import (
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

var colors = []color.RGBA{{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}}

// plotCase writes <name>_iter.png and <name>_evals.png: the mean metric on
// a log axis with the best–worst band, against iterations and against
// function evaluations.
func plotCase(dir, name, metric string, bands []band) ([]string, error) {
	var files []string
	for _, axis := range []string{"iter", "evals"} {
		p := plot.New()
		p.Title.Text = name
		p.Y.Label.Text = metric
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: 1}
		p.X.Label.Text = map[string]string{"iter": "iterations", "evals": "function evaluations"}[axis]
		for mi, b := range bands {
			xat := func(i int) float64 {
				if axis == "iter" {
					return float64(i)
				}
				return float64(b.Evals[i])
			}
			// Thin the points to at most ~2000 per curve.
			step := max(1, len(b.Mean)/2000)
			var mean, poly plotter.XYs
			for i := 0; i < len(b.Mean); i += step {
				mean = append(mean, plotter.XY{X: xat(i), Y: b.Mean[i]})
				poly = append(poly, plotter.XY{X: xat(i), Y: b.Best[i]})
			}
			for i := (len(b.Mean) - 1) / step * step; i >= 0; i -= step {
				poly = append(poly, plotter.XY{X: xat(i), Y: b.Wors[i]})
			}
			c := colors[mi]
			pg, err := plotter.NewPolygon(poly)
			if err != nil {
				return nil, errf("%w", err)
			}
			pg.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x40} // not premultiplied
			pg.LineStyle.Width = 0
			l, err := plotter.NewLine(mean)
			if err != nil {
				return nil, errf("%w", err)
			}
			l.Color = c
			l.Width = vg.Points(1.5)
			p.Add(pg, l)
			p.Legend.Add(methods[mi].name+" (mean; band: best–worst)", l)
		}
		p.Legend.Top = true
		f := filepath.Join(dir, name+"_"+axis+".png")
		if err := p.Save(6*vg.Inch, 4*vg.Inch, f); err != nil {
			return nil, errf("%w", err)
		}
		files = append(files, filepath.Base(f))
	}
	return files, nil
}
