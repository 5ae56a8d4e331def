package report

import "math"

// Band is a group's mean curve with its ± one std band on a common grid.
type Band struct {
	X, Mean, Std []float64 // grid points where at least one seed is present
	N            []int     // seeds present at each point
}

// series is the curve of one run to average: eval points when it has any,
// else the training reward.
func series(r Run) (xs, ys []float64, eval bool) {
	for _, p := range r.Curve {
		if p.HasEval {
			xs = append(xs, float64(p.Episodes))
			ys = append(ys, p.EvalMean)
		}
	}
	if len(xs) > 0 {
		return xs, ys, true
	}
	for _, p := range r.Curve {
		xs = append(xs, float64(p.Episodes))
		ys = append(ys, p.Reward)
	}
	return xs, ys, false
}

// MeanBand puts the runs' curves (eval reward, or training reward for a run
// with no eval points) on a grid of n points from 0 to the largest episode
// count among them, carrying each run's last value forward (a run that
// stopped early keeps its last value), and averages over the runs present:
// a run is present at x once it has a point at or before x. Std is the
// population standard deviation over the runs present. evalOnly reports
// whether every run contributed eval points.
func MeanBand(runs []Run, n int) (b Band, evalOnly bool) {
	if n < 2 {
		n = 2
	}
	type s struct{ xs, ys []float64 }
	var ss []s
	maxX := 0.0
	evalOnly = true
	for _, r := range runs {
		xs, ys, ev := series(r)
		if len(xs) == 0 {
			continue
		}
		evalOnly = evalOnly && ev
		ss = append(ss, s{xs, ys})
		for _, x := range xs {
			maxX = math.Max(maxX, x)
		}
	}
	if len(ss) == 0 {
		return b, evalOnly
	}
	idx := make([]int, len(ss)) // per series: number of points with x <= grid x
	for g := 0; g < n; g++ {
		x := maxX * float64(g) / float64(n-1)
		if g == n-1 {
			x = maxX
		}
		var sum, sum2 float64
		cnt := 0
		for i, sr := range ss {
			for idx[i] < len(sr.xs) && sr.xs[idx[i]] <= x {
				idx[i]++
			}
			if idx[i] == 0 {
				continue
			}
			v := sr.ys[idx[i]-1]
			sum += v
			sum2 += v * v
			cnt++
		}
		if cnt == 0 {
			continue
		}
		mean := sum / float64(cnt)
		variance := math.Max(0, sum2/float64(cnt)-mean*mean)
		b.X = append(b.X, x)
		b.Mean = append(b.Mean, mean)
		b.Std = append(b.Std, math.Sqrt(variance))
		b.N = append(b.N, cnt)
	}
	return b, evalOnly
}
