package loop

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stpis/stpis/train"
)

// distinct is the number of distinct seeds in a batch.
func distinct(b []uint64) int {
	s := slices.Clone(b)
	slices.Sort(s)
	return len(slices.Compact(s))
}

// TestPairAfterHandsOver: an attempt with iteration seeds runs on one start
// state per episode index (2 seeds for K 2) while its episodes are short,
// and on a start state per pair (3 pairs × K 2 = 6 seeds) from the
// iteration after the one whose episodes lasted PairAfter of the horizon;
// the hand-over survives a checkpoint, and a restart takes it back.
func TestPairAfterHandsOver(t *testing.T) {
	cfg := restartConfig()
	cfg.Restart = train.Restart{}
	cfg.Problem.CommonSeeds, cfg.Problem.PairAfter = train.IterationSeeds, 0.5
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	q := &quadRoller{target: testTarget, length: 4} // 0.4 of the horizon of 10
	step := func() {
		t.Helper()
		if _, err := r.Iterate(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	last := func() []uint64 {
		for i := len(q.batches) - 1; i >= 0; i-- {
			if len(q.batches[i]) == 12 {
				return q.batches[i]
			}
		}
		t.Fatal("no training batch")
		return nil
	}
	for range 3 {
		step()
		if n := distinct(last()); n != 2 || r.Progress().Attempt.Paired {
			t.Fatalf("episodes of 0.4 of the horizon: %d distinct seeds, paired %v; want 2, not paired", n, r.Progress().Attempt.Paired)
		}
	}
	q.length = 5 // 0.5: this iteration still shares its seeds, the next pairs them
	step()
	if n := distinct(last()); n != 2 || !r.Progress().Attempt.Paired {
		t.Fatalf("the iteration that reached 0.5: %d distinct seeds, paired %v; want 2, then paired", n, r.Progress().Attempt.Paired)
	}
	r = roundTrip(t, r)
	q.length = 1 // short again: the hand-over holds for the attempt
	step()
	if n := distinct(last()); n != 6 {
		t.Fatalf("after the hand-over and a checkpoint: %d distinct seeds, want 6 (a start state per pair)", n)
	}

	// A restart starts a fresh attempt on iteration seeds.
	cfg.Restart = train.Restart{After: 24, Length: 0.9}
	r, err = New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	q = &quadRoller{target: testTarget, length: 6}
	for !r.Progress().Attempt.Paired {
		step()
	}
	for r.Progress().Attempt.Restarts == 0 {
		step()
	}
	if r.Progress().Attempt.Paired {
		t.Fatal("the attempt after a restart is still handed over")
	}
	step()
	if n := distinct(last()); n != 2 {
		t.Fatalf("the attempt after a restart: %d distinct seeds, want 2 (iteration seeds)", n)
	}
}

// TestPairAfterRefused: the setting needs iteration seeds and a fraction
// of the horizon, and says so by its name.
func TestPairAfterRefused(t *testing.T) {
	for _, tc := range []struct {
		seeds train.Seeds
		after float64
	}{{train.PairSeeds, 0.5}, {train.OwnSeeds, 0.5}, {train.IterationSeeds, 1.5}, {train.IterationSeeds, -0.1}} {
		cfg := restartConfig()
		cfg.Problem.CommonSeeds, cfg.Problem.PairAfter = tc.seeds, tc.after
		var fe *train.FieldError
		if err := cfg.Validate(); !errors.As(err, &fe) || fe.Field != "pair-after" {
			t.Errorf("%s seeds, pair-after %v: err = %v, want one naming pair-after", tc.seeds, tc.after, err)
		}
	}
}
