package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stpis/stpis/envclient"
)

// quadRoller is a stand-in for the bridge in these unit tests (the real
// bridge is exercised end to end by cmd/trainer's tests): the return of an
// episode is −‖W − W*‖² plus seed-determined noise, each episode lasts 10
// steps, and its observation statistics are a function of the seed.
type quadRoller struct {
	target   []float64
	episodes int
}

func (q *quadRoller) Rollout(_ context.Context, specs []envclient.EpisodeSpec) ([]envclient.EpisodeResult, error) {
	out := make([]envclient.EpisodeResult, len(specs))
	for i, s := range specs {
		q.episodes++
		r := rand.New(rand.NewPCG(s.Seed, 1))
		ret := 0.0
		for j, w := range s.W {
			ret -= (w - q.target[j]) * (w - q.target[j])
		}
		ret += 0.01 * r.NormFloat64()
		mean := make([]float64, s.Cols)
		m2 := make([]float64, s.Cols)
		for j := range mean {
			mean[j] = 1 + r.NormFloat64()
			m2[j] = 9 * r.Float64()
		}
		out[i] = envclient.EpisodeResult{Return: ret, ShiftedReturn: ret - s.Shift*10, Length: 10, ObsCount: 10, ObsMean: mean, ObsM2: m2}
	}
	return out, nil
}

var testInfo = envclient.EnvInfo{RequestedID: "Quad-v0", ResolvedID: "Quad-v0", ObsDim: 3, ActDim: 2, MaxEpisodeSteps: 10}

func testConfig(m Method) Config {
	return Config{Env: "Quad-v0", Method: m, Seed: 3, K: 2, MaxEpisodes: 600, EvalEvery: 4, EvalEpisodes: 3,
		MinHistory: 6, Remeasure: Bool(true), Alpha0: 1, NormalizeBasis: Bool(true), Shift: 0.5}.Defaults()
}

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
func iterated(t *testing.T, cfg Config, n int) *Run {
	t.Helper()
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	q := &quadRoller{target: []float64{0.5, -0.5, 1, 0, -1, 0.25}}
	for range n {
		if _, err := r.Iterate(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func TestIterateCountsAndImproves(t *testing.T) {
	for _, m := range []Method{STP, STPIS, ARS} {
		t.Run(string(m), func(t *testing.T) {
			q := &quadRoller{target: []float64{0.5, -0.5, 1, 0, -1, 0.25}}
			r, err := New(testConfig(m), testInfo)
			if err != nil {
				t.Fatal(err)
			}
			first, err := r.EvaluateInitial(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			var last Record
			accepted := map[string]int{}
			for !r.Done() {
				if last, err = r.Iterate(context.Background(), q); err != nil {
					t.Fatal(err)
				}
				accepted[last.Accepted]++
			}
			// STP iterations say which point they kept, and some move.
			if m == ARS && (len(accepted) != 1 || accepted[""] == 0) {
				t.Fatalf("ARS records accepted points %v, want none", accepted)
			}
			if m != ARS && (accepted[""] > 0 || accepted["plus"]+accepted["minus"] == 0 || accepted["center"] == 0) {
				t.Fatalf("accepted points %v: want plus/minus and center only, some of each", accepted)
			}
			c := r.Counters()
			if c.Episodes+c.EvalEpisodes != q.episodes {
				t.Fatalf("training %d + evaluation %d episodes, but the roller ran %d", c.Episodes, c.EvalEpisodes, q.episodes)
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
			if !last.Evaluated || -last.EvalMean > -first.EvalMean/3 {
				t.Fatalf("eval went from %.3f to %.3f: want the gap to the optimum 3x smaller", first.EvalMean, last.EvalMean)
			}
		})
	}
}

func TestCheckpointContinuesBitExactly(t *testing.T) {
	for _, m := range []Method{STPIS, ARS} {
		t.Run(string(m), func(t *testing.T) {
			target := []float64{0.5, -0.5, 1, 0, -1, 0.25}
			cfg := testConfig(m)
			cfg.MaxEpisodes = 5000
			a, _ := New(cfg, testInfo)
			b, _ := New(cfg, testInfo)
			qa, qb := &quadRoller{target: target}, &quadRoller{target: target}
			for i := 0; i < 10; i++ {
				if _, err := b.Iterate(context.Background(), qb); err != nil {
					t.Fatal(err)
				}
			}
			c := roundTrip(t, b)
			for i := 0; i < 30; i++ {
				ra, err := a.Iterate(context.Background(), qa)
				if err != nil {
					t.Fatal(err)
				}
				if i < 10 {
					continue
				}
				rc, err := c.Iterate(context.Background(), qb)
				if err != nil {
					t.Fatal(err)
				}
				if ra != rc {
					t.Fatalf("iteration %d differs after restore:\n%+v\n%+v", i+1, ra, rc)
				}
			}
			xa, xc := a.X(), c.X()
			for i := range xa {
				if math.Float64bits(xa[i]) != math.Float64bits(xc[i]) {
					t.Fatalf("x[%d]: %v vs %v", i, xa[i], xc[i])
				}
			}
		})
	}
}

func TestSurrogateWindow(t *testing.T) {
	cfg := testConfig(STPIS)
	all := iterated(t, cfg, 15)
	cfg.SurrogateWindow = 9
	r := iterated(t, cfg, 15)
	if w := r.sur.Config().Window; w != 9 {
		t.Fatalf("surrogate window %d, want 9", w)
	}
	// 15 iterations measure 45 points: the windowed surrogate saw the same
	// history but fits its newest 9, so its p differs.
	if r.sur.Len() != all.sur.Len() || r.sur.Len() <= 9 {
		t.Fatalf("histories of %d and %d points, want equal and > 9", r.sur.Len(), all.sur.Len())
	}
	if pa, pw := all.stepper.Probabilities(), r.stepper.Probabilities(); slices.Equal(pa, pw) {
		t.Errorf("p with a window of 9 equals p without: %v", pw)
	}
	c := roundTrip(t, r)
	if w := c.sur.Config().Window; w != 9 || c.Config().SurrogateWindow != 9 {
		t.Errorf("restored window %d (config %d), want 9", w, c.Config().SurrogateWindow)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		mut   func(*Config)
		field string
	}{
		{func(c *Config) { c.Method = "sgd" }, "method"},
		{func(c *Config) { c.K = 0 }, "k"},
		{func(c *Config) { c.Mixing = 2 }, "mix"},
		{func(c *Config) { c.Alpha0 = -1 }, "alpha0"},
		{func(c *Config) { c.Lipschitz = "x" }, "lipschitz"},
		{func(c *Config) { c.ObsNorm = "ars" }, "obs-norm"},
		{func(c *Config) { c.KMax = 1 }, "k-max"},
		{func(c *Config) { c.KMax = 4 }, "k-ramp"},
		{func(c *Config) { c.KRamp = 4 }, "k-ramp"},
		{func(c *Config) { c.Method, c.KMax, c.KRamp = ARS, 4, 1 }, "k-max"},
		{func(c *Config) { c.SurrogateWindow = -1 }, "surrogate-window"},
		{func(c *Config) { c.SurrogateWindow = maxSurrogateWindow + 1 }, "surrogate-window"},
	} {
		c := testConfig(STPIS)
		tc.mut(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%s: err = %v", tc.field, err)
		}
	}
}

func TestObsNormNoneKeepsRawObservations(t *testing.T) {
	cfg := testConfig(STPIS)
	cfg.ObsNorm = ObsNormNone
	r := iterated(t, cfg, 5)
	if r.Counters().Episodes == 0 || r.norm.Count != 0 {
		t.Fatalf("after %d episodes the normalizer saw %d observations, want 0", r.Counters().Episodes, r.norm.Count)
	}
	f := r.Policy().Normalizer.Snapshot()
	for j := range f.Mean {
		if f.Mean[j] != 0 || f.Std[j] != 1 {
			t.Fatalf("feature %d: mean %v std %v, want the identity", j, f.Mean[j], f.Std[j])
		}
	}
}

func TestRestoreCheckpointFromBeforeNewFields(t *testing.T) {
	r, err := New(testConfig(STPIS), testInfo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Iterate(context.Background(), &quadRoller{target: make([]float64, 6)}); err != nil {
		t.Fatal(err)
	}
	blob, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	old := string(blob)
	for _, field := range []string{`"obs_norm":"running",`, `"preset":"tuned",`} {
		stripped := strings.Replace(old, field, "", 1)
		if stripped == old {
			t.Fatalf("the checkpoint has no %s to remove", field)
		}
		old = stripped
	}
	c, err := Restore([]byte(old))
	if err != nil {
		t.Fatalf("restoring a checkpoint from before obs_norm and preset: %v", err)
	}
	if c.Config().ObsNorm != ObsNormRunning || c.Config().Preset != PresetTuned {
		t.Fatalf("obs norm %q, preset %q; want %q, %q", c.Config().ObsNorm, c.Config().Preset, ObsNormRunning, PresetTuned)
	}
}

func TestTunedDefaultsPerTask(t *testing.T) {
	for _, tc := range []struct {
		cfg     Config
		obsNorm string
		alpha0  float64
		k       int
		label   string
	}{
		// Swimmer's α0 is 2 at K = 1 and 1 at any other K.
		{Config{Env: "Swimmer-v1"}, ObsNormNone, 2, 1, "STP_IS adaptive, K=1"},
		{Config{Env: "Swimmer-v5", Method: STP}, ObsNormNone, 2, 1, "STP adaptive, K=1"},
		{Config{Env: "Swimmer-v1", K: 2}, ObsNormNone, 1, 2, "STP_IS adaptive"},
		{Config{Env: "Swimmer-v1", Preset: PresetPaper}, ObsNormRunning, 0.3, 2, "STP_IS adaptive"},
		{Config{Env: "Swimmer-v1", Method: ARS}, ObsNormRunning, 0.3, 1, "ARS V2-t"},
		{Config{Env: "Swimmer-v1", ObsNorm: ObsNormRunning, Alpha0: 0.5, K: 2}, ObsNormRunning, 0.5, 2, "STP_IS adaptive"},
		{Config{Env: "Hopper-v1"}, ObsNormRunning, 0.3, 4, "STP_IS adaptive"},
		// HalfCheetah's α0 was tuned with K = 1: it goes with that K only.
		{Config{Env: "HalfCheetah-v1"}, ObsNormRunning, 1, 1, "STP_IS adaptive, K=1"},
		{Config{Env: "HalfCheetah-v1", K: 4}, ObsNormRunning, 0.3, 4, "STP_IS adaptive"},
		{Config{Env: "HalfCheetah-v1", K: 2, Step: Fixed}, ObsNormRunning, 0.3, 2, "STP_IS fixed, K=2"},
		{Config{Env: "HalfCheetah-v1", Preset: PresetPaper}, ObsNormRunning, 0.3, 4, "STP_IS adaptive"},
		{Config{Env: "HalfCheetah-v1", Method: ARS}, ObsNormRunning, 0.3, 1, "ARS V2-t"},
	} {
		c := tc.cfg.Defaults()
		if c.ObsNorm != tc.obsNorm || c.Alpha0 != tc.alpha0 || c.K != tc.k || c.Label() != tc.label {
			t.Errorf("%+v: obs norm %q, α0 %v, K %d, label %q; want %q, %v, %d, %q",
				tc.cfg, c.ObsNorm, c.Alpha0, c.K, c.Label(), tc.obsNorm, tc.alpha0, tc.k, tc.label)
		}
	}
	// The local Lipschitz estimate is HalfCheetah's tuned choice only; an
	// explicit choice is kept.
	for _, tc := range []struct {
		cfg  Config
		want Lipschitz
	}{
		{Config{Env: "HalfCheetah-v1"}, Local},
		{Config{Env: "HalfCheetah-v1", Lipschitz: Global}, Global},
		{Config{Env: "HalfCheetah-v1", Preset: PresetPaper}, Global},
		{Config{Env: "Hopper-v1"}, Global},
		{Config{Env: "Hopper-v1", Lipschitz: Local}, Local},
	} {
		if got := tc.cfg.Defaults().Lipschitz; got != tc.want {
			t.Errorf("%+v: Lipschitz %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// The preset's boolean defaults live in Defaults, so a library caller gets
// the same run as the CLI; an explicit choice is never overridden.
func TestPresetBooleanDefaults(t *testing.T) {
	for _, tc := range []struct {
		cfg                  Config
		normalize, remeasure bool
	}{
		{Config{Env: "Hopper-v1"}, true, true},
		{Config{Env: "Hopper-v1", Preset: PresetPaper}, false, true},
		{Config{Env: "Hopper-v1", NormalizeBasis: Bool(false), Remeasure: Bool(false)}, false, false},
		{Config{Env: "Hopper-v1", Preset: PresetPaper, NormalizeBasis: Bool(true)}, true, true},
	} {
		c := tc.cfg.Defaults()
		if err := c.Validate(); err != nil {
			t.Fatalf("%+v: %v", tc.cfg, err)
		}
		if *c.NormalizeBasis != tc.normalize || *c.Remeasure != tc.remeasure {
			t.Errorf("%+v: normalize %v, remeasure %v; want %v, %v", tc.cfg, *c.NormalizeBasis, *c.Remeasure, tc.normalize, tc.remeasure)
		}
	}
	for _, tc := range []struct {
		cfg  Config
		want bool
	}{
		{Config{Env: "HalfCheetah-v1"}, true},
		{Config{Env: "HalfCheetah-v1", CommonSeeds: Bool(false)}, false},
		{Config{Env: "HalfCheetah-v1", Preset: PresetPaper}, false},
		{Config{Env: "HalfCheetah-v1", Method: ARS}, false},
		{Config{Env: "Swimmer-v1"}, true},
		{Config{Env: "Hopper-v1"}, false},
	} {
		if got := *tc.cfg.Defaults().CommonSeeds; got != tc.want {
			t.Errorf("%+v: common seeds %v, want %v", tc.cfg, got, tc.want)
		}
	}
	c := Config{Env: "Hopper-v1"}.Defaults()
	c.NormalizeBasis = nil
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "normalize-basis") {
		t.Fatalf("Validate with NormalizeBasis unset: %v, want an error naming normalize-basis", err)
	}
}

// TestObsNormModes checks what feeds the normalizer: every training episode
// (running), only the accepted point's K episodes per iteration (accepted:
// x_k is re-measured, so every iteration has one), or nothing (none).
func TestObsNormModes(t *testing.T) {
	for _, c := range []struct {
		mode    string
		perIter func(k int) uint64
	}{
		{ObsNormRunning, func(k int) uint64 { return uint64(3 * k * 10) }},
		{ObsNormAccepted, func(k int) uint64 { return uint64(k * 10) }},
		{ObsNormNone, func(int) uint64 { return 0 }},
	} {
		cfg := testConfig(STPIS)
		cfg.ObsNorm = c.mode
		r := iterated(t, cfg, 7)
		if got, want := r.norm.Count, 7*c.perIter(cfg.K); got != want {
			t.Errorf("%s: normalizer saw %d observations in 7 iterations, want %d", c.mode, got, want)
		}
	}
	cfg := testConfig(ARS)
	cfg.ObsNorm = ObsNormAccepted
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "obs-norm") {
		t.Errorf("ARS with accepted normalization: %v, want an obs-norm error", err)
	}
}

// TestKRamp checks that K grows by one every KRamp iterations up to KMax.
func TestKRamp(t *testing.T) {
	cfg := testConfig(STP)
	cfg.K, cfg.KMax, cfg.KRamp, cfg.EvalEvery = 1, 3, 2, 1000
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	q := &quadRoller{target: []float64{0.5, -0.5, 1, 0, -1, 0.25}}
	for it := range 8 {
		before := r.Counters().Episodes
		if _, err := r.Iterate(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		// x+, x− and the re-measured x_k, K episodes each.
		if got, want := r.Counters().Episodes-before, 3*min(3, 1+it/2); got != want {
			t.Fatalf("iteration %d ran %d episodes, want %d", it, got, want)
		}
	}
}
