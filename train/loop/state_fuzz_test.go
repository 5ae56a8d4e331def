package loop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stpis/stpis/internal/fuzzguard"
	"github.com/stpis/stpis/train"
)

// restoreSeeds are checkpoints of short runs of every method and step (the
// conformance table's rows, 0 and 2 iterations in), and of a run past a
// restart.
func restoreSeeds(f testing.TB) [][]byte {
	f.Helper()
	var out [][]byte
	type seed struct {
		row     row
		iters   int
		restart bool
	}
	var seeds []seed
	for _, r := range rows(f) {
		seeds = append(seeds, seed{r, 0, false}, seed{r, 2, false})
	}
	seeds = append(seeds, seed{row{"stp_is", train.Adaptive}, 3, true})
	for _, tc := range seeds {
		c, err := train.Preset(train.PresetTuned, tc.row.method, tc.row.step, "Quad-v0")
		if err != nil {
			f.Fatal(err)
		}
		c.Problem.Seed, c.Problem.K = 3, 1
		c.Limits = train.Limits{MaxEpisodes: 2000, EvalEvery: 2, EvalEpisodes: 2}
		c.Guard = train.Guard{On: true, Drop: 0.5}
		r, err := New(c, testInfo)
		if err != nil {
			f.Fatal(err)
		}
		for range tc.iters {
			if _, err := r.Iterate(context.Background(), &quadRoller{}); err != nil {
				f.Fatal(err)
			}
		}
		if tc.restart {
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
	_, _ = r.Iterate(context.Background(), &quadRoller{})
}
