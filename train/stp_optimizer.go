package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/stp"
	"github.com/stpis/stpis/surrogate"
)

// Surrogate settings that no preset changes: the surrogate sets p and v
// once it holds minHistory points, after each iteration.
const minHistory = 32

// learnedFloor is the learned basis's energy per complement column, as a
// fraction of the mean energy over R^n (trace/n): the offline screen's
// ridge and floor (bench/basis_screen.py, 0.01 each).
const learnedFloor = 0.02

// stpOptimizer is STP, or STP_IS with its surrogate, as an Optimizer.
type stpOptimizer struct {
	set     STPSettings
	stepper *stp.Stepper
	basis   stp.Basis
	// sur is STP_IS's surrogate (nil for STP); batch holds the points of
	// the last batch, which it learns from.
	sur   *surrogate.Model
	batch stp.Batch
	// guide is the guided step's direction source and gsum its surrogate
	// (Guide); nil otherwise.
	guide *stp.SubspaceSampler
	gsum  *surrogate.GradientSum
	// spectral is the learned basis's direction source and pca its
	// surrogate (--basis learned); nil otherwise.
	spectral *stp.SpectralSampler
	pca      *surrogate.GradientPCA
	// pred holds the surrogate's predictions for the last batch's points,
	// made before they were measured (nil: none); diag the diagnostic's
	// window; seed draws its random subspaces.
	pred []float64
	diag diagWindow
	seed uint64
	// guided says the last batch's first direction is the guide.
	guided bool
}

// usesSurrogate says the run has a surrogate, so that it records the
// diagnostic.
func (o *stpOptimizer) usesSurrogate() bool { return o.sur != nil || o.gsum != nil || o.pca != nil }

// probabilities is p over the directions' columns: the learned basis's,
// or the stepper's.
func (o *stpOptimizer) probabilities() []float64 {
	if o.spectral != nil {
		return o.spectral.Probabilities()
	}
	return o.stepper.Probabilities()
}

// learn sets the learned basis from the gradient estimates so far, once
// a whole sum of them is in.
func (o *stpOptimizer) learn() error {
	if o.set.LearnedP == PGuidedSqrt {
		return o.learnGuided()
	}
	if o.pca.Count < o.pca.Width {
		return nil
	}
	vecs, lambda, trace, err := o.pca.Components()
	if err != nil {
		return fmt.Errorf("train: learned basis: %w", err)
	}
	if !(trace > 0) {
		return nil
	}
	floor := learnedFloor * trace / float64(o.stepper.Dim())
	if o.set.LearnedP == PSqrt {
		// p ∝ √(λ_i + floor) for the learned columns, √floor for the rest.
		for i, l := range lambda {
			lambda[i] = math.Sqrt(l+floor) - math.Sqrt(floor)
		}
		floor = math.Sqrt(floor)
	}
	if err := o.spectral.SetSpectrum(vecs, lambda, floor); err != nil {
		return fmt.Errorf("train: learned basis: %w", err)
	}
	return nil
}

// learnGuided sets the learned basis with the gradient sum as its first
// column: the principal directions are taken orthogonal to it (each
// keeping the energy of its part off the sum's line) and weighed by the
// root of their energies, the complement by the root of the floor, and
// the sum's column gets p = 1/M, so that it is drawn every iteration.
func (o *stpOptimizer) learnGuided() error {
	if o.gsum.Count == 0 {
		return nil
	}
	n, m := o.stepper.Dim(), o.set.Directions
	g := slices.Clone(o.gsum.G)
	if !unit(g) {
		return nil
	}
	vecs, energy := [][]float64{g}, []float64{0}
	floor := 1.0
	if o.pca.Count >= o.pca.Width {
		pv, lambda, trace, err := o.pca.Components()
		if err != nil {
			return fmt.Errorf("train: learned basis: %w", err)
		}
		if trace > 0 {
			floor = learnedFloor * trace / float64(n)
			for i, v := range pv {
				r := slices.Clone(v)
				for range 2 { // Gram–Schmidt twice, for accuracy
					for _, u := range vecs {
						d := dot(r, u)
						for t := range r {
							r[t] -= d * u[t]
						}
					}
				}
				// A column whose part off the span so far is under 1e-3 of
				// its length adds no direction (the span can be all of R^n).
				off := dot(v, v) - dot(v, g)*dot(v, g)
				if !(math.Sqrt(dot(r, r)) > 1e-3) || !unit(r) {
					continue
				}
				vecs = append(vecs, r)
				energy = append(energy, math.Sqrt(lambda[i]*off+floor)-math.Sqrt(floor))
			}
		}
	}
	floor = math.Sqrt(floor)
	rest := float64(n-len(vecs)) * floor
	for _, e := range energy[1:] {
		rest += e
	}
	energy[0] = rest / float64(m-1) * (1 + 1e-9)
	if err := o.spectral.SetSpectrum(vecs, energy, floor); err != nil {
		return fmt.Errorf("train: learned basis: %w", err)
	}
	return nil
}

// unit scales v to unit length, and says false when it has none.
func unit(v []float64) bool {
	l := math.Sqrt(dot(v, v))
	if !(l > 1e-12) || math.IsInf(l, 0) {
		return false
	}
	for i := range v {
		v[i] /= l
	}
	return true
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += x * b[i]
	}
	return s
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
	if o.guide != nil && o.gsum.Count > 0 {
		if err := o.guide.SetGuide([][]float64{o.gsum.G}); err != nil {
			return nil, fmt.Errorf("train: guide: %w", err)
		}
	}
	if o.pca != nil {
		if err := o.learn(); err != nil {
			return nil, err
		}
	}
	if o.usesSurrogate() && !o.diag.Started {
		if o.sur != nil || o.pca != nil {
			o.diag.startTop(o.probabilities(), o.set.Directions, o.seed, o.stepper.Iter())
		} else {
			o.diag = diagWindow{Started: true, Dim: 1, Guided: true}
		}
	}
	o.guided = o.gsum != nil && o.gsum.Count > 0
	b, err := o.stepper.Propose()
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	o.batch = b
	o.pred = o.predict(b.Points)
	return b.Points, nil
}

// predict returns the surrogate's predictions for points, nil when it
// has none to make (no surrogate, or one not yet fitted).
func (o *stpOptimizer) predict(points [][]float64) []float64 {
	switch {
	case o.gsum != nil && o.gsum.Count > 0:
		out := make([]float64, len(points))
		for i, x := range points {
			out[i] = o.gsum.Predict(x)
		}
		return out
	case o.sur != nil && o.sur.Steps() > 0:
		out := make([]float64, len(points))
		for i, x := range points {
			v, err := o.sur.Predict(x)
			if err != nil {
				return nil
			}
			out[i] = v
		}
		return out
	}
	return nil
}

// diagnosis closes the diagnostic's window at an evaluation (nil for a
// run without a surrogate).
func (o *stpOptimizer) diagnosis() *rundir.SurrogateDiag {
	if !o.usesSurrogate() || !o.diag.Started {
		return nil
	}
	return o.diag.result(o.stepper.Dim())
}

// sides says, for each direction of the last batch, whether it lies in
// the subspace the surrogate favours and in the random one it is compared
// with (see diagWindow); nil when it favours none.
func (o *stpOptimizer) sides() (inS, inR []bool) {
	m := len(o.batch.Indices)
	inS, inR = make([]bool, m), make([]bool, m)
	switch {
	case o.guide != nil:
		if !o.guided {
			return nil, nil
		}
		inS[0], inR[1] = true, true
	case o.diag.STop != nil && o.spectral != nil:
		for j, i := range o.spectral.Slots() {
			inS[j], inR[j] = slices.Contains(o.diag.STop, i), slices.Contains(o.diag.RTop, i)
		}
	case o.diag.STop != nil:
		for j, i := range o.batch.Indices {
			inS[j], inR[j] = slices.Contains(o.diag.STop, i), slices.Contains(o.diag.RTop, i)
		}
	default:
		return nil, nil
	}
	return inS, inR
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
	if o.usesSurrogate() {
		delta := o.batch.Differences(values)
		inS, inR := o.sides()
		o.diag.add(o.pred, values, delta, inS, inR)
		est := gradientEstimate(o.batch, delta)
		if o.gsum != nil && est != nil {
			if err := o.gsum.Add(est); err != nil {
				return Outcome{}, fmt.Errorf("train: guide: %w", err)
			}
		}
		if o.pca != nil && est != nil {
			if err := o.pca.Add(est); err != nil {
				return Outcome{}, fmt.Errorf("train: learned basis: %w", err)
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
	res.PEntropy = stp.Entropy(o.probabilities())
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
	Stepper   []byte                 `json:"stepper"`
	Surrogate []byte                 `json:"surrogate,omitempty"`
	GradSum   *surrogate.GradientSum `json:"gradient_sum,omitempty"`
	PCA       *surrogate.GradientPCA `json:"gradient_pca,omitempty"`
	Diag      *diagWindow            `json:"diagnostic,omitempty"`
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
	if o.usesSurrogate() {
		s.GradSum, s.PCA, s.Diag = o.gsum, o.pca, &o.diag
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
	if o.gsum != nil {
		if s.GradSum == nil {
			return errors.New("train: the checkpoint has no gradient sum for the guided step")
		}
		*o.gsum = *s.GradSum
	}
	if o.pca != nil {
		if s.PCA == nil {
			return errors.New("train: the checkpoint has no gradient PCA for the learned basis")
		}
		*o.pca = *s.PCA
	}
	o.diag = diagWindow{}
	if s.Diag != nil {
		o.diag = *s.Diag
	}
	return nil
}
