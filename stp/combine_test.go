package stp

import (
	"errors"
	"math"
	"testing"
)

// TestCombineStep checks one Top iteration against the formula on a linear
// f = c·x, where the central difference along b_j is exact: the step is
// Rate Σ_top (Δ_j/(σ Top)) b_j over the Top directions with the best
// better point, no x_k is measured, and x moves uphill when maximizing
// and downhill when minimizing.
func TestCombineStep(t *testing.T) {
	n := 6
	c := []float64{3, -1, 0.5, 2, -4, 1}
	lin := func(x []float64) float64 {
		var s float64
		for i := range x {
			s += c[i] * x[i]
		}
		return s
	}
	for _, goal := range []Goal{Maximize, Minimize} {
		x0 := make([]float64, n)
		s, err := NewStepper(x0, Settings{Goal: goal, Rule: Fixed, Epsilon: 0.6, Directions: 5, Top: 3, Rate: 0.1, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		b, out := tell(t, s, lin)
		if len(b.Points) != 10 {
			t.Fatalf("%v: %d points, want 2M = 10 (no x_k)", goal, len(b.Points))
		}
		if !out.Completed || out.Accepted != Combined || out.Point != -1 || !math.IsNaN(out.F) {
			t.Fatalf("%v: outcome %+v, want a completed Combined step with no point and f NaN", goal, out)
		}
		// The reference: rank directions by their better value, keep 3.
		sg := 1.0
		if goal == Minimize {
			sg = -1
		}
		type dir struct{ plus, minus float64 }
		ds := make([]dir, 5)
		for k, r := range b.Roles {
			if r == Plus {
				ds[b.Dir[k]].plus = lin(b.Points[k])
			} else {
				ds[b.Dir[k]].minus = lin(b.Points[k])
			}
		}
		used := make([]bool, 5)
		var top []int
		for range 3 {
			best := -1
			for j, d := range ds {
				if !used[j] && (best < 0 || math.Max(sg*d.plus, sg*d.minus) > math.Max(sg*ds[best].plus, sg*ds[best].minus)) {
					best = j
				}
			}
			used[best] = true
			top = append(top, best)
		}
		var sum, sq float64
		for _, j := range top {
			sum += ds[j].plus + ds[j].minus
			sq += ds[j].plus*ds[j].plus + ds[j].minus*ds[j].minus
		}
		mean := sum / 6
		sigma := math.Sqrt(sq/6 - mean*mean)
		want := make([]float64, n)
		col := make([]float64, n)
		for _, j := range top {
			Canonical(n).Column(b.Indices[j], col)
			w := 0.1 * sg * (ds[j].plus - ds[j].minus) / (sigma * 3)
			for i := range want {
				want[i] += w * col[i]
			}
		}
		if !near(s.X(), want, 1e-12) {
			t.Fatalf("%v: x = %v, want %v", goal, s.X(), want)
		}
		if d := lin(s.X()) - lin(x0); sg*d <= 0 {
			t.Fatalf("%v: f moved by %v, want the goal's way", goal, d)
		}
	}
}

// TestCombineConverges drives the Top step with and without momentum on an
// ill-conditioned quadratic: f falls by orders of magnitude, and the
// momentum velocity is the geometric sum of the past steps.
func TestCombineConverges(t *testing.T) {
	n := 10
	q := newQuad(n, 10)
	for _, beta := range []float64{0, 0.5} {
		s, err := NewStepper(make([]float64, n), Settings{Rule: Fixed, Epsilon: 0.05 * float64(n), Directions: 8, Top: 4, Rate: 0.02, Momentum: beta, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		f0 := q.f(make([]float64, n))
		for range 400 {
			tell(t, s, q.f)
		}
		if f := q.f(s.X()); !(f < f0/100) {
			t.Fatalf("β=%v: f = %v after 400 iterations, want < f(x0)/100 = %v", beta, f, f0/100)
		}
		if beta > 0 && !near(s.Anchor(), s.X(), 0) {
			t.Fatalf("β=%v: the anchor %v is not x_k %v (the Top step has no look-ahead)", beta, s.Anchor(), s.X())
		}
	}
}

// TestCombineNonFinite leaves a direction with a NaN value out of the
// combination; with all values NaN x_k does not move.
func TestCombineNonFinite(t *testing.T) {
	n := 4
	s, err := NewStepper(make([]float64, n), Settings{Goal: Maximize, Rule: Fixed, Epsilon: 1, Directions: 3, Top: 3, Rate: 0.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Propose()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float64, len(b.Points))
	for i := range vals {
		vals[i] = math.NaN()
	}
	if _, err := s.Tell(vals); err != nil {
		t.Fatal(err)
	}
	if !near(s.X(), make([]float64, n), 0) {
		t.Fatalf("x = %v after an all-NaN batch, want x0", s.X())
	}
	b, err = s.Propose()
	if err != nil {
		t.Fatal(err)
	}
	vals = []float64{1, 0, math.NaN(), 5, 2, 1}
	if _, err := s.Tell(vals); err != nil {
		t.Fatal(err)
	}
	// Directions 0 (1, 0) and 2 (2, 1) are kept; σ is the std of {1, 0, 2, 1}.
	sigma := math.Sqrt((1+0+4+1)/4.0 - 1)
	want := make([]float64, n)
	col := make([]float64, n)
	for _, j := range []int{0, 2} {
		Canonical(n).Column(b.Indices[j], col)
		for i := range want {
			want[i] += 0.5 * (vals[2*j] - vals[2*j+1]) / (sigma * 2) * col[i]
		}
	}
	if !near(s.X(), want, 1e-12) {
		t.Fatalf("x = %v, want %v (the NaN direction left out)", s.X(), want)
	}
}

// TestCombineSettings refuses Top without a Rate, past M, and with a rule
// that needs f(x_k) or a probe; a state restores only into a stepper with
// the same Top.
func TestCombineSettings(t *testing.T) {
	x0 := make([]float64, 3)
	for _, set := range []Settings{
		{Directions: 2, Top: 1},
		{Directions: 2, Top: 3, Rate: 1},
		{Directions: 2, Top: -1, Rate: 1},
		{Directions: 2, Top: 1, Rate: math.Inf(1)},
		{Directions: 2, Top: 1, Rate: 1, Rule: ConvexFStar},
		{Directions: 2, Top: 1, Rate: 1, Rule: FiniteDifference},
	} {
		if _, err := NewStepper(x0, set); !errors.Is(err, ErrSettings) {
			t.Errorf("%+v: err = %v, want ErrSettings", set, err)
		}
	}
	a, err := NewStepper(x0, Settings{Directions: 2, Top: 2, Rate: 1, Momentum: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	tell(t, a, newQuad(3, 4).f)
	data, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewStepper(x0, Settings{Directions: 2, Top: 2, Rate: 1, Momentum: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if !near(b.Velocity(), a.Velocity(), 0) || !near(b.X(), a.X(), 0) {
		t.Fatal("restored stepper differs")
	}
	c, err := NewStepper(x0, Settings{Directions: 2, Top: 1, Rate: 1, Momentum: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UnmarshalBinary(data); !errors.Is(err, ErrState) {
		t.Fatalf("restoring Top 2 into Top 1: err = %v, want ErrState", err)
	}
}

// TestOrthogonalBasis checks that the columns are orthonormal (one block
// and several), that the same seed gives the same basis and another seed
// another, and that a large basis mixes coordinates within its blocks.
func TestOrthogonalBasis(t *testing.T) {
	for _, n := range []int{1, 7, 33, OrthogonalBlock + 40} {
		o, err := NewOrthogonal(n, 4)
		if err != nil {
			t.Fatal(err)
		}
		cols := make([][]float64, n)
		for i := range cols {
			cols[i] = make([]float64, n)
			o.Column(i, cols[i])
		}
		for i := range n {
			for j := range n {
				var d float64
				for k := range n {
					d += cols[i][k] * cols[j][k]
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(d-want) > 1e-10 {
					t.Fatalf("n=%d: b_%d·b_%d = %v, want %v", n, i, j, d, want)
				}
			}
		}
		again, _ := NewOrthogonal(n, 4)
		other, _ := NewOrthogonal(n, 5)
		c1, c2 := make([]float64, n), make([]float64, n)
		again.Column(n-1, c1)
		other.Column(n-1, c2)
		if !near(c1, cols[n-1], 0) || (n > 1 && near(c2, cols[n-1], 1e-9)) {
			t.Fatalf("n=%d: the same seed must give the same column, another seed another", n)
		}
		nonzero := 0
		for _, v := range cols[0] {
			if v != 0 {
				nonzero++
			}
		}
		if want := min(n, n/((n+OrthogonalBlock-1)/OrthogonalBlock)); nonzero < want {
			t.Fatalf("n=%d: column 0 has %d non-zero entries, want its block's %d", n, nonzero, want)
		}
	}
	if _, err := NewOrthogonal(0, 1); !errors.Is(err, ErrDimension) {
		t.Fatalf("n=0: err = %v, want ErrDimension", err)
	}
}
