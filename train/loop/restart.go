package loop

import (
	"fmt"

	"github.com/stpis/stpis/policy"
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
	// MidEpisodes and MidSteps are the run's episode and env-step counts
	// after the attempt's first iteration that reached After/2 episodes;
	// 0 until then (an attempt's first iteration ends past episode 0).
	MidEpisodes int   `json:"mid_episodes,omitempty"`
	MidSteps    int64 `json:"mid_steps,omitempty"`
	// Checked says the attempt passed its check and runs to the end.
	Checked bool `json:"checked,omitempty"`
	// EarlyMidEpisodes, EarlyMidSteps and EarlyChecked are the same for
	// the rule's early check (Restart.Early).
	EarlyMidEpisodes int   `json:"early_mid_episodes,omitempty"`
	EarlyMidSteps    int64 `json:"early_mid_steps,omitempty"`
	EarlyChecked     bool  `json:"early_checked,omitempty"`
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

// checkRestart applies the rule after an iteration and reports whether it
// started a new attempt.
func (r *Run) checkRestart() (bool, error) {
	rule, a := r.cfg.Restart, &r.c.Attempt
	if !rule.On() || a.Checked || r.c.Reached {
		return false, nil
	}
	ok := true
	if rule.Early > 0 && !a.EarlyChecked {
		ok, a.EarlyChecked = r.check(rule.Early, rule.EarlyLength, &a.EarlyMidEpisodes, &a.EarlyMidSteps)
	}
	if ok {
		ok, a.Checked = r.check(rule.After, rule.Length, &a.MidEpisodes, &a.MidSteps)
	}
	if ok {
		return false, nil
	}
	*a = Attempt{Restarts: a.Restarts + 1, Start: r.c.Episodes, StartIter: r.c.Iter}
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

// check is one of the rule's checks, due once the attempt has run after
// episodes: it notes the counts at after/2 in midEps and midSteps, and
// reports whether the attempt may go on (false: give it up) and whether
// the check was made (passed).
func (r *Run) check(after int, length float64, midEps *int, midSteps *int64) (ok, passed bool) {
	ran := r.c.Episodes - r.c.Attempt.Start
	if *midEps == 0 && ran >= after/2 {
		*midEps, *midSteps = r.c.Episodes, r.c.EnvSteps
	}
	if ran < after || r.c.Episodes == *midEps {
		return true, false
	}
	l := float64(r.c.EnvSteps-*midSteps) / float64(r.c.Episodes-*midEps)
	if h := r.horizon(); h <= 0 || l >= length*float64(h) {
		return true, true
	}
	return false, false
}
