package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/tbevents"
	"github.com/stpis/stpis/train"
)

// recorder is the trainer's train.Recorder: it writes the run directory and
// shows progress, as a one-line bar on a terminal, and off a terminal as a
// JSON log line per iteration (at most one every logEvery, and every
// evaluation). It also writes each point's scalars to a TensorBoard event
// file in the run's tb/ folder (one file per invocation of the trainer).
type recorder struct {
	dir     *rundir.Dir
	cfg     train.Config
	log     zerolog.Logger
	stderr  io.Writer
	bar     bool
	lastLog time.Time
	// tbPath is this invocation's event file, "" before its first point;
	// tbOff says a write failed, which stops the events but not the run.
	tbPath string
	tbOff  bool
}

// tbDir is the folder of a run directory that holds its TensorBoard event
// files: `tensorboard --logdir runs/` finds every run's.
const tbDir = "tb"

// logEvery spaces the progress lines off a terminal.
const logEvery = 5 * time.Second

func newRecorder(dir *rundir.Dir, cfg train.Config, log zerolog.Logger, stderr io.Writer) *recorder {
	return &recorder{dir: dir, cfg: cfg, log: log, stderr: stderr, bar: isTerminal(stderr) && log.GetLevel() <= zerolog.InfoLevel}
}

// Record appends p to the curve and shows it.
func (r *recorder) Record(p rundir.Point) error {
	p, err := r.dir.Append(p)
	if err != nil {
		return err
	}
	r.tensorboard(p)
	max := r.cfg.Limits.MaxEpisodes
	pct := 100 * float64(p.Episodes) / float64(max)
	eta := "?"
	if p.EpsPerS > 0 {
		eta = (time.Duration(float64(max-p.Episodes)/p.EpsPerS) * time.Second).Round(time.Second).String()
	}
	if r.bar {
		ev := ""
		if p.HasEval {
			ev = fmt.Sprintf(" eval %.1f±%.1f", p.EvalMean, p.EvalStd)
		}
		is := ""
		if p.PEntropy > 0 {
			is = fmt.Sprintf("  H(p) %.2f", p.PEntropy)
		}
		fmt.Fprintf(r.stderr, "\r\033[K%s it %d  %d/%d episodes (%.0f%%, ETA %s)  train return %.1f%s  best eval %.1f  step %.3g%s  %.1f ep/s",
			r.cfg.Label, p.Iter, p.Episodes, max, pct, eta, p.Reward, ev, p.BestEval, p.StepSize, is, p.EpsPerS)
	} else if p.HasEval || time.Since(r.lastLog) >= logEvery {
		r.lastLog = time.Now()
		ev := r.log.Info().Int("iter", p.Iter).Int("episodes", p.Episodes).Int("max_episodes", max).
			Float64("pct", math.Round(pct*10)/10).Str("eta", eta).Float64("reward", round3(p.Reward)).
			Float64("best_eval", round3(p.BestEval)).Float64("step_size", p.StepSize).Float64("p_entropy", round3(p.PEntropy)).
			Float64("eps_per_s", p.EpsPerS)
		if p.HasEval {
			ev = ev.Float64("eval_mean", round3(p.EvalMean)).Float64("eval_std", round3(p.EvalStd))
		}
		ev.Msg("progress")
	}
	if pr := r.cfg.Problem; p.Standing && pr.TrainingShift(true) != pr.Shift {
		r.end()
		r.log.Info().Float64("shift", pr.Shift).Float64("standing_shift", pr.StandingShift).
			Msgf("x_0 stands (every evaluation episode lasted to the horizon): training returns take the standing shift %g instead of %g, so that ending an episode early does not pay", pr.StandingShift, pr.Shift)
	}
	if p.Restarted {
		r.end()
		rs := r.cfg.Restart
		r.log.Info().Int("episodes", p.Episodes).Int("restart_after", rs.After).Float64("restart_length", rs.Length).
			Msgf("restart: the last %d episodes lasted under %g of the horizon (the first plateau); a fresh attempt takes the rest of the budget", rs.After-rs.After/2, rs.Length)
	}
	if p.BackedOff {
		r.end()
		r.log.Info().Int("episodes", p.Episodes).Str("guard", r.cfg.Guard.String()).
			Msgf("guard: the final evaluation fell more than %s of the initial one's size below it; the run ends on its best evaluated point (best_policy.json), evaluated afresh", r.cfg.Guard)
	}
	if p.ReachedAt > 0 {
		r.end()
		r.log.Info().Int("episodes", p.ReachedAt).Float64("eval", p.EvalMean).Float64("threshold", r.cfg.Limits.Threshold).Msg("threshold reached")
	}
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
		r.end()
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
	return s
}

// Checkpoint saves the run's state.
func (r *recorder) Checkpoint(s rundir.Snapshot) error { return r.dir.Checkpoint(s) }

// end ends the progress bar's line.
func (r *recorder) end() {
	if r.bar {
		fmt.Fprintln(r.stderr)
	}
}

// summarize logs a finished run's result as one line a person can read,
// with the result's fields, and prints result.json's contents on stdout.
func summarize(log zerolog.Logger, stdout io.Writer, cfg train.Config, res rundir.Result, path string) {
	l := cfg.Limits
	reached := "no threshold"
	if l.HasThreshold {
		reached = fmt.Sprintf("threshold %g not reached", l.Threshold)
		if res.Reached {
			reached = fmt.Sprintf("threshold %g reached at %d episodes", l.Threshold, *res.EpisodesToThreshold)
		}
	}
	msg := fmt.Sprintf("run finished: %s on %s, best eval %.1f, final eval %.1f, %s; %d training episodes in %s. Curve %s, policies %s and %s; plot with: trainer plot %s",
		cfg.Label, cfg.Problem.Env, res.BestEval, res.FinalEval, reached, res.Episodes,
		time.Duration(res.WallS*float64(time.Second)).Round(time.Second).String(), filepath.Join(path, rundir.CurveFile),
		filepath.Join(path, rundir.BestFile), filepath.Join(path, rundir.PolicyFile), path)
	ev := log.Info().Float64("best_eval", res.BestEval).Float64("final_eval", res.FinalEval).Bool("reached", res.Reached).
		Int("episodes", res.Episodes).Float64("wall_s", res.WallS)
	if res.Reached {
		ev = ev.Int("episodes_to_threshold", *res.EpisodesToThreshold)
	}
	ev.Msg(msg)
	// The checksums are the file's business, not the reader's.
	var m map[string]any
	b, _ := json.Marshal(res)
	if json.Unmarshal(b, &m) == nil {
		delete(m, "sha256")
		delete(m, "curve_sha256")
		b, _ = json.Marshal(m)
	}
	fmt.Fprintf(stdout, "%s\n", b)
}

func round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}
