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
		s.x[i] += s.scale * s.set.Rate * g[i]
	}
	if s.path != nil {
		s.adapt(g)
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

// MinScale and MaxScale bound the scale s_k of Settings.Adapt.
const (
	MinScale = 1e-3
	MaxScale = 1e3
)

// adapt updates the path and the scale s_k after a step along g
// (Settings.Adapt); a zero step leaves both.
func (s *Stepper) adapt(g []float64) {
	norm := 0.0
	for _, gi := range g {
		norm += gi * gi
	}
	if !(norm > 0) || math.IsInf(norm, 0) {
		return
	}
	norm = math.Sqrt(norm)
	c := float64(s.set.Top+2) / float64(s.n+s.set.Top+5)
	d := 1 + c
	w := math.Sqrt(c*(2-c)) / norm
	sq := 0.0
	for i, gi := range g {
		s.path[i] = (1-c)*s.path[i] + w*gi
		sq += s.path[i] * s.path[i]
	}
	// |p|² of independent steps is 1 − (1−c)^(2k) after k of them, not yet
	// 1: comparing with 1 would shrink s for the first ~1/c steps (5% over
	// HumanoidStandup's 62 iterations, c = 0.0017) with nothing measured.
	s.pathE = (1-c)*(1-c)*s.pathE + c*(2-c)
	s.scale = min(max(s.scale*math.Exp(c/(2*d)*(sq-s.pathE)), MinScale), MaxScale)
}
