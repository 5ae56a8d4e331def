package convex

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
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

// Ridge is f(x) = 1/(2m) ‖Ax − y‖² + λ/2 ‖x‖², with L_i = ‖A(:,i)‖²/m + λ.
type Ridge struct{ data }

var _ Problem = (*Ridge)(nil)

// NewRidge returns the ridge problem with data A (not copied), y and λ > 0.
func NewRidge(a *CSC, y []float64, lambda float64) (*Ridge, error) {
	d, err := newData("ridge", a, y, lambda)
	if err != nil {
		return nil, err
	}
	return &Ridge{d}, nil
}

// SyntheticRidge returns the paper's synthetic problem: A (m×n) and y with
// i.i.d. N(0,1) entries from a PCG seeded by seed, columns rescaled so that
// ‖A(:,1)‖ = 1 and ‖A(:,i)‖ = 1/m for i = 2..n, and λ = 1/m.
func SyntheticRidge(m, n int, seed uint64) *Ridge {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	cols := make([][]float64, n)
	for i := range cols {
		c := make([]float64, m)
		for r := range c {
			c[r] = rng.NormFloat64()
		}
		target := 1 / float64(m)
		if i == 0 {
			target = 1
		}
		s := target / math.Sqrt(dot(c, c))
		for r := range c {
			c[r] *= s
		}
		cols[i] = c
	}
	y := make([]float64, m)
	for r := range y {
		y[r] = rng.NormFloat64()
	}
	a, _ := NewCSC(m, cols) // finite by construction
	p, _ := NewRidge(a, y, 1/float64(m))
	return p
}

// Lipschitz returns L_i = ‖A(:,i)‖²/m + λ.
func (p *Ridge) Lipschitz() []float64 { return p.lipschitz(1 / float64(p.M())) }

func (p *Ridge) residual(x []float64) []float64 {
	r := p.A.MulVec(x)
	for j := range r {
		r[j] -= p.Y[j]
	}
	return r
}

// Func returns f(x).
func (p *Ridge) Func(x []float64) float64 {
	r := p.residual(x)
	return dot(r, r)/(2*float64(p.M())) + p.Lambda/2*dot(x, x)
}

// Grad returns ∇f(x) = Aᵀ(Ax − y)/m + λx.
func (p *Ridge) Grad(x []float64) []float64 {
	g := p.A.MulTransVec(p.residual(x))
	for i := range g {
		g[i] = g[i]/float64(p.M()) + p.Lambda*x[i]
	}
	return g
}

// Solve returns x* = (AᵀA/m + λI)⁻¹ Aᵀy/m and f* = f(x*), by a Cholesky
// solve. n above MaxSolveDim is an error.
func (p *Ridge) Solve(ctx context.Context) ([]float64, float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	m := float64(p.M())
	b := p.A.MulTransVec(p.Y)
	for i := range b {
		b[i] /= m
	}
	x, err := p.solveNormal(nil, 1/m, b)
	if err != nil {
		return nil, 0, fmt.Errorf("ridge: %w", err)
	}
	return x, p.Func(x), nil
}

// NewCursor returns a cursor at x.
func (p *Ridge) NewCursor(x []float64) Cursor {
	c := &ridgeCursor{p: p}
	c.Reset(x)
	return c
}

type ridgeCursor struct {
	p      *Ridge
	x, r   []float64
	rr, xx float64
	// A(:,di)ᵀr, kept while x does not move: the probe, x+ and x− of an
	// iteration share it.
	di    int
	dv    float64
	dMemo bool
}

func (c *ridgeCursor) Reset(x []float64) {
	c.dMemo = false
	c.x = append(c.x[:0], x...)
	c.r = c.p.residual(c.x)
	c.rr, c.xx = dot(c.r, c.r), dot(c.x, c.x)
}

func (c *ridgeCursor) X() []float64 { return c.x }

func (c *ridgeCursor) Value() float64 {
	return c.rr/(2*float64(c.p.M())) + c.p.Lambda/2*c.xx
}

func (c *ridgeCursor) Along(i int, alpha float64) float64 {
	if !c.dMemo || c.di != i {
		c.di, c.dv, c.dMemo = i, c.p.A.ColDot(i, c.r), true
	}
	ar := c.dv
	d := (2*alpha*ar+alpha*alpha*c.p.sq[i])/(2*float64(c.p.M())) + c.p.Lambda/2*(2*alpha*c.x[i]+alpha*alpha)
	return c.Value() + d
}

func (c *ridgeCursor) Move(i int, alpha float64) {
	c.dMemo = false
	rows, vals := c.p.A.Col(i)
	for k, j := range rows {
		old := c.r[j]
		c.r[j] += alpha * vals[k]
		c.rr += c.r[j]*c.r[j] - old*old
	}
	c.xx += alpha * (2*c.x[i] + alpha)
	c.x[i] += alpha
}

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
