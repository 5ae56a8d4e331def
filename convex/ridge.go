package convex

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
)

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
