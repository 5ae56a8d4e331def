package stp

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

// Role is what a point of a [Batch] is.
type Role int

const (
	// Plus is x+ = x_k + α b_i.
	Plus Role = iota
	// Minus is x− = x_k − α b_i.
	Minus
	// Center is x_k itself (measured at the start, and every iteration when
	// Settings.Remeasure is set).
	Center
	// Probe is x_k + t b_i, the finite-difference probe.
	Probe
	// Combined is no point's role: it is Outcome.Accepted when the
	// iteration moved x_k along the combination of its directions
	// (Settings.Top).
	Combined
)

func (r Role) String() string {
	switch r {
	case Plus:
		return "plus"
	case Minus:
		return "minus"
	case Center:
		return "center"
	case Probe:
		return "probe"
	case Combined:
		return "combined"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Settings configures a [Stepper]. The zero value is plain STP with the
// Decaying rule (α0 = 1) on the canonical basis, minimizing, with v_i = 1,
// one direction per iteration and no momentum. Every zero value means the
// documented default, which is the paper's method.
type Settings struct {
	// Goal is Minimize (default) or Maximize.
	Goal Goal
	// Basis gives the directions; nil means Canonical(len(x0)).
	Basis Basis

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

// Batch is the set of points of one phase of an iteration. Points[j] has
// role Roles[j]; Tell expects one value per point, in the same order.
type Batch struct {
	// Iter is the 0-based iteration the batch belongs to.
	Iter int
	// Index is i, the 0-based index of the direction b_i (Indices[0]).
	Index int
	// Alpha is the step α of x± (Alphas[0]; NaN in a finite-difference
	// probe batch, whose α is not known yet). With Momentum it is SMTP's
	// step γ of the anchor x, not the distance of x± from x_k.
	Alpha float64
	// Indices and Alphas give the index and the step of each of the M
	// directions of the iteration (length 1 unless Settings.Directions > 1).
	Indices []int
	Alphas  []float64
	// Points are the points to evaluate; the stepper does not keep them.
	Points [][]float64
	// Roles gives the role of each point.
	Roles []Role
	// Dir gives, for each point, which of the M directions (an index into
	// Indices) it belongs to; −1 for Center.
	Dir []int
}

// Outcome is what Tell did.
type Outcome struct {
	// Completed is true when the batch finished an iteration (false after
	// a finite-difference probe batch, or a batch that only measured x0).
	Completed bool
	// Accepted is the role of the new x_k: Plus, Minus or Center (kept).
	Accepted Role
	// Point is the index in the told batch's Points of the new x_k: the
	// accepted Plus or Minus point, or the Center point when x_k was kept
	// and measured in this batch; −1 otherwise.
	Point int
	// F is the current value f(x_k).
	F float64
}

type phase int

const (
	phaseIdle phase = iota // no batch outstanding
	phasePre               // probe / x0 batch outstanding
	phaseMain              // x± batch outstanding
)

// Stepper runs Algorithm 1 one batch at a time. Create it with NewStepper.
// A Stepper is not safe for concurrent use.
//
// With Settings.Momentum β > 0 it runs SMTP (SMTP_IS with importance
// sampling). The stepper then keeps, besides the current point, SMTP's
// heavy-ball anchor x^k and velocity v^k (v^{−1} = 0, x^0 = x0), and its
// current point is SMTP's virtual iterate z^k, the point whose value is
// compared (z^0 = x0). One iteration with direction s = b_i and step γ
// (the step rule's α, so γ ∝ 1/v_i) evaluates
//
//	v± = β v^k ± s,  x± = x^k + γ v±,  z± = x± + γ β/(1−β) v±,
//
// keeps the best of z^k, z+, z− as z^{k+1} and carries the x± and v± of
// the winner (x and v stay when z^k is kept). This is the paper's Algorithm
// 1 (v± = βv + s, x± = x − γ v±, z± = x± − γβ/(1−β) v±) with its v and s
// written with the opposite sign, so that Plus moves along +b_i as in STP;
// the two are the same method because s and −s are equally likely. With
// β = 0 the iteration is STP's exactly. With a constant γ, z± = z^k ±
// γ/(1−β) s: the compared points are those of STP with step γ/(1−β); a
// changing γ adds the drift (γ_last − γ) β/(1−β) v^k, where γ_last is the
// step of the last move. The drift is small for the slowly decaying
// Decaying rule, but large when consecutive steps differ much: per-direction
// steps with very different v_i (importance sampling), the
// FiniteDifference rule.
type Stepper struct {
	set   Settings
	n     int
	m     int // directions per iteration
	basis Basis
	src   rand.Source
	rnd   *rand.Rand

	x      []float64 // the current point x_k (SMTP's z^k)
	f      float64
	fKnown bool // f(x_k) has been measured (f may still be NaN)
	// SMTP's anchor x^k and velocity v^k; nil without momentum (the Top
	// step has a velocity and no anchor).
	hx, vel []float64

	iter   int
	points int64

	p, v  []float64
	table alias

	// Iteration in progress.
	phase        phase
	drawn        bool
	idx          []int
	alpha        []float64
	dirs         [][]float64
	preDone      bool
	centerThisIt bool
	roles        []Role
	dirOf        []int
}

// NewStepper returns a stepper that starts at x0 (copied).
func NewStepper(x0 []float64, settings Settings) (*Stepper, error) {
	n := len(x0)
	if n == 0 {
		return nil, fmt.Errorf("%w: empty x0", ErrDimension)
	}
	for i, xi := range x0 {
		if math.IsNaN(xi) || math.IsInf(xi, 0) {
			return nil, fmt.Errorf("%w: x0[%d] = %v", ErrSettings, i, xi)
		}
	}
	s := &Stepper{set: settings, n: n, x: append([]float64(nil), x0...), f: math.NaN()}
	s.basis = settings.Basis
	if s.basis == nil {
		s.basis = Canonical(n)
	}
	if s.basis.Dim() != n || s.basis.Count() != n {
		return nil, fmt.Errorf("%w: basis of %d directions in dimension %d, len(x0) = %d", ErrDimension, s.basis.Count(), s.basis.Dim(), n)
	}
	if err := checkSettings(&settings); err != nil {
		return nil, err
	}
	s.set = settings
	s.m = max(settings.Directions, 1)
	var p, v []float64
	var err error
	if settings.Sampling == Custom {
		p, v = settings.P, settings.V
	} else {
		p, v, err = FromLipschitz(settings.Sampling, settings.L, n)
		if err != nil {
			return nil, err
		}
	}
	if err := s.setPV(p, v); err != nil {
		return nil, err
	}
	if settings.F0 != nil {
		s.f = *settings.F0
		s.fKnown = true
	}
	if settings.Momentum > 0 {
		// The Top step moves x_k itself: it has a velocity but no anchor.
		if settings.Top == 0 {
			s.hx = append([]float64(nil), x0...)
		}
		s.vel = make([]float64, n)
	}
	s.src = settings.Src
	if s.src == nil {
		s.src = rand.NewPCG(settings.Seed, 0xda3e39cb94b95bdb)
	}
	s.rnd = rand.New(s.src)
	s.idx = make([]int, s.m)
	s.alpha = make([]float64, s.m)
	s.dirs = make([][]float64, s.m)
	for j := range s.dirs {
		s.dirs[j] = make([]float64, n)
	}
	return s, nil
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

func (s *Stepper) setPV(p, v []float64) error {
	pm, err := mix(p, s.set.Mixing, s.n)
	if err != nil {
		return err
	}
	if err := checkV(v, s.n); err != nil {
		return err
	}
	s.p = pm
	s.v = append([]float64(nil), v...)
	s.table = newAlias(s.p)
	return nil
}

// SetLipschitz replaces p and v by those that Settings.Sampling (Uniform,
// ISSqrt or ISL) derives from L, then applies mixing. It may be called only
// between iterations.
func (s *Stepper) SetLipschitz(L []float64) error {
	if err := s.between(); err != nil {
		return err
	}
	if L == nil {
		return fmt.Errorf("%w: nil L", ErrStepParams)
	}
	p, v, err := FromLipschitz(s.set.Sampling, L, s.n)
	if err != nil {
		return err
	}
	return s.setPV(p, v)
}

// SetLipschitzNormalized is SetLipschitz(NormalizeLipschitz(Sampling, L)):
// the scale of L is dropped, so that the step constants keep their
// meaning when L is re-estimated (see [NormalizeLipschitz]). L is not
// modified.
func (s *Stepper) SetLipschitzNormalized(L []float64) error {
	if err := s.between(); err != nil {
		return err
	}
	if len(L) != s.n {
		return fmt.Errorf("%w: len(L) = %d, want %d", ErrDimension, len(L), s.n)
	}
	nl, err := NormalizeLipschitz(s.set.Sampling, L)
	if err != nil {
		return err
	}
	return s.SetLipschitz(nl)
}

// SetProbabilities replaces p (mixing is applied to it) and v. It may be
// called only between iterations. On error the old p and v are kept.
func (s *Stepper) SetProbabilities(p, v []float64) error {
	if err := s.between(); err != nil {
		return err
	}
	return s.setPV(p, v)
}

func (s *Stepper) between() error {
	if s.drawn || s.phase != phaseIdle {
		return fmt.Errorf("%w: an iteration is in progress", ErrSequence)
	}
	return nil
}

// Probabilities returns a copy of p (after mixing).
func (s *Stepper) Probabilities() []float64 { return append([]float64(nil), s.p...) }

// StepParams returns a copy of v.
func (s *Stepper) StepParams() []float64 { return append([]float64(nil), s.v...) }

// X returns a copy of the current point x_k (with Momentum, SMTP's
// virtual iterate z^k, the point whose value F is).
func (s *Stepper) X() []float64 { return append([]float64(nil), s.x...) }

// Anchor returns a copy of SMTP's heavy-ball iterate x^k (X() without
// Momentum).
func (s *Stepper) Anchor() []float64 {
	if s.hx == nil {
		return s.X()
	}
	return append([]float64(nil), s.hx...)
}

// Velocity returns a copy of SMTP's v^k (written with the sign of motion:
// x^{k+1} = x^k + γ v^k); zeros without Momentum.
func (s *Stepper) Velocity() []float64 {
	if s.vel == nil {
		return make([]float64, s.n)
	}
	return append([]float64(nil), s.vel...)
}

// F returns f(x_k) (NaN before x0 is measured).
func (s *Stepper) F() float64 { return s.f }

// Iter returns the number of completed iterations.
func (s *Stepper) Iter() int { return s.iter }

// Points returns the number of points evaluated (values told).
func (s *Stepper) Points() int64 { return s.points }

// Dim returns n.
func (s *Stepper) Dim() int { return s.n }

func (s *Stepper) valid(f float64) bool {
	if math.IsNaN(f) {
		return false
	}
	if s.set.Goal == Minimize {
		return !math.IsInf(f, 1)
	}
	return !math.IsInf(f, -1)
}

// better reports whether c should replace the incumbent value f.
func (s *Stepper) better(c, f float64) bool {
	if !s.valid(c) {
		return false
	}
	if !s.valid(f) {
		return true
	}
	if s.set.Goal == Minimize {
		return c < f
	}
	return c > f
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

// point returns the candidate of direction j on side sg (+1 for Plus, −1
// for Minus), and with momentum writes its anchor and velocity into hx and
// vel when they are not nil.
func (s *Stepper) point(j int, sg float64, hx, vel []float64) []float64 {
	pt := make([]float64, s.n)
	d := s.dirs[j]
	if s.hx == nil {
		a := sg * s.alpha[j]
		for i := range pt {
			pt[i] = s.x[i] + a*d[i]
		}
		return pt
	}
	b := s.set.Momentum
	g := s.alpha[j]
	c := g * b / (1 - b)
	for i := range pt {
		vi := b*s.vel[i] + sg*d[i]
		xi := s.hx[i] + g*vi
		pt[i] = xi + c*vi
		if hx != nil {
			hx[i], vel[i] = xi, vi
		}
	}
	return pt
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
	vi := s.v[s.idx[j]]
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

// damp scales a step that STP's analysis sets for the compared points by
// (1−β) under SMTP's momentum: SMTP's points move by γ/(1−β) along s from
// a standing start, so γ = (1−β)α compares the points STP would. The
// Decaying and Fixed rules are left as they are: their α0 and ε are the
// user's, and a constant γ moves SMTP's points by γ/(1−β).
func (s *Stepper) damp(a float64) float64 {
	if s.hx != nil {
		return a * (1 - s.set.Momentum)
	}
	return a
}

func (s *Stepper) t() float64 {
	if s.set.T == 0 {
		return 1e-4
	}
	return s.set.T
}

// Propose returns the next batch of points to evaluate. An iteration is one
// batch {x+, x−} per direction (M = Settings.Directions pairs) for the
// Decaying and Fixed rules, plus x_k when it must be measured
// (first iteration without F0, or Remeasure). The FiniteDifference rule
// needs f(x_k + t b_i) before x± exist, so its iterations take two batches:
// {probe per direction[, x_k]} then {x+, x− per direction}. The f*-rules
// take a first batch {x_k} only when f(x_0) is unknown. Propose must be
// followed by Tell before the next Propose.
func (s *Stepper) Propose() (Batch, error) {
	if s.phase != phaseIdle {
		return Batch{}, fmt.Errorf("%w: Propose called twice without Tell", ErrSequence)
	}
	if !s.drawn {
		for j := range s.idx {
			s.idx[j] = s.table.draw(s.rnd)
			s.basis.Column(s.idx[j], s.dirs[j])
			s.alpha[j] = math.NaN()
		}
		s.drawn = true
		s.preDone = false
		s.centerThisIt = false
	}
	b := Batch{Iter: s.iter, Index: s.idx[0], Indices: append([]int(nil), s.idx...)}
	add := func(pt []float64, r Role, j int) {
		b.Points = append(b.Points, pt)
		b.Roles = append(b.Roles, r)
		b.Dir = append(b.Dir, j)
	}
	measureCenter := (!s.fKnown || s.set.Remeasure) && !s.centerThisIt && s.set.Top == 0
	if s.needsPre() && !s.preDone {
		s.phase = phasePre
		if s.set.Rule == FiniteDifference {
			for j, d := range s.dirs {
				pt := make([]float64, s.n)
				for i := range pt {
					pt[i] = s.x[i] + s.t()*d[i]
				}
				add(pt, Probe, j)
			}
		}
	} else {
		s.phase = phaseMain
		for j := range s.dirs {
			if s.set.Rule != FiniteDifference {
				s.alpha[j] = s.stepSize(j, math.NaN())
			}
			add(s.point(j, 1, nil, nil), Plus, j)
			add(s.point(j, -1, nil, nil), Minus, j)
		}
	}
	if measureCenter {
		add(append([]float64(nil), s.x...), Center, -1)
	}
	b.Alphas = append([]float64(nil), s.alpha...)
	b.Alpha = b.Alphas[0]
	s.roles, s.dirOf = b.Roles, b.Dir
	return b, nil
}

// measured applies a fresh measurement of f(x_k). The first measurement is
// kept whatever it is; a re-measurement replaces f only when it is valid.
func (s *Stepper) measured(f float64) {
	if !s.fKnown || s.valid(f) {
		s.f = f
	}
	s.fKnown = true
	s.centerThisIt = true
}

// Tell gives the values of the last proposed batch, in its order, each the
// mean of K evaluations, and applies the three-point rule (the best of x_k
// and the 2M points x±) when the batch completes an iteration. All values
// are counted even when an error is returned. If a finite-difference or f*
// step size cannot be computed because a value is NaN or infinite, Tell
// returns an error wrapping ErrNoValue and the iteration is abandoned (fresh
// indices are drawn by the next Propose; the iteration counter does not
// advance).
func (s *Stepper) Tell(values []float64) (Outcome, error) {
	if s.phase == phaseIdle {
		return Outcome{}, fmt.Errorf("%w: Tell without Propose", ErrSequence)
	}
	if len(values) != len(s.roles) {
		return Outcome{}, fmt.Errorf("%w: got %d values for %d points", ErrDimension, len(values), len(s.roles))
	}
	s.points += int64(len(values))
	ph := s.phase
	s.phase = phaseIdle
	center := -1
	for k, r := range s.roles {
		if r == Center {
			s.measured(values[k])
			center = k
		}
	}
	if ph == phasePre {
		s.preDone = true
		probes := make([]float64, s.m)
		for k, r := range s.roles {
			if r == Probe {
				probes[s.dirOf[k]] = values[k]
			}
		}
		for j := range s.alpha {
			a := s.stepSize(j, probes[j])
			if math.IsNaN(a) || math.IsInf(a, 0) {
				s.drawn = false
				return Outcome{Point: -1, F: s.f}, fmt.Errorf("%w: step size %v at iteration %d (f(x_k) = %v, probe = %v)", ErrNoValue, a, s.iter, s.f, probes[j])
			}
			s.alpha[j] = a
		}
		return Outcome{Point: -1, F: s.f}, nil
	}
	if s.set.Top > 0 {
		return s.combine(values), nil
	}
	acc, best, won := Center, s.f, center
	for k, r := range s.roles {
		if r != Center && s.better(values[k], best) {
			acc, best, won = r, values[k], k
		}
	}
	return s.complete(acc, won, best), nil
}

// complete ends the iteration with the point k of the batch (role acc) as
// x_k, whose value is f.
func (s *Stepper) complete(acc Role, k int, f float64) Outcome {
	if acc != Center {
		sg := 1.0
		if acc == Minus {
			sg = -1
		}
		j := s.dirOf[k]
		if s.hx == nil {
			a := sg * s.alpha[j]
			for i := range s.x {
				s.x[i] += a * s.dirs[j][i]
			}
		} else {
			s.x = s.point(j, sg, s.hx, s.vel)
		}
	}
	s.f = f
	s.iter++
	s.drawn = false
	return Outcome{Completed: true, Accepted: acc, Point: k, F: s.f}
}

// combine ends the iteration with the step of Settings.Top. Directions
// with a value that is not valid are left out; when no direction is left,
// or all kept values are equal, x_k does not move (the velocity decays).
func (s *Stepper) combine(values []float64) Outcome {
	plus, minus := make([]float64, s.m), make([]float64, s.m)
	for k, r := range s.roles {
		switch r {
		case Plus:
			plus[s.dirOf[k]] = values[k]
		case Minus:
			minus[s.dirOf[k]] = values[k]
		}
	}
	sg := 1.0
	if s.set.Goal == Minimize {
		sg = -1
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	var order []int
	for j := range plus {
		if finite(plus[j]) && finite(minus[j]) {
			order = append(order, j)
		}
	}
	score := func(j int) float64 { return math.Max(sg*plus[j], sg*minus[j]) }
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score(b), score(a)) })
	top := order[:min(s.set.Top, len(order))]
	var sum, sumSq float64
	for _, j := range top {
		sum += plus[j] + minus[j]
		sumSq += plus[j]*plus[j] + minus[j]*minus[j]
	}
	cnt := float64(2 * len(top))
	mean := sum / cnt
	sigma := math.Sqrt(math.Max(sumSq/cnt-mean*mean, 0))
	g := make([]float64, s.n)
	if sigma > 0 {
		for _, j := range top {
			w := sg * (plus[j] - minus[j]) / (sigma * float64(len(top)))
			for i, di := range s.dirs[j] {
				g[i] += w * di
			}
		}
	}
	if s.vel != nil {
		for i := range g {
			s.vel[i] = s.set.Momentum*s.vel[i] + g[i]
			g[i] = s.vel[i]
		}
	}
	for i := range s.x {
		s.x[i] += s.set.Rate * g[i]
	}
	s.f = math.NaN()
	s.iter++
	s.drawn = false
	return Outcome{Completed: true, Accepted: Combined, Point: -1, F: s.f}
}
