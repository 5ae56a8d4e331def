package policy

import (
	"fmt"
	"math"
)

// Linear is a linear policy: Rows actions by Cols observations, row-major.
type Linear struct {
	Rows int       `json:"rows"`
	Cols int       `json:"cols"`
	W    []float64 `json:"w"`
	// Bias is optional: nil or Rows entries.
	Bias []float64 `json:"bias,omitempty"`
}

// NewLinear returns a zero policy of the given shape.
func NewLinear(rows, cols int, bias bool) (*Linear, error) {
	if rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("policy: shape must be positive, got rows=%d cols=%d", rows, cols)
	}
	l := &Linear{Rows: rows, Cols: cols, W: make([]float64, rows*cols)}
	if bias {
		l.Bias = make([]float64, rows)
	}
	return l, nil
}

// Dim is the number of parameters: Rows*Cols, plus Rows with a bias.
func (l *Linear) Dim() int { return len(l.W) + len(l.Bias) }

// Params returns the parameters as one vector: W row-major, then the bias.
func (l *Linear) Params() []float64 {
	x := make([]float64, 0, l.Dim())
	x = append(x, l.W...)
	return append(x, l.Bias...)
}

// SetParams sets W (and the bias) from a vector laid out as Params.
func (l *Linear) SetParams(x []float64) error {
	if len(x) != l.Dim() {
		return fmt.Errorf("policy: params has %d entries, want %d (%dx%d%s)", len(x), l.Dim(), l.Rows, l.Cols, biasNote(l))
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("policy: params[%d] is %v", i, v)
		}
	}
	copy(l.W, x[:len(l.W)])
	copy(l.Bias, x[len(l.W):])
	return nil
}

// Split returns views of W and the bias inside a parameter vector laid out as
// Params, without copying.
func (l *Linear) Split(x []float64) (w, bias []float64) {
	w = x[:len(l.W)]
	if len(l.Bias) > 0 {
		bias = x[len(l.W):]
	}
	return w, bias
}

func biasNote(l *Linear) string {
	if len(l.Bias) > 0 {
		return " + bias"
	}
	return ""
}

// maxEntries bounds a policy's Rows×Cols (Humanoid's is 17×376 = 6392),
// so that a damaged shape cannot overflow.
const maxEntries = 1 << 24

// Validate checks the shape and that every entry is finite.
func (l *Linear) Validate() error {
	if l.Rows <= 0 || l.Cols <= 0 {
		return fmt.Errorf("policy: shape must be positive, got rows=%d cols=%d", l.Rows, l.Cols)
	}
	if l.Rows > maxEntries/l.Cols {
		return fmt.Errorf("policy: shape %dx%d is over the limit of %d entries", l.Rows, l.Cols, maxEntries)
	}
	if len(l.W) != l.Rows*l.Cols {
		return fmt.Errorf("policy: W has %d entries, want %d (%dx%d)", len(l.W), l.Rows*l.Cols, l.Rows, l.Cols)
	}
	if len(l.Bias) != 0 && len(l.Bias) != l.Rows {
		return fmt.Errorf("policy: bias has %d entries, want 0 or %d", len(l.Bias), l.Rows)
	}
	for i, v := range l.W {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("policy: W[%d] is %v", i, v)
		}
	}
	return nil
}
