package loop

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// combinedConfig is method's combined step on the quadratic, with set
// applied to its settings.
func combinedConfig(method string, set func(*train.STPSettings)) train.Config {
	c, err := train.Preset(train.PresetTuned, method, train.Combined, "Quad-v0")
	if err != nil {
		panic(err)
	}
	c.Problem.Seed, c.Problem.Shift, c.Problem.K = 3, 0.5, 1
	c.Limits = train.Limits{MaxEpisodes: 5000, EvalEvery: 4, EvalEpisodes: 3}
	set(st(c))
	return c
}

// guidedConfig is the combined step guided by the gradient sum.
func guidedConfig() train.Config {
	return combinedConfig("stp", func(s *train.STPSettings) { s.Guide, s.Directions, s.Top = train.GradientSum, 4, 2 })
}

// learnedConfig is STP_IS with the combined step in the learned basis.
func learnedConfig() train.Config {
	return combinedConfig("stp_is", func(s *train.STPSettings) { s.Basis, s.Directions, s.Top = train.Learned, 3, 2 })
}

// TestGuidedCheckpointResumesBitForBit: the guided step's gradient sum and
// the diagnostic's window (checkpointed mid-window, at iteration 10 of
// windows of 4) resume bit for bit.
func TestGuidedCheckpointResumesBitForBit(t *testing.T) {
	resumesBitForBit(t, guidedConfig())
}

// diagPoints runs cfg on the quadratic for iters iterations and returns
// the surrogate diagnostics its evaluations recorded.
func diagPoints(t *testing.T, cfg train.Config, iters int) []*rundir.SurrogateDiag {
	t.Helper()
	cfg.Limits.MaxEpisodes = 100000
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	q := &quadRoller{target: []float64{5, -5, 10, 0, -10, 2.5}}
	var out []*rundir.SurrogateDiag
	for range iters {
		pt, err := r.Iterate(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if pt.Surrogate != nil && !pt.HasEval {
			t.Fatalf("iteration %d: evaluation %v, diagnostic %v", pt.Iter, pt.HasEval, pt.Surrogate)
		}
		if pt.Surrogate != nil {
			out = append(out, pt.Surrogate)
		}
	}
	return out
}

// TestSurrogateDiagnostic: on a quadratic, the gradient sum's direction
// holds far more of the next gradient estimates' energy than a random
// direction does, and ranks the unseen points well; the fields reach the
// curve line and read back.
func TestSurrogateDiagnostic(t *testing.T) {
	ds := diagPoints(t, guidedConfig(), 40)
	if len(ds) != 10 {
		t.Fatalf("%d diagnostics in 40 iterations evaluated every 4", len(ds))
	}
	var share, random, rank float64
	var n int
	for _, d := range ds[1:] { // the first window opens before any estimate
		if d.Dim != 1 || math.IsNaN(d.Share) || math.IsNaN(d.RandomShare) || math.IsNaN(d.Rank) {
			t.Fatalf("diagnostic %+v", *d)
		}
		if d.Share < 0 || d.Share > 1+1e-12 || d.RandomShare < 0 || d.RandomShare > 1+1e-12 || math.Abs(d.Rank) > 1 {
			t.Fatalf("out of range: %+v", *d)
		}
		share += d.Share
		random += d.RandomShare
		rank += d.Rank
		n++
	}
	share, random, rank = share/float64(n), random/float64(n), rank/float64(n)
	t.Logf("share %.3f, random %.3f, rank %.3f", share, random, rank)
	if share < 3*random || rank < 0.3 {
		t.Fatalf("on a quadratic the guide's share is %.3f against a random direction's %.3f, rank correlation %.3f", share, random, rank)
	}
	line, err := json.Marshal(rundir.Point{Iter: 4, Surrogate: ds[1]})
	if err != nil {
		t.Fatal(err)
	}
	var back rundir.Point
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	if back.Surrogate == nil || *back.Surrogate != *ds[1] {
		t.Fatalf("curve line %s reads back as %+v", line, back.Surrogate)
	}
}

// TestNoDiagnosticWithoutSurrogate: plain STP records none; STP_IS does,
// with the top of p as its favoured subspace once the surrogate sets p.
func TestNoDiagnosticWithoutSurrogate(t *testing.T) {
	c := guidedConfig()
	st(c).Guide = ""
	if ds := diagPoints(t, c, 20); len(ds) != 0 {
		t.Fatalf("plain STP recorded %d diagnostics", len(ds))
	}
	c = testConfig("stp_is")
	st(c).Directions = 2
	ds := diagPoints(t, c, 60)
	last := ds[len(ds)-1]
	if len(ds) == 0 || last.Dim != 2 || math.IsNaN(last.Share) || math.IsNaN(last.Rank) {
		t.Fatalf("STP_IS diagnostics %d, the last %+v", len(ds), last)
	}
}

// TestLearnedBasisResumesBitForBit: the learned basis's gradient PCA and
// the diagnostic's window resume bit for bit.
func TestLearnedBasisResumesBitForBit(t *testing.T) {
	resumesBitForBit(t, learnedConfig())
}

// TestLearnedBasisWeighs: on a quadratic the learned basis makes the
// paper's importance sampling do work: p's entropy falls below 0.95 of
// uniform's once a sum of estimates is in, and the columns of largest p
// hold more of the next gradients' energy than as many random columns.
func TestLearnedBasisWeighs(t *testing.T) {
	energy := learnedWeighs(t, learnedConfig())
	sqrt := learnedConfig()
	st(sqrt).LearnedP = train.PSqrt
	if h := learnedWeighs(t, sqrt); !(h > energy) {
		t.Fatalf("p ∝ √energy has entropy %.3f, p ∝ energy %.3f: want it flatter", h, energy)
	}
}

// learnedWeighs runs cfg on the quadratic, checks TestLearnedBasisWeighs's
// claims and returns p's mean entropy from iteration 9 on.
func learnedWeighs(t *testing.T, cfg train.Config) float64 {
	t.Helper()
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	q := &quadRoller{target: []float64{5, -5, 10, 0, -10, 2.5}}
	var share, random, entropy float64
	var windows, iters int
	for range 60 {
		pt, err := r.Iterate(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if pt.Iter > 8 {
			if !(pt.PEntropy < 0.95*math.Log(6)) {
				t.Fatalf("iteration %d: p's entropy %.3f, uniform's %.3f", pt.Iter, pt.PEntropy, math.Log(6))
			}
			entropy += pt.PEntropy
			iters++
		}
		if d := pt.Surrogate; d != nil && d.Dim > 0 && !math.IsNaN(d.Share) && !math.IsNaN(d.RandomShare) {
			share += d.Share
			random += d.RandomShare
			windows++
		}
	}
	t.Logf("%d windows: share %.3f, random %.3f", windows, share/float64(windows), random/float64(windows))
	if windows < 5 || !(share > 1.2*random) {
		t.Fatalf("%d windows: the top of p holds %.3f of the energy, random columns %.3f", windows, share, random)
	}
	return entropy / float64(iters)
}
