package surrogate

import (
	"fmt"
	"math"
)

// Add offers the point (x, y) to the history. x is copied. A point with a
// NaN or infinite y is dropped, counted in Dropped, and ErrNonFiniteTarget is
// returned; a wrong length or non-finite x returns an error and changes
// nothing. Once the history holds HistoryCap points, the point replaces a
// uniformly chosen stored one with probability HistoryCap/Seen (reservoir
// sampling), so the history stays a uniform sample of all points added;
// with a Window it replaces the oldest one.
func (m *Model) Add(x []float64, y float64) error {
	if err := m.checkX(x); err != nil {
		return err
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		m.dropped++
		return fmt.Errorf("%w: y = %v", ErrNonFiniteTarget, y)
	}
	m.seen++
	if len(m.ys) < m.cfg.HistoryCap {
		m.xs = append(m.xs, x...)
		m.ys = append(m.ys, y)
		return nil
	}
	if m.cfg.Window > 0 {
		m.put(m.slot(0), x, y)
		return nil
	}
	k := m.resRng.Uint64N(m.seen)
	if k < uint64(m.cfg.HistoryCap) {
		m.put(int(k), x, y)
	}
	return nil
}

// slot returns where the j-th most recently added point is stored (j = 0:
// the newest) in a windowed history, which is a ring: the Seen-th point
// added went to slot (Seen−1) mod HistoryCap. j must be < Len.
func (m *Model) slot(j int) int {
	return int((m.seen - 1 - uint64(j)) % uint64(m.cfg.HistoryCap))
}

func (m *Model) put(i int, x []float64, y float64) {
	copy(m.xs[i*m.dim:(i+1)*m.dim], x)
	m.ys[i] = y
}

// History returns the i-th stored point; x aliases the model's storage and
// must not be modified.
func (m *Model) History(i int) (x []float64, y float64) {
	return m.xs[i*m.dim : (i+1)*m.dim], m.ys[i]
}
