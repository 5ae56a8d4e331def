package stp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Sampling chooses how the probabilities p and step parameters v follow from
// the coordinate Lipschitz constants L (Table 1 of the paper).
type Sampling int

const (
	// Uniform is plain STP: p_i = 1/n, v_i = max_j L_j (v_i = 1 when no L is
	// given).
	Uniform Sampling = iota
	// ISSqrt is Theorem 1's importance sampling: p_i ∝ √L_i, v_i = √L_i.
	ISSqrt
	// ISL is the importance sampling of Theorems 2–4: p_i ∝ L_i, v_i = L_i.
	ISL
	// Custom uses the user-given Settings.P and Settings.V.
	Custom
)

func (s Sampling) String() string {
	switch s {
	case Uniform:
		return "uniform"
	case ISSqrt:
		return "is-sqrt"
	case ISL:
		return "is-L"
	case Custom:
		return "custom"
	}
	return fmt.Sprintf("Sampling(%d)", int(s))
}

// ProbabilityTolerance is how far from 1 the sum of a user-given p may be.
// p is not renormalized: a p outside the tolerance is an error.
const ProbabilityTolerance = 1e-9

// FromLipschitz returns p and v for sampling s from the coordinate Lipschitz
// constants L (every L_i finite and > 0). For Uniform, a nil L gives v_i = 1.
func FromLipschitz(s Sampling, L []float64, n int) (p, v []float64, err error) {
	if L != nil && len(L) != n {
		return nil, nil, fmt.Errorf("%w: len(L) = %d, want %d", ErrDimension, len(L), n)
	}
	for i, l := range L {
		if !(l > 0) || math.IsInf(l, 0) {
			return nil, nil, fmt.Errorf("%w: L[%d] = %v, want finite and > 0", ErrStepParams, i, l)
		}
	}
	p = make([]float64, n)
	v = make([]float64, n)
	switch s {
	case Uniform:
		vmax := 1.0
		if L != nil {
			vmax = 0
			for _, l := range L {
				vmax = math.Max(vmax, l)
			}
		}
		for i := range p {
			p[i] = 1 / float64(n)
			v[i] = vmax
		}
	case ISSqrt, ISL:
		if L == nil {
			return nil, nil, fmt.Errorf("%w: %v sampling needs Lipschitz constants", ErrStepParams, s)
		}
		var sum float64
		for i, l := range L {
			if s == ISSqrt {
				l = math.Sqrt(l)
			}
			v[i] = l
			sum += l
		}
		for i := range p {
			p[i] = v[i] / sum
		}
	default:
		return nil, nil, fmt.Errorf("%w: sampling %v has no Lipschitz rule", ErrSettings, s)
	}
	return p, v, nil
}

// mix returns (1−γ)p + γ/n and checks the result. γ must lie in [0, 1].
func mix(p []float64, gamma float64, n int) ([]float64, error) {
	if len(p) != n {
		return nil, fmt.Errorf("%w: len(p) = %d, want %d", ErrDimension, len(p), n)
	}
	if !(gamma >= 0 && gamma <= 1) {
		return nil, fmt.Errorf("%w: mixing γ = %v, want in [0, 1]", ErrSettings, gamma)
	}
	var sum float64
	for i, pi := range p {
		if math.IsNaN(pi) || math.IsInf(pi, 0) || pi < 0 {
			return nil, fmt.Errorf("%w: p[%d] = %v", ErrProbabilities, i, pi)
		}
		sum += pi
	}
	if math.Abs(sum-1) > ProbabilityTolerance*math.Max(1, float64(n)) {
		return nil, fmt.Errorf("%w: p sums to %v, want 1", ErrProbabilities, sum)
	}
	out := make([]float64, n)
	for i, pi := range p {
		out[i] = (1-gamma)*pi + gamma/float64(n)
		if !(out[i] > 0) {
			return nil, fmt.Errorf("%w: p[%d] = %v after mixing, want > 0", ErrProbabilities, i, out[i])
		}
	}
	return out, nil
}

func checkV(v []float64, n int) error {
	if len(v) != n {
		return fmt.Errorf("%w: len(v) = %d, want %d", ErrDimension, len(v), n)
	}
	for i, vi := range v {
		if !(vi > 0) || math.IsInf(vi, 0) {
			return fmt.Errorf("%w: v[%d] = %v, want finite and > 0", ErrStepParams, i, vi)
		}
	}
	return nil
}

// alias is Vose's alias table: one draw costs O(1), building costs O(n).
type alias struct {
	prob  []float64
	alias []int
}

func newAlias(p []float64) alias {
	n := len(p)
	a := alias{prob: make([]float64, n), alias: make([]int, n)}
	scaled := make([]float64, n)
	small := make([]int, 0, n)
	large := make([]int, 0, n)
	for i, pi := range p {
		scaled[i] = pi * float64(n)
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.prob[s] = scaled[s]
		a.alias[s] = l
		scaled[l] = scaled[l] + scaled[s] - 1
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range large {
		a.prob[i] = 1
		a.alias[i] = i
	}
	for _, i := range small { // rounding leftovers
		a.prob[i] = 1
		a.alias[i] = i
	}
	return a
}

func (a alias) draw(r *rand.Rand) int {
	i := r.IntN(len(a.prob))
	if r.Float64() < a.prob[i] {
		return i
	}
	return a.alias[i]
}

// Entropy returns the Shannon entropy −Σ p_i ln p_i of p in nats (ln n for
// the uniform distribution).
func Entropy(p []float64) float64 {
	var h float64
	for _, pi := range p {
		if pi > 0 {
			h -= pi * math.Log(pi)
		}
	}
	return h
}

// NormalizeLipschitz returns L scaled by the c > 0 for which the step
// parameters v that sampling s derives from c·L have mean 1, the v of plain
// STP without L: c = 1/mean(L) for ISL (v_i = L_i), 1/mean(√L)² for ISSqrt
// (v_i = √L_i) and 1/max(L) for Uniform (v_i = max L). A step constant
// (α0 of the Decaying rule, ε of the Fixed rule) then means the same mean
// step length α·v_i whatever the scale of f, and when L is re-estimated
// during a run. p does not depend on the scale. L is not modified; every
// L_i must be finite and > 0. Custom sampling has no v to normalize.
func NormalizeLipschitz(s Sampling, L []float64) ([]float64, error) {
	if len(L) == 0 {
		return nil, fmt.Errorf("%w: empty L", ErrDimension)
	}
	if _, _, err := FromLipschitz(s, L, len(L)); err != nil {
		return nil, err
	}
	var scale float64
	switch s {
	case Uniform:
		scale = 1 / slices.Max(L)
	case ISL, ISSqrt:
		var mean float64
		for _, l := range L {
			if s == ISL {
				mean += l
			} else {
				mean += math.Sqrt(l)
			}
		}
		mean /= float64(len(L))
		scale = 1 / mean
		if s == ISSqrt {
			scale *= scale
		}
	}
	out := make([]float64, len(L))
	for i, l := range L {
		out[i] = l * scale
	}
	return out, nil
}

func (s *Stepper) setPV(p, v []float64) error {
	pm, err := mix(p, s.set.Mixing, s.n)
	if err != nil {
		return err
	}
	if err := checkV(v, s.n); err != nil {
		return err
	}
	if err := s.sourceProbabilities(pm); err != nil {
		return err
	}
	s.p = pm
	s.v = append([]float64(nil), v...)
	return nil
}

// sourceProbabilities hands p to a direction source that samples by it
// (Settings.Source: one with a SetProbabilities method).
func (s *Stepper) sourceProbabilities(p []float64) error {
	if ps, ok := s.dir.(interface{ SetProbabilities([]float64) error }); ok {
		return ps.SetProbabilities(p)
	}
	return nil
}

// SetLipschitz replaces p and v by those that Settings.Sampling (Uniform,
// ISSqrt or ISL) derives from L, then applies mixing. It may be called only
// between iterations.
func (s *Stepper) SetLipschitz(L []float64) error {
	if err := s.between(); err != nil {
		return err
	}
	if L == nil {
		return fmt.Errorf("%w: nil L", ErrStepParams)
	}
	p, v, err := FromLipschitz(s.set.Sampling, L, s.n)
	if err != nil {
		return err
	}
	return s.setPV(p, v)
}

// SetLipschitzNormalized is SetLipschitz(NormalizeLipschitz(Sampling, L)):
// the scale of L is dropped, so that the step constants keep their
// meaning when L is re-estimated (see [NormalizeLipschitz]). L is not
// modified.
func (s *Stepper) SetLipschitzNormalized(L []float64) error {
	if err := s.between(); err != nil {
		return err
	}
	if len(L) != s.n {
		return fmt.Errorf("%w: len(L) = %d, want %d", ErrDimension, len(L), s.n)
	}
	nl, err := NormalizeLipschitz(s.set.Sampling, L)
	if err != nil {
		return err
	}
	return s.SetLipschitz(nl)
}

// SetProbabilities replaces p (mixing is applied to it) and v. It may be
// called only between iterations. On error the old p and v are kept.
func (s *Stepper) SetProbabilities(p, v []float64) error {
	if err := s.between(); err != nil {
		return err
	}
	return s.setPV(p, v)
}

// Probabilities returns a copy of p (after mixing).
func (s *Stepper) Probabilities() []float64 { return append([]float64(nil), s.p...) }

// StepParams returns a copy of v.
func (s *Stepper) StepParams() []float64 { return append([]float64(nil), s.v...) }
