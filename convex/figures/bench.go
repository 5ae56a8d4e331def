package figures

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/stpis/stpis/convex"
)

// BenchResult is the benchmark's JSON line. StpGap and StpisGap are the
// median final f − f* over runs. Speedup is defined on the pointwise
// median curves (median over runs at each iteration): the evaluations
// STP's median curve needs to first reach its own final value, divided by
// the evaluations STP_IS's median curve needs to reach that same value.
type BenchResult struct {
	Problem   string   `json:"problem"`
	N         int      `json:"n"`
	M         int      `json:"m"`
	StpGap    float64  `json:"stp_gap"`
	StpisGap  float64  `json:"stpis_gap"`
	Speedup   *float64 `json:"speedup"`
	StpEvals  int64    `json:"stp_evals_to_gap"`
	StpisEval int64    `json:"stpis_evals_to_gap"`
	Runs      int      `json:"runs"`
	Iters     int      `json:"iterations"`
	Seconds   float64  `json:"seconds"`
}

// benchProblem is what bench/convex_baselines.py reads.
type benchProblem struct {
	M         int       `json:"m"`
	N         int       `json:"n"`
	A         []float64 `json:"a_row_major"`
	Y         []float64 `json:"y"`
	Lambda    float64   `json:"lambda"`
	FStar     float64   `json:"fstar"`
	TargetGap float64   `json:"target_gap"`
	F0        float64   `json:"f0"`
}

// Bench runs the `make bench-convex` benchmark: synthetic ridge, m = 100,
// n = 1000, 15000 iterations, cfg.Runs runs of STP and STP_IS on one data
// set (seed cfg.Seed) with different method seeds, with the paper's probe
// t = 1e-4 unless cfg.T is set. It writes
// bench_problem.json (A, y, λ, f*, the target gap) and bench_result.json
// into cfg.Out, prints a table to cfg.Log and returns the result.
func Bench(ctx context.Context, cfg Config) (*BenchResult, error) {
	cfg.defaults()
	start := time.Now()
	const m, n, iters = 100, 1000, 15000
	t := cfg.T
	if t == 0 {
		t = 1e-4 // the paper's, as in the figures measured before ProbeT
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, errf("%w", err)
	}
	p := convex.SyntheticRidge(m, n, cfg.Seed)
	_, fs, err := p.Solve(ctx)
	if err != nil {
		return nil, errf("%w", err)
	}
	bands := make([]band, len(methods))
	finals := make([][]float64, len(methods))
	for mi, me := range methods {
		curves := make([][]float64, cfg.Runs)
		var evals []int64
		for r := range cfg.Runs {
			tr, err := RunSTP(ctx, p, me.sampling, iters, t, runSeed(cfg.Seed, r, mi))
			if err != nil {
				return nil, errf("bench %s run %d: %w", me.name, r, err)
			}
			c := gapCurve(tr.F, fs)
			// The final value from scratch, not from the cursor.
			curves[r], evals = c, tr.Evals
			finals[mi] = append(finals[mi], c[len(c)-1])
		}
		bands[mi] = summarize(curves, evals)
	}
	median := func(v []float64) float64 {
		v = slices.Sorted(slices.Values(v))
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	res := &BenchResult{Problem: "ridge-synthetic", N: n, M: m, Runs: cfg.Runs, Iters: iters,
		StpGap: median(finals[0]), StpisGap: median(finals[1])}
	target := bands[0].Median[len(bands[0].Median)-1]
	res.StpEvals = EvalsToTarget(bands[0].Median, bands[0].Evals, target)
	res.StpisEval = EvalsToTarget(bands[1].Median, bands[1].Evals, target)
	if res.StpEvals > 0 && res.StpisEval > 0 {
		res.Speedup = finite(float64(res.StpEvals) / float64(res.StpisEval))
	}
	res.Seconds = time.Since(start).Seconds()

	a := make([]float64, m*n)
	for j := range n {
		rows, vals := p.A.Col(j)
		for k, r := range rows {
			a[r*n+j] = vals[k]
		}
	}
	bp := benchProblem{M: m, N: n, A: a, Y: p.Y, Lambda: p.Lambda, FStar: fs, TargetGap: target, F0: p.Func(make([]float64, n))}
	if err := writeJSON(filepath.Join(cfg.Out, "bench_problem.json"), bp); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(cfg.Out, "bench_result.json"), res); err != nil {
		return nil, err
	}
	if _, err := plotCase(cfg.Out, "bench_ridge_synthetic_m100_n1000", "f - f*", bands); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Log, "target gap (STP median final f - f*): %.4g\n", target)
	fmt.Fprintf(cfg.Log, "%-10s %18s %16s\n", "method", "evals to target", "median final gap")
	fmt.Fprintf(cfg.Log, "%-10s %18d %16.4g\n", "STP", res.StpEvals, res.StpGap)
	fmt.Fprintf(cfg.Log, "%-10s %18d %16.4g\n", "STP_IS", res.StpisEval, res.StpisGap)
	return res, nil
}

// JSONLine returns r as one JSON line.
func (r *BenchResult) JSONLine() string {
	b, _ := json.Marshal(r)
	return string(b)
}
