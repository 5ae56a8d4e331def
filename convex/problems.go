package convex

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Problem is a convex objective on R^n with known coordinate Lipschitz
// constants.
type Problem interface {
	// Dim returns n.
	Dim() int
	// Func returns f(x), computed from scratch in O(mn).
	Func(x []float64) float64
	// Lipschitz returns L_1..L_n (Assumption 1 of the paper).
	Lipschitz() []float64
	// NewCursor returns a cursor at x (copied).
	NewCursor(x []float64) Cursor
}

// Cursor tracks a point x and its residuals so that f along a coordinate
// costs O(m).
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

// Ridge is f(x) = 1/(2m) ‖Ax − y‖² + λ/2 ‖x‖², with L_i = ‖A(:,i)‖²/m + λ.
type Ridge struct {
	Cols   [][]float64 // the n columns of A, each of length m
	Y      []float64
	Lambda float64
	sq     []float64 // ‖A(:,i)‖²
}

// NewRidge returns the ridge problem with columns cols (not copied).
func NewRidge(cols [][]float64, y []float64, lambda float64) (*Ridge, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("convex: ridge: no columns")
	}
	for i, c := range cols {
		if len(c) != len(y) {
			return nil, fmt.Errorf("convex: ridge: column %d has %d rows, y has %d", i, len(c), len(y))
		}
	}
	if !(lambda > 0) {
		return nil, fmt.Errorf("convex: ridge: λ = %v, want > 0", lambda)
	}
	r := &Ridge{Cols: cols, Y: y, Lambda: lambda, sq: make([]float64, len(cols))}
	for i, c := range cols {
		r.sq[i] = dot(c, c)
	}
	return r, nil
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
	p, _ := NewRidge(cols, y, 1/float64(m))
	return p
}

// Dim returns n.
func (p *Ridge) Dim() int { return len(p.Cols) }

// M returns m.
func (p *Ridge) M() int { return len(p.Y) }

// Lipschitz returns L_i = ‖A(:,i)‖²/m + λ.
func (p *Ridge) Lipschitz() []float64 {
	L := make([]float64, len(p.Cols))
	for i := range L {
		L[i] = p.sq[i]/float64(p.M()) + p.Lambda
	}
	return L
}

func (p *Ridge) residual(x []float64) []float64 {
	r := make([]float64, p.M())
	for j := range r {
		r[j] = -p.Y[j]
	}
	for i, c := range p.Cols {
		if x[i] != 0 {
			for j, a := range c {
				r[j] += x[i] * a
			}
		}
	}
	return r
}

// Func returns f(x).
func (p *Ridge) Func(x []float64) float64 {
	r := p.residual(x)
	return dot(r, r)/(2*float64(p.M())) + p.Lambda/2*dot(x, x)
}

// Solve returns x* = (AᵀA/m + λI)⁻¹ Aᵀy/m and f* = f(x*), by a Cholesky
// solve.
func (p *Ridge) Solve() ([]float64, float64, error) {
	n, m := p.Dim(), float64(p.M())
	h := mat.NewSymDense(n, nil)
	b := mat.NewVecDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			v := dot(p.Cols[i], p.Cols[j]) / m
			if i == j {
				v += p.Lambda
			}
			h.SetSym(i, j, v)
		}
		b.SetVec(i, dot(p.Cols[i], p.Y)/m)
	}
	var ch mat.Cholesky
	if !ch.Factorize(h) {
		return nil, 0, fmt.Errorf("convex: ridge: normal matrix not positive definite")
	}
	var xs mat.VecDense
	if err := ch.SolveVecTo(&xs, b); err != nil {
		return nil, 0, fmt.Errorf("convex: ridge solve: %w", err)
	}
	x := mat.Col(nil, 0, &xs)
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
}

func (c *ridgeCursor) Reset(x []float64) {
	c.x = append(c.x[:0], x...)
	c.r = c.p.residual(c.x)
	c.rr, c.xx = dot(c.r, c.r), dot(c.x, c.x)
}

func (c *ridgeCursor) X() []float64 { return c.x }

func (c *ridgeCursor) Value() float64 {
	return c.rr/(2*float64(c.p.M())) + c.p.Lambda/2*c.xx
}

// delta returns f(x + α e_i) − f(x).
func (c *ridgeCursor) delta(i int, alpha float64) float64 {
	ar := dot(c.p.Cols[i], c.r)
	return (2*alpha*ar+alpha*alpha*c.p.sq[i])/(2*float64(c.p.M())) + c.p.Lambda/2*(2*alpha*c.x[i]+alpha*alpha)
}

func (c *ridgeCursor) Along(i int, alpha float64) float64 { return c.Value() + c.delta(i, alpha) }

func (c *ridgeCursor) Move(i int, alpha float64) {
	for j, a := range c.p.Cols[i] {
		c.r[j] += alpha * a
	}
	c.x[i] += alpha
	c.rr, c.xx = dot(c.r, c.r), dot(c.x, c.x)
}

// SVM is the squared-hinge SVM f(x) = ½ Σ_j max(0, 1 − y_j a_jᵀx)² + λ/2 ‖x‖²
// (a_j is row j of A, y_j = ±1), with L_i = ‖A(:,i)‖² + λ.
type SVM struct {
	Cols   [][]float64
	Y      []float64
	Lambda float64
	sq     []float64
}

// NewSVM returns the squared SVM problem (cols not copied). The
// experiments use λ = 1: the loss is summed, not averaged, over the m rows,
// so λ = 1 is the summed-loss counterpart of the ridge problem's λ = 1/m.
func NewSVM(cols [][]float64, y []float64, lambda float64) (*SVM, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("convex: svm: no columns")
	}
	for i, c := range cols {
		if len(c) != len(y) {
			return nil, fmt.Errorf("convex: svm: column %d has %d rows, y has %d", i, len(c), len(y))
		}
	}
	for j, l := range y {
		if l != 1 && l != -1 {
			return nil, fmt.Errorf("convex: svm: label %d is %v, want ±1", j, l)
		}
	}
	if !(lambda > 0) {
		return nil, fmt.Errorf("convex: svm: λ = %v, want > 0", lambda)
	}
	s := &SVM{Cols: cols, Y: y, Lambda: lambda, sq: make([]float64, len(cols))}
	for i, c := range cols {
		s.sq[i] = dot(c, c)
	}
	return s, nil
}

// Dim returns n.
func (p *SVM) Dim() int { return len(p.Cols) }

// Lipschitz returns L_i = ‖A(:,i)‖² + λ.
func (p *SVM) Lipschitz() []float64 {
	L := make([]float64, len(p.Cols))
	for i := range L {
		L[i] = p.sq[i] + p.Lambda
	}
	return L
}

// margins returns z_j = y_j a_jᵀx.
func (p *SVM) margins(x []float64) []float64 {
	z := make([]float64, len(p.Y))
	for i, c := range p.Cols {
		if x[i] != 0 {
			for j, a := range c {
				z[j] += x[i] * a
			}
		}
	}
	for j := range z {
		z[j] *= p.Y[j]
	}
	return z
}

func hinge2(z []float64) (s float64) {
	for _, zj := range z {
		if h := 1 - zj; h > 0 {
			s += h * h
		}
	}
	return s / 2
}

// Func returns f(x).
func (p *SVM) Func(x []float64) float64 {
	return hinge2(p.margins(x)) + p.Lambda/2*dot(x, x)
}

// NewCursor returns a cursor at x.
func (p *SVM) NewCursor(x []float64) Cursor {
	c := &svmCursor{p: p}
	c.Reset(x)
	return c
}

type svmCursor struct {
	p    *SVM
	x, z []float64
	loss float64
	xx   float64
}

func (c *svmCursor) Reset(x []float64) {
	c.x = append(c.x[:0], x...)
	c.z = c.p.margins(c.x)
	c.loss, c.xx = hinge2(c.z), dot(c.x, c.x)
}

func (c *svmCursor) X() []float64 { return c.x }

func (c *svmCursor) Value() float64 { return c.loss + c.p.Lambda/2*c.xx }

func (c *svmCursor) Along(i int, alpha float64) float64 {
	var s float64
	col, y := c.p.Cols[i], c.p.Y
	for j, zj := range c.z {
		if h := 1 - zj - alpha*y[j]*col[j]; h > 0 {
			s += h * h
		}
	}
	xi := c.x[i]
	return s/2 + c.p.Lambda/2*(c.xx-xi*xi+(xi+alpha)*(xi+alpha))
}

func (c *svmCursor) Move(i int, alpha float64) {
	col, y := c.p.Cols[i], c.p.Y
	for j := range c.z {
		c.z[j] += alpha * y[j] * col[j]
	}
	c.x[i] += alpha
	c.loss, c.xx = hinge2(c.z), dot(c.x, c.x)
}
