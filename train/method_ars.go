package train

import (
	"fmt"
	"math"

	"github.com/stpis/stpis/ars"
)

// ARSSettings are ARS V2-t's settings (V1-t with raw observations): the
// baseline runs at the published settings of its task (the preset
// table's ars entries, Mania et al. 2018, Table 9), so the flags do not
// override them.
type ARSSettings struct {
	// Directions N per iteration, the Top b of them in the update, the
	// perturbation ν and the step α.
	Directions int     `json:"directions"`
	Top        int     `json:"top"`
	Noise      float64 `json:"noise"`
	Rate       float64 `json:"rate"`
}

// Name is "ars".
func (*ARSSettings) Name() string { return "ars" }

func (s *ARSSettings) clone() Method { c := *s; return &c }

func (s *ARSSettings) validate(Problem) error {
	switch {
	case s.Directions < 1 || s.Directions > 4096:
		return bad("directions", "%d is outside [1, 4096] (ARS)", s.Directions)
	case s.Top < 1 || s.Top > s.Directions:
		return bad("top", "%d is outside [1, directions = %d] (ARS)", s.Top, s.Directions)
	case !(s.Noise > 0) || math.IsInf(s.Noise, 0):
		return bad("noise", "%v must be positive and finite (ARS)", s.Noise)
	case !(s.Rate > 0) || math.IsInf(s.Rate, 0):
		return bad("rate", "%v must be positive and finite (ARS)", s.Rate)
	}
	return nil
}

// arsFixed is why the flags leave ARS's settings alone.
const arsFixed = "ARS runs at its task's published settings (trainer config --method ars shows them)"

func (s *ARSSettings) keys() []key {
	return []key{
		intKey("directions", "", arsFixed, func(c *Config) *int { return &c.Method.(*ARSSettings).Directions }),
		intKey("top", "", arsFixed, func(c *Config) *int { return &c.Method.(*ARSSettings).Top }),
		floatKey("noise", "", arsFixed, func(c *Config) *float64 { return &c.Method.(*ARSSettings).Noise }),
		floatKey("rate", "", arsFixed, func(c *Config) *float64 { return &c.Method.(*ARSSettings).Rate }),
	}
}

func (s *ARSSettings) base(p Problem) (label, dir string) {
	if p.ObsNorm == None {
		return "ARS V1-t", "ars-v1"
	}
	return "ARS V2-t", "ars"
}

func (s *ARSSettings) parts(p Problem, _ Method) []part {
	if p.K != 1 {
		return []part{kPart(p.K)}
	}
	return nil
}

func (s *ARSSettings) newOptimizer(p Problem, x0 []float64) (Optimizer, error) {
	o, err := ars.New(x0, ars.Settings{StepSize: s.Rate, Directions: s.Directions, Top: s.Top, Noise: s.Noise, Seed: p.Seed})
	if err != nil {
		return nil, fmt.Errorf("ars: %w", err)
	}
	return arsOptimizer{o}, nil
}

// arsOptimizer is ARS as an Optimizer.
type arsOptimizer struct{ *ars.Optimizer }

func (a arsOptimizer) Size() int                     { return 2 * a.Settings().Directions }
func (a arsOptimizer) Propose() ([][]float64, error) { return a.Optimizer.Propose(), nil }
func (a arsOptimizer) Tell(values []float64) (Outcome, error) {
	if err := a.Optimizer.Tell(values); err != nil {
		return Outcome{}, fmt.Errorf("train: %w", err)
	}
	return Outcome{Kept: -1, Step: a.Settings().StepSize}, nil
}

// fromOld takes the settings from an older run.json's ars block.
func (s *ARSSettings) fromOld(schema int, _ oldSTP, a oldARS) error {
	if a.Seed != 0 {
		return dropped(schema, "ars.Seed", a.Seed, "0 (the run's seed seeds ARS)")
	}
	s.Directions, s.Top, s.Noise, s.Rate = a.Directions, a.Top, a.Noise, a.StepSize
	return nil
}
