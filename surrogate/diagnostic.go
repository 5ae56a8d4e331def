package surrogate

import (
	"cmp"
	"math"
	"slices"
)

// Spearman returns the rank correlation of a and b (equal lengths), with
// ties given their mean rank; NaN when fewer than two pairs are finite or
// either side is constant. Pairs with a non-finite value are left out.
func Spearman(a, b []float64) float64 {
	var xa, xb []float64
	for i := range a {
		if finite(a[i]) && finite(b[i]) {
			xa, xb = append(xa, a[i]), append(xb, b[i])
		}
	}
	if len(xa) < 2 {
		return math.NaN()
	}
	ra, rb := ranks(xa), ranks(xb)
	var ma, mb float64
	for i := range ra {
		ma += ra[i]
		mb += rb[i]
	}
	ma /= float64(len(ra))
	mb /= float64(len(rb))
	var sab, saa, sbb float64
	for i := range ra {
		da, db := ra[i]-ma, rb[i]-mb
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	if saa == 0 || sbb == 0 {
		return math.NaN()
	}
	return sab / math.Sqrt(saa*sbb)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// ranks returns the 1-based ranks of v, ties at their mean rank.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	r := make([]float64, len(v))
	for lo := 0; lo < len(idx); {
		hi := lo
		for hi+1 < len(idx) && v[idx[hi+1]] == v[idx[lo]] {
			hi++
		}
		for k := lo; k <= hi; k++ {
			r[idx[k]] = float64(lo+hi)/2 + 1
		}
		lo = hi + 1
	}
	return r
}

// Share returns the fraction of g's energy ‖P g‖²/‖g‖² in the span of
// the orthonormal vectors q (P the projection on it); NaN when g is zero
// or not finite.
func Share(q [][]float64, g []float64) float64 {
	var gg, pp float64
	for _, v := range g {
		gg += v * v
	}
	if !(gg > 0) || math.IsInf(gg, 0) {
		return math.NaN()
	}
	for _, u := range q {
		var dot float64
		for i := range g {
			dot += u[i] * g[i]
		}
		pp += dot * dot
	}
	return pp / gg
}
