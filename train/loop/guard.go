package loop

import (
	"context"
	"fmt"

	"github.com/stpis/stpis/rundir"
)

// guard applies the rule after the evaluation of pt when the run ends
// with it, and evaluates the restored point.
func (r *Run) guard(ctx context.Context, env Roller, pt *rundir.Point) error {
	g := r.cfg.Guard
	if !g.On || !r.Done() || !pt.HasEval || !r.c.HasInitial || pt.EvalMean >= g.GuardLevel(r.c.InitialEval) || !r.c.HasBest || r.c.BestEval <= pt.EvalMean {
		return nil
	}
	if err := r.opt.MoveTo(r.bestX); err != nil {
		return fmt.Errorf("train: guard: %w", err)
	}
	r.norm = r.bestNorm.Clone()
	r.c.BackOffs++
	pt.BackedOff, pt.GuardEval = true, pt.EvalMean
	// The best point evaluated afresh is the run's final evaluation, not
	// a new best: the same point on other seeds (x_0's, perhaps) would
	// otherwise raise the best by noise.
	best := r.c.BestEval
	_, err := r.evaluate(ctx, env, pt)
	r.c.BestEval = best
	return err
}
