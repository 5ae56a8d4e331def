package report

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Profile is a performance profile: at each normalized score Tau[i], the
// fraction Frac[i] of a method's runs (every task pooled) scoring above it.
type Profile struct {
	Method string
	Runs   int
	Tau    []float64
	Frac   []float64
}

// Profiles gives every method of runs (MethodKey) its performance profile
// of scores of kind s on the grid tau.
func Profiles(runs []Run, defaults map[string]string, s Score, tau []float64) ([]Profile, error) {
	norm, err := Normalizers(runs)
	if err != nil {
		return nil, err
	}
	_, ms := ScoreMatrices(runs, norm, defaults, s)
	var out []Profile
	for _, m := range ms {
		p := Profile{Method: m.Method, Runs: m.Runs(), Tau: tau, Frac: make([]float64, len(tau))}
		for i, t := range tau {
			p.Frac[i] = ProfileAt(m.Scores, t)
		}
		out = append(out, p)
	}
	return out, nil
}

// profileGrid is 401 points from the lowest normalized score (or 0) to the
// 95th percentile of them all (or 1.25): a few runs far beyond every other
// (a Walker2d run at ten times ARS's median) would squeeze the rest into
// the axis' first tenth.
func profileGrid(runs []Run, defaults map[string]string) ([]float64, error) {
	norm, err := Normalizers(runs)
	if err != nil {
		return nil, err
	}
	lo := 0.0
	var all []float64
	for _, s := range []Score{ScoreFinal, ScoreAUC} {
		_, ms := ScoreMatrices(runs, norm, defaults, s)
		for _, m := range ms {
			for _, task := range m.Scores {
				for _, v := range task {
					lo = math.Min(lo, v)
					all = append(all, v)
				}
			}
		}
	}
	sort.Float64s(all)
	hi := 1.25
	if len(all) > 0 {
		hi = math.Max(hi, all[int(math.Ceil(0.95*float64(len(all))))-1])
	}
	const n = 401
	tau := make([]float64, n)
	for i := range tau {
		tau[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return tau, nil
}

// ProfilePlot draws the performance profiles of runs (Profiles) on the
// final evaluations (solid) and the AUC (dashed), one colour per method,
// with the tasks pooled; a dotted line marks the normalized score 1 (the
// threshold). It writes one PNG, out.
func ProfilePlot(runs []Run, out string, opts PlotOptions) error {
	if len(runs) == 0 {
		return errors.New("report: profile plot: no runs")
	}
	opts = opts.withDefaults()
	tau, err := profileGrid(runs, opts.Default)
	if err != nil {
		return err
	}
	final, err := Profiles(runs, opts.Default, ScoreFinal, tau)
	if err != nil {
		return err
	}
	auc, err := Profiles(runs, opts.Default, ScoreAUC, tau)
	if err != nil {
		return err
	}
	envSet := map[string]bool{}
	for _, r := range runs {
		envSet[r.Meta.Env] = true
	}
	envs := sortedKeys(envSet, envLess)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("performance profile, %s pooled", plural(len(envs), "task"))
	p.X.Label.Text = "normalized score τ (0 start, 1 threshold or ARS's median final)"
	p.Y.Label.Text = "fraction of runs with score > τ"
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.ThumbnailWidth = vg.Points(18)
	p.Add(plotter.NewGrid())
	p.Y.Tick.Marker = unitTicks{}
	used := map[color.NRGBA]bool{}
	colorOf := map[string]color.NRGBA{}
	for _, set := range []struct {
		profiles []Profile
		what     string
		dashes   []vg.Length
	}{{final, "final", nil}, {auc, "AUC", []vg.Length{vg.Points(5), vg.Points(3)}}} {
		for _, pr := range set.profiles {
			c, ok := colorOf[pr.Method]
			if !ok {
				c = plotColor(profileColorKey(pr.Method, runs, opts.Default), used)
				used[c] = true
				colorOf[pr.Method] = c
			}
			xy := make(plotter.XYs, len(pr.Tau))
			for i := range pr.Tau {
				xy[i] = plotter.XY{X: pr.Tau[i], Y: pr.Frac[i]}
			}
			line, err := plotter.NewLine(xy)
			if err != nil {
				return fmt.Errorf("report: profile plot %s: %w", pr.Method, err)
			}
			line.LineStyle.Color = c
			line.LineStyle.Width = vg.Points(1.5)
			if pr.Method == MethodDefault {
				line.LineStyle.Width = vg.Points(3)
			}
			line.LineStyle.Dashes = set.dashes
			p.Add(line)
			p.Legend.Add(fmt.Sprintf("%s, %s (%s)", pr.Method, set.what, plural(pr.Runs, "run")), line)
		}
	}
	one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return fmt.Errorf("report: profile plot: %w", err)
	}
	one.LineStyle.Color = color.Gray{Y: 0x30}
	one.LineStyle.Width = vg.Points(1)
	one.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(one)
	p.Y.Min, p.Y.Max = -0.02, 1+0.06*float64(len(final)+len(auc)+1)
	return savePNG(p, out, opts)
}

// profileColorKey is the label whose fixed colour a method's profile takes:
// ARS's, the default's first label, or the method's own.
func profileColorKey(method string, runs []Run, defaults map[string]string) string {
	switch method {
	case MethodARS:
		return "ARS V2-t"
	case MethodDefault:
		var labels []string
		for _, r := range runs {
			if l := defaults[r.Meta.Env]; l != "" && l == r.Meta.Label {
				labels = append(labels, l)
			}
		}
		sort.Strings(labels)
		if len(labels) > 0 {
			return labels[0]
		}
	}
	return method
}
