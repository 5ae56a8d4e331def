package stp

import "errors"

// Sentinel errors. Errors returned by this package wrap one of these, so
// callers can test them with errors.Is.
var (
	// ErrProbabilities reports a bad probability vector p: wrong length, a
	// NaN, Inf, negative or (after mixing) zero entry, or a sum that is not 1
	// within [ProbabilityTolerance].
	ErrProbabilities = errors.New("stp: bad probabilities")
	// ErrStepParams reports a bad step-parameter vector v (wrong length, or an
	// entry that is not finite and > 0) or bad Lipschitz constants.
	ErrStepParams = errors.New("stp: bad step parameters")
	// ErrDimension reports a dimension mismatch (x0, basis, p, v, L, values).
	ErrDimension = errors.New("stp: dimension mismatch")
	// ErrSettings reports an invalid setting (an unknown enum value, a
	// negative step constant, a missing μ, ...).
	ErrSettings = errors.New("stp: bad settings")
	// ErrSequence reports Propose/Tell called out of order, or a marshal
	// attempted while a batch is outstanding.
	ErrSequence = errors.New("stp: call out of sequence")
	// ErrNotMarshalable reports a user-supplied rand.Source that does not
	// implement encoding.BinaryMarshaler / encoding.BinaryUnmarshaler.
	ErrNotMarshalable = errors.New("stp: random source is not marshalable")
	// ErrState reports a checkpoint that cannot be restored into this
	// stepper (corrupt data, or settings that do not match).
	ErrState = errors.New("stp: bad state")
	// ErrNoValue reports that f(x_0) could not be measured: every value
	// received for x_0 was NaN or the wrong infinity.
	ErrNoValue = errors.New("stp: no valid function value")
)
