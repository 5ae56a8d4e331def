package stp

import "fmt"

// Role is what a point of a [Batch] is.
type Role int

const (
	// Plus is x+ = x_k + α b_i.
	Plus Role = iota
	// Minus is x− = x_k − α b_i.
	Minus
	// Center is x_k itself (measured at the start, and every iteration when
	// Settings.Remeasure is set).
	Center
	// Probe is x_k + t b_i, the finite-difference probe.
	Probe
	// Combined is no point's role: it is Outcome.Accepted when the
	// iteration moved x_k along the combination of its directions
	// (Settings.Top).
	Combined
)

func (r Role) String() string {
	switch r {
	case Plus:
		return "plus"
	case Minus:
		return "minus"
	case Center:
		return "center"
	case Probe:
		return "probe"
	case Combined:
		return "combined"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Batch is the set of points of one phase of an iteration. Points[j] has
// role Roles[j]; Tell expects one value per point, in the same order.
type Batch struct {
	// Iter is the 0-based iteration the batch belongs to.
	Iter int
	// Index is i, the 0-based index of the direction b_i (Indices[0]).
	Index int
	// Alpha is the step α of x± (Alphas[0]; NaN in a finite-difference
	// probe batch, whose α is not known yet). With Momentum it is SMTP's
	// step γ of the anchor x, not the distance of x± from x_k.
	Alpha float64
	// Indices and Alphas give the index and the step of each of the M
	// directions of the iteration (length 1 unless Settings.Directions > 1).
	Indices []int
	Alphas  []float64
	// Directions are the iteration's M directions d_j (x± = x_k ± α_j d_j
	// without momentum), Weights their weights (see [Drawn]): Σ_j w_j
	// (f(x+_j) − f(x−_j)) d_j estimates the gradient up to a constant.
	Directions [][]float64
	Weights    []float64
	// Points are the points to evaluate; the stepper does not keep them.
	Points [][]float64
	// Roles gives the role of each point.
	Roles []Role
	// Dir gives, for each point, which of the M directions (an index into
	// Indices) it belongs to; −1 for Center.
	Dir []int
}

// Outcome is what Tell did.
type Outcome struct {
	// Completed is true when the batch finished an iteration (false after
	// a finite-difference probe batch, or a batch that only measured x0).
	Completed bool
	// Accepted is the role of the new x_k: Plus, Minus or Center (kept).
	Accepted Role
	// Point is the index in the told batch's Points of the new x_k: the
	// accepted Plus or Minus point, or the Center point when x_k was kept
	// and measured in this batch; −1 otherwise.
	Point int
	// F is the current value f(x_k).
	F float64
}

// Differences returns f(x+_j) − f(x−_j) for each of the batch's
// directions, given its values in order (NaN where a point is missing).
func (b Batch) Differences(values []float64) []float64 {
	plus, minus := pairValues(b.Roles, b.Dir, len(b.Indices), values)
	for j := range plus {
		plus[j] -= minus[j]
	}
	return plus
}
