package loop

import (
	"fmt"

	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// Attempt is the bookkeeping of a run's current attempt.
type Attempt struct {
	// Restarts is the number of attempts given up so far.
	Restarts int `json:"restarts,omitempty"`
	// Start and StartIter are the run's episode and iteration counts when
	// the attempt began: its start states are drawn from its own episodes
	// and iterations (a checkpoint written before StartIter was has it 0,
	// and resumes drawing from the run's iterations, as it did).
	Start     int `json:"start,omitempty"`
	StartIter int `json:"start_iter,omitempty"`
	// Check is the bookkeeping of the rule's check at After episodes
	// (embedded: its fields are the attempt's, as before there was an
	// early check), Early that of its check at Early episodes.
	Check
	Early Check `json:"early,omitzero"`
}

// Check is the bookkeeping of one of the restart rule's checks.
type Check struct {
	// MidEpisodes and MidSteps are the run's episode and env-step counts
	// after the attempt's first iteration that reached half the check's
	// episodes; 0 until then (an attempt's first iteration ends past
	// episode 0).
	MidEpisodes int   `json:"mid_episodes,omitempty"`
	MidSteps    int64 `json:"mid_steps,omitempty"`
	// Checked says the attempt passed the check.
	Checked bool `json:"checked,omitempty"`
}

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
func (r *Run) newAttemptOptimizer() (train.Optimizer, error) {
	cfg := r.cfg
	cfg.Problem.Seed = r.seed()
	return train.NewOptimizer(cfg, r.lin.Params())
}

// checkRestart applies the rule after an iteration and, when it started a
// new attempt, returns the check that gave the last one up.
func (r *Run) checkRestart() (*rundir.RestartCheck, error) {
	rule, a := r.cfg.Restart, &r.c.Attempt
	if !rule.On() || a.Checked || r.c.Reached {
		return nil, nil
	}
	var fired *rundir.RestartCheck
	if rule.Early > 0 && !a.Early.Checked {
		fired = r.check(rule.Early, rule.EarlyLength, &a.Early)
		if fired != nil {
			fired.Early = true
		}
	}
	if fired == nil {
		fired = r.check(rule.After, rule.Length, &a.Check)
	}
	if fired == nil {
		return nil, nil
	}
	*a = Attempt{Restarts: a.Restarts + 1, Start: r.c.Episodes, StartIter: r.c.Iter}
	opt, err := r.newAttemptOptimizer()
	if err != nil {
		return nil, fmt.Errorf("train: restart: %w", err)
	}
	norm, err := policy.NewNormalizer(r.info.ObsDim)
	if err != nil {
		return nil, fmt.Errorf("train: restart: %w", err)
	}
	r.opt, r.norm = opt, norm
	return fired, nil
}

// check is one of the rule's checks, due once the attempt has run after
// episodes: it notes the counts at after/2 in c, marks c checked when the
// attempt passes, and returns nil while the attempt may go on, else what
// the check measured (give it up).
func (r *Run) check(after int, length float64, c *Check) *rundir.RestartCheck {
	ran := r.c.Episodes - r.c.Attempt.Start
	if c.MidEpisodes == 0 && ran >= after/2 {
		c.MidEpisodes, c.MidSteps = r.c.Episodes, r.c.EnvSteps
	}
	if ran < after || r.c.Episodes == c.MidEpisodes {
		return nil
	}
	l := float64(r.c.EnvSteps-c.MidSteps) / float64(r.c.Episodes-c.MidEpisodes)
	if h := r.horizon(); h <= 0 || l >= length*float64(h) {
		c.Checked = true
		return nil
	}
	return &rundir.RestartCheck{After: after, Length: length, From: c.MidEpisodes, To: r.c.Episodes, Horizon: r.horizon(), MeanLength: l}
}

// validate checks that c's counts lie within the attempt that began at
// episode start, in a run at episodes and steps; field names the check.
func (c Check) validate(field string, start, episodes int, steps int64) error {
	if c.MidEpisodes > 0 && (c.MidEpisodes < start || c.MidEpisodes > episodes || c.MidSteps < 0 || c.MidSteps > steps) {
		return fmt.Errorf("counters.attempt.%s: %d (steps %d) is outside the attempt [%d, %d] (steps ≤ %d)", field, c.MidEpisodes, c.MidSteps, start, episodes, steps)
	}
	return nil
}
