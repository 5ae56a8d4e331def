package stp

import (
	"math"
	"testing"
)

// quad is the separable quadratic f(x) = ½ Σ L_i (x_i − c_i)², whose
// coordinate Lipschitz constants are exactly L_i, f* = 0 and strong
// convexity modulus min L_i.
type quad struct {
	L, c []float64
}

// newQuad returns an n-dimensional quad with L log-spaced over [1, spread]
// and c_i = 1.
func newQuad(n int, spread float64) quad {
	q := quad{L: make([]float64, n), c: make([]float64, n)}
	for i := range q.L {
		q.L[i] = math.Pow(spread, float64(i)/float64(n-1))
		q.c[i] = 1
	}
	return q
}

func (q quad) f(x []float64) float64 {
	var s float64
	for i, xi := range x {
		d := xi - q.c[i]
		s += q.L[i] * d * d
	}
	return s / 2
}

func (q quad) grad1(x []float64) float64 {
	var s float64
	for i, xi := range x {
		s += math.Abs(q.L[i] * (xi - q.c[i]))
	}
	return s
}

// tell evaluates the proposed batch on f and tells the values.
func tell(t testing.TB, s *Stepper, f func([]float64) float64) (Batch, Outcome) {
	t.Helper()
	b, err := s.Propose()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float64, len(b.Points))
	for j, p := range b.Points {
		vals[j] = f(p)
	}
	out, err := s.Tell(vals)
	if err != nil {
		t.Fatal(err)
	}
	return b, out
}

// run drives s on f until stop returns true or maxIter iterations, and
// returns the iterations done. It fails the test if f ever increases.
func run(t testing.TB, s *Stepper, f func([]float64) float64, maxIter int, stop func(*Stepper) bool) int {
	t.Helper()
	prev := math.Inf(1)
	for s.Iter() < maxIter {
		if s.Iter() > 0 && stop(s) {
			break
		}
		if _, out := tell(t, s, f); out.Completed {
			if out.F > prev {
				t.Fatalf("f increased at iteration %d: %v > %v", s.Iter(), out.F, prev)
			}
			prev = out.F
		}
	}
	return s.Iter()
}
