package stp

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDirections: with M directions a batch holds 2M points (and x_k when
// measured), the new x_k is the best of them, and on a quadratic M = 4
// needs fewer iterations than M = 1 (each costing more evaluations). With
// the finite-difference rule the probe batch holds M probes.
func TestDirections(t *testing.T) {
	n := 12
	q := newQuad(n, 100)
	x0 := make([]float64, n)
	for _, beta := range []float64{0, 0.5} {
		s, err := NewStepper(x0, Settings{Directions: 4, Momentum: beta, L: q.L, Rule: Fixed, Epsilon: 2, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for it := range 50 {
			f0 := s.F()
			b, _ := s.Propose()
			want := 8
			if it == 0 {
				want = 9
			}
			if len(b.Points) != want || len(b.Indices) != 4 || len(b.Alphas) != 4 || len(b.Dir) != want {
				t.Fatalf("batch of %d points, %d indices, %d steps, %d dirs", len(b.Points), len(b.Indices), len(b.Alphas), len(b.Dir))
			}
			vals := make([]float64, len(b.Points))
			for j, p := range b.Points {
				vals[j] = q.f(p)
				if r := b.Roles[j]; r != Center && (r != []Role{Plus, Minus}[j%2] || b.Dir[j] != j/2) {
					t.Fatalf("point %d: role %v dir %d", j, r, b.Dir[j])
				}
			}
			out, err := s.Tell(vals)
			if err != nil {
				t.Fatal(err)
			}
			min := slices.Min(vals)
			if it > 0 {
				min = math.Min(min, f0)
			}
			if out.F != min || (out.Point >= 0 && vals[out.Point] != out.F) || (out.Point < 0 && out.Accepted != Center) {
				t.Fatalf("β %v iteration %d: kept f %v (point %d), best of the batch %v", beta, it, out.F, out.Point, min)
			}
			if out.Point >= 0 && !slices.Equal(s.X(), b.Points[out.Point]) {
				t.Fatalf("x_k is not the accepted point")
			}
		}
	}
	r0 := q.f(x0)
	var iters [2]float64
	for k, m := range []int{1, 4} {
		for seed := range uint64(5) {
			s, _ := NewStepper(x0, Settings{Directions: m, L: q.L, Rule: FiniteDifference, Seed: seed})
			iters[k] += float64(run(t, s, q.f, 20000, func(s *Stepper) bool { return s.F() <= 1e-6*r0 }))
		}
	}
	t.Logf("iterations to 1e-6·f(x0), sum over 5 seeds: M=1 %v, M=4 %v", iters[0], iters[1])
	if !(iters[1] < iters[0]/2) {
		t.Errorf("iterations to 1e-6·f(x0), 5 seeds: M=1 %v, M=4 %v; want M=4 below half", iters[0], iters[1])
	}
	s, _ := NewStepper(x0, Settings{Directions: 3, Rule: FiniteDifference})
	if b, _ := s.Propose(); !slices.Equal(b.Roles, []Role{Probe, Probe, Probe, Center}) || !slices.Equal(b.Dir, []int{0, 1, 2, -1}) {
		t.Errorf("FD probe batch %v %v", b.Roles, b.Dir)
	}
}

// TestSuccessRule: the Success rule converges on an ill-conditioned
// quadratic (with uniform and IS-L sampling); on a noisy plateau (f pure noise) its
// steps stay within [StepMin, StepMax]/v_i: bounded away from 0 without
// re-measuring x_k (most moves fail), bounded above with it (most succeed).
func TestSuccessRule(t *testing.T) {
	n := 20
	q := newQuad(n, 100)
	x0 := make([]float64, n)
	r0 := q.f(x0)
	for _, smp := range []Sampling{Uniform, ISL} {
		// StepMin bounds the precision: |x_i − x*_i| ≈ StepMin/v_i at best.
		s, _ := NewStepper(x0, Settings{Rule: Success, Alpha0: 0.1, StepMin: 1e-6, Sampling: smp, L: q.L, Seed: 2})
		run(t, s, q.f, 50000, func(s *Stepper) bool { return s.F() <= 1e-8*r0 })
		if s.F() > 1e-8*r0 {
			t.Errorf("%v: f = %v after %d iterations", smp, s.F(), s.Iter())
		} else {
			t.Logf("%v: f ≤ 1e-8·f(x0) after %d iterations", smp, s.Iter())
		}
	}
	for _, remeasure := range []bool{false, true} {
		noise := rand.New(rand.NewPCG(4, 4))
		set := Settings{Goal: Maximize, Rule: Success, Remeasure: remeasure, StepMin: 0.01, StepMax: 10, Seed: 3}
		s, _ := NewStepper(x0, set)
		lo, hi := math.Inf(1), 0.0
		for range 2000 {
			b, _ := s.Propose()
			vals := make([]float64, len(b.Points))
			for j := range vals {
				vals[j] = noise.NormFloat64()
			}
			if _, err := s.Tell(vals); err != nil {
				t.Fatal(err)
			}
			lo, hi = math.Min(lo, b.Alpha), math.Max(hi, b.Alpha)
		}
		steps := s.Steps()
		t.Logf("remeasure %v: steps within [%v, %v], final mean σ %v", remeasure, lo, hi, sum(steps)/float64(n))
		if lo < set.StepMin || hi > set.StepMax {
			t.Errorf("remeasure %v: steps within [%v, %v], want within [%v, %v]", remeasure, lo, hi, set.StepMin, set.StepMax)
		}
		if m := sum(steps) / float64(n); remeasure && m < 1 || !remeasure && m > 0.1 {
			t.Errorf("remeasure %v: mean σ %v at the end", remeasure, m)
		}
	}
}

func TestStepControlBadSettings(t *testing.T) {
	x0 := []float64{0, 0}
	for _, c := range []struct {
		name string
		set  Settings
	}{
		{"M < 0", Settings{Directions: -1}},
		{"Grow < 1", Settings{Rule: Success, Grow: 0.5}},
		{"Shrink > 1", Settings{Rule: Success, Shrink: 2}},
		{"StepMin > α0", Settings{Rule: Success, StepMin: 2}},
		{"StepMax < α0", Settings{Rule: Success, Alpha0: 2, StepMax: 1}},
		{"StepMin Inf", Settings{Rule: Success, StepMin: math.Inf(1)}},
		{"rule", Settings{Rule: Success + 1}},
	} {
		if _, err := NewStepper(x0, c.set); !errors.Is(err, ErrSettings) {
			t.Errorf("%s: %v, want ErrSettings", c.name, err)
		}
	}
}
