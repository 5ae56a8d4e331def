package stp

import (
	"errors"
	"math"
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

func TestStepControlBadSettings(t *testing.T) {
	x0 := []float64{0, 0}
	for _, c := range []struct {
		name string
		set  Settings
	}{
		{"M < 0", Settings{Directions: -1}},
		{"rule", Settings{Rule: Radii + 1}},
		{"Alpha0 Inf", Settings{Alpha0: math.Inf(1)}},
	} {
		if _, err := NewStepper(x0, c.set); !errors.Is(err, ErrSettings) {
			t.Errorf("%s: %v, want ErrSettings", c.name, err)
		}
	}
}

// TestRadii: the Radii rule gives direction j of every iteration the
// radius α0 2^(−j)/v_i, and on a quadratic whose scale α0 overshoots by
// far, where the decaying step spends its iterations shrinking, it reaches
// 1e-2·f(x0) in fewer than half the iterations, as GLD's multi-radius
// search (one radius fits at every scale) predicts.
func TestRadii(t *testing.T) {
	n := 12
	q := newQuad(n, 100)
	x0 := make([]float64, n)
	v := make([]float64, n)
	for i := range v {
		v[i] = 1 + float64(i%3)
	}
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	s, err := NewStepper(x0, Settings{Directions: 4, Rule: Radii, Alpha0: 3, Sampling: Custom, P: p, V: v, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, _ := tell(t, s, q.f)
		for j, a := range b.Alphas {
			if want := 3 * math.Ldexp(1, -j) / v[b.Indices[j]]; a != want {
				t.Fatalf("iteration %d direction %d (index %d): α = %v, want %v", b.Iter, j, b.Indices[j], a, want)
			}
		}
	}
	r0 := q.f(x0)
	for _, a0 := range []float64{4, 16} {
		var iters [2]int
		for k, rule := range []StepRule{Decaying, Radii} {
			for seed := range uint64(5) {
				s, _ := NewStepper(x0, Settings{Directions: 8, Rule: rule, Alpha0: a0, Seed: seed})
				iters[k] += run(t, s, q.f, 5000, func(s *Stepper) bool { return s.F() <= 1e-2*r0 })
			}
		}
		t.Logf("α0 %v: iterations to 1e-2·f(x0), sum over 5 seeds: decaying %d, radii %d", a0, iters[0], iters[1])
		if !(2*iters[1] < iters[0]) {
			t.Errorf("α0 %v: iterations to 1e-2·f(x0), 5 seeds: decaying %d, radii %d; want radii below half", a0, iters[0], iters[1])
		}
	}
}
