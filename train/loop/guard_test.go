package loop

import (
	"context"
	"github.com/stpis/stpis/train"
	"math"
	"testing"
)

// guardConfig overshoots: the combined step's rate is far too long for
// the test quadratic, so evaluations fall below the initial one.
func guardConfig(g train.Guard) train.Config {
	cfg := testConfig("stp")
	s := st(cfg)
	s.Directions, s.Top, s.Step, s.Rate, s.Noise, s.Basis = 3, 2, train.Combined, 3, 0.02, train.Orthogonal
	cfg.Limits.EvalEvery, cfg.Limits.MaxEpisodes = 1, 240
	cfg.Guard = g
	return cfg
}

func guardRun(t *testing.T, cfg train.Config) *Run {
	t.Helper()
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.EvaluateInitial(context.Background(), &quadRoller{target: testTarget}); err != nil {
		t.Fatal(err)
	}
	return r
}

// Without the guard the overshooting run ends below where it started;
// with it, the last evaluation, under the level, sends x back to the best
// point, and the run ends on that point, evaluated afresh. No evaluation
// before the last backs off.
func TestGuardBacksOffToTheBestPoint(t *testing.T) {
	q := &quadRoller{target: testTarget}
	off := guardRun(t, guardConfig(train.Guard{}))
	for !off.Done() {
		if _, err := off.Iterate(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	e0 := off.Progress().InitialEval
	g := train.Guard{On: true, Drop: 0.5}
	if last := off.Progress().LastEval; last >= g.GuardLevel(e0) {
		t.Fatalf("the unguarded run ends at %v, above the level %v: the test does not overshoot", last, g.GuardLevel(e0))
	}
	on := guardRun(t, guardConfig(g))
	q = &quadRoller{target: testTarget}
	for !on.Done() {
		before := on.Progress().BestEval
		pt, err := on.Iterate(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		// The back-off records the evaluation it acted on, and the best
		// point's fresh evaluation is the final one, not a new best.
		if pt.BackedOff && (pt.GuardEval >= g.GuardLevel(e0) || pt.BestEval != before || on.Progress().BestEval != before) {
			t.Fatalf("back-off: guard_eval %v (level %v), best %v -> %v", pt.GuardEval, g.GuardLevel(e0), before, pt.BestEval)
		}
		if pt.BackedOff && !on.Done() {
			t.Fatalf("iteration %d backed off before the end", pt.Iter)
		}
		if pt.BackedOff {
			x, best := on.X(), on.bestX
			for i := range x {
				if math.Float64bits(x[i]) != math.Float64bits(best[i]) {
					t.Fatalf("iteration %d backed off to x[%d] = %v, not the best point's %v", pt.Iter, i, x[i], best[i])
				}
			}
		}
	}
	c := on.Progress()
	if c.BackOffs != 1 || on.Result().BackOffs != 1 {
		t.Fatalf("%d back-offs (result %d), want 1", c.BackOffs, on.Result().BackOffs)
	}
	if c.LastEval < g.GuardLevel(e0) {
		t.Fatalf("the guarded run ends at %v, below the level %v", c.LastEval, g.GuardLevel(e0))
	}
}

// A restored run continues bit-exactly to its end, the back-off included.
func TestGuardResumes(t *testing.T) {
	cfg := guardConfig(train.Guard{On: true, Drop: 0.5})
	a, b := guardRun(t, cfg), guardRun(t, cfg)
	qa, qb := &quadRoller{target: testTarget}, &quadRoller{target: testTarget}
	for range 12 {
		if _, err := b.Iterate(context.Background(), qb); err != nil {
			t.Fatal(err)
		}
	}
	c := roundTrip(t, b)
	continuesAs(t, a, qa, c, qb, 12, 20)
	if !a.Done() || a.Progress().BackOffs != 1 || c.Progress().BackOffs != 1 {
		t.Fatalf("done %v, back-offs %d and %d, want the run ended with one", a.Done(), a.Progress().BackOffs, c.Progress().BackOffs)
	}
}
