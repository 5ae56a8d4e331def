package surrogate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// GradientPCA is a basis learned from the run's gradient estimates: the
// principal directions of the sums of Width consecutive estimates (each a
// running sum h_s = g_{s−Width+1} + … + g_s, whose noise averages out where
// a second moment of single estimates keeps it), weighted by Gamma^age,
//
//	C = Σ_s Gamma^(t−s) h_s h_sᵀ,
//
// over the newest Window sums (Gamma^Window of the weight is dropped).
// Screened offline on ARS runs (bench/basis_screen.py, docs/design.md), its
// eigenvectors with p ∝ eigenvalue put half of ln n into p's entropy and
// hold 1.5–4.4 times the next gradient's energy that uniform p does.
//
// C has rank at most Window, so its eigenvectors are read off the Window ×
// Window Gram matrix of the weighted sums: O(n·Window²) per call, O(n·Window)
// memory. Its fields are its whole state (JSON), for checkpoints.
type GradientPCA struct {
	Width  int     `json:"width"`
	Gamma  float64 `json:"gamma"`
	Window int     `json:"window"`
	// Recent holds the newest Width estimates, oldest first; Sums the
	// newest Window running sums, oldest first.
	Recent [][]float64 `json:"recent"`
	Sums   [][]float64 `json:"sums"`
	// Count is the number of estimates added.
	Count int `json:"count"`
}

// NewGradientPCA returns the screen's design: sums of 5 estimates, γ 0.9,
// the newest 50 sums (0.9⁵⁰ ≈ 0.005 of the newest's weight is dropped).
func NewGradientPCA() *GradientPCA { return &GradientPCA{Width: 5, Gamma: 0.9, Window: 50} }

// Add adds one gradient estimate. A non-finite estimate, or one whose
// length differs from the earlier ones, is an error and leaves the state as
// it was.
func (g *GradientPCA) Add(est []float64) error {
	if g.Width < 1 || g.Window < 1 || !(g.Gamma > 0 && g.Gamma <= 1) {
		return fmt.Errorf("%w: gradient PCA width %d, window %d, gamma %v (want ≥ 1, ≥ 1, (0, 1])", ErrConfig, g.Width, g.Window, g.Gamma)
	}
	if len(g.Recent) > 0 && len(est) != len(g.Recent[0]) {
		return fmt.Errorf("%w: estimate of length %d, earlier ones %d", ErrDim, len(est), len(g.Recent[0]))
	}
	for i, v := range est {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: estimate[%d] = %v", ErrNonFiniteTarget, i, v)
		}
	}
	g.Recent = append(g.Recent, slices.Clone(est))
	if len(g.Recent) > g.Width {
		g.Recent = g.Recent[1:]
	}
	h := make([]float64, len(est))
	for _, r := range g.Recent {
		for i, v := range r {
			h[i] += v
		}
	}
	g.Sums = append(g.Sums, h)
	if len(g.Sums) > g.Window {
		g.Sums = g.Sums[1:]
	}
	g.Count++
	return nil
}

// Components returns C's eigenvectors of positive eigenvalue (orthonormal,
// each of length n) and their eigenvalues, largest first, and C's trace
// (the sum of every eigenvalue, so trace/n is the mean over R^n). It
// returns none before the first Add.
func (g *GradientPCA) Components() (vecs [][]float64, lambda []float64, trace float64, err error) {
	k := len(g.Sums)
	if k == 0 {
		return nil, nil, 0, nil
	}
	// H's columns are √w_a h_a; C = H Hᵀ and the Gram matrix is Hᵀ H.
	scale := make([]float64, k)
	for a := range k {
		scale[a] = math.Pow(g.Gamma, float64(k-1-a)/2)
	}
	gram := mat.NewSymDense(k, nil)
	for a := range k {
		for b := a; b < k; b++ {
			var dot float64
			for i, v := range g.Sums[a] {
				dot += v * g.Sums[b][i]
			}
			gram.SetSym(a, b, scale[a]*scale[b]*dot)
		}
		trace += gram.At(a, a)
	}
	var eig mat.EigenSym
	if !eig.Factorize(gram, true) {
		return nil, nil, 0, fmt.Errorf("surrogate: gradient PCA: the eigendecomposition of the %d×%d Gram matrix failed", k, k)
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)
	top := slices.Max(vals)
	n := len(g.Sums[0])
	for c := k - 1; c >= 0; c-- { // gonum gives ascending eigenvalues
		lam := vals[c]
		if !(lam > minEigen*top) {
			continue
		}
		v := make([]float64, n)
		for a := range k {
			w := scale[a] * u.At(a, c)
			for i, x := range g.Sums[a] {
				v[i] += w * x
			}
		}
		// H u / √λ is unit and orthogonal to the others only up to the
		// rounding of u scaled by √(top/λ): orthonormalize against the
		// larger components, and drop what is left of none.
		if !orthonormalize(v, vecs) {
			continue
		}
		vecs, lambda = append(vecs, v), append(lambda, lam)
	}
	return vecs, lambda, trace, nil
}

// minEigen is the smallest eigenvalue kept, relative to the largest: the
// rest is rounding (and far below any floor a sampler would put under p).
const minEigen = 1e-9

// orthonormalize removes from v its projections on the orthonormal q
// (modified Gram–Schmidt, twice), normalizes it, and reports whether
// anything was left of it.
func orthonormalize(v []float64, q [][]float64) bool {
	n0 := norm2(v)
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
	nv := norm2(v)
	if !(nv > 1e-6*n0) {
		return false
	}
	for i := range v {
		v[i] /= nv
	}
	return true
}

func norm2(v []float64) float64 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	return math.Sqrt(ss)
}
