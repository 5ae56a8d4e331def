package convex

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// SVM is the squared-hinge SVM f(x) = ½ Σ_j max(0, 1 − y_j a_jᵀx)² + λ/2 ‖x‖²
// (a_j is row j of A, y_j = ±1), with L_i = ‖A(:,i)‖² + λ.
type SVM struct {
	data
	yv []float64 // y_j A_ji for each non-zero of A, in A.Val's order
}

var _ Problem = (*SVM)(nil)

// NewSVM returns the squared SVM problem (A not copied). The experiments
// use λ = 1: the loss is summed, not averaged, over the m rows, so λ = 1 is
// the summed-loss counterpart of the ridge problem's λ = 1/m.
func NewSVM(a *CSC, y []float64, lambda float64) (*SVM, error) {
	d, err := newData("svm", a, y, lambda)
	if err != nil {
		return nil, err
	}
	for j, l := range y {
		if l != 1 && l != -1 {
			return nil, fmt.Errorf("convex: svm: label %d is %v, want ±1", j, l)
		}
	}
	yv := make([]float64, len(a.Val))
	for k, j := range a.RowIdx {
		yv[k] = y[j] * a.Val[k]
	}
	return &SVM{data: d, yv: yv}, nil
}

// Lipschitz returns L_i = ‖A(:,i)‖² + λ.
func (p *SVM) Lipschitz() []float64 { return p.lipschitz(1) }

// margins returns z_j = y_j a_jᵀx.
func (p *SVM) margins(x []float64) []float64 {
	z := p.A.MulVec(x)
	for j := range z {
		z[j] *= p.Y[j]
	}
	return z
}

// hinge2 is ½ max(0, 1 − z)².
func hinge2(z float64) float64 {
	if h := 1 - z; h > 0 {
		return h * h / 2
	}
	return 0
}

func loss(z []float64) (s float64) {
	for _, zj := range z {
		s += hinge2(zj)
	}
	return s
}

// Func returns f(x).
func (p *SVM) Func(x []float64) float64 {
	return loss(p.margins(x)) + p.Lambda/2*dot(x, x)
}

// Grad returns ∇f(x) = −Aᵀ(y ⊙ max(0, 1 − z)) + λx, z = y ⊙ Ax.
func (p *SVM) Grad(x []float64) []float64 {
	z := p.margins(x)
	for j, zj := range z {
		z[j] = -p.Y[j] * max(0, 1-zj)
	}
	g := p.A.MulTransVec(z)
	for i := range g {
		g[i] += p.Lambda * x[i]
	}
	return g
}

// Solve returns the minimizer x* and f* = f(x*). gonum's Newton method,
// with the generalized Hessian AᵀDA + λI (D marks the rows with a
// positive hinge), finds the rows S that are active at x*; on them f is a
// quadratic whose minimizer solves (A_SᵀA_S + λI) x = A_Sᵀ y_S. Solve
// returns that solution when S is also its own active set (then it is x*
// up to rounding), and otherwise Newton's point. n above MaxSolveDim is an
// error.
func (p *SVM) Solve(ctx context.Context) ([]float64, float64, error) {
	n := p.Dim()
	if n > MaxSolveDim {
		return nil, 0, fmt.Errorf("convex: svm: solve: n = %d features, the dense solve's limit is %d", n, MaxSolveDim)
	}
	x0 := make([]float64, n)
	g0 := p.Grad(x0)
	prob := optimize.Problem{
		Func: p.Func,
		Grad: func(g, x []float64) { copy(g, p.Grad(x)) },
		Hess: func(h *mat.SymDense, x []float64) {
			g := p.A.Gram(p.active(p.margins(x)))
			for i := range n {
				for j := i; j < n; j++ {
					h.SetSym(i, j, g[i*n+j])
				}
				h.SetSym(i, i, g[i*n+i]+p.Lambda)
			}
		},
		Status: func() (optimize.Status, error) {
			if err := ctx.Err(); err != nil {
				return optimize.Failure, err
			}
			return optimize.NotTerminated, nil
		},
	}
	set := &optimize.Settings{GradientThreshold: 1e-10 * max(1, floats.Norm(g0, math.Inf(1))), MajorIterations: 200}
	res, err := optimize.Minimize(prob, x0, set, &optimize.Newton{})
	if err != nil && res == nil {
		return nil, 0, fmt.Errorf("convex: svm: newton: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	x, f := res.X, p.Func(res.X)
	for range 10 {
		w := p.active(p.margins(x))
		b := make([]float64, len(w))
		for j := range w {
			b[j] = w[j] * p.Y[j]
		}
		xs, err := p.solveNormal(w, 1, p.A.MulTransVec(b))
		if err != nil {
			return nil, 0, fmt.Errorf("svm: %w", err)
		}
		fs := p.Func(xs)
		if slices.Equal(p.active(p.margins(xs)), w) {
			return xs, fs, nil
		}
		if !(fs < f) {
			break
		}
		x, f = xs, fs
	}
	return x, f, nil
}

// active returns w_j = 1 for the rows with a positive hinge (z_j < 1) and
// 0 for the others.
func (p *SVM) active(z []float64) []float64 {
	w := make([]float64, len(z))
	for j, zj := range z {
		if zj < 1 {
			w[j] = 1
		}
	}
	return w
}

// col returns the rows of column i's non-zeros and y_j A_ji on them.
func (p *SVM) col(i int) ([]int, []float64) {
	lo, hi := p.A.ColPtr[i], p.A.ColPtr[i+1]
	return p.A.RowIdx[lo:hi], p.yv[lo:hi]
}

// NewCursor returns a cursor at x.
func (p *SVM) NewCursor(x []float64) Cursor {
	c := &svmCursor{p: p}
	c.Reset(x)
	return c
}

type svmCursor struct {
	p        *SVM
	x, z     []float64
	loss, xx float64
}

func (c *svmCursor) Reset(x []float64) {
	c.x = append(c.x[:0], x...)
	c.z = c.p.margins(c.x)
	c.loss, c.xx = loss(c.z), dot(c.x, c.x)
}

func (c *svmCursor) X() []float64 { return c.x }

func (c *svmCursor) Value() float64 { return c.loss + c.p.Lambda/2*c.xx }

func (c *svmCursor) Along(i int, alpha float64) float64 {
	s := c.loss
	rows, yv := c.p.col(i)
	for k, j := range rows {
		s += hinge2(c.z[j]+alpha*yv[k]) - hinge2(c.z[j])
	}
	xi := c.x[i]
	return s + c.p.Lambda/2*(c.xx+alpha*(2*xi+alpha))
}

func (c *svmCursor) Move(i int, alpha float64) {
	rows, yv := c.p.col(i)
	for k, j := range rows {
		old := c.z[j]
		c.z[j] += alpha * yv[k]
		c.loss += hinge2(c.z[j]) - hinge2(old)
	}
	c.xx += alpha * (2*c.x[i] + alpha)
	c.x[i] += alpha
}
