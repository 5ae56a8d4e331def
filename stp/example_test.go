package stp_test

import (
	"fmt"

	"github.com/stpis/stpis/stp"
)

// iterate runs one iteration of s on f: it evaluates each batch by hand.
func iterate(s *stp.Stepper, f func([]float64) float64) {
	for {
		b, err := s.Propose()
		if err != nil {
			panic(err)
		}
		values := make([]float64, len(b.Points))
		for j, x := range b.Points {
			values[j] = f(x)
		}
		out, err := s.Tell(values)
		if err != nil {
			panic(err)
		}
		if out.Completed {
			return
		}
	}
}

// Minimize f(x) = ½(x₀−1)² + 2(x₁+2)² with STP_IS and the
// finite-difference step rule, evaluating each batch by hand.
func ExampleStepper() {
	f := func(x []float64) float64 { return 0.5*(x[0]-1)*(x[0]-1) + 2*(x[1]+2)*(x[1]+2) }
	s, err := stp.NewStepper([]float64{0, 0}, stp.Settings{
		Sampling: stp.ISL,
		L:        []float64{1, 4},
		Rule:     stp.FiniteDifference,
		Seed:     1,
	})
	if err != nil {
		panic(err)
	}
	for s.Iter() < 20 {
		iterate(s, f)
	}
	x := s.X()
	fmt.Printf("x = [%.3f %.3f], f < 1e-6: %v, evaluations: %d\n", x[0], x[1], s.F() < 1e-6, s.Points())
	// Output:
	// x = [1.000 -2.000], f < 1e-6: true, evaluations: 61
}

// SMTP (Momentum β = 0.5) with the fixed step, two directions per
// iteration, on the same f, evaluating each batch by hand.
func ExampleStepper_momentum() {
	f := func(x []float64) float64 { return 0.5*(x[0]-1)*(x[0]-1) + 2*(x[1]+2)*(x[1]+2) }
	s, err := stp.NewStepper([]float64{0, 0}, stp.Settings{
		Momentum:   0.5,
		Directions: 2,
		Rule:       stp.Fixed,
		Epsilon:    0.1,
		Seed:       1,
	})
	if err != nil {
		panic(err)
	}
	for s.Iter() < 200 && !(s.F() < 1e-4) {
		iterate(s, f)
	}
	fmt.Printf("f < 1e-4: %v after %d iterations (%d evaluations)\n", s.F() < 1e-4, s.Iter(), s.Points())
	// Output:
	// f < 1e-4: true after 33 iterations (133 evaluations)
}
