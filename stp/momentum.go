package stp

// point returns the candidate of direction j on side sg (+1 for Plus, −1
// for Minus), and with momentum writes its anchor and velocity into hx and
// vel when they are not nil.
func (s *Stepper) point(j int, sg float64, hx, vel []float64) []float64 {
	pt := make([]float64, s.n)
	d := s.dirs[j]
	if s.hx == nil {
		a := sg * s.alpha[j]
		for i := range pt {
			pt[i] = s.x[i] + a*d[i]
		}
		return pt
	}
	b := s.set.Momentum
	g := s.alpha[j]
	c := g * b / (1 - b)
	for i := range pt {
		vi := b*s.vel[i] + sg*d[i]
		xi := s.hx[i] + g*vi
		pt[i] = xi + c*vi
		if hx != nil {
			hx[i], vel[i] = xi, vi
		}
	}
	return pt
}

// damp scales a step that STP's analysis sets for the compared points by
// (1−β) under SMTP's momentum: SMTP's points move by γ/(1−β) along s from
// a standing start, so γ = (1−β)α compares the points STP would. The
// Decaying and Fixed rules are left as they are: their α0 and ε are the
// user's, and a constant γ moves SMTP's points by γ/(1−β).
func (s *Stepper) damp(a float64) float64 {
	if s.hx != nil {
		return a * (1 - s.set.Momentum)
	}
	return a
}
