package train

import (
	"errors"
	"fmt"

	"github.com/stpis/stpis/cmaes"
)

// CMAESSettings are CMA-ES's settings (package cmaes): the initial step
// size σ0 and the population λ. One generation is one batch of λ points,
// each measured by K episodes like every other method's points.
type CMAESSettings struct {
	Sigma      float64 `json:"sigma"`
	Population int     `json:"population"`
}

// Name is "cmaes".
func (*CMAESSettings) Name() string { return "cmaes" }

func (s *CMAESSettings) clone() Method { c := *s; return &c }

func (s *CMAESSettings) validate(Problem) error {
	var se *cmaes.SettingError
	if err := (cmaes.Settings{Sigma: s.Sigma, Population: s.Population}).Validate(); errors.As(err, &se) {
		return bad(se.Field, "%s", se.Reason)
	} else if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

func (s *CMAESSettings) keys() []key {
	return []key{
		floatKey("sigma", "", "", func(c *Config) *float64 { return &c.Method.(*CMAESSettings).Sigma }),
		intKey("population", "", "", func(c *Config) *int { return &c.Method.(*CMAESSettings).Population }),
	}
}

func (s *CMAESSettings) base(Problem) (label, dir string) { return "CMA-ES", "cmaes" }

func (s *CMAESSettings) parts(p Problem, ref Method) []part {
	var ps []part
	if p.K != 1 {
		ps = append(ps, kPart(p.K))
	}
	r, _ := ref.(*CMAESSettings)
	if r == nil {
		return ps
	}
	if s.Population != r.Population {
		ps = append(ps, part{fmt.Sprintf("population %d", s.Population), fmt.Sprintf("pop%d", s.Population)})
	}
	if s.Sigma != r.Sigma {
		ps = append(ps, part{fmt.Sprintf("σ0 %g", s.Sigma), fmt.Sprintf("sigma%g", s.Sigma)})
	}
	return ps
}

func (s *CMAESSettings) newOptimizer(p Problem, x0 []float64) (Optimizer, error) {
	if len(x0) > cmaes.MaxDim {
		return nil, bad("method", "cmaes keeps a full covariance for at most %d policy parameters; %s's linear policy has %d (use stp or ars)", cmaes.MaxDim, p.Env, len(x0))
	}
	o, err := cmaes.New(x0, cmaes.Settings{Sigma: s.Sigma, Population: s.Population, Seed: p.Seed})
	if err != nil {
		return nil, fmt.Errorf("cmaes: %w", err)
	}
	return cmaesOptimizer{o}, nil
}

// cmaesOptimizer is CMA-ES as an Optimizer: its point x_k is the
// distribution's mean, never a point of the batch.
type cmaesOptimizer struct{ *cmaes.Optimizer }

func (c cmaesOptimizer) Propose() ([][]float64, error) { return c.Optimizer.Propose(), nil }
func (c cmaesOptimizer) Tell(values []float64) (Outcome, error) {
	if err := c.Optimizer.Tell(values); err != nil {
		return Outcome{}, fmt.Errorf("train: %w", err)
	}
	return Outcome{Kept: -1, Step: c.Sigma()}, nil
}
