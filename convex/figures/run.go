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
	tr := Trace{F: make([]float64, 0, iters+1), Evals: make([]int64, 0, iters+1)}
	err := drive(ctx, p, sampling, iters, t, seed, func(f float64, evals int64) bool {
		tr.F = append(tr.F, f)
		tr.Evals = append(tr.Evals, evals)
		return true
	})
	return tr, err
}

// EvalsToGaps runs STP or STP_IS as RunSTP does, for at most maxEvals
// evaluations, and returns for each relative gap g of gaps the
// evaluations spent when f(x_k) − fStar first fell to g·(f(x_0) − fStar),
// or −1 if it did not. It stops as soon as every gap is reached and keeps
// no trace, so runs of millions of iterations cost no memory.
func EvalsToGaps(ctx context.Context, p convex.Problem, fStar float64, sampling stp.Sampling, gaps []float64, maxEvals int64, t float64, seed uint64) ([]int64, error) {
	out := make([]int64, len(gaps))
	for i := range out {
		out[i] = -1
	}
	var r0 float64
	left := len(gaps)
	first := true
	err := drive(ctx, p, sampling, int(min(maxEvals/3, math.MaxInt32)), t, seed, func(f float64, evals int64) bool {
		if first {
			r0, first = f-fStar, false
		}
		for i, g := range gaps {
			if out[i] < 0 && f-fStar <= g*r0 {
				out[i] = evals
				left--
			}
		}
		return left > 0
	})
	return out, err
}

// drive runs up to iters iterations and calls visit with f(x_k) and the
// evaluations spent, for x_0 and after every iteration; it stops early
// when visit returns false.
func drive(ctx context.Context, p convex.Problem, sampling stp.Sampling, iters int, t float64, seed uint64, visit func(f float64, evals int64) bool) error {
	n := p.Dim()
	s, err := stp.NewStepper(make([]float64, n), stp.Settings{
		Sampling: sampling,
		L:        p.Lipschitz(),
		Rule:     stp.FiniteDifference,
		T:        t,
		Seed:     seed,
	})
	if err != nil {
		return err
	}
	cur := p.NewCursor(make([]float64, n))
	refresh := max(n, 100)
	started := false
	for s.Iter() < iters {
		if s.Iter()%1000 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b, err := s.Propose()
		if err != nil {
			return err
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
		if !started && b.Roles[len(b.Roles)-1] == stp.Center {
			started = true
			if !visit(cur.Value(), 1) {
				return nil
			}
		}
		out, err := s.Tell(vals)
		if err != nil {
			return err
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
		if !visit(cur.Value(), s.Points()) {
			return nil
		}
	}
	return nil
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

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func errf(format string, a ...any) error { return fmt.Errorf("figures: "+format, a...) }
