package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/stpis/stpis/stp"
	"github.com/stpis/stpis/surrogate"
)

// Surrogate settings that no preset changes: the surrogate sets p and v
// once it holds minHistory points, after each iteration.
const minHistory = 32

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

// Size is 2M + 1: x ± α b_i for each of the M directions, and the
// re-measured x_k, which the Top combination does not measure.
func (o *stpOptimizer) Size() int {
	if o.set.Top > 0 {
		return 2 * o.set.Directions
	}
	return 2*o.set.Directions + 1
}

func (o *stpOptimizer) X() []float64 { return o.stepper.X() }

func (o *stpOptimizer) MoveTo(x []float64) error { return o.stepper.MoveTo(x) }

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
	if steps := o.set.SurrogateSteps; steps > 0 {
		if _, err := o.sur.Train(steps); err != nil {
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
