package stp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// A Directioner is the source of an iteration's directions, as gonum's
// optimize.NextDirectioner is a line search method's: the [Stepper] asks
// it for the M directions of each iteration and evaluates x_k ± α_j d_j.
// [Settings.Directions] sets M; [Settings.Source] picks the Directioner (nil:
// an [IndexSampler] over Settings.Basis).
type Directioner interface {
	// Draw writes the next iteration's directions into d, whose slices
	// have equal lengths (M directions of length n), using rnd as the only
	// source of randomness, so that a seeded stepper repeats its run.
	//
	// d.Index[j] is the basis column that direction j is (its step uses
	// v_i of that column, [Settings.Sampling]), or −1 for a direction that
	// is no column of the basis (its step uses v = 1, the mean v after
	// [NormalizeLipschitz]). d.Weight[j] makes Σ_j w_j Δ_j d_j, with Δ_j
	// the difference of the values at x_k ± α d_j, an unbiased estimate of
	// the gradient up to one constant factor: E[Σ_j w_j d_j d_jᵀ] ∝ I.
	Draw(rnd *rand.Rand, d Drawn) error
	// Dim returns n.
	Dim() int
}

// Drawn is where a [Directioner] writes one iteration's directions.
type Drawn struct {
	Dirs   [][]float64
	Index  []int
	Weight []float64
}

var (
	_ Directioner = (*IndexSampler)(nil)
	_ Directioner = (*DistinctSampler)(nil)
	_ Directioner = (*SubspaceSampler)(nil)
)

// IndexSampler draws each direction's index i.i.d. from the probabilities
// p over the columns of a basis (STP and STP_IS: Algorithm 1, step 1): a
// repeated index is evaluated twice. Draws use Vose's alias table, O(1)
// each, rebuilt when p changes. Its weights are 1/(n p_i).
type IndexSampler struct {
	basis Basis
	p     []float64
	table alias
}

// NewIndexSampler returns the sampler of basis's columns with
// probabilities p (every p_i > 0, Σ p = 1 within ProbabilityTolerance).
func NewIndexSampler(basis Basis, p []float64) (*IndexSampler, error) {
	s := &IndexSampler{basis: basis}
	if err := s.SetProbabilities(p); err != nil {
		return nil, err
	}
	return s, nil
}

// SetProbabilities replaces p; on error the old p is kept.
func (s *IndexSampler) SetProbabilities(p []float64) error {
	if _, err := mix(p, 0, s.basis.Count()); err != nil {
		return err
	}
	s.p = slices.Clone(p)
	s.table = newAlias(s.p)
	return nil
}

// Dim returns n.
func (s *IndexSampler) Dim() int { return s.basis.Dim() }

// Draw implements Directioner.
func (s *IndexSampler) Draw(rnd *rand.Rand, d Drawn) error {
	n := float64(len(s.p))
	for j := range d.Dirs {
		i := s.table.draw(rnd)
		d.Index[j] = i
		d.Weight[j] = 1 / (n * s.p[i])
		s.basis.Column(i, d.Dirs[j])
	}
	return nil
}

// DistinctSampler draws the M indices of an iteration without repetition,
// uniformly, so that with an [Orthogonal] basis an iteration's directions
// are orthonormal (ARS's orthogonal variant). Its weights are 1.
type DistinctSampler struct {
	basis Basis
}

// NewDistinctSampler returns the sampler of distinct columns of basis.
func NewDistinctSampler(basis Basis) *DistinctSampler { return &DistinctSampler{basis: basis} }

// Dim returns n.
func (s *DistinctSampler) Dim() int { return s.basis.Dim() }

// Draw implements Directioner: a partial Fisher–Yates shuffle. It fails
// when M > n.
func (s *DistinctSampler) Draw(rnd *rand.Rand, d Drawn) error {
	n := s.basis.Count()
	if len(d.Dirs) > n {
		return fmt.Errorf("%w: %d distinct directions of %d", ErrSettings, len(d.Dirs), n)
	}
	picked := make(map[int]int, len(d.Dirs)) // the swaps of a virtual 0..n-1
	at := func(i int) int {
		if v, ok := picked[i]; ok {
			return v
		}
		return i
	}
	for j := range d.Dirs {
		r := j + rnd.IntN(n-j)
		vj, vr := at(j), at(r)
		picked[j], picked[r] = vr, vj
		d.Index[j] = vr
		d.Weight[j] = 1
		s.basis.Column(vr, d.Dirs[j])
	}
	return nil
}

// SubspaceSampler draws an iteration's directions as LMRS and Guided ES
// do: an orthonormal basis of a guide subspace G (k vectors, set by
// [SubspaceSampler.SetGuide] between iterations) first, then M − k random
// directions orthonormal to G and to each other (Gaussian vectors, by
// Gram–Schmidt, so uniform on G's complement). All M directions are
// orthonormal; none is a basis column (index −1). With no guide set it
// draws M random orthonormal directions. Weights: 1 for the guide's
// directions, (n − k)/(M − k) for the others, so that E[Σ w d dᵀ] = I.
// M must be below n.
type SubspaceSampler struct {
	n     int
	guide [][]float64
}

// NewSubspaceSampler returns a sampler of R^n without a guide.
func NewSubspaceSampler(n int) *SubspaceSampler { return &SubspaceSampler{n: n} }

// Dim returns n.
func (s *SubspaceSampler) Dim() int { return s.n }

// SetGuide sets the guide subspace: the span of vs (copied,
// orthonormalized; vectors that add no new direction are dropped). nil
// clears it.
func (s *SubspaceSampler) SetGuide(vs [][]float64) error {
	for i, v := range vs {
		if len(v) != s.n {
			return fmt.Errorf("%w: guide vector %d has length %d, want %d", ErrDimension, i, len(v), s.n)
		}
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%w: guide vector %d is not finite", ErrSettings, i)
			}
		}
	}
	cp := make([][]float64, len(vs))
	for i, v := range vs {
		cp[i] = slices.Clone(v)
	}
	s.guide = Orthonormalize(cp)
	return nil
}

// Draw implements Directioner.
func (s *SubspaceSampler) Draw(rnd *rand.Rand, d Drawn) error {
	m := len(d.Dirs)
	if m >= s.n {
		return fmt.Errorf("%w: %d subspace directions in dimension %d, want fewer", ErrSettings, m, s.n)
	}
	k := min(len(s.guide), m-1)
	for j := range k {
		copy(d.Dirs[j], s.guide[j])
		d.Index[j], d.Weight[j] = -1, 1
	}
	rest := float64(s.n-k) / float64(m-k)
	for j := k; j < m; j++ {
		v := d.Dirs[j]
		for {
			for i := range v {
				v[i] = rnd.NormFloat64()
			}
			if orthogonalize(v, s.guide[:k]) && orthogonalize(v, d.Dirs[k:j]) {
				break
			}
		}
		d.Index[j], d.Weight[j] = -1, rest
	}
	return nil
}

// Orthonormalize returns an orthonormal basis of the span of vs by
// modified Gram–Schmidt (twice, for accuracy), in order, dropping vectors
// that add no direction (relative norm below 1e-10). vs is overwritten.
func Orthonormalize(vs [][]float64) [][]float64 {
	out := vs[:0]
	for _, v := range vs {
		if orthogonalize(v, out) {
			out = append(out, v)
		}
	}
	return out
}

// orthogonalize removes from v its projection on the orthonormal vectors
// q (twice), normalizes it, and reports whether anything was left.
func orthogonalize(v []float64, q [][]float64) bool {
	n0 := norm(v)
	if !(n0 > 0) || math.IsInf(n0, 0) {
		return false
	}
	for range 2 {
		for _, u := range q {
			var dot float64
			for i := range v {
				dot += u[i] * v[i]
			}
			for i := range v {
				v[i] -= dot * u[i]
			}
		}
	}
	nv := norm(v)
	if !(nv > 1e-10*n0) {
		return false
	}
	for i := range v {
		v[i] /= nv
	}
	return true
}

func norm(v []float64) float64 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	return math.Sqrt(ss)
}
