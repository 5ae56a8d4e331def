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
	Out string // output directory, default "out/convex"
	// Data is a directory that holds the LIBSVM files heart_scale,
	// australian_scale and mushrooms; empty reads the copies shipped in
	// the repository and embedded in the binary (package convex/data).
	Data string
	// DataFile, if set, is one LIBSVM file that Figures 2–3 and the table
	// run on instead of the shipped three.
	DataFile string
	// Problem is "ridge" (Figure 2), "svm" (Figure 3) or "" (both) for the
	// LIBSVM cases.
	Problem string
	// Lambda is λ of the LIBSVM problems; 0 means the defaults, 1/m for
	// ridge (the paper's) and 1 for the squared SVM (see convex.NewSVM).
	Lambda float64
	Runs   int    // runs per method and case, default 10
	Seed   uint64 // base seed (default 0)
	// Only selects "figure1", "figure2", "figure3", "table" or "bench";
	// empty runs the three figures.
	Only string
	// T is the finite-difference probe. 0 means ProbeT's t for each
	// problem, except in the benchmark, which keeps the paper's 1e-4 so
	// that its figures stay comparable with earlier ones.
	T float64
	// MaxEvals caps each run of the table (Only "table"); default 3e7.
	MaxEvals int64
	// Log receives one line per finished case; nil discards.
	Log io.Writer
}

func (c *Config) defaults() {
	if c.Out == "" {
		c.Out = "out/convex"
	}
	if c.Runs == 0 {
		c.Runs = 10
	}
	if c.MaxEvals == 0 {
		c.MaxEvals = 3e7
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// probeT returns cfg.T, or ProbeT's t for p when cfg.T is 0.
func (c *Config) probeT(p convex.Problem) float64 {
	if c.T != 0 {
		return c.T
	}
	return ProbeT(p.Func(make([]float64, p.Dim())), p.Lipschitz())
}

// MaxRuns bounds Config.Runs (--runs), as eval and render bound their
// episodes.
const MaxRuns = 1000

// check validates the user-settable fields.
func (c *Config) check() error {
	switch c.Only {
	case "", "figure1", "figure2", "figure3", "table", "bench":
	default:
		return errf("unknown --only %q (figure1, figure2, figure3, table, bench)", c.Only)
	}
	switch c.Problem {
	case "", "ridge", "svm":
	default:
		return errf("unknown --problem %q (ridge or svm)", c.Problem)
	}
	switch {
	case c.Runs < 1 || c.Runs > MaxRuns:
		return errf("--runs %d: want 1..%d", c.Runs, MaxRuns)
	case (c.DataFile != "" || c.Data != "") && (c.Only == "figure1" || c.Only == "bench"):
		flag := "--data"
		if c.DataFile == "" {
			flag = "--data-dir"
		}
		return errf("%s with --only %s: %s reads no data set (its problems are synthetic); %s is for figures 2-3 and the table", flag, c.Only, c.Only, flag)
	case !(c.Lambda >= 0) || math.IsInf(c.Lambda, 0):
		return errf("--lambda %v: want finite and > 0 (0: the default)", c.Lambda)
	case !(c.T >= 0) || math.IsInf(c.T, 0):
		return errf("--t %v: want finite and > 0 (0: ProbeT)", c.T)
	case c.MaxEvals < 3:
		return errf("--max-evals %d: want at least 3", c.MaxEvals)
	}
	return nil
}

// libsvmCase is one LIBSVM problem: a data set with ridge or the SVM.
type libsvmCase struct {
	data, problem string // data set name; "ridge" or "svm"
	p             convex.Problem
	lambda        float64
	m, n          int
}

// libsvmCases reads the data (cfg.DataFile, or the shipped three from
// cfg.Data) and builds the problems cfg.Problem selects, ridge before SVM.
func libsvmCases(cfg Config) ([]libsvmCase, error) {
	files, err := dataFiles(cfg)
	if err != nil {
		return nil, err
	}
	var cases []libsvmCase
	for _, path := range files.paths {
		d, err := files.read(path)
		if err != nil {
			return nil, errf("%w", err)
		}
		switch {
		case d.Rows() == 0 || d.Features == 0:
			return nil, errf("%s: no data (%d rows, %d features)", path, d.Rows(), d.Features)
		case d.Features > convex.MaxSolveDim:
			return nil, errf("%s: %d features, above the exact solve's limit of %d", path, d.Features, convex.MaxSolveDim)
		}
		a := d.Matrix()
		name := filepath.Base(path)
		for _, kind := range []string{"ridge", "svm"} {
			if cfg.Problem != "" && cfg.Problem != kind {
				continue
			}
			c := libsvmCase{data: name, problem: kind, lambda: cfg.Lambda, m: a.M, n: a.N}
			if kind == "ridge" {
				if c.lambda == 0 {
					c.lambda = 1 / float64(a.M)
				}
				c.p, err = convex.NewRidge(a, d.Targets(), c.lambda)
			} else {
				if c.lambda == 0 {
					c.lambda = 1
				}
				var y []float64
				if y, err = d.BinaryLabels(); err == nil {
					c.p, err = convex.NewSVM(a, y, c.lambda)
				}
			}
			if err != nil {
				return nil, errf("%s: %w", path, err)
			}
			cases = append(cases, c)
		}
	}
	return cases, nil
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
	T          float64         `json:"t"`
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
	Cases []CaseSummary `json:"cases"`
}

type caseSpec struct {
	figure, name, problem string
	m, n, iters           int
	// make returns the problem for run r and f*.
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
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Only == "table" {
		_, err := Table(ctx, cfg)
		return nil, err
	}
	var specs []caseSpec
	// With a data file, the default is its two figures.
	want := func(f string) bool { return cfg.Only == f || cfg.Only == "" && (cfg.DataFile == "" || f != "figure1") }
	if want("figure1") {
		for _, mn := range [][2]int{{1000, 10}, {10000, 10}, {100000, 10}, {100, 10}, {100, 100}, {100, 1000}} {
			m, n := mn[0], mn[1]
			specs = append(specs, caseSpec{
				figure: "figure1", name: fmt.Sprintf("ridge_synthetic_m%d_n%d", m, n), problem: "ridge-synthetic",
				m: m, n: n, iters: Iterations(n),
				make: func(r int) (convex.Problem, float64, error) {
					p := convex.SyntheticRidge(m, n, cfg.Seed*1000+uint64(r))
					_, fs, err := p.Solve(ctx)
					return p, fs, err
				},
			})
		}
	}
	if want("figure2") || want("figure3") {
		cases, err := libsvmCases(cfg)
		if err != nil {
			return nil, err
		}
		for _, c := range cases {
			fig := map[string]string{"ridge": "figure2", "svm": "figure3"}[c.problem]
			if !want(fig) {
				continue
			}
			_, fs, err := c.p.Solve(ctx)
			if err != nil {
				return nil, errf("%s %s: %w", c.data, c.problem, err)
			}
			specs = append(specs, caseSpec{
				figure: fig, name: c.problem + "_" + c.data, problem: map[string]string{"ridge": "ridge", "svm": "squared-svm"}[c.problem],
				m: c.m, n: c.n, iters: Iterations(c.n),
				make: func(int) (convex.Problem, float64, error) { return c.p, fs, nil },
			})
		}
	}
	// The output directory is made once the data is read: a refused data
	// file leaves nothing behind.
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, errf("%w", err)
	}
	sum := &Summary{Seed: cfg.Seed, Runs: cfg.Runs}
	for _, sp := range specs {
		cs, err := runCase(ctx, cfg, sp)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Log, "%s %s: STP %s, STP_IS %s (median final %s), speedup %s, %.1fs\n", cs.Figure, cs.Name,
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

// deref formats a figure of the progress line; nil is "n/a" (a speedup
// is nil when STP_IS never reached STP's final value).
func deref(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3g", *p)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errf("%w", err)
	}
	return writeFile(path, string(b)+"\n")
}

func writeFile(path, text string) error {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return errf("%w", err)
	}
	return nil
}

// methods are the two compared samplings.
var methods = []struct {
	name     string
	sampling stp.Sampling
}{{"STP", stp.Uniform}, {"STP_IS", stp.ISL}}

// runSeed is the method seed of run r of method mi.
func runSeed(base uint64, r, mi int) uint64 { return base*7919 + uint64(r)*104729 + uint64(mi) }

// gapCurve returns f − f*, clamped below at 1e-16 for the log axis.
func gapCurve(F []float64, fs float64) []float64 {
	c := make([]float64, len(F))
	for i, f := range F {
		c[i] = math.Max(f-fs, 1e-16)
	}
	return c
}

// runCase runs every method cfg.Runs times on one case. The metric curves
// are f − f*.
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
			cs.T = cfg.probeT(p)
			tr, err := RunSTP(ctx, p, me.sampling, sp.iters, cs.T, runSeed(cfg.Seed, r, mi))
			if err != nil {
				return cs, errf("%s %s run %d: %w", sp.name, me.name, r, err)
			}
			cs.Metric, cs.FStar = "f - f*", finite(fs)
			curves[r], evals = gapCurve(tr.F, fs), tr.Evals
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
			EvalsToSTPFinal: EvalsToTarget(b.Median, b.Evals, target),
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
