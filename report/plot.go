package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/stpis/stpis/rundir"
)

// PlotOptions configures Plot. The zero value gives a 6x4 inch, 150 dpi
// PNG with a 200-point episode grid.
type PlotOptions struct {
	Width, Height vg.Length // default 6 and 4 inches
	DPI           int       // default 150
	GridPoints    int       // points of the common episode grid; default 200
	// Log, when not nil, gets one "wrote <file>" line per PNG written.
	Log io.Writer
	// Default names, per env, the label of the task's default method: its
	// line is drawn thicker and its legend entry starts "default:".
	Default map[string]string
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
	return perEnv(runs, outPNG, opts, "plot", plotEnv)
}

// perEnv calls draw for each env of runs, in the paper's order, with the
// env's runs and its file: outPNG when the runs have one env, else
// EnvFileName(outPNG, env). It returns the files written.
func perEnv(runs []Run, outPNG string, opts PlotOptions, what string, draw func(runs []Run, env, out string, opts PlotOptions) error) ([]string, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: %s: no runs", what)
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
		if err := draw(byEnv[env], env, out, opts); err != nil {
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
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + "-" + rundir.EnvDir(env) + ext
}

// envTitle is the env, with the resolved envs its runs ran in parentheses:
// "Hopper-v1 (Hopper-v5)".
func envTitle(runs []Run, env string) string {
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
	return title
}

// newEnvPlot is the frame every plot of an env's runs shares: its title,
// the training episodes along x, a grid, and the legend in the top left
// (curves rise from the bottom left: the emptiest corner).
func newEnvPlot(runs []Run, env string) *plot.Plot {
	p := plot.New()
	p.Title.Text = envTitle(runs, env)
	p.X.Label.Text = "training episodes"
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(6)
	p.Legend.YOffs = -vg.Points(4)
	p.Legend.ThumbnailWidth = vg.Points(18)
	p.Add(plotter.NewGrid())
	return p
}

// groupByLabel groups runs by their label, and returns the labels in the
// tables' order.
func groupByLabel(runs []Run) (map[string][]Run, []string) {
	byLabel := map[string][]Run{}
	labelSet := map[string]bool{}
	for _, r := range runs {
		byLabel[r.Meta.Label] = append(byLabel[r.Meta.Label], r)
		labelSet[r.Meta.Label] = true
	}
	return byLabel, sortedKeys(labelSet, labelLess)
}

func plotEnv(runs []Run, env, out string, opts PlotOptions) error {
	p := newEnvPlot(runs, env)
	p.Y.Tick.Marker = denseTicks{}
	byLabel, labels := groupByLabel(runs)
	allEval := true
	maxX := 0.0
	used := map[color.NRGBA]bool{}
	restartsLegend := false
	for _, label := range labels {
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
		name := label
		if opts.Default[env] == label {
			line.LineStyle.Width = vg.Points(3)
			name = "default: " + label
		}
		p.Add(poly, line)
		marks, err := restartMarks(restartXYs(group, b.X, b.Mean), c)
		if err != nil {
			return fmt.Errorf("report: plot %s %s restarts: %w", env, label, err)
		}
		if marks != nil {
			p.Add(marks)
			if !restartsLegend {
				p.Legend.Add("restart (▲ on its method's curve)", marks)
				restartsLegend = true
			}
		}
		what := fmt.Sprintf("mean ± 1 std over %d seeds", len(group))
		if len(group) == 1 {
			what = "1 seed" // no spread to show
		}
		p.Legend.Add(fmt.Sprintf("%s (%s)", name, what), line, poly)
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
