package main

import (
	"io"
	"math"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/tbevents"
	"github.com/stpis/stpis/train"
)

// recorder is the trainer's loop.Recorder: it writes the run directory's
// curve and checkpoints, and each point's scalars to a TensorBoard event
// file in the run's tb/ folder (one file per invocation of the trainer).
// It hands each point to the progress display.
type recorder struct {
	dir      *rundir.Dir
	log      zerolog.Logger
	progress *progress
	// tbPath is this invocation's event file, "" before its first point;
	// tbOff says a write failed, which stops the events but not the run.
	tbPath string
	tbOff  bool
}

// tbDir is the folder of a run directory that holds its TensorBoard event
// files: `tensorboard --logdir runs/` finds every run's.
const tbDir = "tb"

func newRecorder(dir *rundir.Dir, cfg train.Config, log zerolog.Logger, stderr io.Writer) *recorder {
	return &recorder{dir: dir, log: log, progress: newProgress(cfg, log, stderr)}
}

// Record appends p to the curve and shows it.
func (r *recorder) Record(p rundir.Point) error {
	p, err := r.dir.Append(p)
	if err != nil {
		return err
	}
	r.tensorboard(p)
	r.progress.show(p)
	return nil
}

// tensorboard writes p's scalars to this invocation's event file, with the
// training episodes as the step. The file is opened and closed for each
// point, so that the recorder holds no file between points. A failure is
// logged once and ends the events of this invocation; curve.jsonl holds
// every point all the same.
func (r *recorder) tensorboard(p rundir.Point) {
	if r.tbOff {
		return
	}
	if err := r.writeScalars(p); err != nil {
		r.tbOff = true
		r.progress.end()
		r.log.Warn().Err(err).Msg("tensorboard: no more scalars from this invocation; curve.jsonl has every point")
	}
}

// writeScalars appends p to the event file. The first point of an
// invocation creates the file and starts it with a session start at its
// step: TensorBoard then drops what an earlier invocation wrote from that
// step on, which a resumed run repeats from its checkpoint.
func (r *recorder) writeScalars(p rundir.Point) error {
	step := int64(p.Episodes)
	var w *tbevents.Writer
	var err error
	if r.tbPath == "" {
		if w, err = tbevents.Create(filepath.Join(r.dir.Path(), tbDir), tbevents.Options{}); err != nil {
			return err
		}
		r.tbPath = w.Path()
		err = w.Start(step)
	} else if w, err = tbevents.Append(r.tbPath, tbevents.Options{}); err != nil {
		return err
	}
	if s := scalars(p); err == nil && len(s) > 0 {
		err = w.Scalars(step, s)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// scalars are the TensorBoard values of p. Iteration 0 evaluates the
// initial policy and trains nothing: it has the evaluation only.
//
//	train/return          mean raw (unshifted) training return of x_k (curve's reward)
//	train/step_size       the step size the iteration used (curve's step_size)
//	train/episodes_per_s  training episodes per second of this invocation (eps_per_s)
//	eval/mean, eval/std   the evaluation, on the iterations that have one
//	surrogate/rank, surrogate/share, surrogate/random_share
//	                      the surrogate diagnostic, on an evaluation's iteration of a run with a surrogate
//
// A curve point holds no shifted training return (the optimizer's), so
// there is no train/return_shifted.
func scalars(p rundir.Point) []tbevents.Scalar {
	var s []tbevents.Scalar
	if p.Iter > 0 {
		s = append(s, tbevents.Scalar{Tag: "train/return", Value: p.Reward})
		if p.HasShifted {
			s = append(s, tbevents.Scalar{Tag: "train/return_shifted", Value: p.RewardShifted})
		}
		s = append(s,
			tbevents.Scalar{Tag: "train/step_size", Value: p.StepSize},
			tbevents.Scalar{Tag: "train/episodes_per_s", Value: p.EpsPerS})
	}
	if p.HasEval {
		s = append(s, tbevents.Scalar{Tag: "eval/mean", Value: p.EvalMean}, tbevents.Scalar{Tag: "eval/std", Value: p.EvalStd})
	}
	if d := p.Surrogate; d != nil {
		for _, v := range []tbevents.Scalar{{Tag: "surrogate/rank", Value: d.Rank}, {Tag: "surrogate/share", Value: d.Share}, {Tag: "surrogate/random_share", Value: d.RandomShare}} {
			if !math.IsNaN(v.Value) && !math.IsInf(v.Value, 0) {
				s = append(s, v)
			}
		}
	}
	return s
}

// Checkpoint saves the run's state.
// The policy files are stamped with the run's identity (its run.json's
// run_id and seed), so that a reader of the run refuses a policy of
// another.
func (r *recorder) Checkpoint(s rundir.Snapshot) error {
	m := r.dir.Meta()
	var err error
	if s.Policy, err = policy.Stamp(s.Policy, m.RunID, m.Seed); err != nil {
		return err
	}
	if s.Best != nil {
		if s.Best, err = policy.Stamp(s.Best, m.RunID, m.Seed); err != nil {
			return err
		}
	}
	return r.dir.Checkpoint(s)
}
