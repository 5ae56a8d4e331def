package convex

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// MaxSolveDim is the largest n that Solve accepts: it factorizes a dense
// n×n matrix (n = 10000 takes 800 MB).
const MaxSolveDim = 10000

// Problem is a convex objective on R^n with known coordinate Lipschitz
// constants and an exact minimizer.
type Problem interface {
	// Dim returns n.
	Dim() int
	// Func returns f(x), computed from scratch in O(nnz(A)).
	Func(x []float64) float64
	// Grad returns ∇f(x) (for the squared SVM, the gradient of the
	// piecewise quadratic, which is continuous).
	Grad(x []float64) []float64
	// Lipschitz returns L_1..L_n (Assumption 1 of the paper).
	Lipschitz() []float64
	// NewCursor returns a cursor at x (copied).
	NewCursor(x []float64) Cursor
	// Solve returns a minimizer x* and f* = f(x*).
	Solve(ctx context.Context) ([]float64, float64, error)
}

// Cursor tracks a point x and its residuals so that f along a coordinate
// costs O(non-zeros of that column).
type Cursor interface {
	// Value returns f(x).
	Value() float64
	// Along returns f(x + α e_i) without moving.
	Along(i int, alpha float64) float64
	// Move sets x ← x + α e_i.
	Move(i int, alpha float64)
	// Reset moves to x (copied), recomputing the residuals from scratch,
	// which also clears the rounding error accumulated by Move.
	Reset(x []float64)
	// X returns the current point (not a copy).
	X() []float64
}

func dot(a, b []float64) (s float64) {
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// data is what both problems share: A, y, λ and the column norms.
type data struct {
	A      *CSC
	Y      []float64
	Lambda float64
	sq     []float64 // ‖A(:,i)‖²
}

func newData(name string, a *CSC, y []float64, lambda float64) (data, error) {
	switch {
	case a == nil || a.N == 0:
		return data{}, fmt.Errorf("convex: %s: no columns", name)
	case len(y) != a.M:
		return data{}, fmt.Errorf("convex: %s: A has %d rows, y has %d", name, a.M, len(y))
	case !(lambda > 0) || math.IsInf(lambda, 0):
		return data{}, fmt.Errorf("convex: %s: λ = %v, want finite and > 0", name, lambda)
	}
	d := data{A: a, Y: y, Lambda: lambda, sq: make([]float64, a.N)}
	for i := range d.sq {
		d.sq[i] = a.ColNorm2(i)
	}
	return d, nil
}

// Dim returns n.
func (d *data) Dim() int { return d.A.N }

// M returns m.
func (d *data) M() int { return d.A.M }

// lipschitz returns L_i = scale·‖A(:,i)‖² + λ.
func (d *data) lipschitz(scale float64) []float64 {
	L := make([]float64, d.A.N)
	for i := range L {
		L[i] = scale*d.sq[i] + d.Lambda
	}
	return L
}

// solveNormal solves (scale·AᵀWA + λI) x = b by Cholesky (W = diag(w), nil
// for I).
func (d *data) solveNormal(w []float64, scale float64, b []float64) ([]float64, error) {
	n := d.A.N
	if n > MaxSolveDim {
		return nil, fmt.Errorf("convex: solve: n = %d features, the dense solve's limit is %d", n, MaxSolveDim)
	}
	g := d.A.Gram(w)
	for i := range n {
		for j := range n {
			g[i*n+j] *= scale
		}
		g[i*n+i] += d.Lambda
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(n, g)) {
		return nil, errors.New("convex: solve: normal matrix not positive definite")
	}
	var xs mat.VecDense
	if err := ch.SolveVecTo(&xs, mat.NewVecDense(n, b)); err != nil {
		return nil, fmt.Errorf("convex: solve: %w", err)
	}
	return mat.Col(nil, 0, &xs), nil
}
