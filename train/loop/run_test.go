package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

var testInfo = envclient.EnvInfo{RequestedID: "Quad-v0", ResolvedID: "Quad-v0", ObsDim: 3, ActDim: 2, MaxEpisodeSteps: 10}

var testTarget = []float64{0.5, -0.5, 1, 0, -1, 0.25}

// testConfig is method m's tuned entry for the test problem, with the
// adaptive step for a method with step rules.
func testConfig(m string) train.Config {
	c, err := train.Preset(train.PresetTuned, m, "", "Quad-v0")
	if err == nil && c.Step() != "" {
		c, err = train.Preset(train.PresetTuned, m, train.Adaptive, "Quad-v0")
	}
	if err != nil {
		panic(err)
	}
	c.Problem.Seed, c.Problem.Shift, c.Problem.K = 3, 0.5, 2
	c.Limits = train.Limits{MaxEpisodes: 600, EvalEvery: 4, EvalEpisodes: 3}
	if s, ok := c.Method.(*train.STPSettings); ok {
		s.Rate = 1
	}
	return c
}

// st returns c's STP settings, to change them in place.
func st(c train.Config) *train.STPSettings { return c.Method.(*train.STPSettings) }

// roundTrip returns r checkpointed and restored.
func roundTrip(t *testing.T, r *Run) *Run {
	t.Helper()
	blob, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Restore(blob)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// iterated returns a run of cfg after n training iterations on the test
// quadratic.
func iterated(t *testing.T, cfg train.Config, n int) *Run {
	t.Helper()
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	q := &quadRoller{target: testTarget}
	for range n {
		if _, err := r.Iterate(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func TestIterateCountsAndImproves(t *testing.T) {
	for _, m := range train.MethodNames() {
		t.Run(string(m), func(t *testing.T) {
			q := &quadRoller{target: testTarget}
			r, err := New(testConfig(m), testInfo)
			if err != nil {
				t.Fatal(err)
			}
			first, err := r.EvaluateInitial(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			var last rundir.Point
			accepted := map[string]int{}
			for !r.Done() {
				if last, err = r.Iterate(context.Background(), q); err != nil {
					t.Fatal(err)
				}
				accepted[last.Accepted]++
			}
			// STP iterations say which point they kept, and some move; a
			// method without step rules (ARS) keeps none.
			stepped := r.Config().Step() != ""
			if !stepped && (len(accepted) != 1 || accepted[""] == 0) {
				t.Fatalf("%s records accepted points %v, want none", m, accepted)
			}
			if stepped && (accepted[""] > 0 || accepted["plus"]+accepted["minus"] == 0 || accepted["center"] == 0) {
				t.Fatalf("accepted points %v: want plus/minus and center only, some of each", accepted)
			}
			c := r.Progress()
			if c.Episodes+c.EvalEpisodes != q.episodes {
				t.Fatalf("training %d + evaluation %d episodes, but the roller ran %d", c.Episodes, c.EvalEpisodes, q.episodes)
			}
			// The budget is a cap: the last iteration that fits is run.
			per := r.opt.Size() * r.cfg.Problem.K
			if c.Episodes > r.cfg.Limits.MaxEpisodes || c.Episodes+per <= r.cfg.Limits.MaxEpisodes {
				t.Fatalf("%d episodes used of a budget of %d, %d per iteration", c.Episodes, r.cfg.Limits.MaxEpisodes, per)
			}
			if c.EvalEpisodes != c.Evals*3 {
				t.Fatalf("eval episodes %d for %d evaluations of 3", c.EvalEpisodes, c.Evals)
			}
			if c.EnvSteps != int64(10*c.Episodes) {
				t.Fatalf("env steps %d, want 10 per training episode (%d)", c.EnvSteps, c.Episodes)
			}
			// Only training episodes feed the normalizer.
			if got := r.norm.Count; got != uint64(10*c.Episodes) {
				t.Fatalf("normalizer saw %d observations, want %d (training only)", got, 10*c.Episodes)
			}
			// The optimum is 0, so −eval is the gap to it.
			if !last.HasEval || -last.EvalMean > -first.EvalMean/3 {
				t.Fatalf("eval went from %.3f to %.3f: want the gap to the optimum 3x smaller", first.EvalMean, last.EvalMean)
			}
		})
	}
}

func TestBudgetBelowOneIteration(t *testing.T) {
	cfg := testConfig("stp")
	cfg.Limits.MaxEpisodes = 5
	if _, err := New(cfg, testInfo); err == nil || !strings.Contains(err.Error(), "max-episodes: 5 is below one iteration's 6 episodes") {
		t.Fatalf("err = %v", err)
	}
}

// The best policy carries the normalizer it was evaluated with, so that it
// replays its evaluation.
func TestBestPolicyReplaysItsEvaluation(t *testing.T) {
	cfg := testConfig("stp_is")
	q := &quadRoller{target: testTarget}
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	var bestNorm policy.Frozen
	for !r.Done() {
		pt, err := r.Iterate(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if pt.HasEval && pt.EvalMean == r.Progress().BestEval {
			bestNorm = r.norm.Snapshot()
		}
	}
	best, ok := r.BestPolicy()
	if !ok {
		t.Fatal("no best policy")
	}
	got, final := best.Normalizer.Snapshot(), r.norm.Snapshot()
	if !slices.Equal(got.Mean, bestNorm.Mean) || !slices.Equal(got.Std, bestNorm.Std) {
		t.Fatalf("best policy's normalizer %v, want the one it was evaluated with %v", got, bestNorm)
	}
	if slices.Equal(got.Mean, final.Mean) {
		t.Fatal("the test needs the normalizer to move after the best evaluation")
	}
	if b := roundTrip(t, r); !slices.Equal(b.bestNorm.Mean, r.bestNorm.Mean) {
		t.Fatal("the best normalizer is not checkpointed")
	}
}

// continuesAs runs a for `to` iterations and c, which has run the first
// `from` of them (its roller qc beside it), for the rest, and fails unless
// c's iterations and final x are a's, to the bit.
func continuesAs(t *testing.T, a *Run, qa Roller, c *Run, qc Roller, from, to int) {
	t.Helper()
	for i := 0; i < to; i++ {
		ra, err := a.Iterate(context.Background(), qa)
		if err != nil {
			t.Fatal(err)
		}
		if i < from {
			continue
		}
		rc, err := c.Iterate(context.Background(), qc)
		if err != nil {
			t.Fatal(err)
		}
		la, _ := json.Marshal(ra)
		lc, _ := json.Marshal(rc)
		sa, sc := ra.Surrogate, rc.Surrogate
		ra.Surrogate, rc.Surrogate = nil, nil
		if ra != rc || !bytes.Equal(la, lc) || (sa == nil) != (sc == nil) {
			t.Fatalf("iteration %d differs after restore:\n%s\n%s", i+1, la, lc)
		}
	}
	xa, xc := a.X(), c.X()
	for i := range xa {
		if math.Float64bits(xa[i]) != math.Float64bits(xc[i]) {
			t.Fatalf("x[%d]: %v vs %v", i, xa[i], xc[i])
		}
	}
}

func TestRestoreValidates(t *testing.T) {
	r := iterated(t, testConfig("stp_is"), 8)
	blob, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, field string }{
		{`"episodes":48`, `"episodes":-12`, "counters"},
		{`"episodes":48`, `"episodes":100000`, "counters.episodes"},
		{`"m2":[`, `"m2":[-1,`, "normalizer"},
	} {
		b := strings.Replace(string(blob), tc.old, tc.new, 1)
		if b == string(blob) {
			t.Fatalf("the state has no %s", tc.old)
		}
		if _, err := Restore([]byte(b)); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s → %s: err = %v, want one naming %s", tc.old, tc.new, err, tc.field)
		}
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		mut   func(*train.Config)
		field string
	}{
		{func(c *train.Config) { c.Method = nil }, "method"},
		{func(c *train.Config) { c.Problem.K = 0 }, "k"},
		{func(c *train.Config) { st(*c).Rate = -1 }, "rate"},
		{func(c *train.Config) { st(*c).Lipschitz = "x" }, "lipschitz"},
		{func(c *train.Config) { c.Problem.ObsNorm = "ars" }, "obs-norm"},
		{func(c *train.Config) { c.Problem.CommonSeeds = "all" }, "common-seeds"},
		{func(c *train.Config) { c.Problem.Shift = math.Inf(1) }, "shift"},
		{func(c *train.Config) { c.Preset = "fast" }, "preset"},
		{func(c *train.Config) { c.Limits.EvalEvery = 0 }, "eval-every"},
	} {
		c := testConfig("stp_is")
		tc.mut(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%s: err = %v", tc.field, err)
		}
	}
}

func TestObsNormNoneKeepsRawObservations(t *testing.T) {
	cfg := testConfig("stp_is")
	cfg.Problem.ObsNorm = train.None
	r := iterated(t, cfg, 5)
	if r.Progress().Episodes == 0 || r.norm.Count != 0 {
		t.Fatalf("after %d episodes the normalizer saw %d observations, want 0", r.Progress().Episodes, r.norm.Count)
	}
	f := r.Policy().Normalizer.Snapshot()
	for j := range f.Mean {
		if f.Mean[j] != 0 || f.Std[j] != 1 {
			t.Fatalf("feature %d: mean %v std %v, want the identity", j, f.Mean[j], f.Std[j])
		}
	}
}

// With EvalSpacing, every method (STP 6 episodes an iteration here, ARS
// 16) is evaluated after each iteration that crosses a multiple of 40
// episodes.
func TestEvalSpacing(t *testing.T) {
	for _, m := range train.MethodNames() {
		cfg := testConfig(m)
		cfg.Limits.EvalSpacing = 40
		r, err := New(cfg, testInfo)
		if err != nil {
			t.Fatal(err)
		}
		q := &quadRoller{target: testTarget}
		prev := 0
		for !r.Done() {
			pt, err := r.Iterate(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if crossed := prev/40 != pt.Episodes/40; pt.HasEval != (crossed || r.Done()) {
				t.Fatalf("%s: iteration %d (%d → %d episodes): evaluated %v", m, pt.Iter, prev, pt.Episodes, pt.HasEval)
			}
			prev = pt.Episodes
		}
		if want := r.Progress().Episodes / 40; r.Progress().Evals < want {
			t.Fatalf("%s: %d evaluations in %d episodes, want at least %d", m, r.Progress().Evals, r.Progress().Episodes, want)
		}
	}
}

// The issue-21 settings drive the same loop: M directions make a batch of
// 2M+1 points (2M with the combined step).
func TestDirectionsCombined(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mut     func(*train.Config)
		size    int
		improve bool
	}{
		{"m=3", func(c *train.Config) { st(*c).Directions = 3 }, 7, true},
		{"top", func(c *train.Config) {
			st(*c).Directions, st(*c).Top, st(*c).Step, st(*c).Rate, st(*c).Noise = 4, 2, train.Combined, 0.04, 0.02
		}, 8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig("stp_is")
			tc.mut(&cfg)
			q := &quadRoller{target: testTarget}
			r, err := New(cfg, testInfo)
			if err != nil {
				t.Fatal(err)
			}
			if r.opt.Size() != tc.size {
				t.Fatalf("batch of %d points, want %d", r.opt.Size(), tc.size)
			}
			first, err := r.EvaluateInitial(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			var last rundir.Point
			for !r.Done() {
				if last, err = r.Iterate(context.Background(), q); err != nil {
					t.Fatal(err)
				}
			}
			c := r.Progress()
			if c.Episodes != c.Iter*tc.size*cfg.Problem.K || c.Episodes+c.EvalEpisodes != q.episodes {
				t.Fatalf("%d episodes in %d iterations of %d points × K %d (roller ran %d)", c.Episodes, c.Iter, tc.size, cfg.Problem.K, q.episodes)
			}
			if tc.improve && -last.EvalMean > -first.EvalMean/3 {
				t.Fatalf("eval went from %.3f to %.3f", first.EvalMean, last.EvalMean)
			}
			roundTrip(t, r)
		})
	}
}

func TestCommonSeeds(t *testing.T) {
	const k, m = 2, 3
	for _, tc := range []struct {
		seeds train.Seeds
		// same says whether episode a and b of one batch (point a/k, b/k)
		// must share their seed; the others must differ.
		same func(a, b int) bool
	}{
		{train.OwnSeeds, func(a, b int) bool { return a == b }},
		{train.IterationSeeds, func(a, b int) bool { return a%k == b%k }},
		{train.PairSeeds, func(a, b int) bool { return a%k == b%k && a/k/2 == b/k/2 }},
	} {
		t.Run(tc.seeds.String(), func(t *testing.T) {
			cfg := testConfig("stp_is")
			cfg.Problem.K, cfg.Problem.CommonSeeds = k, tc.seeds
			st(cfg).Directions, st(cfg).Top, st(cfg).Step, st(cfg).Rate, st(cfg).Noise = m, 2, train.Combined, 0.04, 0.02
			r, err := New(cfg, testInfo)
			if err != nil {
				t.Fatal(err)
			}
			q := &quadRoller{target: testTarget}
			for range 2 {
				if _, err := r.Iterate(context.Background(), q); err != nil {
					t.Fatal(err)
				}
			}
			if len(q.batches) != 2 || len(q.batches[0]) != 2*m*k {
				t.Fatalf("batches %v, want 2 of %d episodes", q.batches, 2*m*k)
			}
			for _, b := range q.batches {
				for i := range b {
					for j := range b {
						if (b[i] == b[j]) != tc.same(i, j) {
							t.Fatalf("episodes %d and %d: seeds %d and %d (batch %v)", i, j, b[i], b[j], b)
						}
					}
				}
			}
			for _, s := range q.batches[0] {
				if slices.Contains(q.batches[1], s) {
					t.Fatalf("seed %d in both iterations", s)
				}
			}
		})
	}
}
