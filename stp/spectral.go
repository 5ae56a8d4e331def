package stp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

var _ Directioner = (*SpectralSampler)(nil)

// SpectralSampler samples the columns of a learned orthonormal basis by
// importance: k given orthonormal vectors u_1..u_k, each with an energy
// e_i, completed to a basis of R^n by n − k columns spanning their
// orthogonal complement, each of energy floor. Column i is drawn with
// probability p_i ∝ e_i + floor (the complement's columns: ∝ floor), the
// paper's step 1 with p set directly rather than from Lipschitz constants.
//
// An iteration's M directions are M distinct columns, drawn by systematic
// πps sampling, so that column i is among them with probability
// π_i = min(1, c·p_i), Σ π_i = M, exactly: a column whose π_i reaches 1
// is drawn every iteration. A complement column drawn is a fresh random
// unit vector orthogonal to the u_i and to the iteration's other
// directions (a column of a random completion, which is all the run
// needs of the complement). Directions are no column of Settings.Basis
// (index −1, v = 1). Weights 1/π_i make Σ_j w_j Δ_j d_j unbiased:
// E[Σ_j w_j d_j d_jᵀ] = I.
//
// Before [SpectralSampler.SetSpectrum] it has no vectors: every column is
// the complement's, p is uniform, and it draws M random orthonormal
// directions.
type SpectralSampler struct {
	n     int
	vecs  [][]float64
	p     []float64 // over the n columns: the k vectors', then the complement's
	slots []int     // the columns of the last draw
}

// NewSpectralSampler returns a sampler of R^n without vectors.
func NewSpectralSampler(n int) *SpectralSampler {
	s := &SpectralSampler{n: n, p: make([]float64, n)}
	for i := range s.p {
		s.p[i] = 1 / float64(n)
	}
	return s
}

// Dim returns n.
func (s *SpectralSampler) Dim() int { return s.n }

// SetSpectrum sets the learned columns vecs (orthonormal, at most n, each
// of length n; copied) with their energies, and the complement's energy
// per column floor (> 0 when the complement is not empty, so that every
// direction keeps a chance). On error the sampler is left as it was.
func (s *SpectralSampler) SetSpectrum(vecs [][]float64, energy []float64, floor float64) error {
	k := len(vecs)
	switch {
	case k != len(energy):
		return fmt.Errorf("%w: %d vectors, %d energies", ErrDimension, k, len(energy))
	case k > s.n:
		return fmt.Errorf("%w: %d vectors in dimension %d", ErrDimension, k, s.n)
	case k < s.n && !(floor > 0 && !math.IsInf(floor, 0)):
		return fmt.Errorf("%w: the complement's energy %v must be positive and finite", ErrProbabilities, floor)
	}
	for i, v := range vecs {
		if len(v) != s.n {
			return fmt.Errorf("%w: vector %d has length %d, want %d", ErrDimension, i, len(v), s.n)
		}
		if e := energy[i]; math.IsNaN(e) || math.IsInf(e, 0) || e < 0 {
			return fmt.Errorf("%w: energy[%d] = %v, want finite and ≥ 0", ErrProbabilities, i, e)
		}
		for j := range i + 1 {
			dot := 0.0
			for t, x := range v {
				dot += x * vecs[j][t]
			}
			want := 0.0
			if j == i {
				want = 1
			}
			if !(math.Abs(dot-want) < 1e-6) {
				return fmt.Errorf("%w: vectors %d and %d: dot product %v, want %v (orthonormal)", ErrSettings, i, j, dot, want)
			}
		}
	}
	p := make([]float64, s.n)
	var sum float64
	for i := range p {
		p[i] = floor
		if i < k {
			p[i] += energy[i]
		}
		sum += p[i]
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return fmt.Errorf("%w: the energies sum to %v", ErrProbabilities, sum)
	}
	for i := range p {
		p[i] /= sum
	}
	s.vecs = make([][]float64, k)
	for i, v := range vecs {
		s.vecs[i] = slices.Clone(v)
	}
	s.p = p
	return nil
}

// Probabilities returns p over the n columns: the learned vectors' first,
// in the order given, then the complement's.
func (s *SpectralSampler) Probabilities() []float64 { return slices.Clone(s.p) }

// Slots returns the columns of the last draw (indices into
// Probabilities), one per direction.
func (s *SpectralSampler) Slots() []int { return slices.Clone(s.slots) }

// inclusion returns π_i = min(1, c·p_i) with Σ π_i = m.
func inclusion(p []float64, m int) []float64 {
	pi := make([]float64, len(p))
	capped := make([]bool, len(p))
	for {
		rest, free := float64(m), 0.0
		for i, c := range capped {
			if c {
				rest--
			} else {
				free += p[i]
			}
		}
		more := false
		for i, c := range capped {
			if c {
				pi[i] = 1
				continue
			}
			pi[i] = rest * p[i] / free
			if pi[i] >= 1 {
				capped[i], more = true, true
			}
		}
		if !more {
			return pi
		}
	}
}

// Draw implements Directioner. It fails when M > n.
func (s *SpectralSampler) Draw(rnd *rand.Rand, d Drawn) error {
	m := len(d.Dirs)
	if m > s.n {
		return fmt.Errorf("%w: %d distinct directions of %d", ErrSettings, m, s.n)
	}
	pi := inclusion(s.p, m)
	// Systematic sampling: column i is drawn when the running sum of π
	// crosses one of u, u+1, ..., u+m−1 inside its interval.
	s.slots = s.slots[:0]
	target, cum := rnd.Float64(), 0.0
	for i, x := range pi {
		cum += x
		if len(s.slots) < m && cum > target {
			s.slots = append(s.slots, i)
			target++
		}
	}
	for len(s.slots) < m { // rounding left Σ π a hair below m: the likeliest column not drawn
		best := -1
		for i, x := range pi {
			if !slices.Contains(s.slots, i) && (best < 0 || x > pi[best]) {
				best = i
			}
		}
		s.slots = append(s.slots, best)
	}
	k := len(s.vecs)
	var fresh [][]float64 // the complement directions drawn so far
	for j, i := range s.slots {
		d.Index[j], d.Weight[j] = -1, 1/pi[i]
		if i < k {
			copy(d.Dirs[j], s.vecs[i])
			continue
		}
		v := d.Dirs[j]
		for {
			for t := range v {
				v[t] = rnd.NormFloat64()
			}
			if orthogonalize(v, s.vecs) && orthogonalize(v, fresh) {
				break
			}
		}
		fresh = append(fresh, v)
	}
	return nil
}
