package surrogate

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// hidden computes t = tanh(W1 z + b1) at x (already checked) into t.
func (m *Model) hidden(x, t []float64) {
	d := m.dim
	w1, b1, _, _ := m.params(m.theta)
	z := make([]float64, d)
	for j, v := range x {
		z[j] = (v - m.muX[j]) / m.sdX[j]
	}
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: m.width, Cols: d, Stride: d, Data: w1},
		blas64.Vector{N: d, Inc: 1, Data: z}, 0, blas64.Vector{N: m.width, Inc: 1, Data: t})
	for h := range t {
		t[h] = math.Tanh(t[h] + b1[h])
	}
}

// Predict returns f̂(x) in original units.
func (m *Model) Predict(x []float64) (float64, error) {
	if err := m.checkX(x); err != nil {
		return 0, err
	}
	t := make([]float64, m.width)
	m.hidden(x, t)
	_, _, w2, b2 := m.params(m.theta)
	out := *b2
	for h, v := range t {
		out += w2[h] * v
	}
	return m.muY + m.sdY*out, nil
}

// Gradient writes ∇f̂(x) (original units) into dst, which must have length
// Dim.
func (m *Model) Gradient(x, dst []float64) error {
	if err := m.checkX(x); err != nil {
		return err
	}
	if len(dst) != m.dim {
		return fmt.Errorf("%w: len(dst) = %d, want %d", ErrDim, len(dst), m.dim)
	}
	t := make([]float64, m.width)
	m.hidden(x, t)
	w1, _, w2, _ := m.params(m.theta)
	for h, v := range t {
		t[h] = w2[h] * (1 - v*v)
	}
	d := m.dim
	blas64.Gemv(blas.Trans, 1, blas64.General{Rows: m.width, Cols: d, Stride: d, Data: w1},
		blas64.Vector{N: m.width, Inc: 1, Data: t}, 0, blas64.Vector{N: d, Inc: 1, Data: dst})
	for j := range dst {
		dst[j] *= m.sdY / m.sdX[j]
	}
	return nil
}

// curvCoef writes σ_y w2_h tanh”(h) at x into c.
func (m *Model) curvCoef(x, c []float64) {
	m.hidden(x, c)
	_, _, w2, _ := m.params(m.theta)
	for h, t := range c {
		c[h] = m.sdY * w2[h] * (-2 * t * (1 - t*t))
	}
}

// HessianDiag writes the diagonal of ∇²f̂(x) (original units) into dst,
// which must have length Dim.
func (m *Model) HessianDiag(x, dst []float64) error {
	if err := m.checkX(x); err != nil {
		return err
	}
	if len(dst) != m.dim {
		return fmt.Errorf("%w: len(dst) = %d, want %d", ErrDim, len(dst), m.dim)
	}
	c := make([]float64, m.width)
	m.curvCoef(x, c)
	w1, _, _, _ := m.params(m.theta)
	d := m.dim
	for j := range dst {
		dst[j] = 0
	}
	for h, ch := range c {
		row := w1[h*d : (h+1)*d]
		for j, w := range row {
			dst[j] += ch * w * w
		}
	}
	for j := range dst {
		dst[j] /= m.sdX[j] * m.sdX[j]
	}
	return nil
}

// Curvature returns dᵀ ∇²f̂(x) d (original units), the second derivative of
// f̂ along d at x.
func (m *Model) Curvature(x, d []float64) (float64, error) {
	if err := m.checkX(x); err != nil {
		return 0, err
	}
	if len(d) != m.dim {
		return 0, fmt.Errorf("%w: len(d) = %d, want %d", ErrDim, len(d), m.dim)
	}
	c := make([]float64, m.width)
	m.curvCoef(x, c)
	w1, _, _, _ := m.params(m.theta)
	u := make([]float64, m.dim)
	for j := range u {
		u[j] = d[j] / m.sdX[j]
	}
	s := 0.0
	for h, ch := range c {
		p := blas64.Dot(blas64.Vector{N: m.dim, Inc: 1, Data: w1[h*m.dim : (h+1)*m.dim]},
			blas64.Vector{N: m.dim, Inc: 1, Data: u})
		s += ch * p * p
	}
	return s, nil
}
