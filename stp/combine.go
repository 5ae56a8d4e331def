package stp

import (
	"cmp"
	"math"
	"slices"
)

// combine ends the iteration with the step of Settings.Top. Directions
// with a value that is not valid are left out; when no direction is left,
// or all kept values are equal, x_k does not move (the velocity decays).
func (s *Stepper) combine(values []float64) Outcome {
	plus, minus := pairValues(s.roles, s.dirOf, s.m, values)
	sg := 1.0
	if s.set.Goal == Minimize {
		sg = -1
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	var order []int
	for j := range plus {
		if finite(plus[j]) && finite(minus[j]) {
			order = append(order, j)
		}
	}
	score := func(j int) float64 { return math.Max(sg*plus[j], sg*minus[j]) }
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score(b), score(a)) })
	top := order[:min(s.set.Top, len(order))]
	var sum, sumSq float64
	for _, j := range top {
		sum += plus[j] + minus[j]
		sumSq += plus[j]*plus[j] + minus[j]*minus[j]
	}
	cnt := float64(2 * len(top))
	mean := sum / cnt
	sigma := math.Sqrt(math.Max(sumSq/cnt-mean*mean, 0))
	g := make([]float64, s.n)
	if sigma > 0 {
		for _, j := range top {
			w := sg * (plus[j] - minus[j]) / (sigma * float64(len(top)))
			for i, di := range s.dirs[j] {
				g[i] += w * di
			}
		}
	}
	if s.vel != nil {
		for i := range g {
			s.vel[i] = s.set.Momentum*s.vel[i] + g[i]
			g[i] = s.vel[i]
		}
	}
	for i := range s.x {
		s.x[i] += s.set.Rate * g[i]
	}
	s.f = math.NaN()
	s.iter++
	s.drawn = false
	return Outcome{Completed: true, Accepted: Combined, Point: -1, F: s.f}
}

// pairValues returns, for each of m directions, the values of its x+ and
// x− points in a batch with the given roles and directions (NaN where a
// point is missing).
func pairValues(roles []Role, dirOf []int, m int, values []float64) (plus, minus []float64) {
	plus, minus = make([]float64, m), make([]float64, m)
	for j := range plus {
		plus[j], minus[j] = math.NaN(), math.NaN()
	}
	for k, r := range roles {
		switch r {
		case Plus:
			plus[dirOf[k]] = values[k]
		case Minus:
			minus[dirOf[k]] = values[k]
		}
	}
	return plus, minus
}
