package report

import (
	"fmt"
	"image/color"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// SuccessCurve is the fraction of a group's seeds that had reached the
// threshold against training episodes: a step function given by its
// vertices, from 0 episodes to the most any seed ran.
type SuccessCurve struct {
	X, Y  []float64
	Seeds int
}

// SuccessFraction is the success curve of runs (normally the seeds of one
// env and method): at x episodes, the fraction of all the runs whose episodes
// to the threshold are at most x. A run that never reached the threshold
// counts in the denominator throughout. Each reach time t contributes two
// vertices, (t, fraction before) and (t, fraction after), so that joining
// the vertices with straight lines draws the steps; the curve starts at
// (0, fraction reached at 0 episodes) and ends at the most episodes any run
// ran (EpisodesRun), when that is later than the last step.
func SuccessFraction(runs []Run) SuccessCurve {
	c := SuccessCurve{Seeds: len(runs)}
	if len(runs) == 0 {
		return c
	}
	n := float64(len(runs))
	var reach []float64
	end := 0.0
	for _, r := range runs {
		t, event := SurvivalTime(r)
		end = max(end, t, EpisodesRun(r))
		if event {
			reach = append(reach, t)
		}
	}
	sort.Float64s(reach)
	done := 0
	for done < len(reach) && reach[done] <= 0 {
		done++
	}
	c.X, c.Y = append(c.X, 0), append(c.Y, float64(done)/n)
	for i := done; i < len(reach); {
		t := reach[i]
		c.X, c.Y = append(c.X, t), append(c.Y, float64(i)/n)
		for i < len(reach) && reach[i] == t {
			i++
		}
		c.X, c.Y = append(c.X, t), append(c.Y, float64(i)/n)
	}
	if last := c.X[len(c.X)-1]; end > last {
		c.X, c.Y = append(c.X, end), append(c.Y, c.Y[len(c.Y)-1])
	}
	return c
}

// SuccessPlotFiles draws, per env, the fraction of seeds that had reached the
// threshold against training episodes (SuccessFraction): one step line per
// method label in the colours of Plot, a legend giving "label (N seeds)",
// a dotted line at one half (where a curve crosses it is the row's
// Kaplan–Meier median of `trainer table --summary` when the seeds ran the
// same budget), and the env and threshold as title. Files are named as by
// PlotFiles; it returns the files written.
//
// An env without a threshold (Walker2d) has no success to plot: its runs
// are left out, and Skipped names such envs. No run with a threshold is an
// error.
func SuccessPlotFiles(runs []Run, outPNG string, opts PlotOptions) ([]string, error) {
	var kept []Run
	for _, r := range runs {
		if r.Meta.HasThreshold {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 && len(runs) > 0 {
		return nil, fmt.Errorf("report: success plot: no run has a threshold (%s): nothing reaches one", strings.Join(NoThreshold(runs), ", "))
	}
	return perEnv(kept, outPNG, opts, "success plot", successEnv)
}

// NoThreshold returns the envs of runs that have no threshold, sorted:
// the success plot leaves them out.
func NoThreshold(runs []Run) []string {
	set := map[string]bool{}
	for _, r := range runs {
		if !r.Meta.HasThreshold {
			set[r.Meta.Env] = true
		}
	}
	return sortedKeys(set, envLess)
}

// unitTicks labels the fraction axis from 0 to 1 only, whatever its range:
// the room above 1 holds the legend.
type unitTicks struct{}

// Ticks implements plot.Ticker.
func (unitTicks) Ticks(float64, float64) []plot.Tick {
	return denseTicks{}.Ticks(0, 1)
}

func successEnv(runs []Run, env, out string, opts PlotOptions) error {
	p := newEnvPlot(runs, env)
	if th := thresholdCell(runs, env); th != "—" {
		p.Title.Text += ", threshold " + th
	}
	p.Y.Label.Text = "fraction of seeds that reached the threshold"
	p.X.Tick.Marker = denseTicks{}
	p.Y.Tick.Marker = unitTicks{}
	byLabel, labels := groupByLabel(runs)
	used := map[color.NRGBA]bool{}
	maxX := 0.0
	for _, label := range labels {
		group := byLabel[label]
		c := SuccessFraction(group)
		xy := make(plotter.XYs, len(c.X))
		for i := range c.X {
			xy[i] = plotter.XY{X: c.X[i], Y: c.Y[i]}
			maxX = max(maxX, c.X[i])
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("report: success plot %s %s: %w", env, label, err)
		}
		col := plotColor(label, used)
		used[col] = true
		line.LineStyle.Color = col
		line.LineStyle.Width = vg.Points(1.5)
		name := label
		if opts.Default[env] == label {
			line.LineStyle.Width = vg.Points(3)
			name = "default: " + label
		}
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (%s)", name, plural(len(group), "seed")), line)
	}
	if maxX <= 0 {
		maxX = 1
	}
	half, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0.5}, {X: maxX, Y: 0.5}})
	if err != nil {
		return fmt.Errorf("report: success plot %s: %w", env, err)
	}
	half.LineStyle.Color = color.Gray{Y: 0x30}
	half.LineStyle.Width = vg.Points(1)
	half.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(half)
	p.Legend.Add("half the seeds", half)

	// A little below 0, so that a method that never reached shows above
	// the axis, and room above 1 for the legend.
	p.Y.Min, p.Y.Max = -0.02, 1+0.07*float64(len(labels)+1)
	return savePNG(p, out, opts)
}
