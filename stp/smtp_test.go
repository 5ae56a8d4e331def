package stp

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// smtpRef is SMTP written as in the paper's Algorithm 1: v± = βv + s,
// x± = x − γ v±, z± = x± − γβ/(1−β) v±, z ← argmin{f(z), f(z+), f(z−)},
// and x, v those of the winner (kept when z is kept).
type smtpRef struct {
	beta    float64
	x, v, z []float64
	fz      float64
}

// candidates returns z+, z− and their x and v for direction s and step γ.
func (r *smtpRef) candidates(s []float64, gamma float64) (z, x, v [2][]float64) {
	c := gamma * r.beta / (1 - r.beta)
	for k, sg := range []float64{1, -1} {
		z[k], x[k], v[k] = make([]float64, len(s)), make([]float64, len(s)), make([]float64, len(s))
		for i := range s {
			v[k][i] = r.beta*r.v[i] + sg*s[i]
			x[k][i] = r.x[i] - gamma*v[k][i]
			z[k][i] = x[k][i] - c*v[k][i]
		}
	}
	return z, x, v
}

func near(a, b []float64, tol float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*(1+math.Abs(b[i])) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestSMTPMatchesPaper drives the stepper with Momentum β and checks every
// batch and every update against smtpRef: the stepper's Plus point is the
// paper's z− for s = b_i (the stepper writes v and s with the opposite
// sign) and its Minus point the paper's z+; after each iteration the
// stepper's X, Anchor and Velocity are the paper's z, x and −v. The steps
// decay (γ = α0/(v_i √(k+1))), so z± ≠ z ∓ γ/(1−β) s and the drift term is
// exercised. With β = 0 the reference is followed by the plain STP stepper.
// SMTP (uniform) and SMTP_IS (ISL, per-direction steps) are both checked.
func TestSMTPMatchesPaper(t *testing.T) {
	n := 8
	q := newQuad(n, 100)
	for _, c := range []struct {
		beta float64
		smp  Sampling
	}{{0.7, Uniform}, {0.7, ISL}, {0.3, ISSqrt}, {0, Uniform}, {0, ISL}} {
		x0 := make([]float64, n)
		s, err := NewStepper(x0, Settings{Momentum: c.beta, Sampling: c.smp, L: q.L, Rule: Decaying, Alpha0: 10, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		ref := &smtpRef{beta: c.beta, x: make([]float64, n), v: make([]float64, n), z: make([]float64, n), fz: q.f(x0)}
		col := make([]float64, n)
		moves := 0
		for it := range 300 {
			b, err := s.Propose()
			if err != nil {
				t.Fatal(err)
			}
			Canonical(n).Column(b.Index, col)
			z, x, v := ref.candidates(col, b.Alpha)
			if !near(b.Points[0], z[1], 1e-14) || !near(b.Points[1], z[0], 1e-14) {
				t.Fatalf("β %v %v iteration %d: points %v, paper's z−, z+ %v", c.beta, c.smp, it, b.Points[:2], [][]float64{z[1], z[0]})
			}
			vals := make([]float64, len(b.Points))
			for j, p := range b.Points {
				vals[j] = q.f(p)
			}
			if _, err := s.Tell(vals); err != nil {
				t.Fatal(err)
			}
			best, k := ref.fz, -1
			for kk := range 2 {
				if fz := q.f(z[kk]); fz < best {
					best, k = fz, kk
				}
			}
			if k >= 0 {
				ref.z, ref.x, ref.v, ref.fz = z[k], x[k], v[k], best
				moves++
			}
			negV := make([]float64, n)
			for i, vi := range ref.v {
				negV[i] = -vi
			}
			if !near(s.X(), ref.z, 1e-14) || !near(s.Anchor(), ref.x, 1e-14) || !near(s.Velocity(), negV, 1e-14) && c.beta > 0 {
				t.Fatalf("β %v %v iteration %d: z, x, v = %v %v %v, paper %v %v %v", c.beta, c.smp, it, s.X(), s.Anchor(), s.Velocity(), ref.z, ref.x, negV)
			}
		}
		if moves < 10 {
			t.Errorf("β %v %v: %d moves, f %v from %v: the comparison did not exercise the method", c.beta, c.smp, moves, ref.fz, q.f(x0))
		}
	}
}

// TestSMTPConstantStep: with a constant γ the compared points of SMTP are
// z± = z ∓ γ/(1−β) s, those of STP with step γ/(1−β). SMTP with the Fixed
// rule's ε then follows STP with ε/(1−β), up to rounding.
func TestSMTPConstantStep(t *testing.T) {
	q := newQuad(8, 100) // trajectory's
	for _, beta := range []float64{0.5, 0.9} {
		a := trajectory(t, Settings{Momentum: beta, L: q.L, Rule: Fixed, Epsilon: 2, Seed: 3}, 400)
		b := trajectory(t, Settings{L: q.L, Rule: Fixed, Epsilon: 2 / (1 - beta), Seed: 3}, 400)
		for k := range a {
			if !near(a[k], b[k], 1e-9) {
				t.Fatalf("β %v iteration %d: SMTP z = %v, STP with ε/(1−β) x = %v", beta, k, a[k], b[k])
			}
		}
		if near(a[0], a[len(a)-1], 1e-3) {
			t.Fatalf("β %v: did not move", beta)
		}
	}
}

// pointsTo returns the points evaluated until f ≤ target (or maxIter).
func pointsTo(t *testing.T, f func([]float64) float64, x0 []float64, set Settings, target float64, maxIter int) int64 {
	s, err := NewStepper(x0, set)
	if err != nil {
		t.Fatal(err)
	}
	run(t, s, f, maxIter, func(s *Stepper) bool { return s.F() <= target })
	if s.F() > target {
		return math.MaxInt64
	}
	return s.Points()
}

// TestMomentumGain: on an ill-conditioned quadratic (L_i from 1 to 100)
// with uniform sampling, SMTP reaches f ≤ 1e-6 f(x0) in fewer evaluations
// than STP with the same step constant, on every seed: with the Fixed rule
// (β = 0.5, 0.9) its compared points move by γ/(1−β) (TestSMTPConstantStep),
// so the same ε goes further; with the Decaying rule (β = 0.5, to
// 1e-3 f(x0)) on average over the seeds.
func TestMomentumGain(t *testing.T) {
	n := 20
	q := newQuad(n, 100)
	x0 := make([]float64, n)
	r0 := q.f(x0)
	for _, c := range []struct {
		set     Settings
		betas   []float64
		target  float64
		perSeed bool
	}{
		{Settings{Rule: Fixed, Epsilon: float64(n)}, []float64{0.5, 0.9}, 1e-6, true},
		{Settings{Rule: Decaying, Alpha0: 10}, []float64{0.5}, 1e-3, false},
	} {
		mean := make([]float64, len(c.betas)+1)
		for seed := range uint64(5) {
			set := c.set
			set.L, set.Seed = q.L, seed
			got := []int64{pointsTo(t, q.f, x0, set, c.target*r0, 50000)}
			for _, beta := range c.betas {
				set.Momentum = beta
				got = append(got, pointsTo(t, q.f, x0, set, c.target*r0, 50000))
			}
			for k, g := range got {
				mean[k] += float64(g) / 5
				if k > 0 && c.perSeed && g >= got[0] {
					t.Errorf("%v seed %d: SMTP β %v took %d evaluations, STP %d", c.set.Rule, seed, c.betas[k-1], g, got[0])
				}
			}
			t.Logf("%v seed %d: evaluations to %g·f(x0): STP, SMTP β %v: %v", c.set.Rule, seed, c.target, c.betas, got)
		}
		t.Logf("%v: mean evaluations STP, SMTP β %v: %v", c.set.Rule, c.betas, mean)
		for k := range c.betas {
			if mean[k+1] >= mean[0] {
				t.Errorf("%v: SMTP β %v mean %v evaluations, STP %v", c.set.Rule, c.betas[k], mean[k+1], mean[0])
			}
		}
	}
}

func TestMomentumBadSettings(t *testing.T) {
	for _, beta := range []float64{1, -0.1, math.NaN()} {
		if _, err := NewStepper([]float64{0, 0}, Settings{Momentum: beta}); !errors.Is(err, ErrSettings) {
			t.Errorf("Momentum %v: %v, want ErrSettings", beta, err)
		}
	}
}

// TestSMTPOptimalStepsMatchSTP: the rules whose step STP's analysis sets
// (finite difference, and the two f* rules) give SMTP γ = (1−β)α, so from
// x0 (velocity 0, where z± = x0 ± γ/(1−β) s) SMTP compares exactly the
// points STP compares.
func TestSMTPOptimalStepsMatchSTP(t *testing.T) {
	q := newQuad(6, 10)
	for _, rule := range []StepRule{FiniteDifference, ConvexFStar, StronglyConvexFStar} {
		first := func(beta float64) Batch {
			s, err := NewStepper(make([]float64, 6), Settings{Momentum: beta, Rule: rule, Alpha0: 0.5, Mu: 1, T: 1e-3, Seed: 4})
			if err != nil {
				t.Fatal(err)
			}
			for {
				b, err := s.Propose()
				if err != nil {
					t.Fatal(err)
				}
				if slices.Contains(b.Roles, Plus) {
					return b
				}
				vals := make([]float64, len(b.Points))
				for j, p := range b.Points {
					vals[j] = q.f(p)
				}
				if _, err := s.Tell(vals); err != nil {
					t.Fatal(err)
				}
			}
		}
		stp, smtp := first(0), first(0.6)
		for k, r := range stp.Roles {
			if r == Plus || r == Minus {
				if !near(smtp.Points[k], stp.Points[k], 1e-12) {
					t.Fatalf("%v: SMTP's point %v, STP's %v", rule, smtp.Points[k], stp.Points[k])
				}
			}
		}
		if want := stp.Alpha * 0.4; math.Abs(smtp.Alpha-want) > 1e-12*want {
			t.Fatalf("%v: SMTP's γ %v, want (1−β)·α = %v", rule, smtp.Alpha, want)
		}
	}
}
