package loop

import (
	"context"
	"fmt"

	"github.com/stpis/stpis/rundir"
)

// Recorder takes a run's progress, as gonum's optimize.Recorder does; the
// trainer's records to a run directory (rundir) and shows progress.
type Recorder interface {
	// Record takes the curve point of an iteration; iteration 0 is the
	// evaluation of the initial policy.
	Record(rundir.Point) error
	// Checkpoint takes the run's state after the last recorded iteration.
	Checkpoint(rundir.Snapshot) error
}

// Options say how Train drives a run.
type Options struct {
	// CheckpointEvery is the number of iterations between checkpoints (a
	// fresh run also checkpoints after its initial evaluation, and every run
	// when it stops).
	CheckpointEvery int
	// StopAfter stops the run after this many iterations of this call (0:
	// no limit), as Stop would.
	StopAfter int
	// Stop, when closed, stops the run at the end of its iteration.
	Stop <-chan struct{}
}

// Train drives r until it is done or asked to stop, recording every
// iteration and checkpointing. A fresh run first evaluates its initial
// policy. It returns stopped = true when it stopped before the run was
// done; the last checkpoint then resumes it.
func (r *Run) Train(ctx context.Context, env Roller, rec Recorder, l Options) (stopped bool, err error) {
	if l.CheckpointEvery < 1 {
		return false, bad("checkpoint-every", "%d must be ≥ 1", l.CheckpointEvery)
	}
	checkpoint := func() error {
		s, err := r.Snapshot()
		if err == nil {
			err = rec.Checkpoint(s)
		}
		return err
	}
	if r.c.Iter == 0 && r.c.Evals == 0 {
		pt, err := r.EvaluateInitial(ctx, env)
		if err != nil {
			return false, err
		}
		if err := rec.Record(pt); err != nil {
			return false, err
		}
		if err := checkpoint(); err != nil {
			return false, err
		}
	}
	for iters := 0; !r.Done(); iters++ {
		select {
		case <-l.Stop:
			stopped = true
		default:
		}
		if stopped || (l.StopAfter > 0 && iters >= l.StopAfter) {
			return true, checkpoint()
		}
		pt, err := r.Iterate(ctx, env)
		if err != nil {
			if ctx.Err() != nil {
				return true, fmt.Errorf("interrupted; the last checkpoint is kept: %w", err)
			}
			return false, err
		}
		if err := rec.Record(pt); err != nil {
			return false, err
		}
		if r.c.Iter%l.CheckpointEvery == 0 {
			if err := checkpoint(); err != nil {
				return false, err
			}
		}
	}
	return false, checkpoint()
}
