package report

import (
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// PlotOptions configures Plot. The zero value gives a 6x4 inch, 150 dpi
// PNG with a 200-point episode grid.
type PlotOptions struct {
	Width, Height vg.Length // default 6 and 4 inches
	DPI           int       // default 150
	GridPoints    int       // points of the common episode grid; default 200
	// Log, when not nil, gets one "wrote <file>" line per PNG written.
	Log io.Writer
}

func (o PlotOptions) withDefaults() PlotOptions {
	if o.Width <= 0 {
		o.Width = 6 * vg.Inch
	}
	if o.Height <= 0 {
		o.Height = 4 * vg.Inch
	}
	if o.DPI <= 0 {
		o.DPI = 150
	}
	if o.GridPoints < 2 {
		o.GridPoints = 200
	}
	return o
}

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

// Band is a group's mean curve with its ± one std band on a common grid.
type Band struct {
	X, Mean, Std []float64 // grid points where at least one seed is present
	N            []int     // seeds present at each point
}

// series is the curve of one run to average: eval points when it has any,
// else the training reward.
func series(r Run) (xs, ys []float64, eval bool) {
	for _, p := range r.Curve {
		if p.HasEval {
			xs = append(xs, float64(p.Episodes))
			ys = append(ys, p.EvalMean)
		}
	}
	if len(xs) > 0 {
		return xs, ys, true
	}
	for _, p := range r.Curve {
		xs = append(xs, float64(p.Episodes))
		ys = append(ys, p.Reward)
	}
	return xs, ys, false
}

// MeanBand puts the runs' curves (eval reward, or training reward for a run
// with no eval points) on a grid of n points from 0 to the largest episode
// count among them, carrying each run's last value forward (a run that
// stopped early keeps its last value), and averages over the runs present:
// a run is present at x once it has a point at or before x. Std is the
// population standard deviation over the runs present. evalOnly reports
// whether every run contributed eval points.
func MeanBand(runs []Run, n int) (b Band, evalOnly bool) {
	if n < 2 {
		n = 2
	}
	type s struct{ xs, ys []float64 }
	var ss []s
	maxX := 0.0
	evalOnly = true
	for _, r := range runs {
		xs, ys, ev := series(r)
		if len(xs) == 0 {
			continue
		}
		evalOnly = evalOnly && ev
		ss = append(ss, s{xs, ys})
		for _, x := range xs {
			maxX = math.Max(maxX, x)
		}
	}
	if len(ss) == 0 {
		return b, evalOnly
	}
	idx := make([]int, len(ss)) // per series: number of points with x <= grid x
	for g := 0; g < n; g++ {
		x := maxX * float64(g) / float64(n-1)
		if g == n-1 {
			x = maxX
		}
		var sum, sum2 float64
		cnt := 0
		for i, sr := range ss {
			for idx[i] < len(sr.xs) && sr.xs[idx[i]] <= x {
				idx[i]++
			}
			if idx[i] == 0 {
				continue
			}
			v := sr.ys[idx[i]-1]
			sum += v
			sum2 += v * v
			cnt++
		}
		if cnt == 0 {
			continue
		}
		mean := sum / float64(cnt)
		variance := math.Max(0, sum2/float64(cnt)-mean*mean)
		b.X = append(b.X, x)
		b.Mean = append(b.Mean, mean)
		b.Std = append(b.Std, math.Sqrt(variance))
		b.N = append(b.N, cnt)
	}
	return b, evalOnly
}

// Plot draws the reward curves in the layout of the paper's Figure 4:
// training episodes against eval reward, the mean over seeds of each
// (env, label) group as a line with a translucent ± one std band, one fixed
// colour per method, the threshold as a dashed line, a legend, and the env
// (with the resolved env in parentheses) as title. One PNG is written per
// env: outPNG when the runs have one env, else outPNG with "-<env>" inserted
// before the extension (curve.png -> curve-Hopper-v1.png). See PlotFiles for
// the list of files written; opts.Log, if set, gets it too.
func Plot(runs []Run, outPNG string, opts PlotOptions) error {
	_, err := PlotFiles(runs, outPNG, opts)
	return err
}

// PlotFiles is Plot, returning the files written.
func PlotFiles(runs []Run, outPNG string, opts PlotOptions) ([]string, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: plot: no runs")
	}
	opts = opts.withDefaults()
	byEnv := map[string][]Run{}
	envSet := map[string]bool{}
	for _, r := range runs {
		byEnv[r.Meta.Env] = append(byEnv[r.Meta.Env], r)
		envSet[r.Meta.Env] = true
	}
	envs := sortedKeys(envSet, envLess)
	var files []string
	for _, env := range envs {
		out := outPNG
		if len(envs) > 1 {
			out = EnvFileName(outPNG, env)
		}
		if err := plotEnv(byEnv[env], env, out, opts); err != nil {
			return files, err
		}
		files = append(files, out)
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "wrote %s\n", out)
		}
	}
	return files, nil
}

// EnvFileName inserts "-<env>" before the extension of out.
func EnvFileName(out, env string) string {
	if env == "" {
		env = "unknown"
	}
	env = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == os.PathSeparator {
			return '_'
		}
		return r
	}, env)
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + "-" + env + ext
}

func plotEnv(runs []Run, env, out string, opts PlotOptions) error {
	p := plot.New()
	title := env
	if title == "" {
		title = "(unknown env)"
	}
	resolved := map[string]bool{}
	for _, r := range runs {
		if r.Meta.ResolvedEnv != "" && r.Meta.ResolvedEnv != env {
			resolved[r.Meta.ResolvedEnv] = true
		}
	}
	if len(resolved) > 0 {
		title += " (" + strings.Join(sortedKeys(resolved, func(a, b string) bool { return a < b }), ", ") + ")"
	}
	p.Title.Text = title
	p.X.Label.Text = "training episodes"
	// Curves rise from the bottom left: the top left is the emptiest corner.
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(6)
	p.Legend.YOffs = -vg.Points(4)
	p.Legend.ThumbnailWidth = vg.Points(18)
	p.Add(plotter.NewGrid())
	p.Y.Tick.Marker = denseTicks{}

	byLabel := map[string][]Run{}
	labelSet := map[string]bool{}
	for _, r := range runs {
		byLabel[r.Meta.Label] = append(byLabel[r.Meta.Label], r)
		labelSet[r.Meta.Label] = true
	}
	allEval := true
	maxX := 0.0
	used := map[color.NRGBA]bool{}
	for _, label := range sortedKeys(labelSet, labelLess) {
		group := byLabel[label]
		b, evalOnly := MeanBand(group, opts.GridPoints)
		if len(b.X) == 0 {
			continue
		}
		allEval = allEval && evalOnly
		maxX = math.Max(maxX, b.X[len(b.X)-1])
		c := plotColor(label, used)
		used[c] = true

		band := make(plotter.XYs, 0, 2*len(b.X))
		for i := range b.X {
			band = append(band, plotter.XY{X: b.X[i], Y: b.Mean[i] + b.Std[i]})
		}
		for i := len(b.X) - 1; i >= 0; i-- {
			band = append(band, plotter.XY{X: b.X[i], Y: b.Mean[i] - b.Std[i]})
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return fmt.Errorf("report: plot %s %s: %w", env, label, err)
		}
		poly.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x40}
		poly.LineStyle.Width = 0

		mean := make(plotter.XYs, len(b.X))
		for i := range b.X {
			mean[i] = plotter.XY{X: b.X[i], Y: b.Mean[i]}
		}
		line, err := plotter.NewLine(mean)
		if err != nil {
			return fmt.Errorf("report: plot %s %s: %w", env, label, err)
		}
		line.LineStyle.Color = c
		line.LineStyle.Width = vg.Points(1.5)
		p.Add(poly, line)
		p.Legend.Add(fmt.Sprintf("%s (%s)", label, plural(len(group), "seed")), line, poly)
	}
	if allEval {
		p.Y.Label.Text = "evaluation reward"
	} else {
		p.Y.Label.Text = "reward (training reward where no eval)"
	}

	thresholds := map[float64]bool{}
	for _, r := range runs {
		if r.Meta.HasThreshold && !thresholds[r.Meta.Threshold] {
			thresholds[r.Meta.Threshold] = true
			x1 := maxX
			if x1 <= 0 {
				x1 = 1
			}
			tl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: r.Meta.Threshold}, {X: x1, Y: r.Meta.Threshold}})
			if err != nil {
				return fmt.Errorf("report: plot %s threshold: %w", env, err)
			}
			tl.LineStyle.Color = color.Gray{Y: 0x30}
			tl.LineStyle.Width = vg.Points(1)
			tl.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(4)}
			p.Add(tl)
			p.Legend.Add("threshold "+fmtNum(r.Meta.Threshold), tl)
		}
	}

	// Headroom above the highest band or threshold for the legend.
	if span := p.Y.Max - p.Y.Min; span > 0 {
		p.Y.Max += 0.25 * span
	}
	return savePNG(p, out, opts)
}

func savePNG(p *plot.Plot, out string, opts PlotOptions) error {
	c := vgimg.NewWith(vgimg.UseWH(opts.Width, opts.Height), vgimg.UseDPI(opts.DPI),
		vgimg.UseBackgroundColor(color.White))
	p.Draw(draw.New(c))
	if dir := filepath.Dir(out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("report: writing %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: writing %s: %w", out, err)
	}
	return nil
}

// plural is "1 seed", "5 seeds".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

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
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(math.Round(v/step)*step+0, 'f', -1, 64)})
		minor := v + step/2
		if minor <= hi {
			ticks = append(ticks, plot.Tick{Value: minor})
		}
	}
	return ticks
}
