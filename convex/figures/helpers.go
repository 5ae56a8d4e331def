package figures

import (
	"math"
)

// Iterations is the paper's iteration schedule for a problem of dimension
// n (section "Ridge regression on synthetic data"): 500 iterations for
// n ≤ 10, 5000 for n ≤ 100 and 15000 beyond.
func Iterations(n int) int {
	switch {
	case n <= 10:
		return 500
	case n <= 100:
		return 5000
	}
	return 15000
}

// EvalsToTarget returns the evaluations at the first point of a run whose
// metric is at most target, or −1 when none is: curve[k] is the metric at
// x_k (f − f*, say) and evals[k] the evaluations spent when x_k was
// reached. curve and evals have the same length.
func EvalsToTarget(curve []float64, evals []int64, target float64) int64 {
	for i, v := range curve {
		if v <= target {
			return evals[i]
		}
	}
	return -1
}

// TheorySpeedup returns the speedup of STP_IS over STP that Theorems 3 and
// 4 predict from the coordinate Lipschitz constants: n·max_i L_i / Σ_i L_i
// (uniform sampling's max_i v_i/p_i = n·max L against importance
// sampling's Σ L). It is 1 when every L_i is equal and at most n.
func TheorySpeedup(L []float64) float64 {
	var mx, sum float64
	for _, l := range L {
		mx = math.Max(mx, l)
		sum += l
	}
	return float64(len(L)) * mx / sum
}

// ProbeT returns the finite-difference probe t that minimizes the error of
// the forward difference (f(x + t e_i) − f(x))/t as an estimate of ∂_i f:
// the truncation error L_i t/2 plus the rounding error 2ε|f|/t (ε the
// float64 machine epsilon) is smallest at t = 2√(ε|f|/L_i). ProbeT uses
// |f(x_0)| and max_i L_i, so t is no larger than any coordinate needs.
//
// The paper's t = 1e-4 puts a floor under the finite-difference step:
// α = |∂_i f + L_i t/2| / v_i never drops below L_i t/(2 v_i), so once
// every |∂_i f| ≤ L_i t/2 no step lowers f and the method stalls. With
// ProbeT's t that floor sits near the rounding error of f itself.
func ProbeT(f0 float64, L []float64) float64 {
	var mx float64
	for _, l := range L {
		mx = math.Max(mx, l)
	}
	const eps = 0x1p-52
	return 2 * math.Sqrt(eps*math.Max(math.Abs(f0), eps)/mx)
}

// StepSpeedup returns the ratio of the expected decreases of f in one
// iteration of STP_IS and of STP, at a point where f has gradient g, for a
// quadratic whose curvature along e_i is L_i, with exact finite-difference
// steps (t → 0). STP (p_i = 1/n, v_i = L = max L) steps |g_i|/L and lowers
// f by g_i²(2L − L_i)/(2L²); STP_IS (p_i = L_i/ΣL, v_i = L_i) steps
// |g_i|/L_i and lowers it by g_i²/(2L_i). The ratio is
// TheorySpeedup(L) · Σ g_i² / Σ g_i²(2 − L_i/L): between half of theory's
// and theory's, because theory charges STP only g_i²/(2L) a step.
func StepSpeedup(L, g []float64) float64 {
	var mx float64
	for _, l := range L {
		mx = math.Max(mx, l)
	}
	var a, b float64
	for i, gi := range g {
		a += gi * gi
		b += gi * gi * (2 - L[i]/mx)
	}
	return TheorySpeedup(L) * a / b
}
