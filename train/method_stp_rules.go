package train

import "math"

// STP's step rules as the rest of train sees them (stepped), and its
// settings as the older forms of run.json held them. (method_stp.go holds
// its settings, names and optimizer.)

// step is the settings' step rule.
func (s *STPSettings) step() Step { return s.Step }

// setStep sets the step rule.
func (s *STPSettings) setStep(st Step) { s.Step = st }

// sharedKey says whether a preset entry's key k, not one of s's own,
// belongs to the other of STP and STP_IS in an entry they share: STP_IS's
// surrogate keys, STP's guide.
func (s *STPSettings) sharedKey(k string) bool {
	if s.IS {
		return k == "guide"
	}
	return k == "surrogate-steps" || k == "lipschitz"
}

// fromOld takes the settings from an older run.json's stp block: alpha0
// was the adaptive step's rate, the fixed step's ε was absolute (0 meaning
// 0.05·n, today's rate 0.05), the combined step's rate was √Top times
// today's, and a missing basis was Gaussian.
func (s *STPSettings) fromOld(schema int, o oldSTP, _ oldARS) error {
	if err := o.check(schema); err != nil {
		return err
	}
	s.Step, s.Directions, s.Basis, s.NormalizeBasis = o.Step, max(o.Directions, 1), o.Basis, o.NormalizeBasis
	if s.Basis == "" {
		s.Basis = Gaussian
	}
	switch o.Step {
	case Adaptive:
		s.Rate = o.Alpha0
	case Fixed:
		s.Rate = 0.05
	case Combined:
		// Before commit 4b94225 the step was rate·√n times the
		// combination, since then rate·√n·√Top: every run of the older
		// forms ran before it.
		s.Rate, s.Top, s.Noise = o.Rate, o.Top, o.Noise
		if o.Top > 0 {
			s.Rate = o.Rate / math.Sqrt(float64(o.Top))
		}
	}
	if s.IS {
		s.SurrogateSteps, s.Lipschitz = o.SurrogateSteps, o.Lipschitz
	}
	return nil
}
