package figures_test

import (
	"context"
	"fmt"

	"github.com/stpis/stpis/convex"
	"github.com/stpis/stpis/convex/figures"
	"github.com/stpis/stpis/stp"
)

func ExampleIterations() {
	for _, n := range []int{10, 100, 1000} {
		fmt.Println(n, figures.Iterations(n))
	}
	// Output:
	// 10 500
	// 100 5000
	// 1000 15000
}

func ExampleEvalsToTarget() {
	gap := []float64{1, 0.3, 0.05, 0.01, 0.004}
	evals := []int64{1, 4, 7, 10, 13}
	fmt.Println(figures.EvalsToTarget(gap, evals, 0.01))
	fmt.Println(figures.EvalsToTarget(gap, evals, 1e-3))
	// Output:
	// 10
	// -1
}

func ExampleTheorySpeedup() {
	// One coordinate ten times as smooth as the other three: uniform
	// sampling pays n·max L = 40, importance sampling Σ L = 13.
	fmt.Printf("%.3f\n", figures.TheorySpeedup([]float64{10, 1, 1, 1}))
	// Output:
	// 3.077
}

func ExampleProbeT() {
	fmt.Printf("%.2g\n", figures.ProbeT(0.5, []float64{1, 0.2}))
	// Output:
	// 2.1e-08
}

// EvalsToGaps on the paper's synthetic ridge problem: STP_IS reaches each
// relative gap in fewer evaluations than STP.
func ExampleEvalsToGaps() {
	p := convex.SyntheticRidge(100, 10, 1)
	_, fs, _ := p.Solve(context.Background())
	t := figures.ProbeT(p.Func(make([]float64, 10)), p.Lipschitz())
	gaps := []float64{1e-2, 1e-4}
	stpEvals, _ := figures.EvalsToGaps(context.Background(), p, fs, stp.Uniform, gaps, 1e6, t, 1)
	isEvals, _ := figures.EvalsToGaps(context.Background(), p, fs, stp.ISL, gaps, 1e6, t, 1)
	for i, g := range gaps {
		fmt.Printf("gap %g: STP_IS faster: %v\n", g, isEvals[i] < stpEvals[i])
	}
	// Output:
	// gap 0.01: STP_IS faster: true
	// gap 0.0001: STP_IS faster: true
}

func ExampleStepSpeedup() {
	L := []float64{10, 1, 1, 1}
	// All the gradient on the smooth coordinates: STP's short steps there
	// lower f by almost twice what theory counts, and the one-step speedup
	// is near half of theory's 3.077.
	fmt.Printf("%.3f\n", figures.StepSpeedup(L, []float64{0, 1, 1, 1}))
	// All of it on the stiff coordinate: theory's ratio.
	fmt.Printf("%.3f\n", figures.StepSpeedup(L, []float64{1, 0, 0, 0}))
	// Output:
	// 1.619
	// 3.077
}
