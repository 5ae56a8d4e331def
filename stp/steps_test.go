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
		{"rule", Settings{Rule: StronglyConvexFStar + 1}},
		{"Alpha0 Inf", Settings{Alpha0: math.Inf(1)}},
	} {
		if _, err := NewStepper(x0, c.set); !errors.Is(err, ErrSettings) {
			t.Errorf("%s: %v, want ErrSettings", c.name, err)
		}
	}
}
