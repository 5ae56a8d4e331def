package report

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// MannWhitneyResult is the outcome of MannWhitney.
type MannWhitneyResult struct {
	// U is the Mann–Whitney statistic of the first sample: the number of
	// pairs (x_i, y_j) with x_i > y_j, a tie counting one half (R's W).
	U float64
	// P is the two-sided p-value.
	P float64
	// Exact says whether P is from U's exact distribution (no ties, both
	// samples under 50) rather than the normal approximation.
	Exact bool
}

// MannWhitney is the two-sided Mann–Whitney U (Wilcoxon rank-sum) test that
// x and y come from one distribution, with R's wilcox.test conventions:
// U's exact permutation distribution when there are no ties and both
// samples have fewer than 50 values, else the normal approximation with
// the tie correction of the variance and a continuity correction of 1/2.
// It is an error when a sample is empty or holds a value that is not a
// finite number.
func MannWhitney(x, y []float64) (MannWhitneyResult, error) {
	if len(x) == 0 || len(y) == 0 {
		return MannWhitneyResult{}, errors.New("mann-whitney: a sample is empty")
	}
	for _, s := range [][]float64{x, y} {
		for i, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return MannWhitneyResult{}, fmt.Errorf("mann-whitney: value %d is %v, want a finite number", i, v)
			}
		}
	}
	m, n := len(x), len(y)
	u, ties := uStatistic(x, y), false
	all := append(append([]float64(nil), x...), y...)
	sort.Float64s(all)
	tieTerm := 0.0 // Σ (t³ − t) over groups of t equal values
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	if !ties && m < 50 && n < 50 {
		return MannWhitneyResult{U: u, P: exactTwoSided(m, n, int(u)), Exact: true}, nil
	}
	mean := float64(m*n) / 2
	N := float64(m + n)
	variance := float64(m*n) / 12 * (N + 1 - tieTerm/(N*(N-1)))
	if variance <= 0 { // every value equal: nothing separates the samples
		return MannWhitneyResult{U: u, P: 1}, nil
	}
	d := u - mean
	z := (d - math.Copysign(math.Min(0.5, math.Abs(d)), d)) / math.Sqrt(variance)
	p := 2 * distuv.UnitNormal.Survival(math.Abs(z))
	return MannWhitneyResult{U: u, P: math.Min(1, p)}, nil
}

// uStatistic is the Mann–Whitney U of x against y: the number of pairs
// (x_i, y_j) with x_i > y_j, a tie counting one half.
func uStatistic(x, y []float64) float64 {
	u := 0.0
	for _, a := range x {
		for _, b := range y {
			switch {
			case a > b:
				u++
			case a == b:
				u += 0.5
			}
		}
	}
	return u
}

// exactTwoSided is the two-sided p-value of U = u for samples of m and n
// values without ties: twice the smaller tail of U's permutation
// distribution, at most 1. The distribution's counts are the coefficients
// of the Gaussian binomial [m+n, m]: c(i, j, u) = c(i−1, j, u−j) + c(i, j−1,
// u), the largest of the i+j values being from the first sample (above all
// j of the second) or from the second.
func exactTwoSided(m, n, u int) float64 {
	// prev[j] and cur[j] are the counts for i−1 and i values of the first
	// sample and j of the second, indexed by U (0..i·j).
	prev := make([][]float64, n+1)
	for j := range prev {
		prev[j] = []float64{1}
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1}
		for j := 1; j <= n; j++ {
			c := make([]float64, i*j+1)
			for v, k := range prev[j] { // the largest value is the first sample's
				c[v+j] += k
			}
			for v, k := range cur[j-1] { // the second sample's
				c[v] += k
			}
			cur[j] = c
		}
		prev = cur
	}
	counts := prev[n]
	total, lower, upper := 0.0, 0.0, 0.0
	for v, k := range counts {
		total += k
		if v <= u {
			lower += k
		}
		if v >= u {
			upper += k
		}
	}
	return math.Min(1, 2*math.Min(lower, upper)/total)
}
