package train

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stpis/stpis/internal/fuzzguard"

	"github.com/stpis/stpis/envclient"
)

// fuzzRoller answers any batch, whatever its shapes, with returns and
// observation statistics drawn from each episode's seed: a bridge for a
// restored run of any size.
type fuzzRoller struct{}

func (fuzzRoller) Rollout(_ context.Context, specs []envclient.EpisodeSpec) ([]envclient.EpisodeResult, error) {
	out := make([]envclient.EpisodeResult, len(specs))
	for i, s := range specs {
		r := rand.New(rand.NewPCG(s.Seed, 7))
		mean := make([]float64, s.Cols)
		m2 := make([]float64, s.Cols)
		for j := range mean {
			mean[j], m2[j] = r.NormFloat64(), r.Float64()
		}
		ret := r.NormFloat64()
		out[i] = envclient.EpisodeResult{Return: ret, ShiftedReturn: ret, Length: 10, ObsCount: 10, ObsMean: mean, ObsM2: m2}
	}
	return out, nil
}

// restoreSeeds are checkpoints of short runs of every method, and of a run
// past a restart.
func restoreSeeds(f testing.TB) [][]byte {
	f.Helper()
	var out [][]byte
	for _, tc := range []struct {
		method string
		step   Step
		iters  int
	}{{"stp", Combined, 2}, {"stp_is", Adaptive, 3}, {"stp", Fixed, 1}, {"ars", "", 2}, {"stp_is", Combined, 0}} {
		c := testConfig(tc.method)
		if tc.step != "" && tc.step != Adaptive {
			var err error
			if c, err = Preset(PresetTuned, tc.method, tc.step, "Quad-v0"); err != nil {
				f.Fatal(err)
			}
			c.Problem.Seed, c.Problem.K = 3, 1
			c.Limits = Limits{MaxEpisodes: 2000, EvalEvery: 2, EvalEpisodes: 2}
			c.Guard = Guard{On: true, Drop: 0.5}
		}
		r, err := New(c, testInfo)
		if err != nil {
			f.Fatal(err)
		}
		for range tc.iters {
			if _, err := r.Iterate(context.Background(), fuzzRoller{}); err != nil {
				f.Fatal(err)
			}
		}
		if tc.iters == 3 {
			r.c.Attempt = Attempt{Restarts: 1, Start: r.c.Episodes}
			if r.opt, err = r.newAttemptOptimizer(); err != nil {
				f.Fatal(err)
			}
		}
		b, err := r.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzRestore: a checkpoint's state, however damaged, is refused with an
// error or restores a run that checkpoints again and, when small, runs an
// iteration; never a panic.
func FuzzRestore(f *testing.F) {
	for _, b := range restoreSeeds(f) {
		f.Add(b)
		// The same state with the run's sizes and counters changed.
		s := string(b)
		for _, r := range [][2]string{
			{`"ObsDim":3`, `"ObsDim":4`},
			{`"ActDim":2`, `"ActDim":0`},
			{`"ObsDim":3`, `"ObsDim":3000000000`},
			{`"has_best":true`, `"has_best":false`},
			{`"version":3`, `"version":2`},
			{`"optimizer":"`, `"optimizer":"AAAA`},
		} {
			if m := strings.Replace(s, r[0], r[1], 1); m != s {
				f.Add([]byte(m))
			}
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version":3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzguard.Within(t, 10*time.Second, func() { restoreAndIterate(t, b) })
	})
}

func restoreAndIterate(t *testing.T, b []byte) {
	r, err := Restore(b)
	if err != nil {
		return
	}
	again, err := r.MarshalBinary()
	if err != nil {
		t.Errorf("a restored run does not checkpoint: %v", err)
		return
	}
	if _, err := Restore(again); err != nil {
		t.Errorf("a restored run's checkpoint does not restore: %v", err)
		return
	}
	// An iteration, where it is cheap: the restored state must drive the
	// optimizer without a panic (an error is fine).
	if r.Done() || r.opt.Size()*r.cfg.Problem.K > 512 || len(r.X()) > 1024 || r.info.ObsDim > 256 {
		return
	}
	_, _ = r.Iterate(context.Background(), fuzzRoller{})
}
