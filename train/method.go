package train

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/stpis/stpis/ars"
	"github.com/stpis/stpis/stp"
	"github.com/stpis/stpis/surrogate"
)

// Optimizer is a method as the training loop drives it: each iteration it
// proposes the points of one batch and takes their values, the means of K (shifted)
// training returns, NaN for a point with a non-finite episode. STP, STP_IS
// and ARS plug in this way.
type Optimizer interface {
	// Size is the number of points the next Propose returns, so that the
	// loop can tell whether the next batch fits the budget without drawing
	// it.
	Size() int
	// Propose returns the points of the next batch.
	Propose() ([][]float64, error)
	// Tell takes one value per point of the last batch, in order, and
	// ends the iteration.
	Tell(values []float64) (Outcome, error)
	// X returns the current point x_k.
	X() []float64
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Outcome is what an optimizer did with a batch's values.
type Outcome struct {
	// Kept is the index in the batch of the point that is now x_k, or −1
	// when x_k is no point of the batch (ARS steps along its estimate of
	// the gradient).
	Kept int
	// Accepted names the kept point ("plus", "minus", "center"); empty for
	// ARS.
	Accepted string
	// Step is the step size of the iteration, PEntropy the entropy of the
	// sampling probabilities (0 when there are none).
	Step, PEntropy float64
}

// newOptimizer builds the optimizer of cfg at x0.
func newOptimizer(cfg Config, x0 []float64) (Optimizer, error) {
	if cfg.Method == ARS {
		s := cfg.ARS
		s.Seed = cfg.Problem.Seed
		o, err := ars.New(x0, s)
		if err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		return arsOptimizer{o}, nil
	}
	return newSTP(cfg, x0)
}

// arsOptimizer is ARS V2-t as an Optimizer.
type arsOptimizer struct{ *ars.Optimizer }

func (a arsOptimizer) Size() int                     { return 2 * a.Settings().Directions }
func (a arsOptimizer) Propose() ([][]float64, error) { return a.Optimizer.Propose(), nil }
func (a arsOptimizer) Tell(values []float64) (Outcome, error) {
	if err := a.Optimizer.Tell(values); err != nil {
		return Outcome{}, fmt.Errorf("train: %w", err)
	}
	return Outcome{Kept: -1, Step: a.Settings().StepSize}, nil
}

// stpOptimizer is STP, or STP_IS with its surrogate, as an Optimizer.
type stpOptimizer struct {
	set     STPSettings
	stepper *stp.Stepper
	basis   stp.Basis
	// sur is STP_IS's surrogate (nil for STP); batch holds the points of
	// the last batch, which it learns from.
	sur   *surrogate.Model
	batch stp.Batch
}

func newSTP(cfg Config, x0 []float64) (*stpOptimizer, error) {
	n := len(x0)
	s := cfg.STP
	o := &stpOptimizer{set: s, basis: stp.Gaussian{N: n, Seed: mix(cfg.Problem.Seed, 0xba515), Normalize: s.NormalizeBasis}}
	if s.Basis == Orthogonal {
		b, err := stp.NewOrthogonal(n, mix(cfg.Problem.Seed, 0xba515))
		if err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		o.basis = b
	}
	set := stp.Settings{
		Goal:       stp.Maximize,
		Basis:      o.basis,
		Sampling:   stp.Uniform,
		Rule:       stp.Decaying,
		Alpha0:     s.Alpha0,
		Epsilon:    s.Epsilon,
		Remeasure:  true,
		Top:        s.Top,
		Rate:       s.Rate * math.Sqrt(float64(n)),
		Mixing:     s.Mixing,
		Directions: s.Directions,
		Seed:       mix(cfg.Problem.Seed, 0x57e9),
	}
	switch s.Step {
	case Fixed:
		set.Rule = stp.Fixed
		if set.Epsilon == 0 {
			set.Epsilon = 0.05 * float64(n)
		}
	case Combined:
		// α = ε/(n v_i) = Noise·√n/v_i (stp never measures x_k with Top,
		// whatever Remeasure says).
		set.Rule, set.Epsilon = stp.Fixed, s.Noise*float64(n)*math.Sqrt(float64(n))
	}
	if cfg.Method == STPIS {
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
		sur, err := surrogate.New(n, surrogate.Config{Width: s.Width, Seed: mix(cfg.Problem.Seed, 0x5a66)})
		if err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		o.sur = sur
	}
	st, err := stp.NewStepper(x0, set)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	o.stepper = st
	return o, nil
}

// Size is 2M + 1: x ± α b_i for each of the M directions, and the
// re-measured x_k, which the Top combination does not measure.
func (o *stpOptimizer) Size() int {
	if o.set.Top > 0 {
		return 2 * max(o.set.Directions, 1)
	}
	return 2*max(o.set.Directions, 1) + 1
}

func (o *stpOptimizer) X() []float64 { return o.stepper.X() }

func (o *stpOptimizer) Propose() ([][]float64, error) {
	b, err := o.stepper.Propose()
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	o.batch = b
	return b.Points, nil
}

func (o *stpOptimizer) Tell(values []float64) (Outcome, error) {
	if o.sur != nil {
		for i, v := range values {
			if math.IsNaN(v) {
				continue
			}
			if err := o.sur.Add(o.batch.Points[i], v); err != nil {
				return Outcome{}, fmt.Errorf("train: surrogate: %w", err)
			}
		}
	}
	out, err := o.stepper.Tell(values)
	switch {
	case errors.Is(err, stp.ErrNoValue):
		// No value of the batch was finite: the iteration is abandoned
		// and x_k stays.
		return Outcome{Kept: -1, Accepted: stp.Center.String()}, nil
	case err != nil:
		return Outcome{}, fmt.Errorf("train: %w", err)
	case !out.Completed:
		// The RL step rules (decaying, fixed, combined) complete an
		// iteration with every batch.
		return Outcome{}, errors.New("train: the step rule needs more than one batch per iteration")
	}
	res := Outcome{Kept: out.Point, Accepted: out.Accepted.String(), Step: o.batch.Alpha}
	if o.sur != nil {
		if err := o.refresh(); err != nil {
			return Outcome{}, err
		}
	}
	res.PEntropy = stp.Entropy(o.stepper.Probabilities())
	return res, nil
}

// refresh trains the surrogate and, once it has minHistory points,
// replaces p and v by its Lipschitz estimates along the basis.
func (o *stpOptimizer) refresh() error {
	if o.sur.Len() < minHistory {
		return nil
	}
	if o.set.SurrogateSteps > 0 {
		if _, err := o.sur.Train(o.set.SurrogateSteps); err != nil {
			return fmt.Errorf("train: surrogate: %w", err)
		}
	}
	var L []float64
	var err error
	if o.set.Lipschitz == Local {
		L, err = o.sur.LipschitzLocal(o.stepper.X(), o.basis)
	} else {
		L, err = o.sur.LipschitzGlobal(o.basis)
	}
	if err != nil {
		return fmt.Errorf("train: surrogate: %w", err)
	}
	// Normalized so that the mean v is 1, as plain STP's v: then α0 (or ε)
	// means the same step length before and after every refresh.
	if err := o.stepper.SetLipschitzNormalized(L); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

// stpState is an stpOptimizer's serialized state.
type stpState struct {
	Stepper   []byte `json:"stepper"`
	Surrogate []byte `json:"surrogate,omitempty"`
}

func (o *stpOptimizer) MarshalBinary() ([]byte, error) {
	var s stpState
	var err error
	if s.Stepper, err = o.stepper.MarshalBinary(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if o.sur != nil {
		if s.Surrogate, err = o.sur.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	return json.Marshal(s)
}

func (o *stpOptimizer) UnmarshalBinary(b []byte) error {
	var s stpState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("train: stepper state: %w", err)
	}
	if err := o.stepper.UnmarshalBinary(s.Stepper); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if o.sur != nil {
		if err := o.sur.UnmarshalBinary(s.Surrogate); err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	return nil
}
