package stp

import "math"

// guide replaces the last drawn direction by Settings.Guide's, made
// orthogonal to the others and as long as the one it replaces.
func (s *Stepper) guide() {
	m := len(s.dirs)
	if s.set.Guide == nil || m < 2 {
		return
	}
	g := make([]float64, s.n)
	if !s.set.Guide(append([]float64(nil), s.x...), g) {
		return
	}
	norm := func(v []float64) float64 { return math.Sqrt(dot(v, v)) }
	scale := norm(g)
	// Gram-Schmidt: an orthonormal basis q of the other directions' span
	// (a Gaussian basis's columns are not orthogonal), then g less its
	// projection on it.
	var q [][]float64
	for _, d := range s.dirs[:m-1] {
		u := append([]float64(nil), d...)
		for _, e := range q {
			c := dot(u, e)
			for i := range u {
				u[i] -= c * e[i]
			}
		}
		if nu := norm(u); nu > 1e-12*norm(d) {
			for i := range u {
				u[i] /= nu
			}
			q = append(q, u)
		}
	}
	for _, e := range q {
		c := dot(g, e)
		for i := range g {
			g[i] -= c * e[i]
		}
	}
	ng := norm(g)
	if !(ng > 1e-9*scale) || math.IsInf(ng, 0) {
		return
	}
	want := norm(s.dirs[m-1])
	for i := range g {
		s.dirs[m-1][i] = g[i] * want / ng
	}
}

func dot(a, b []float64) float64 {
	var sum float64
	for i, v := range a {
		sum += v * b[i]
	}
	return sum
}
