package surrogate

import (
	"fmt"
	"math"
)

// GradientSum is the simplest surrogate of where the search should go: a
// local linear model f̂(x) = gᵀx whose g is the sum of every finite-difference
// estimate of the gradient seen so far, each an optimizer iteration's
// Σ_j w_j (f(x+_j) − f(x−_j)) d_j. With directions drawn isotropically this
// is, up to scale, the ridge regression of the antithetic differences on
// their perturbations over all earlier iterations, in O(n) memory.
//
// Screened offline against the tanh MLP (bench/surrogate_screen.py on ARS
// runs of Hopper-v5), its g holds 4-7 times the share of the next
// iterations' gradient energy that a random direction holds, where the
// MLP's gradient holds 1.6-3 times.
type GradientSum struct {
	// G is the sum (nil before the first Add).
	G []float64 `json:"g"`
	// Count is the number of estimates added.
	Count int `json:"count"`
}

// Add adds one gradient estimate. A non-finite estimate is an error and
// leaves the sum as it was.
func (s *GradientSum) Add(est []float64) error {
	if s.G != nil && len(est) != len(s.G) {
		return fmt.Errorf("%w: estimate of length %d, sum of %d", ErrDim, len(est), len(s.G))
	}
	for i, v := range est {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: estimate[%d] = %v", ErrNonFiniteTarget, i, v)
		}
	}
	if s.G == nil {
		s.G = make([]float64, len(est))
	}
	for i, v := range est {
		s.G[i] += v
	}
	s.Count++
	return nil
}

// Predict returns f̂(x) = gᵀx (0 before the first Add): only differences
// of predictions mean anything.
func (s *GradientSum) Predict(x []float64) float64 {
	var f float64
	for i, g := range s.G {
		f += g * x[i]
	}
	return f
}
