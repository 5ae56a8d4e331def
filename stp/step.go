package stp

import (
	"fmt"
	"math"
)

// StepRule chooses the step size α of an iteration; every rule is
// proportional to 1/v_i (Algorithm 1, step 2). k is the 0-based iteration.
type StepRule int

const (
	// Decaying is Theorem 1's α = α0 / (v_i √(k+1)). The paper's RL table
	// calls it "adaptive step size".
	Decaying StepRule = iota
	// Fixed is Theorem 2's α = ε / (n v_i).
	Fixed
	// FiniteDifference is Theorems 3 and 4's α = |f(x_k + t b_i) − f(x_k)| / (t v_i).
	// It costs one more evaluation per iteration (the probe x_k + t b_i),
	// which must be known before x± can be built: the iteration takes two
	// batches (see [Stepper.Propose]). With Settings.Momentum β the probe is
	// z^k + t b_i and SMTP's step is γ = (1−β) |f(z^k + t b_i) − f(z^k)| / (t v_i),
	// so that a constant γ moves z by the STP step γ/(1−β).
	FiniteDifference
	// ConvexFStar is the appendix rule for convex f with known f*:
	// α = α0 |f(x_k) − f*| / v_i.
	ConvexFStar
	// StronglyConvexFStar is the appendix rule for strongly convex f with
	// known f*: α = (α0 / v_i) √(2μ |f(x_k) − f*|).
	StronglyConvexFStar
)

func (r StepRule) String() string {
	switch r {
	case Decaying:
		return "decaying"
	case Fixed:
		return "fixed"
	case FiniteDifference:
		return "finite-difference"
	case ConvexFStar:
		return "convex-fstar"
	case StronglyConvexFStar:
		return "strongly-convex-fstar"
	}
	return fmt.Sprintf("StepRule(%d)", int(r))
}

// OptimalAlpha0 returns Theorem 1's best α0 = 8^(1/4) √((f(x0) − f*) / Σ p_i L_i / v_i²).
// fGap is f(x0) − f* (or its absolute value for a maximization).
func OptimalAlpha0(fGap float64, p, v, L []float64) (float64, error) {
	s, err := weightedL(p, v, L)
	if err != nil {
		return 0, err
	}
	if !(fGap >= 0) || math.IsInf(fGap, 0) {
		return 0, fmt.Errorf("%w: f(x0) − f* = %v, want finite and ≥ 0", ErrSettings, fGap)
	}
	return math.Pow(8, 0.25) * math.Sqrt(fGap/s), nil
}

// weightedL returns Σ p_i L_i / v_i².
func weightedL(p, v, L []float64) (float64, error) {
	if len(p) != len(v) || len(p) != len(L) {
		return 0, fmt.Errorf("%w: len(p), len(v), len(L) = %d, %d, %d", ErrDimension, len(p), len(v), len(L))
	}
	var s float64
	for i := range p {
		s += p[i] * L[i] / (v[i] * v[i])
	}
	return s, nil
}

func minRatio(p, v []float64) float64 {
	m := math.Inf(1)
	for i := range p {
		m = math.Min(m, p[i]/v[i])
	}
	return m
}

// Theorem2Iterations returns Theorem 2's bound on the iterations K after
// which min_k E‖∇f(x_k)‖₁ ≤ ε with the Fixed rule α = ε/(n v_i), and
// reports whether the theorem's condition Σ p_i L_i / v_i² < 2n min_i p_i/v_i
// holds. r0 = f(x0) − f*.
func Theorem2Iterations(r0, eps float64, p, v, L []float64) (k float64, ok bool, err error) {
	s, err := weightedL(p, v, L)
	if err != nil {
		return 0, false, err
	}
	n := float64(len(p))
	mr := minRatio(p, v)
	q := s / (2 * n * mr)
	if q >= 1 {
		return math.Inf(1), false, nil
	}
	return 2 * n * r0 / (mr * (1 - q) * eps * eps), true, nil
}

// Theorem4Iterations returns Theorem 4's bound on the iterations after
// which E[f(x_k)] − f* ≤ ε with the FiniteDifference rule on a
// λ-strongly convex f: (max_i v_i/p_i) / λ · log(2 r0 / ε).
func Theorem4Iterations(r0, eps, lambda float64, p, v []float64) (float64, error) {
	if len(p) != len(v) {
		return 0, fmt.Errorf("%w: len(p) = %d, len(v) = %d", ErrDimension, len(p), len(v))
	}
	m := 0.0
	for i := range p {
		m = math.Max(m, v[i]/p[i])
	}
	return m / lambda * math.Log(2*r0/eps), nil
}

// needsPre reports whether this iteration needs a batch before x± is known.
func (s *Stepper) needsPre() bool {
	switch s.set.Rule {
	case FiniteDifference:
		return true
	case ConvexFStar, StronglyConvexFStar:
		return !s.fKnown
	}
	return false
}

func (s *Stepper) alpha0() float64 {
	if s.set.Alpha0 == 0 {
		return 1
	}
	return s.set.Alpha0
}

// stepSize returns α of direction j given the current f and, for the
// finite-difference rule, the probe value.
func (s *Stepper) stepSize(j int, probe float64) float64 {
	vi := 1.0 // a direction that is no basis column (Drawn.Index −1)
	if i := s.idx[j]; i >= 0 {
		vi = s.v[i]
	}
	a0 := s.alpha0()
	switch s.set.Rule {
	case Decaying:
		return a0 / (vi * math.Sqrt(float64(s.iter+1)))
	case Fixed:
		eps := s.set.Epsilon
		if eps == 0 {
			eps = 1
		}
		return eps / (float64(s.n) * vi)
	case FiniteDifference:
		return s.damp(math.Abs(probe-s.f) / (s.t() * vi))
	case ConvexFStar:
		return s.damp(a0 * math.Abs(s.f-s.set.FStar) / vi)
	case StronglyConvexFStar:
		return s.damp(a0 / vi * math.Sqrt(2*s.set.Mu*math.Abs(s.f-s.set.FStar)))
	}
	panic("stp: unreachable")
}

func (s *Stepper) t() float64 {
	if s.set.T == 0 {
		return 1e-4
	}
	return s.set.T
}
