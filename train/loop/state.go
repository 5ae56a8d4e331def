package loop

import (
	"encoding/json"
	"fmt"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/train"
)

// state is the serialized state of a Run between iterations.
type state struct {
	Version    int                `json:"version"`
	Config     train.Config       `json:"config"`
	Info       envclient.EnvInfo  `json:"info"`
	Progress   Progress           `json:"counters"`
	Normalizer *policy.Normalizer `json:"normalizer"`
	BestX      []float64          `json:"best_x,omitempty"`
	BestNorm   *policy.Normalizer `json:"best_normalizer,omitempty"`
	Optimizer  []byte             `json:"optimizer"`
}

// stateVersion is the version of the state this build writes and reads.
const stateVersion = 3

// MarshalBinary serializes the run between iterations, as JSON.
func (r *Run) MarshalBinary() ([]byte, error) {
	opt, err := r.opt.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	}
	st := state{Version: stateVersion, Config: r.cfg, Info: r.info, Progress: r.c, Normalizer: r.norm, BestX: r.bestX, BestNorm: r.bestNorm, Optimizer: opt}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	}
	return b, nil
}

// Restore rebuilds a run from MarshalBinary's output, validating every
// field; errors name the field.
func Restore(b []byte) (*Run, error) {
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("train: restore: %w", err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("train: restore: state version %d, this build reads %d", st.Version, stateVersion)
	}
	r, err := New(st.Config, st.Info)
	if err != nil {
		return nil, fmt.Errorf("train: restore: %w", err)
	}
	if err := st.validate(len(r.X())); err != nil {
		return nil, fmt.Errorf("train: restore: %w", err)
	}
	r.c, r.norm, r.bestX, r.bestNorm = st.Progress, st.Normalizer, st.BestX, st.BestNorm
	if r.c.Attempt.Restarts > 0 {
		// The attempt's optimizer, built from its seed (the basis is).
		if r.opt, err = r.newAttemptOptimizer(); err != nil {
			return nil, fmt.Errorf("train: restore: %w", err)
		}
	}
	if err := r.opt.UnmarshalBinary(st.Optimizer); err != nil {
		return nil, fmt.Errorf("train: restore: %w", err)
	}
	return r, nil
}

// validate checks the counters and normalizers of a restored state against
// each other and against the env's sizes.
func (st state) validate(n int) error {
	c := st.Progress
	checkNorm := func(field string, nz *policy.Normalizer) error {
		if nz == nil || nz.Dim() != st.Info.ObsDim || len(nz.M2) != st.Info.ObsDim {
			return fmt.Errorf("%s: want statistics of the env's %d observation features", field, st.Info.ObsDim)
		}
		for j := range nz.Mean {
			if !finite(nz.Mean[j]) || !finite(nz.M2[j]) || nz.M2[j] < 0 {
				return fmt.Errorf("%s: feature %d has mean %v and M2 %v (want finite, M2 ≥ 0)", field, j, nz.Mean[j], nz.M2[j])
			}
		}
		return nil
	}
	switch {
	case c.Iter < 0 || c.Episodes < 0 || c.EnvSteps < 0 || c.EvalEpisodes < 0 || c.Evals < 0 || c.NonFinite < 0:
		return fmt.Errorf("counters: negative in %+v", c)
	case c.Episodes > st.Config.Limits.MaxEpisodes:
		return fmt.Errorf("counters.episodes: %d exceeds the budget %d", c.Episodes, st.Config.Limits.MaxEpisodes)
	case c.ThresholdReachedAt < 0 || c.ThresholdReachedAt > c.Episodes:
		return fmt.Errorf("counters.threshold_reached_at: %d is outside [0, episodes %d]", c.ThresholdReachedAt, c.Episodes)
	case c.Attempt.Restarts < 0:
		return fmt.Errorf("counters.attempt.restarts: %d is negative", c.Attempt.Restarts)
	case c.Attempt.Start < 0 || c.Attempt.Start > c.Episodes:
		return fmt.Errorf("counters.attempt.start: %d is outside [0, episodes %d]", c.Attempt.Start, c.Episodes)
	case c.Attempt.StartIter < 0 || c.Attempt.StartIter > c.Iter:
		return fmt.Errorf("counters.attempt.start_iter: %d is outside [0, iter %d]", c.Attempt.StartIter, c.Iter)
	case c.HasBest != (st.BestX != nil):
		return fmt.Errorf("best_x: has_best is %v but best_x has %d entries", c.HasBest, len(st.BestX))
	case c.HasBest && len(st.BestX) != n:
		return fmt.Errorf("best_x: %d entries, the policy has %d", len(st.BestX), n)
	}
	if err := c.Attempt.Check.validate("mid_episodes", c.Attempt.Start, c.Episodes, c.EnvSteps); err != nil {
		return err
	}
	if err := c.Attempt.Early.validate("early.mid_episodes", c.Attempt.Start, c.Episodes, c.EnvSteps); err != nil {
		return err
	}
	if err := checkNorm("normalizer", st.Normalizer); err != nil {
		return err
	}
	if c.HasBest {
		return checkNorm("best_normalizer", st.BestNorm)
	}
	return nil
}
