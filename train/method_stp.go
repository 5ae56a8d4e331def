package train

import (
	"fmt"
	"math"
	"strings"

	"github.com/stpis/stpis/stp"
	"github.com/stpis/stpis/surrogate"
)

// Step is the step-size rule of STP and STP_IS.
type Step string

// The step rules.
const (
	// Adaptive is Theorem 1's decaying α0 / (v_i √(k+1)), with IS-sqrt
	// sampling for STP_IS.
	Adaptive Step = "adaptive"
	// Fixed is Theorem 2's ε / (n v_i), with IS-L sampling for STP_IS.
	Fixed Step = "fixed"
	// Combined evaluates M directions and moves x_k along the combination
	// of the Top best (stp.Settings.Top), with points x_k ± Noise·√n·b_i/v_i
	// and a step of Rate·√n; IS-L sampling for STP_IS. Not in the paper.
	Combined Step = "combined"
)

// Steps lists the step rules.
var Steps = []Step{Combined, Adaptive, Fixed}

// Guide names the surrogate that guides the combined step's directions.
type Guide string

// The guides.
const (
	// NoGuide draws every direction from the basis by p.
	NoGuide Guide = "none"
	// GradientSum makes one of an iteration's directions the sum of every
	// earlier gradient estimate of the attempt (surrogate.GradientSum), and
	// the others random directions orthonormal to it and to each other
	// (stp.SubspaceSampler), as LMRS and Guided ES draw theirs.
	GradientSum Guide = "gradient-sum"
)

// Basis names the basis of STP's directions.
type Basis string

// The bases.
const (
	// Gaussian is the paper's: i.i.d. N(0,1) entries (stp.Gaussian).
	Gaussian Basis = "gaussian"
	// Orthogonal is a random orthogonal basis (stp.Orthogonal), whose
	// columns explore every direction alike.
	Orthogonal Basis = "orthogonal"
	// Learned is the principal directions of the run's gradient estimates
	// (surrogate.GradientPCA), sampled with p ∝ their energy and v = 1
	// (stp.SpectralSampler): STP_IS with the combined step only, in place
	// of the MLP's Lipschitz estimates.
	Learned Basis = "learned"
)

// Lipschitz selects how a constant is read off the surrogate.
type Lipschitz string

// The two estimates of surrogate.Model.
const (
	Global Lipschitz = "global"
	Local  Lipschitz = "local"
)

// STPSettings configure STP, or STP_IS (IS) with its surrogate, in the RL
// loop. Every field is set by a preset; there are no implicit defaults.
type STPSettings struct {
	// IS makes the method STP_IS: directions sampled by the surrogate's
	// Lipschitz estimates (its name says it, not the settings).
	IS   bool `json:"-"`
	Step Step `json:"step"`
	// Rate is the step rule's step: α0 of the adaptive rule, ε/n of the
	// fixed rule α = ε/(n v_i), and for the combined step the length of a
	// step in units of √n (about Rate·√n whatever M and Top are; ARS's α/√b).
	Rate float64 `json:"rate"`
	// Directions is the number of directions of one iteration (1: the
	// paper's one).
	Directions int `json:"directions"`
	// Top is the number of directions the combined step combines
	// (stp.Settings.Top; 0 for the other steps). Noise is its
	// perturbation in ARS's units (ARS's directions have norm ≈ √n, the
	// basis columns 1): the points are x_k ± Noise·√n·b_i/v_i.
	Top   int     `json:"top,omitempty"`
	Noise float64 `json:"noise,omitempty"`
	// Basis is the basis whose columns are the directions.
	// NormalizeBasis scales the Gaussian basis columns to unit norm (the
	// orthogonal ones have it).
	Basis          Basis `json:"basis"`
	NormalizeBasis bool  `json:"normalize_basis"`
	// STP_IS's surrogate: Adam steps per iteration and how L is read off
	// it (its hidden width is the paper's, by policy size).
	SurrogateSteps int       `json:"surrogate_steps,omitempty"`
	Lipschitz      Lipschitz `json:"lipschitz,omitempty"`
	// Guide is the combined step's guide ("" reads as none).
	Guide Guide `json:"guide,omitempty"`
	// LearnedP is how the learned basis weighs its columns ("" reads as
	// energy).
	LearnedP LearnedP `json:"learned_p,omitempty"`
}

// LearnedP says how the learned basis's p follows its columns' energies.
type LearnedP string

// The learned basis's probabilities.
const (
	// PEnergy is p ∝ energy (the screen's IS-L).
	PEnergy LearnedP = "energy"
	// PSqrt is p ∝ √energy (the screen's IS-sqrt): flatter.
	PSqrt LearnedP = "sqrt"
	// PGuidedSqrt is the learned basis with the sum of the gradient
	// estimates as its first column, drawn every iteration (p = 1/M), and
	// the principal directions taken orthogonal to it, p ∝ √energy.
	PGuidedSqrt LearnedP = "guided-sqrt"
)

// guided says the settings guide the directions.
func (s *STPSettings) guided() bool { return s.Guide != "" && s.Guide != NoGuide }

// Name is stp or stp_is.
func (s *STPSettings) Name() string {
	if s.IS {
		return "stp_is"
	}
	return "stp"
}

func (s *STPSettings) clone() Method { c := *s; return &c }

func (s *STPSettings) validate(Problem) error {
	comb := s.Step == Combined
	switch {
	case s.Step != Adaptive && s.Step != Fixed && s.Step != Combined:
		return bad("step", "%q is not one of combined, adaptive, fixed", s.Step)
	case s.Directions < 1 || s.Directions > 4096:
		return bad("directions", "%d is outside [1, 4096]", s.Directions)
	case s.Basis != Gaussian && s.Basis != Orthogonal && s.Basis != Learned:
		return bad("basis", "%q is not one of gaussian, orthogonal, learned", s.Basis)
	case s.Basis == Learned && (!s.IS || !comb):
		return bad("basis", "learned needs --method stp_is and --step combined (its p weighs the learned columns)")
	case s.LearnedP != "" && s.LearnedP != PEnergy && s.LearnedP != PSqrt && s.LearnedP != PGuidedSqrt:
		return bad("learned-p", "%q is not one of energy, sqrt, guided-sqrt", s.LearnedP)
	case (s.LearnedP == PSqrt || s.LearnedP == PGuidedSqrt) && s.Basis != Learned:
		return bad("learned-p", "%s needs basis: learned", s.LearnedP)
	case comb && (s.Top < 1 || s.Top > s.Directions):
		return bad("top", "%d is outside [1, directions = %d] (the combined step)", s.Top, s.Directions)
	case !comb && s.Top != 0:
		return bad("top", "%d needs --step combined", s.Top)
	case !(s.Rate > 0) || math.IsInf(s.Rate, 0):
		return bad("rate", "%v must be positive and finite", s.Rate)
	case s.Rate > maxRate:
		return bad("rate", "%v exceeds the limit %g", s.Rate, float64(maxRate))
	case comb && (!(s.Noise > 0) || math.IsInf(s.Noise, 0)):
		return bad("noise", "%v must be positive and finite (the combined step)", s.Noise)
	case s.Noise > maxRate:
		return bad("noise", "%v exceeds the limit %g", s.Noise, float64(maxRate))
	case !comb && s.Noise != 0:
		return bad("noise", "%v needs --step combined", s.Noise)
	case s.Guide != "" && s.Guide != NoGuide && s.Guide != GradientSum:
		return bad("guide", "%q is not one of none, gradient-sum", s.Guide)
	case s.guided() && !comb:
		return bad("guide", "%s needs --step combined", s.Guide)
	case s.guided() && s.IS:
		return bad("guide", "%s draws its own directions; stp_is samples the basis (use --method stp)", s.Guide)
	case s.guided() && s.Directions < 2:
		return bad("directions", "%d leaves no random direction beside the guide (want ≥ 2)", s.Directions)
	case !s.IS:
		return nil
	case s.SurrogateSteps < 0 || s.SurrogateSteps > 100000:
		return bad("surrogate-steps", "%d is outside [0, 100000]", s.SurrogateSteps)
	case s.Lipschitz != Global && s.Lipschitz != Local:
		return bad("lipschitz", "%q is not one of global, local", s.Lipschitz)
	}
	return nil
}

// guideKey is the guide setting (a --config key, no flag): an enum whose
// zero value reads as none.
func guideKey(field func(*Config) *Guide) key {
	e := enumKey("guide", []string{string(NoGuide), string(GradientSum)}, func(c *Config) *string { return (*string)(field(c)) })
	return key{name: e.name,
		get: func(c *Config) string {
			if *field(c) == "" {
				return string(NoGuide)
			}
			return string(*field(c))
		},
		set: func(c *Config, v string) error {
			if err := e.set(c, v); err != nil {
				return err
			}
			if *field(c) == NoGuide {
				*field(c) = ""
			}
			return nil
		}}
}

// zeroEnumKey is an enum setting whose zero value reads as its first
// value.
func zeroEnumKey(name string, values []string, field func(*Config) *string) key {
	e := enumKey(name, values, field)
	return key{name: e.name,
		get: func(c *Config) string {
			if *field(c) == "" {
				return values[0]
			}
			return *field(c)
		},
		set: func(c *Config, v string) error {
			if err := e.set(c, v); err != nil {
				return err
			}
			if *field(c) == values[0] {
				*field(c) = ""
			}
			return nil
		}}
}

// maxRate bounds rate and noise: both are lengths in units of the
// policy's weights (times √n for the combined step), and one this long
// already leaves every sensible policy behind in one step; a longer one
// (1e308) overflows once scaled.
const maxRate = 1000

func (s *STPSettings) keys() []key {
	st := func(c *Config) *STPSettings { return c.Method.(*STPSettings) }
	ks := []key{
		intKey("directions", "directions per iteration, 2 points each", "", func(c *Config) *int { return &st(c).Directions }),
		floatKey("rate", "the step rule's step: α0 of adaptive, ε/n of fixed; for combined the step's length in units of √n, whatever M and Top (ARS's α/√b)", "", func(c *Config) *float64 { return &st(c).Rate }),
		enumKey("basis", []string{string(Gaussian), string(Orthogonal), string(Learned)}, func(c *Config) *string { return (*string)(&st(c).Basis) }),
		boolKey("normalize-basis", func(c *Config) *bool { return &st(c).NormalizeBasis }),
	}
	if s.Step == Combined {
		ks = append(ks,
			intKey("top", "the number of an iteration's directions combined into its step", "", func(c *Config) *int { return &st(c).Top }),
			floatKey("noise", "the points are x_k ± ν√n b_i/v_i (ARS's ν for unit directions)", "", func(c *Config) *float64 { return &st(c).Noise }))
		if !s.IS {
			ks = append(ks, guideKey(func(c *Config) *Guide { return &st(c).Guide }))
		}
	}
	if s.IS && s.Step == Combined {
		ks = append(ks, zeroEnumKey("learned-p", []string{string(PEnergy), string(PSqrt), string(PGuidedSqrt)}, func(c *Config) *string { return (*string)(&st(c).LearnedP) }))
	}
	if s.IS {
		ks = append(ks,
			intKey("surrogate-steps", "", "", func(c *Config) *int { return &st(c).SurrogateSteps }),
			enumKey("lipschitz", []string{string(Global), string(Local)}, func(c *Config) *string { return (*string)(&st(c).Lipschitz) }))
	}
	return ks
}

func (s *STPSettings) base(Problem) (label, dir string) {
	if s.IS {
		return "STP_IS " + string(s.Step), "stp_is-" + string(s.Step)
	}
	return "STP " + string(s.Step), "stp-" + string(s.Step)
}

func (s *STPSettings) parts(p Problem, ref Method) []part {
	var ps []part
	comb := s.Step == Combined
	// K is named where it is not the method's usual one: the paper's K
	// for the task, 1 for the combined step.
	if usual := p.paperK(); (comb && p.K != 1) || (!comb && p.K != usual) {
		ps = append(ps, kPart(p.K))
	}
	r, _ := ref.(*STPSettings)
	if s.Directions > 1 && (!comb || r == nil || s.Directions != r.Directions) {
		ps = append(ps, part{fmt.Sprintf("m=%d", s.Directions), fmt.Sprintf("m%d", s.Directions)})
	}
	if comb && (r == nil || s.Top != r.Top) {
		ps = append(ps, part{fmt.Sprintf("top %d", s.Top), fmt.Sprintf("t%d", s.Top)})
	}
	// The basis when it is not the step's usual one.
	switch orth := s.Basis == Orthogonal; {
	case s.Basis == Learned && s.LearnedP == PGuidedSqrt:
		ps = append(ps, part{"learned basis guided by the gradient sum, p ∝ √energy", "learned-gsqrt"})
	case s.Basis == Learned && s.LearnedP == PSqrt:
		ps = append(ps, part{"learned basis, p ∝ √energy", "learned-sqrt"})
	case s.Basis == Learned:
		ps = append(ps, part{"learned basis", "learned"})
	case orth == comb:
	case orth:
		ps = append(ps, part{"orthogonal basis", "orth"})
	default:
		ps = append(ps, part{"Gaussian basis", "gauss"})
	}
	// The guide is always named, so that a guided run never shares a name
	// (and a results row) with an unguided one, whatever the preset says.
	if s.guided() {
		ps = append(ps, part{"guided by the " + strings.ReplaceAll(string(s.Guide), "-", " "), "guided"})
	}
	if r == nil {
		return ps
	}
	if comb && r.Noise != s.Noise {
		ps = append(ps, part{fmt.Sprintf("noise %g", s.Noise), fmt.Sprintf("n%g", s.Noise)})
	}
	if r.Rate != s.Rate {
		ps = append(ps, part{fmt.Sprintf("rate %g", s.Rate), fmt.Sprintf("r%g", s.Rate)})
	}
	return ps
}

func (s *STPSettings) newOptimizer(p Problem, x0 []float64) (Optimizer, error) {
	n := len(x0)
	o := &stpOptimizer{set: *s, basis: stp.Gaussian{N: n, Seed: mix(p.Seed, 0xba515), Normalize: s.NormalizeBasis}}
	if s.Basis == Orthogonal {
		b, err := stp.NewOrthogonal(n, mix(p.Seed, 0xba515))
		if err != nil {
			return nil, err
		}
		o.basis = b
	}
	set := stp.Settings{
		Goal:       stp.Maximize,
		Basis:      o.basis,
		Sampling:   stp.Uniform,
		Rule:       stp.Decaying,
		Alpha0:     s.Rate,
		Remeasure:  true,
		Top:        s.Top,
		Directions: s.Directions,
		Seed:       mix(p.Seed, 0x57e9),
	}
	switch s.Step {
	case Fixed:
		set.Rule, set.Alpha0, set.Epsilon = stp.Fixed, 0, s.Rate*float64(n)
	case Combined:
		// α = ε/(n v_i) = Noise·√n/v_i (stp never measures x_k with Top,
		// whatever Remeasure says).
		set.Rule, set.Alpha0 = stp.Fixed, 0
		// The step is Rate·√n·√Top times the combination, whose terms
		// are divided by Top: with orthonormal directions and standardized
		// differences it moves x by about Rate·√n whatever M and Top are
		// (ARS's update, with b random directions of norm √n, moves it by
		// about α√n/√b: Rate is α/√b in ARS's terms).
		set.Epsilon = s.Noise * float64(n) * math.Sqrt(float64(n))
		set.Rate = s.Rate * math.Sqrt(float64(n)) * math.Sqrt(float64(s.Top))
	}
	o.seed = mix(p.Seed, 0xd1a9)
	if s.guided() {
		if s.Directions >= n {
			return nil, bad("directions", "%d must be below the policy's %d weights with --guide %s", s.Directions, n, s.Guide)
		}
		o.guide, o.gsum = stp.NewSubspaceSampler(n), &surrogate.GradientSum{}
		set.Source = o.guide
	}
	if s.IS {
		// Theorem 1 pairs the decaying step with IS-sqrt, Theorems 2-4 the
		// others with IS-L. Until the surrogate has data, all L_i are equal:
		// p is uniform and v = 1, exactly plain STP.
		set.Sampling = stp.ISSqrt
		if s.Step == Fixed || s.Step == Combined {
			set.Sampling = stp.ISL
		}
		set.L = make([]float64, n)
		for i := range set.L {
			set.L[i] = 1
		}
	}
	switch {
	case s.Basis == Learned:
		// p is the learned basis's, set each iteration; v stays 1.
		if s.Directions > n {
			return nil, bad("directions", "%d exceeds the policy's %d weights with --basis learned", s.Directions, n)
		}
		o.spectral, o.pca = stp.NewSpectralSampler(n), surrogate.NewGradientPCA()
		set.Source = o.spectral
		if s.LearnedP == PGuidedSqrt {
			o.gsum = &surrogate.GradientSum{}
		}
	case s.IS:
		sur, err := surrogate.New(n, surrogate.Config{Seed: mix(p.Seed, 0x5a66)})
		if err != nil {
			return nil, err
		}
		o.sur = sur
	}
	st, err := stp.NewStepper(x0, set)
	if err != nil {
		return nil, err
	}
	o.stepper = st
	return o, nil
}
