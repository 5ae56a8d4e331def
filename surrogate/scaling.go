package surrogate

import (
	"fmt"
	"math"
)

// Scale returns copies of the current scaling: inputs are standardized as
// (x − muX)/sdX and targets as (y − muY)/sdY.
func (m *Model) Scale() (muX, sdX []float64, muY, sdY float64) {
	return append([]float64(nil), m.muX...), append([]float64(nil), m.sdX...), m.muY, m.sdY
}

// RefreshScaling recomputes the scaling from the history and re-expresses
// the weights so that f̂ is unchanged in original units (see the package
// documentation). Train calls it first; it returns ErrEmpty on an empty
// history.
func (m *Model) RefreshScaling() error {
	n := len(m.ys)
	if n == 0 {
		return fmt.Errorf("%w: cannot compute scaling", ErrEmpty)
	}
	d := m.dim
	mu := make([]float64, d)
	sd := make([]float64, d)
	for i := range n {
		row := m.xs[i*d : (i+1)*d]
		for j, v := range row {
			mu[j] += v
		}
	}
	inv := 1 / float64(n)
	for j := range mu {
		mu[j] *= inv
	}
	for i := range n {
		row := m.xs[i*d : (i+1)*d]
		for j, v := range row {
			e := v - mu[j]
			sd[j] += e * e
		}
	}
	ms := 0.0
	for j := range sd {
		sd[j] *= inv
		ms += sd[j]
		sd[j] = math.Sqrt(sd[j])
	}
	rms := math.Sqrt(ms / float64(d))
	for j := range sd {
		switch {
		case rms == 0:
			sd[j] = 1
		case m.cfg.Scaling == Isotropic:
			sd[j] = rms
		default:
			sd[j] = max(sd[j], 1e-3*rms)
		}
	}
	my, vy := 0.0, 0.0
	for _, y := range m.ys {
		my += y
	}
	my *= inv
	for _, y := range m.ys {
		vy += (y - my) * (y - my)
	}
	sy := math.Sqrt(vy * inv)
	if sy == 0 || math.IsInf(sy, 0) {
		sy = 1
	}
	if m.scaled {
		m.reexpress(mu, sd, my, sy)
	}
	m.muX, m.sdX, m.muY, m.sdY, m.scaled = mu, sd, my, sy, true
	return nil
}

// reexpress changes the weights so that f̂ in original units is the same
// under the new scaling (mu, sd, my, sy) as under the current one.
func (m *Model) reexpress(mu, sd []float64, my, sy float64) {
	w1, b1, w2, b2 := m.params(m.theta)
	d := m.dim
	ratio := make([]float64, d) // σ'/σ
	shift := make([]float64, d) // (μ'−μ)/σ
	for j := range d {
		ratio[j] = sd[j] / m.sdX[j]
		shift[j] = (mu[j] - m.muX[j]) / m.sdX[j]
	}
	for h := range m.width {
		row := w1[h*d : (h+1)*d]
		s := 0.0
		for j, w := range row {
			s += w * shift[j]
			row[j] = w * ratio[j]
		}
		b1[h] += s
	}
	r := m.sdY / sy
	for h := range w2 {
		w2[h] *= r
	}
	*b2 = (m.sdY**b2 + m.muY - my) / sy
}
