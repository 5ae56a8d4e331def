package train

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/stp"
	"github.com/stpis/stpis/surrogate"
)

// diagWindow accumulates the surrogate diagnostic over the iterations
// between two evaluations: what the surrogate predicted for points it had
// not yet seen, and how much of the gradient lies in the k-dimensional
// subspace S it favours, against a random subspace R of the same
// dimension.
//
// The share is read off the directions the iterations measured, each
// direction j giving Δ_j = f(x+_j) − f(x−_j), whose square is (2α)² times
// the gradient's energy along d_j plus noise. With ē_S the mean Δ² over
// the directions inside S and ē_O over those outside it (which are drawn
// evenly from S's complement), k·ē_S / (k·ē_S + (n−k)·ē_O) estimates the
// share of the gradient's energy in S; noise pulls it toward chance, k/n,
// never away from it. The same statistic for R is the chance level as
// measured. The directions inside S are the guide's for the guided step,
// and for STP_IS the basis columns of largest p when the window began; R
// is the first random direction of the guided step (compared with its
// other random directions), and for STP_IS as many basis columns picked at
// random.
//
// It is part of the optimizer's checkpointed state, so a resumed run
// writes the same curve.
type diagWindow struct {
	Started bool    `json:"started,omitempty"`
	RankSum float64 `json:"rank_sum,omitempty"`
	RankN   int     `json:"rank_n,omitempty"`
	// Dim is k; STop and RTop are the basis columns of S and R (STP_IS).
	// Guided says R is compared among the directions outside S only (the
	// guided step's random directions, which are orthogonal to S).
	Dim    int   `json:"dim,omitempty"`
	STop   []int `json:"s_top,omitempty"`
	RTop   []int `json:"r_top,omitempty"`
	Guided bool  `json:"guided,omitempty"`
	// E holds Σ Δ² and N the counts of the directions inside S, outside
	// S, inside R and outside R, in that order.
	E [4]float64 `json:"e"`
	N [4]int     `json:"n"`
}

// startTop opens the window of a sampler of basis columns with
// probabilities p: S is the k columns of largest p (none when p is
// uniform), R k columns drawn from (seed, iter).
func (w *diagWindow) startTop(p []float64, k int, seed uint64, iter int) {
	*w = diagWindow{Started: true}
	if k < 1 || k >= len(p) || slices.Min(p) == slices.Max(p) {
		return
	}
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p[b], p[a]) })
	w.Dim, w.STop = k, slices.Clone(order[:k])
	w.RTop = rand.New(rand.NewPCG(seed, uint64(iter))).Perm(len(p))[:k]
}

// add takes an iteration: the predictions made before its values were
// measured (nil: none), and for each of its directions the difference Δ_j
// (NaN: not measured) and whether it lies in S and in R.
func (w *diagWindow) add(pred, values, delta []float64, inS, inR []bool) {
	if pred != nil {
		if r := surrogate.Spearman(pred, values); !math.IsNaN(r) {
			w.RankSum += r
			w.RankN++
		}
	}
	for j, d := range delta {
		if math.IsNaN(d) || math.IsInf(d, 0) || inS == nil {
			continue
		}
		e := d * d
		for side, in := range [2]bool{inS[j], inR[j]} {
			if side == 1 && w.Guided && inS[j] {
				continue
			}
			k := 2 * side
			if !in {
				k++
			}
			w.E[k] += e
			w.N[k]++
		}
	}
}

// result closes the window; n is the dimension.
func (w *diagWindow) result(n int) *rundir.SurrogateDiag {
	d := &rundir.SurrogateDiag{Rank: math.NaN(), Share: math.NaN(), RandomShare: math.NaN(), Dim: w.Dim}
	if w.RankN > 0 {
		d.Rank = w.RankSum / float64(w.RankN)
	}
	share := func(in, out int) float64 {
		if w.N[in] == 0 || w.N[out] == 0 {
			return math.NaN()
		}
		a := float64(w.Dim) * w.E[in] / float64(w.N[in])
		b := float64(n-w.Dim) * w.E[out] / float64(w.N[out])
		if !(a+b > 0) {
			return math.NaN()
		}
		return a / (a + b)
	}
	if w.Dim > 0 {
		d.Share, d.RandomShare = share(0, 1), share(2, 3)
	}
	*w = diagWindow{}
	return d
}

// gradientEstimate returns Σ_j w_j Δ_j d_j of batch b (directions with a
// non-finite Δ left out); nil when none is left.
func gradientEstimate(b stp.Batch, delta []float64) []float64 {
	var g []float64
	for j, d := range b.Directions {
		if math.IsNaN(delta[j]) || math.IsInf(delta[j], 0) {
			continue
		}
		if g == nil {
			g = make([]float64, len(d))
		}
		for i, di := range d {
			g[i] += b.Weights[j] * delta[j] * di
		}
	}
	return g
}
