package stp

import (
	"fmt"
	"math"
	"math/rand/v2"
)

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

	p, v []float64
	// dir draws the directions; weight holds their weights (Drawn.Weight).
	dir    Directioner
	weight []float64

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
	s.dir = settings.Source
	if s.dir == nil {
		s.dir = &IndexSampler{basis: s.basis} // p is set by setPV below
	}
	if s.dir.Dim() != n {
		return nil, fmt.Errorf("%w: direction source of dimension %d, len(x0) = %d", ErrDimension, s.dir.Dim(), n)
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
	s.weight = make([]float64, s.m)
	s.alpha = make([]float64, s.m)
	s.dirs = make([][]float64, s.m)
	for j := range s.dirs {
		s.dirs[j] = make([]float64, n)
	}
	return s, nil
}

func (s *Stepper) between() error {
	if s.drawn || s.phase != phaseIdle {
		return fmt.Errorf("%w: an iteration is in progress", ErrSequence)
	}
	return nil
}

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
		if err := s.dir.Draw(s.rnd, Drawn{Dirs: s.dirs, Index: s.idx, Weight: s.weight}); err != nil {
			return Batch{}, fmt.Errorf("stp: drawing directions: %w", err)
		}
		for j := range s.alpha {
			s.alpha[j] = math.NaN()
		}
		s.drawn = true
		s.preDone = false
		s.centerThisIt = false
	}
	b := Batch{Iter: s.iter, Index: s.idx[0], Indices: append([]int(nil), s.idx...), Weights: append([]float64(nil), s.weight...)}
	for _, d := range s.dirs {
		b.Directions = append(b.Directions, append([]float64(nil), d...))
	}
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

// MoveTo sets x_k between iterations, as when a trainer backs off to a
// better point: f(x_k) becomes unknown (the next iteration measures it
// where the rule measures x_k), the momentum's velocity is zeroed and its
// anchor moved; the direction stream and the step schedule go on.
func (s *Stepper) MoveTo(x []float64) error {
	if err := s.between(); err != nil {
		return err
	}
	if len(x) != s.n {
		return fmt.Errorf("%w: MoveTo got %d coordinates, want %d", ErrSettings, len(x), s.n)
	}
	copy(s.x, x)
	s.f, s.fKnown = math.NaN(), false
	if s.hx != nil {
		copy(s.hx, x)
	}
	for i := range s.vel {
		s.vel[i] = 0
	}
	return nil
}
