package train

import (
	"encoding"
	"fmt"
	"slices"
	"strings"
)

// Method is an optimizer as a run configures it: a value that holds its
// settings, validates them, names them and builds its optimizer (as
// gonum's optimize.Method does). *STPSettings (STP and STP_IS) and
// *ARSSettings are the methods; a new one is one file that implements
// this interface, one line in methods and its blocks in presets.yaml. A
// method with step rules also implements stepped (STP's:
// method_stp_rules.go); nothing outside a method's files asks for its
// settings' type.
type Method interface {
	// Name is the method as --method takes it: stp, stp_is, ars.
	Name() string
	// validate checks the settings for problem p; errors name the field
	// as its flag.
	validate(p Problem) error
	// newOptimizer builds the optimizer at x0 for a run of problem p
	// (p.Seed is the attempt's seed).
	newOptimizer(p Problem, x0 []float64) (Optimizer, error)
	// keys are the settings the method owns, by flag name.
	keys() []key
	// base is the method's display name and directory stem ("STP_IS
	// adaptive", "stp_is-adaptive"); parts names what sets the settings
	// apart from ref, the preset's for the same method and step.
	base(p Problem) (label, dir string)
	parts(p Problem, ref Method) []part
	clone() Method
}

// stepped is a method with step rules (Steps: STP and STP_IS): the preset
// table keys its entries by step, and each step is a row of its own for
// the settings' names (prototypes).
type stepped interface {
	Method
	step() Step
	setStep(Step)
}

// methods builds the zero settings of each method by name.
var methods = map[string]func() Method{
	"stp":    func() Method { return &STPSettings{} },
	"stp_is": func() Method { return &STPSettings{IS: true} },
	"ars":    func() Method { return &ARSSettings{} },
	"cmaes":  func() Method { return &CMAESSettings{} },
}

// MethodNames lists the methods, sorted.
func MethodNames() []string {
	names := make([]string, 0, len(methods))
	for n := range methods {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func newMethod(name string) (Method, error) {
	f, ok := methods[name]
	if !ok {
		return nil, bad("method", "%q is not one of %s", name, strings.Join(MethodNames(), ", "))
	}
	return f(), nil
}

// Optimizer is a method as the training loop drives it: each iteration it
// proposes the points of one batch and takes their values, the means of K (shifted)
// training returns, NaN for a point with a non-finite episode.
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
	// X returns the current point x_k; MoveTo sets it between iterations
	// (the guard backs off to the best evaluated point).
	X() []float64
	MoveTo(x []float64) error
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

// NewOptimizer builds the optimizer of cfg at x0.
func NewOptimizer(cfg Config, x0 []float64) (Optimizer, error) {
	o, err := cfg.Method.newOptimizer(cfg.Problem, x0)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return o, nil
}
