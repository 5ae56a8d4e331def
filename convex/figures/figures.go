package figures

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/stpis/stpis/convex"
	"github.com/stpis/stpis/stp"
)

// Config configures Run. Zero values mean the documented defaults.
type Config struct {
	Out  string // output directory, default "out/convex"
	Data string // LIBSVM directory, default "../shared/data"
	Runs int    // runs per method and case, default 10
	Seed uint64 // base seed (default 0)
	// Only selects "figure1", "figure2", "figure3" or "bench"; empty runs
	// the three figures.
	Only string
	// T is the finite-difference probe, default 1e-4 (the paper's).
	T float64
	// Log receives one line per finished case; nil discards.
	Log io.Writer
}

func (c *Config) defaults() {
	if c.Out == "" {
		c.Out = "out/convex"
	}
	if c.Data == "" {
		c.Data = "../shared/data"
	}
	if c.Runs == 0 {
		c.Runs = 10
	}
	if c.T == 0 {
		c.T = 1e-4
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// MethodSummary summarizes the runs of one method on one case. Values are
// the metric (f − f* for ridge, f for SVM). Gaps are nil when not finite.
type MethodSummary struct {
	Method          string   `json:"method"`
	FinalMean       *float64 `json:"final_mean"`
	FinalMedian     *float64 `json:"final_median"`
	FinalBest       *float64 `json:"final_best"`
	FinalWorst      *float64 `json:"final_worst"`
	Evaluations     int64    `json:"evaluations"`
	EvalsToSTPFinal int64    `json:"evals_to_stp_final_median"` // on the median curve; −1: never
}

// CaseSummary is one panel of a figure.
type CaseSummary struct {
	Figure     string          `json:"figure"`
	Name       string          `json:"name"`
	Problem    string          `json:"problem"`
	M          int             `json:"m"`
	N          int             `json:"n"`
	Iterations int             `json:"iterations"`
	Runs       int             `json:"runs"`
	Metric     string          `json:"metric"`
	FStar      *float64        `json:"fstar,omitempty"`
	Lambda     float64         `json:"lambda"`
	Speedup    *float64        `json:"speedup"`
	Methods    []MethodSummary `json:"methods"`
	Plots      []string        `json:"plots"`
	Seconds    float64         `json:"seconds"`
}

// Summary is written as summary.json.
type Summary struct {
	Seed  uint64        `json:"seed"`
	Runs  int           `json:"runs"`
	T     float64       `json:"t"`
	Cases []CaseSummary `json:"cases"`
}

// itersFor is the paper's protocol: 500 iterations for n ≤ 10, 5000 for
// n ≤ 100, 15000 beyond.
func itersFor(n int) int {
	switch {
	case n <= 10:
		return 500
	case n <= 100:
		return 5000
	}
	return 15000
}

type caseSpec struct {
	figure, name, problem string
	m, n, iters           int
	// make returns the problem for run r and f* (NaN: metric is f).
	make func(r int) (convex.Problem, float64, error)
}

// Run reproduces the selected figures into cfg.Out and returns the summary
// (also written to summary.json). With Only == "bench" it runs the
// benchmark instead (see Bench).
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	cfg.defaults()
	if cfg.Only == "bench" {
		_, err := Bench(ctx, cfg)
		return nil, err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, errf("%w", err)
	}
	var specs []caseSpec
	want := func(f string) bool { return cfg.Only == "" || cfg.Only == f }
	switch cfg.Only {
	case "", "figure1", "figure2", "figure3":
	default:
		return nil, errf("unknown --only %q (figure1, figure2, figure3, bench)", cfg.Only)
	}
	if want("figure1") {
		for _, mn := range [][2]int{{1000, 10}, {10000, 10}, {100000, 10}, {100, 10}, {100, 100}, {100, 1000}} {
			m, n := mn[0], mn[1]
			specs = append(specs, caseSpec{
				figure: "figure1", name: fmt.Sprintf("ridge_synthetic_m%d_n%d", m, n), problem: "ridge-synthetic",
				m: m, n: n, iters: itersFor(n),
				make: func(r int) (convex.Problem, float64, error) {
					p := convex.SyntheticRidge(m, n, cfg.Seed*1000+uint64(r))
					_, fs, err := p.Solve(ctx)
					return p, fs, err
				},
			})
		}
	}
	for _, fig := range []string{"figure2", "figure3"} {
		if !want(fig) {
			continue
		}
		for _, ds := range []string{"heart_scale", "australian_scale", "mushrooms"} {
			d, err := convex.ReadLIBSVMFile(filepath.Join(cfg.Data, ds))
			if err != nil {
				return nil, errf("%w", err)
			}
			y, err := d.BinaryLabels()
			if err != nil {
				return nil, errf("%s: %w", ds, err)
			}
			cols := d.Matrix()
			m, n := d.Rows(), d.Features
			spec := caseSpec{figure: fig, m: m, n: n, iters: itersFor(n)}
			if fig == "figure2" {
				p, err := convex.NewRidge(cols, y, 1/float64(m))
				if err != nil {
					return nil, errf("%w", err)
				}
				_, fs, err := p.Solve(ctx)
				if err != nil {
					return nil, errf("%s: %w", ds, err)
				}
				spec.name, spec.problem = "ridge_"+ds, "ridge"
				spec.make = func(int) (convex.Problem, float64, error) { return p, fs, nil }
			} else {
				p, err := convex.NewSVM(cols, y, 1)
				if err != nil {
					return nil, errf("%w", err)
				}
				spec.name, spec.problem = "svm_"+ds, "squared-svm"
				spec.make = func(int) (convex.Problem, float64, error) { return p, math.NaN(), nil }
			}
			specs = append(specs, spec)
		}
	}
	sum := &Summary{Seed: cfg.Seed, Runs: cfg.Runs, T: cfg.T}
	for _, sp := range specs {
		cs, err := runCase(ctx, cfg, sp)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Log, "%s %s: STP %v, STP_IS %v (median final %s), speedup %v, %.1fs\n", cs.Figure, cs.Name,
			deref(cs.Methods[0].FinalMedian), deref(cs.Methods[1].FinalMedian), cs.Metric, deref(cs.Speedup), cs.Seconds)
		sum.Cases = append(sum.Cases, cs)
	}
	name := "summary.json"
	if cfg.Only != "" {
		name = "summary_" + cfg.Only + ".json"
	}
	if err := writeJSON(filepath.Join(cfg.Out, name), sum); err != nil {
		return nil, err
	}
	return sum, nil
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return fmt.Sprintf("%.3g", *p)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errf("%w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return errf("%w", err)
	}
	return nil
}

// methods are the two compared samplings.
var methods = []struct {
	name     string
	sampling stp.Sampling
}{{"STP", stp.Uniform}, {"STP_IS", stp.ISL}}

// runCase runs every method cfg.Runs times on one case. The metric curves
// are f − f* (clamped below at 1e-16 for the log axis) or f.
func runCase(ctx context.Context, cfg Config, sp caseSpec) (CaseSummary, error) {
	start := time.Now()
	cs := CaseSummary{Figure: sp.figure, Name: sp.name, Problem: sp.problem, M: sp.m, N: sp.n, Iterations: sp.iters, Runs: cfg.Runs}
	bands := make([]band, len(methods))
	for mi, me := range methods {
		curves := make([][]float64, cfg.Runs)
		var evals []int64
		for r := range cfg.Runs {
			p, fs, err := sp.make(r)
			if err != nil {
				return cs, errf("%s: %w", sp.name, err)
			}
			switch q := p.(type) {
			case *convex.Ridge:
				cs.Lambda = q.Lambda
			case *convex.SVM:
				cs.Lambda = q.Lambda
			}
			tr, err := RunSTP(ctx, p, me.sampling, sp.iters, cfg.T, cfg.Seed*7919+uint64(r)*104729+uint64(mi))
			if err != nil {
				return cs, errf("%s %s run %d: %w", sp.name, me.name, r, err)
			}
			c := tr.F
			cs.Metric = "f"
			if !math.IsNaN(fs) {
				cs.Metric, cs.FStar = "f - f*", finite(fs)
				c = make([]float64, len(tr.F))
				for i, f := range tr.F {
					c[i] = math.Max(f-fs, 1e-16)
				}
			}
			curves[r], evals = c, tr.Evals
		}
		bands[mi] = summarize(curves, evals)
	}
	target := bands[0].Median[len(bands[0].Median)-1]
	for mi, me := range methods {
		b := bands[mi]
		last := len(b.Mean) - 1
		cs.Methods = append(cs.Methods, MethodSummary{
			Method: me.name, FinalMean: finite(b.Mean[last]), FinalMedian: finite(b.Median[last]),
			FinalBest: finite(b.Best[last]), FinalWorst: finite(b.Wors[last]), Evaluations: b.Evals[last],
			EvalsToSTPFinal: firstBelow(b.Median, b.Evals, target),
		})
	}
	if e0, e1 := cs.Methods[0].EvalsToSTPFinal, cs.Methods[1].EvalsToSTPFinal; e0 > 0 && e1 > 0 {
		cs.Speedup = finite(float64(e0) / float64(e1))
	}
	plots, err := plotCase(cfg.Out, sp.name, cs.Metric, bands)
	if err != nil {
		return cs, err
	}
	cs.Plots = plots
	cs.Seconds = time.Since(start).Seconds()
	return cs, nil
}
