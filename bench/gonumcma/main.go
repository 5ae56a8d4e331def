// Command gonumcma compares gonum's optimize.CmaEsChol with package cmaes
// on a 10-D sphere from σ0 0.5, 3000 evaluations each (docs/experiments.md,
// 2026-11-27): go run ./bench/gonumcma
package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/stpis/stpis/cmaes"
)

func main() {
	const n, evals, sigma = 10, 3000, 0.5
	c := make([]float64, n)
	for i := range c {
		c[i] = 1 + float64(i)/4
	}
	f := func(x []float64) float64 {
		var s float64
		for i, v := range x {
			s += (v - c[i]) * (v - c[i])
		}
		return s
	}
	for seed := uint64(1); seed <= 5; seed++ {
		diag := mat.NewDiagDense(n, nil)
		for i := range n {
			diag.SetDiag(i, sigma*sigma)
		}
		var chol mat.Cholesky
		chol.Factorize(diag)
		m := &optimize.CmaEsChol{InitStepSize: sigma, InitCholesky: &chol, StopLogDet: math.NaN(), Src: rand.NewPCG(seed, 1)}
		res, err := optimize.Minimize(optimize.Problem{Func: f}, make([]float64, n), &optimize.Settings{FuncEvaluations: evals, Concurrent: 1}, m)
		gonumBest := math.NaN()
		if err == nil || res != nil {
			gonumBest = res.F
		}
		o, _ := cmaes.New(make([]float64, n), cmaes.Settings{Sigma: sigma, Seed: seed})
		ours := math.Inf(1)
		for used := 0; used+o.Size() <= evals; used += o.Size() {
			pts := o.Propose()
			v := make([]float64, len(pts))
			for i, p := range pts {
				v[i] = -f(p)
				ours = math.Min(ours, f(p))
			}
			_ = o.Tell(v)
		}
		fmt.Printf("seed %d: best f after %d evaluations: gonum CmaEsChol %.3g, cmaes %.3g (its mean %.3g, σ %.3g)\n", seed, evals, gonumBest, ours, f(o.X()), o.Sigma())
	}
}
