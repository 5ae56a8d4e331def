package loop

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/train"
)

// returnConfig is restartConfig with the return check in place of the
// length checks: after 48 episodes (4 iterations of 6 points × K 2), the
// mean return since 24 must reach 0.5 of the threshold 1.
func returnConfig() train.Config {
	cfg := restartConfig()
	cfg.Restart = train.Restart{}
	cfg.RestartReturn = train.ReturnRestart{After: 48, Fraction: 0.5}
	cfg.Limits.Threshold, cfg.Limits.HasThreshold = 1, true
	cfg.Limits.EvalEvery = 1000 // no evaluation before the end: every episode rolled is a training one
	return cfg
}

// recorder keeps the returns of the episodes it rolls, in order.
type recorder struct {
	q       *quadRoller
	returns []float64
}

func (r *recorder) Rollout(ctx context.Context, specs []envclient.EpisodeSpec) ([]envclient.EpisodeResult, error) {
	out, err := r.q.Rollout(ctx, specs)
	for _, e := range out {
		r.returns = append(r.returns, e.Return)
	}
	return out, err
}

// TestReturnRestartGivesUpLowReturns: returns below zero never reach half
// the threshold, so every attempt is given up at its check, which reports
// the mean of the training returns it read (the attempt's episodes since
// half the check) and starts a fresh attempt.
func TestReturnRestartGivesUpLowReturns(t *testing.T) {
	r, err := New(returnConfig(), testInfo)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{q: &quadRoller{target: testTarget}}
	var restarts []int
	for range 12 {
		start := r.Progress().Attempt.Start
		pt, err := r.Iterate(context.Background(), rec)
		if err != nil {
			t.Fatal(err)
		}
		if !pt.Restarted {
			continue
		}
		restarts = append(restarts, pt.Episodes)
		c := pt.RestartCheck
		if !c.Return || c.After != 48 || c.Fraction != 0.5 || c.Threshold != 1 || c.From != start+24 || c.To != start+48 {
			t.Fatalf("restart at %d: check %+v, want the return check over episodes %d-%d", pt.Episodes, c, start+25, start+48)
		}
		sum := 0.0
		for _, v := range rec.returns[c.From:c.To] {
			sum += v
		}
		if want := sum / float64(c.To-c.From); math.Abs(c.MeanReturn-want) > 1e-12*math.Abs(want) || !(c.MeanReturn < 0.5) {
			t.Fatalf("restart at %d: mean return %v, want the window's %v, under 0.5", pt.Episodes, c.MeanReturn, want)
		}
	}
	if len(restarts) != 3 || restarts[0] != 48 || restarts[1] != 96 || r.Progress().Attempt.Restarts != 3 {
		t.Fatalf("restarts at %v (%d), want at 48, 96 and 144", restarts, r.Progress().Attempt.Restarts)
	}
}

// TestReturnRestartKeepsHighReturns: returns above half the threshold pass
// the check once, and the run is the run without the rule, to the bit.
func TestReturnRestartKeepsHighReturns(t *testing.T) {
	with := returnConfig()
	without := with
	without.RestartReturn = train.ReturnRestart{}
	a, err := New(with, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(without, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	qa, qb := &quadRoller{target: testTarget, offset: 100}, &quadRoller{target: testTarget, offset: 100}
	for range 12 {
		pa, err := a.Iterate(context.Background(), qa)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := b.Iterate(context.Background(), qb)
		if err != nil {
			t.Fatal(err)
		}
		if pa != pb {
			t.Fatalf("iteration %d differs:\n%+v\n%+v", pa.Iter, pa, pb)
		}
	}
	if c := a.Progress().Attempt; c.Restarts != 0 || !c.Return.Checked || c.Return.Count != 24 {
		t.Fatalf("attempt %+v, want the check passed on 24 returns and no restart", c)
	}
}

// TestReturnRestartResumes: a run restored in the middle of the check's
// window, and one restored after a restart, go on to the bit.
func TestReturnRestartResumes(t *testing.T) {
	for _, from := range []int{3, 6} {
		a, _ := New(returnConfig(), testInfo)
		b, _ := New(returnConfig(), testInfo)
		qa, qb := &quadRoller{target: testTarget}, &quadRoller{target: testTarget}
		for range from {
			if _, err := b.Iterate(context.Background(), qb); err != nil {
				t.Fatal(err)
			}
		}
		continuesAs(t, a, qa, roundTrip(t, b), qb, from, 12)
	}
}

func TestReturnRestartErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		r         train.ReturnRestart
		threshold float64
		has       bool
		want      string
	}{
		{train.ReturnRestart{After: -1, Fraction: 0.3}, 1, true, "must be ≥ 0"},
		{train.ReturnRestart{Fraction: 0.3}, 1, true, "needs its episodes"},
		{train.ReturnRestart{After: 48}, 1, true, "outside (0, 1]"},
		{train.ReturnRestart{After: 48, Fraction: 1.5}, 1, true, "outside (0, 1]"},
		{train.ReturnRestart{After: 48, Fraction: 0.3}, 0, false, "needs a threshold"},
		{train.ReturnRestart{After: 48, Fraction: 0.3}, -5, true, "positive threshold"},
	} {
		cfg := returnConfig()
		cfg.RestartReturn, cfg.Limits.Threshold, cfg.Limits.HasThreshold = tc.r, tc.threshold, tc.has
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "restart-return:") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v, threshold %v: err = %v, want one naming restart-return with %q", tc.r, tc.threshold, err, tc.want)
		}
	}
	cfg := returnConfig()
	cfg.RestartReturn.After = 12 // one iteration: no room for the check's window
	if _, err := New(cfg, testInfo); err == nil || !strings.Contains(err.Error(), "restart-return:") {
		t.Errorf("restart-return 12: err = %v, want one naming restart-return", err)
	}
	for _, v := range []string{"1000", "x0.3", "1000x", "1000xnan", "ax0.3"} {
		if _, err := train.ParseReturnRestart(v); err == nil || !strings.Contains(err.Error(), "restart-return:") {
			t.Errorf("ParseReturnRestart(%q) = %v, want an error naming restart-return", v, err)
		}
	}
	if r, err := train.ParseReturnRestart("1000x0.3"); err != nil || r != (train.ReturnRestart{After: 1000, Fraction: 0.3}) || r.String() != "1000x0.3" {
		t.Errorf("ParseReturnRestart(1000x0.3) = %+v, %v", r, err)
	}
}
