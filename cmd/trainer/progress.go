package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// progress shows a run's progress: as a one-line bar on a terminal, and off
// a terminal as a JSON log line per iteration (at most one every logEvery,
// and every evaluation).
type progress struct {
	cfg     train.Config
	log     zerolog.Logger
	stderr  io.Writer
	bar     bool
	lastLog time.Time
	// initial is x_0's evaluation, when this invocation saw it.
	initial    float64
	hasInitial bool
	// evals are the best evaluation at each evaluation so far, for the
	// threshold's ETA.
	evals []evalAt
}

// logEvery spaces the progress lines off a terminal.
const logEvery = 5 * time.Second

func newProgress(cfg train.Config, log zerolog.Logger, stderr io.Writer) *progress {
	return &progress{cfg: cfg, log: log, stderr: stderr, bar: isTerminal(stderr) && log.GetLevel() <= zerolog.InfoLevel}
}

// show draws p on the bar or logs it, and says what happened at p: the
// standing shift taken, a restart, the guard backing off, the threshold.
func (r *progress) show(p rundir.Point) {
	max := r.cfg.Limits.MaxEpisodes
	pct := 100 * float64(p.Episodes) / float64(max)
	if p.HasEval {
		r.evals = append(r.evals, evalAt{p.Episodes, p.BestEval})
	}
	l := r.cfg.Limits
	est := estimateETA(r.evals, p.Episodes, max, p.EpsPerS, l.Threshold, l.HasThreshold && l.StopAtThreshold)
	eta := "?"
	if est.hasBudget {
		eta = est.budget.String()
	}
	if r.bar {
		fmt.Fprint(r.stderr, "\r\033[K"+fitLine(r.barFields(p, est), termWidth(r.stderr)))
	} else if p.HasEval || time.Since(r.lastLog) >= logEvery {
		r.lastLog = time.Now()
		ev := r.log.Info().Int("iter", p.Iter).Int("episodes", p.Episodes).Int("max_episodes", max).
			Float64("pct", math.Round(pct*10)/10).Str("eta", eta).Float64("reward", logRound(p.Reward)).
			Float64("best_eval", logRound(p.BestEval)).Float64("step_size", p.StepSize).Float64("p_entropy", logRound(p.PEntropy)).
			Float64("eps_per_s", p.EpsPerS)
		if p.HasEval {
			ev = ev.Float64("eval_mean", logRound(p.EvalMean)).Float64("eval_std", logRound(p.EvalStd))
		}
		if v := est.thresholdValue(); v != "" {
			ev = ev.Str("eta_threshold", v)
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
		restartLine(r.log, r.cfg.Restart, p)
	}
	if p.Iter == 0 && p.HasEval {
		r.initial, r.hasInitial = p.EvalMean, true
	}
	if p.BackedOff {
		r.end()
		r.log.Info().Int("episodes", p.Episodes).Str("guard", r.cfg.Guard.String()).Float64("final_eval", logRound(p.GuardEval)).
			Float64("best_point_eval", logRound(p.EvalMean)).Msg(guardMessage(r.cfg.Guard, p, r.initial, r.hasInitial))
	}
	if p.ReachedAt > 0 {
		r.end()
		r.log.Info().Int("episodes", p.ReachedAt).Float64("eval", p.EvalMean).Float64("threshold", r.cfg.Limits.Threshold).Msg("threshold reached")
	}
}

// restartLine logs a restart, naming the check that gave the attempt up
// and the window it averaged (a point without the check, which the loop
// always gives, names the rule's later check).
func restartLine(log zerolog.Logger, rule train.Restart, p rundir.Point) {
	c := p.RestartCheck
	if c.After == 0 {
		c = rundir.RestartCheck{After: rule.After, Length: rule.Length}
	}
	which := "the check"
	if rule.Early > 0 {
		which = "the later check"
		if c.Early {
			which = "the early check"
		}
	}
	ev := log.Info().Int("episodes", p.Episodes).Str("check", fmt.Sprintf("%dx%g", c.After, c.Length)).Bool("early", c.Early)
	msg := fmt.Sprintf("restart at %d episodes: %s (%dx%g) gave the attempt up", p.Episodes, which, c.After, c.Length)
	if c.To > c.From {
		ev = ev.Int("window_from", c.From).Int("window_to", c.To).Float64("mean_length", logRound(c.MeanLength)).Int("horizon", c.Horizon)
		msg += fmt.Sprintf(": its last %d episodes (%d-%d, since half the check) lasted %.0f steps on average, under %g of the horizon (%.0f of %d)",
			c.To-c.From, c.From+1, c.To, c.MeanLength, c.Length, c.Length*float64(c.Horizon), c.Horizon)
	}
	ev.Msg(msg + "; a fresh attempt takes the rest of the budget")
}

// guardMessage says what the guard did at p: the evaluation it acted on,
// the level it fell below (from the initial evaluation, when known), and
// the best point's fresh evaluation that the run ends on.
func guardMessage(g train.Guard, p rundir.Point, initial float64, hasInitial bool) string {
	below := "below the guard's level"
	if hasInitial {
		below = fmt.Sprintf("below %.1f, the initial evaluation %.1f less %s of its size", g.GuardLevel(initial), initial, g)
		if g.Drop == 0 {
			below = fmt.Sprintf("below the initial evaluation %.1f", initial)
		}
	}
	return fmt.Sprintf("guard: the final evaluation, %.1f, fell %s; the run ends on its best evaluated point (best_policy.json), which evaluated afresh gives %.1f",
		p.GuardEval, below, p.EvalMean)
}

// end ends the progress bar's line.
func (r *progress) end() {
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
	final := "the last evaluation, of the point training ended on"
	if res.BackOffs > 0 {
		final = "the best point evaluated afresh, on other episodes, after the guard sent the run back to it"
	}
	msg := fmt.Sprintf("run finished: %s on %s, best eval %.1f (the highest evaluation during training: best_policy.json), final eval %.1f (%s: policy.json), %s; %d training episodes in %s. Curve %s; plot it with: %s plot %s -o %s; replay the best policy with: %s eval --policy %s",
		cfg.Label, cfg.Problem.Env, res.BestEval, res.FinalEval, final, reached, res.Episodes,
		time.Duration(res.WallS*float64(time.Second)).Round(time.Second).String(), filepath.Join(path, rundir.CurveFile),
		shellQuote(self()), shellQuote(path), shellQuote(filepath.Join(path, "curve.png")), shellQuote(self()), shellQuote(path))
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

// self is the path this trainer was run as (bin/trainer), for the hints
// it prints: they then work when pasted.
func self() string {
	if len(os.Args) > 0 && os.Args[0] != "" {
		return os.Args[0]
	}
	return "trainer"
}

// shellQuote quotes s for a shell where it holds anything but letters,
// digits and . _ - / + = : , @ (a path with a space), so that a hint pastes.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/+=:,@", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// logRound rounds v to 3 decimals for a log line, a non-finite v to 0
// (rundir.round3 rounds the run files' values, which are finite).
func logRound(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}
