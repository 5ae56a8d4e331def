package stp

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Goal says whether the stepper minimizes or maximizes f.
type Goal int

const (
	// Minimize keeps the smallest of f(x_k), f(x+), f(x−). A NaN or +Inf
	// value is never accepted.
	Minimize Goal = iota
	// Maximize keeps the largest (rewards). A NaN or −Inf value is never
	// accepted.
	Maximize
)

// Settings configures a [Stepper]. The zero value is plain STP with the
// Decaying rule (α0 = 1) on the canonical basis, minimizing, with v_i = 1,
// one direction per iteration and no momentum. Every zero value means the
// documented default, which is the paper's method.
type Settings struct {
	// Goal is Minimize (default) or Maximize.
	Goal Goal
	// Basis gives the directions; nil means Canonical(len(x0)).
	Basis Basis
	// Source draws each iteration's directions; nil means an
	// [IndexSampler] of Basis's columns by the probabilities p. A Source
	// with a SetProbabilities([]float64) error method receives p (after
	// mixing) whenever it changes.
	Source Directioner

	// Sampling derives p and v from L (Uniform, ISSqrt, ISL), or takes them
	// from P and V (Custom). Default Uniform.
	Sampling Sampling
	// L holds the coordinate Lipschitz constants along the basis
	// directions. Needed by ISSqrt and ISL; optional for Uniform (nil gives
	// v_i = 1).
	L []float64
	// P and V are used when Sampling is Custom. Every p_i must be ≥ 0 and
	// > 0 after mixing, Σp must be 1 within ProbabilityTolerance (p is not
	// renormalized), every v_i finite and > 0.
	P, V []float64
	// Mixing is γ in p ← (1−γ)p + γ/n, applied to every p (derived or
	// given), keeping p strictly positive. Default 0, as in the paper.
	Mixing float64

	// Rule is the step rule, default Decaying.
	Rule StepRule
	// Alpha0 is α0 of the Decaying, ConvexFStar and StronglyConvexFStar
	// rules. Default 1. See OptimalAlpha0
	// for Theorem 1's best value.
	Alpha0 float64
	// Epsilon is ε of the Fixed rule α = ε/(n v_i). Default 1.
	Epsilon float64
	// T is t of the FiniteDifference rule. Default 1e-4 (the paper's).
	T float64
	// FStar is the known optimal value f* for the ConvexFStar and
	// StronglyConvexFStar rules. Default 0.
	FStar float64
	// Mu is μ of the StronglyConvexFStar rule (the paper's
	// μ = λ / max_i v_i²/p_i²). Required (> 0) by that rule.
	Mu float64

	// Momentum is β of SMTP, the heavy-ball variant of STP (Gorbunov, Bibi,
	// Sener, Bergou, Richtárik, ICLR 2020), in [0, 1). Default 0: STP or
	// STP_IS. With β > 0 and Uniform sampling this is SMTP (Algorithm 1 of
	// that paper); with ISSqrt, ISL or Custom sampling of the basis
	// directions it is SMTP_IS. See [Stepper] for the iteration. Only the
	// paper's abstract could be consulted when this was written (no stored
	// copy of its text was found): the update follows Algorithm 1 as
	// recalled (v± = βv ± s, x± = x − γ v±, z± = x± − γβ/(1−β) v±, compare
	// f at z, z+, z−, keep x and v of the winner), which three public
	// re-implementations share; SMTP_IS is that update on basis directions
	// drawn with probabilities p_i and steps ∝ 1/v_i. The steps that STP's
	// analysis sets (FiniteDifference and the f* rules) are scaled by (1−β)
	// so that the compared points are STP's from a standing start; check
	// these against the paper's text.
	Momentum float64
	// Directions is M, the number of directions of one iteration: the
	// iteration draws M indices i.i.d. from p (a repeated index is evaluated
	// twice), evaluates the 2M points x± of all of them in one batch and
	// keeps the best of them and x_k. Keeping the best point keeps f(x_k)
	// monotone, as the three-point comparison does; a combination of the
	// directions (a step along the sum of the winners) would be a point
	// not yet measured, and accepting it unmeasured would lose that
	// guarantee. Default 0 or 1: one direction, the paper's method.
	Directions int
	// Top, when > 0, replaces the three-point choice by a step along a
	// combination of the iteration's M directions, so that one iteration
	// learns from all 2M values rather than from the best one alone: the
	// Top directions whose better point is best are kept, and
	//
	//	g = Σ_j (f(x+α_j b_j) − f(x−α_j b_j)) / (σ Top) · b_j,
	//
	// where σ is the standard deviation of their 2·Top values (so that the
	// step does not depend on the scale of f), and with Momentum β the
	// velocity v ← β v + g (heavy ball), x_k ← x_k + Rate·v (g without
	// momentum; the sign is reversed when minimizing). Σ_j Δ_j b_j / (2α) is the
	// central-difference estimate of the gradient restricted to the drawn
	// directions, which is what a combination must follow; keeping the Top
	// best directions drops the pairs whose values are mostly noise. The new
	// x_k is not measured and f(x_k) becomes NaN: the step is not monotone,
	// as the three-point choice is, in exchange for using every value. α_j
	// comes from the step rule (Decaying or Fixed). Top must be ≤ M.
	// Default 0: the best of x_k and the 2M points, the paper's choice.
	Top int
	// Rate is the step length η of the Top combination. Required (> 0)
	// when Top > 0.
	Rate float64

	// Remeasure re-measures f(x_k) every iteration (a Center point in each
	// iteration's batch). With a noisy f this makes the three-point
	// comparison unbiased — all three values are fresh means of K samples —
	// at 1/3 more cost with the two-point rules. Without it (default) the
	// value that made x_k win is reused: fewer evaluations, but that value
	// is the maximum (minimum) of noisy draws, biased in x_k's favour, and a
	// lucky high-noise value can freeze progress for many iterations.
	// On a deterministic f re-measuring only wastes evaluations.
	Remeasure bool
	// F0, if non-nil, is the known f(x0); the first batch then does not
	// measure x0.
	F0 *float64

	// Src is the random source for index draws. nil means
	// rand.NewPCG(Seed, 0xda3e39cb94b95bdb), which can be checkpointed. A
	// user Src must implement encoding.BinaryMarshaler and
	// encoding.BinaryUnmarshaler for MarshalBinary to work. The stepper
	// keeps and advances the Src it is given.
	Src rand.Source
	// Seed seeds the default source. The same Seed and settings give the
	// same run.
	Seed uint64
}

// checkSettings checks the settings that do not depend on n and fills the
// defaults.
func checkSettings(set *Settings) error {
	if set.Goal != Minimize && set.Goal != Maximize {
		return fmt.Errorf("%w: goal %d", ErrSettings, set.Goal)
	}
	if set.Rule < Decaying || set.Rule > StronglyConvexFStar {
		return fmt.Errorf("%w: step rule %v", ErrSettings, set.Rule)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"Alpha0", set.Alpha0}, {"Epsilon", set.Epsilon}, {"T", set.T}, {"Mu", set.Mu}} {
		if !(c.v >= 0) || math.IsInf(c.v, 0) {
			return fmt.Errorf("%w: %s = %v, want finite and ≥ 0", ErrSettings, c.name, c.v)
		}
	}
	if set.Rule == StronglyConvexFStar && set.Mu == 0 {
		return fmt.Errorf("%w: the strongly convex rule needs Mu > 0", ErrSettings)
	}
	if math.IsNaN(set.FStar) || math.IsInf(set.FStar, 0) {
		return fmt.Errorf("%w: FStar = %v", ErrSettings, set.FStar)
	}
	if !(set.Momentum >= 0 && set.Momentum < 1) {
		return fmt.Errorf("%w: Momentum = %v, want in [0, 1)", ErrSettings, set.Momentum)
	}
	if set.Directions < 0 {
		return fmt.Errorf("%w: Directions = %d, want ≥ 0 (0: 1)", ErrSettings, set.Directions)
	}
	if set.Top < 0 || set.Top > max(set.Directions, 1) {
		return fmt.Errorf("%w: Top = %d, want in [0, Directions = %d]", ErrSettings, set.Top, max(set.Directions, 1))
	}
	if set.Top > 0 {
		switch {
		case !(set.Rate > 0) || math.IsInf(set.Rate, 0):
			return fmt.Errorf("%w: Rate = %v, want finite and > 0 with Top > 0", ErrSettings, set.Rate)
		case set.Rule != Decaying && set.Rule != Fixed:
			return fmt.Errorf("%w: Top > 0 needs the Decaying or Fixed rule, not %v", ErrSettings, set.Rule)
		}
	}
	return nil
}
