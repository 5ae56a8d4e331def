package train

import (
	"fmt"

	"github.com/stpis/stpis/policy"
)

// Restart is the rule by which a run gives up an attempt that is still on
// the first plateau of a task with early termination (a robot that keeps
// falling) and starts afresh within the same budget. An attempt is checked
// at each third of its first After training episodes: the episodes of
// that third must last on average at least Length of the horizon times
// the fraction of After run so far (a third of it at the first check, all
// of it at the last), or the attempt is replaced by a fresh one (new seed,
// so a new basis, directions and start states; x = 0; an empty
// normalizer). The episode count, the curve, the evaluations and the best
// policy carry over; a run that reached its threshold is never restarted.
// The zero Restart never restarts.
type Restart struct {
	After  int     `json:"after,omitempty"`
	Length float64 `json:"length,omitempty"`
}

// On says whether the rule can restart a run.
func (r Restart) On() bool { return r.After > 0 }

// Attempt is the bookkeeping of a run's current attempt.
type Attempt struct {
	// Restarts is the number of attempts given up so far.
	Restarts int `json:"restarts,omitempty"`
	// Start is the run's episode count when the attempt began.
	Start int `json:"start,omitempty"`
	// Passed is the number of the attempt's checks it has passed.
	Passed int `json:"passed,omitempty"`
	// MarkEpisodes and MarkSteps are the run's episode and env-step counts
	// where the window of the next check begins: the attempt's start, then
	// its last check.
	MarkEpisodes int   `json:"mark_episodes,omitempty"`
	MarkSteps    int64 `json:"mark_steps,omitempty"`
	// Checked says the attempt passed its last check and runs to the end.
	Checked bool `json:"checked,omitempty"`
}

// restartChecks is the number of checks in an attempt's first After
// episodes, one at the end of each equal part.
const restartChecks = 3

// restartStream derives the seeds of the attempts after the first.
const restartStream = 0x72657374 // "rest"

// seed is the seed of the current attempt: the run's for the first, so
// that a run that never restarts is the run without the rule.
func (r *Run) seed() uint64 {
	if r.c.Attempt.Restarts == 0 {
		return r.cfg.Problem.Seed
	}
	return mix(mix(r.cfg.Problem.Seed, restartStream), uint64(r.c.Attempt.Restarts))
}

// horizon is the most steps an episode of the run can last.
func (r *Run) horizon() int {
	h := r.info.MaxEpisodeSteps
	if p := r.cfg.Problem.Horizon; p > 0 && (h <= 0 || p < h) {
		h = p
	}
	return h
}

// newAttemptOptimizer builds the optimizer of the current attempt at the
// run's initial point (r.lin, which training never changes: x = 0).
func (r *Run) newAttemptOptimizer() (Optimizer, error) {
	cfg := r.cfg
	cfg.Problem.Seed = r.seed()
	return newOptimizer(cfg, r.lin.Params())
}

// checkRestart applies the rule after an iteration and reports whether it
// started a new attempt.
func (r *Run) checkRestart() (bool, error) {
	rule, a := r.cfg.Restart, &r.c.Attempt
	if !rule.On() || a.Checked || r.c.Reached {
		return false, nil
	}
	ran, next := r.c.Episodes-a.Start, a.Passed+1
	if ran < next*rule.After/restartChecks || r.c.Episodes == a.MarkEpisodes {
		return false, nil
	}
	length := float64(r.c.EnvSteps-a.MarkSteps) / float64(r.c.Episodes-a.MarkEpisodes)
	bar := rule.Length * float64(next) / restartChecks
	if h := r.horizon(); h <= 0 || length >= bar*float64(h) {
		a.Passed, a.MarkEpisodes, a.MarkSteps = next, r.c.Episodes, r.c.EnvSteps
		a.Checked = next == restartChecks
		return false, nil
	}
	*a = Attempt{Restarts: a.Restarts + 1, Start: r.c.Episodes, MarkEpisodes: r.c.Episodes, MarkSteps: r.c.EnvSteps}
	opt, err := r.newAttemptOptimizer()
	if err != nil {
		return false, fmt.Errorf("train: restart: %w", err)
	}
	norm, err := policy.NewNormalizer(r.info.ObsDim)
	if err != nil {
		return false, fmt.Errorf("train: restart: %w", err)
	}
	r.opt, r.norm = opt, norm
	return true, nil
}
