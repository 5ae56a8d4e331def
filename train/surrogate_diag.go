package train

import (
	"math"
	"math/rand/v2"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/stp"
	"github.com/stpis/stpis/surrogate"
)

// diagWindow accumulates the surrogate diagnostic over the iterations
// between two evaluations: what the surrogate predicted for points it had
// not seen, and how much of the gradient estimated from them lies in the
// subspace it favoured when the window began. It is part of the
// optimizer's checkpointed state, so a resumed run writes the same curve.
type diagWindow struct {
	Started bool    `json:"started,omitempty"`
	RankSum float64 `json:"rank_sum,omitempty"`
	RankN   int     `json:"rank_n,omitempty"`
	// Sub is the favoured subspace at the window's start and Rand a random
	// one of the same dimension (orthonormal rows); G the window's gradient
	// estimate.
	Sub  [][]float64 `json:"sub,omitempty"`
	Rand [][]float64 `json:"rand,omitempty"`
	G    []float64   `json:"g,omitempty"`
}

// start opens the window at iteration iter with the favoured subspace sub
// (nil: none), drawing the random subspace from (seed, iter).
func (w *diagWindow) start(sub [][]float64, n int, seed uint64, iter int) {
	*w = diagWindow{Started: true, Sub: sub}
	if len(sub) == 0 {
		return
	}
	rnd := rand.New(rand.NewPCG(seed, uint64(iter)))
	r := make([][]float64, len(sub))
	for i := range r {
		r[i] = make([]float64, n)
		for j := range r[i] {
			r[i][j] = rnd.NormFloat64()
		}
	}
	w.Rand = stp.Orthonormalize(r)
	w.G = make([]float64, n)
}

// add takes an iteration: the predictions made before its values were
// measured (nil: none) and its gradient estimate (nil: none).
func (w *diagWindow) add(pred, values, est []float64) {
	if pred != nil {
		if r := surrogate.Spearman(pred, values); !math.IsNaN(r) {
			w.RankSum += r
			w.RankN++
		}
	}
	if w.G != nil && est != nil {
		for i, v := range est {
			w.G[i] += v
		}
	}
}

// result closes the window.
func (w *diagWindow) result() *rundir.SurrogateDiag {
	d := &rundir.SurrogateDiag{Rank: math.NaN(), Share: math.NaN(), RandomShare: math.NaN(), Dim: len(w.Sub)}
	if w.RankN > 0 {
		d.Rank = w.RankSum / float64(w.RankN)
	}
	if w.G != nil {
		d.Share, d.RandomShare = surrogate.Share(w.Sub, w.G), surrogate.Share(w.Rand, w.G)
	}
	*w = diagWindow{}
	return d
}

// gradientEstimate returns Σ_j w_j (f(x+_j) − f(x−_j)) d_j of batch b
// with values v, leaving out directions with a non-finite difference; nil
// when none is left.
func gradientEstimate(b stp.Batch, v []float64) []float64 {
	m := len(b.Directions)
	plus, minus := make([]float64, m), make([]float64, m)
	seen := make([]int, m)
	for k, r := range b.Roles {
		switch r {
		case stp.Plus:
			plus[b.Dir[k]] = v[k]
			seen[b.Dir[k]]++
		case stp.Minus:
			minus[b.Dir[k]] = v[k]
			seen[b.Dir[k]]++
		}
	}
	var g []float64
	for j, d := range b.Directions {
		delta := plus[j] - minus[j]
		if seen[j] != 2 || math.IsNaN(delta) || math.IsInf(delta, 0) {
			continue
		}
		if g == nil {
			g = make([]float64, len(d))
		}
		for i, di := range d {
			g[i] += b.Weights[j] * delta * di
		}
	}
	return g
}
