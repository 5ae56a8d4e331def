package ars

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Settings are ARS V2-t's hyperparameters. The zero value of a field means
// the documented default.
type Settings struct {
	// StepSize α; default 0.02.
	StepSize float64
	// Directions N sampled per iteration; default 8.
	Directions int
	// Top b directions used in the update; default N (0 < b ≤ N).
	Top int
	// Noise ν, the standard deviation of the exploration perturbation;
	// default 0.03.
	Noise float64
	// Seed seeds the PCG stream that draws the directions.
	Seed uint64
}

func (s Settings) withDefaults() (Settings, error) {
	if s.StepSize == 0 {
		s.StepSize = 0.02
	}
	if s.Directions == 0 {
		s.Directions = 8
	}
	if s.Top == 0 {
		s.Top = s.Directions
	}
	if s.Noise == 0 {
		s.Noise = 0.03
	}
	switch {
	case !(s.StepSize > 0) || math.IsInf(s.StepSize, 0):
		return s, fmt.Errorf("ars: step size must be positive and finite, got %v", s.StepSize)
	case s.Directions < 1:
		return s, fmt.Errorf("ars: directions must be ≥ 1, got %d", s.Directions)
	case s.Top < 1 || s.Top > s.Directions:
		return s, fmt.Errorf("ars: top must be in [1, directions=%d], got %d", s.Directions, s.Top)
	case !(s.Noise > 0) || math.IsInf(s.Noise, 0):
		return s, fmt.Errorf("ars: noise must be positive and finite, got %v", s.Noise)
	}
	return s, nil
}

// Optimizer is ARS V2-t's state. It maximizes.
type Optimizer struct {
	s      Settings
	x      []float64
	iter   int
	evals  int
	pcg    *rand.PCG
	rng    *rand.Rand
	deltas [][]float64 // directions of the pending proposal; nil when none
}

// ErrNoProposal is returned by Tell without a pending Propose.
var ErrNoProposal = errors.New("ars: Tell without a pending Propose")

// New returns an optimizer at x0 (copied).
func New(x0 []float64, s Settings) (*Optimizer, error) {
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(x0) == 0 {
		return nil, errors.New("ars: x0 is empty")
	}
	for i, v := range x0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("ars: x0[%d] is %v", i, v)
		}
	}
	pcg := rand.NewPCG(s.Seed, 0x4152532d56322d74) // "ARS-V2-t"
	return &Optimizer{s: s, x: append([]float64(nil), x0...), pcg: pcg, rng: rand.New(pcg)}, nil
}

// Settings returns the settings in use, defaults filled in.
func (o *Optimizer) Settings() Settings { return o.s }

// X returns a copy of the current point.
func (o *Optimizer) X() []float64 { return append([]float64(nil), o.x...) }

// Iter is the number of completed iterations.
func (o *Optimizer) Iter() int { return o.iter }

// Evaluations is the number of point values told so far.
func (o *Optimizer) Evaluations() int { return o.evals }

// Propose draws N directions and returns the 2N points to evaluate, ordered
// x+ν δ_1, x−ν δ_1, x+ν δ_2, ... A second Propose before Tell returns the
// same points.
func (o *Optimizer) Propose() [][]float64 {
	if o.deltas == nil {
		o.deltas = make([][]float64, o.s.Directions)
		for j := range o.deltas {
			d := make([]float64, len(o.x))
			for i := range d {
				d[i] = o.rng.NormFloat64()
			}
			o.deltas[j] = d
		}
	}
	pts := make([][]float64, 0, 2*len(o.deltas))
	for _, d := range o.deltas {
		plus := make([]float64, len(o.x))
		minus := make([]float64, len(o.x))
		for i, xi := range o.x {
			plus[i] = xi + o.s.Noise*d[i]
			minus[i] = xi - o.s.Noise*d[i]
		}
		pts = append(pts, plus, minus)
	}
	return pts
}

// Tell takes one value per proposed point, in Propose's order, and applies
// the V2-t update. Non-finite values are an error and leave x unchanged. If
// all used rewards are equal (σ_R = 0) the iteration makes no step.
func (o *Optimizer) Tell(values []float64) error {
	if o.deltas == nil {
		return ErrNoProposal
	}
	if len(values) != 2*len(o.deltas) {
		return fmt.Errorf("ars: Tell got %d values, want %d", len(values), 2*len(o.deltas))
	}
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("ars: value %d is %v", i, v)
		}
	}
	idx := make([]int, len(o.deltas))
	for j := range idx {
		idx[j] = j
	}
	score := func(j int) float64 { return math.Max(values[2*j], values[2*j+1]) }
	sort.SliceStable(idx, func(a, b int) bool { return score(idx[a]) > score(idx[b]) })
	top := idx[:o.s.Top]
	var sum, sumSq float64
	for _, j := range top {
		for _, r := range values[2*j : 2*j+2] {
			sum += r
			sumSq += r * r
		}
	}
	cnt := float64(2 * len(top))
	mean := sum / cnt
	sigma := math.Sqrt(math.Max(sumSq/cnt-mean*mean, 0))
	if sigma > 0 {
		scale := o.s.StepSize / (float64(len(top)) * sigma)
		for _, j := range top {
			w := scale * (values[2*j] - values[2*j+1])
			for i, di := range o.deltas[j] {
				o.x[i] += w * di
			}
		}
	}
	o.evals += len(values)
	o.iter++
	o.deltas = nil
	return nil
}

type state struct {
	Settings Settings  `json:"settings"`
	X        []float64 `json:"x"`
	Iter     int       `json:"iter"`
	Evals    int       `json:"evals"`
	PCG      []byte    `json:"pcg"`
}

// MarshalBinary encodes the state between iterations, RNG included, so that
// a restored optimizer continues bit-exactly.
func (o *Optimizer) MarshalBinary() ([]byte, error) {
	if o.deltas != nil {
		return nil, errors.New("ars: cannot checkpoint with a pending proposal")
	}
	pcg, err := o.pcg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("ars: %w", err)
	}
	return json.Marshal(state{Settings: o.s, X: o.x, Iter: o.iter, Evals: o.evals, PCG: pcg})
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (o *Optimizer) UnmarshalBinary(b []byte) error {
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("ars: restore: %w", err)
	}
	s, err := st.Settings.withDefaults()
	if err != nil {
		return fmt.Errorf("ars: restore: %w", err)
	}
	pcg := &rand.PCG{}
	if err := pcg.UnmarshalBinary(st.PCG); err != nil {
		return fmt.Errorf("ars: restore: %w", err)
	}
	*o = Optimizer{s: s, x: st.X, iter: st.Iter, evals: st.Evals, pcg: pcg, rng: rand.New(pcg)}
	return nil
}

// MoveTo sets x (between iterations), as when a trainer backs off to a
// better point; the direction stream goes on.
func (o *Optimizer) MoveTo(x []float64) error {
	switch {
	case o.deltas != nil:
		return errors.New("ars: MoveTo during a pending proposal")
	case len(x) != len(o.x):
		return fmt.Errorf("ars: MoveTo got %d parameters, want %d", len(x), len(o.x))
	}
	copy(o.x, x)
	return nil
}
