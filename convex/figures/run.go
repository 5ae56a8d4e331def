package figures

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/stpis/stpis/convex"
	"github.com/stpis/stpis/stp"
)

// Trace is one run: F[k] is f(x_k) and Evals[k] the evaluations used when
// x_k was reached (F[0] is f(x_0)).
type Trace struct {
	F     []float64
	Evals []int64
}

// RunSTP runs iters iterations of STP (sampling stp.Uniform) or STP_IS
// (stp.ISL) with the finite-difference step rule (Theorem 4) and probe t
// on the canonical basis from x_0 = 0, using p's exact L_i. Each iteration
// costs 3 evaluations (probe, x+, x−); the first also measures x_0.
// Values come from a convex.Cursor, whose residuals are recomputed from
// scratch every max(n, 100) iterations to shed rounding drift.
func RunSTP(ctx context.Context, p convex.Problem, sampling stp.Sampling, iters int, t float64, seed uint64) (Trace, error) {
	n := p.Dim()
	s, err := stp.NewStepper(make([]float64, n), stp.Settings{
		Sampling: sampling,
		L:        p.Lipschitz(),
		Rule:     stp.FiniteDifference,
		T:        t,
		Seed:     seed,
	})
	if err != nil {
		return Trace{}, err
	}
	cur := p.NewCursor(make([]float64, n))
	tr := Trace{F: make([]float64, 0, iters+1), Evals: make([]int64, 0, iters+1)}
	refresh := max(n, 100)
	for s.Iter() < iters {
		if s.Iter()%1000 == 0 {
			if err := ctx.Err(); err != nil {
				return tr, err
			}
		}
		b, err := s.Propose()
		if err != nil {
			return tr, err
		}
		vals := make([]float64, len(b.Points))
		for j, r := range b.Roles {
			switch r {
			case stp.Center:
				vals[j] = cur.Value()
			case stp.Probe:
				vals[j] = cur.Along(b.Index, t)
			case stp.Plus:
				vals[j] = cur.Along(b.Index, b.Alpha)
			case stp.Minus:
				vals[j] = cur.Along(b.Index, -b.Alpha)
			}
		}
		if len(tr.F) == 0 && b.Roles[len(b.Roles)-1] == stp.Center {
			tr.F = append(tr.F, cur.Value())
			tr.Evals = append(tr.Evals, 1)
		}
		out, err := s.Tell(vals)
		if err != nil {
			return tr, err
		}
		if !out.Completed {
			continue
		}
		switch out.Accepted {
		case stp.Plus:
			cur.Move(b.Index, b.Alpha)
		case stp.Minus:
			cur.Move(b.Index, -b.Alpha)
		}
		if s.Iter()%refresh == 0 {
			cur.Reset(s.X())
		}
		tr.F = append(tr.F, cur.Value())
		tr.Evals = append(tr.Evals, s.Points())
	}
	return tr, nil
}

// band is the pointwise mean, median, best and worst of several traces.
type band struct {
	Evals                    []int64
	Mean, Median, Best, Wors []float64
}

func summarize(curves [][]float64, evals []int64) band {
	k := len(curves[0])
	b := band{Evals: evals, Mean: make([]float64, k), Median: make([]float64, k), Best: make([]float64, k), Wors: make([]float64, k)}
	col := make([]float64, len(curves))
	for i := range k {
		for r, c := range curves {
			col[r] = c[i]
		}
		slices.Sort(col)
		b.Best[i], b.Wors[i] = col[0], col[len(col)-1]
		var s float64
		for _, v := range col {
			s += v
		}
		b.Mean[i] = s / float64(len(col))
		mid := len(col) / 2
		if len(col)%2 == 1 {
			b.Median[i] = col[mid]
		} else {
			b.Median[i] = (col[mid-1] + col[mid]) / 2
		}
	}
	return b
}

// firstBelow returns the evaluations at the first point of curve that is
// ≤ target, or −1.
func firstBelow(curve []float64, evals []int64, target float64) int64 {
	for i, v := range curve {
		if v <= target {
			return evals[i]
		}
	}
	return -1
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func errf(format string, a ...any) error { return fmt.Errorf("figures: "+format, a...) }
