package surrogate

import (
	"errors"
	"fmt"
	"math"
)

// Errors returned by this package. Wrapped errors carry details; test them
// with errors.Is.
var (
	// ErrDim reports a vector or direction set whose length does not match
	// the model's input dimension.
	ErrDim = errors.New("surrogate: dimension mismatch")
	// ErrEmpty reports an operation that needs data on an empty history.
	ErrEmpty = errors.New("surrogate: empty history")
	// ErrNonFiniteX reports an input x with a NaN or infinite entry.
	ErrNonFiniteX = errors.New("surrogate: non-finite input x")
	// ErrNonFiniteTarget reports a NaN or infinite target y. Add drops such
	// a point, counts it in Dropped and returns this error.
	ErrNonFiniteTarget = errors.New("surrogate: non-finite target dropped")
	// ErrConfig reports an invalid configuration value.
	ErrConfig = errors.New("surrogate: invalid config")
	// ErrDecode reports a malformed or incompatible saved model.
	ErrDecode = errors.New("surrogate: cannot decode model")
)

// Scaling selects how inputs are standardized.
type Scaling int

const (
	// PerCoordinate divides each coordinate by its own standard deviation
	// (floored, see the package documentation). It is the default.
	PerCoordinate Scaling = iota
	// Isotropic divides every coordinate by one common scale, the root mean
	// square of the coordinates' standard deviations.
	Isotropic
)

// Config holds the model's settings. A zero field means its documented
// default.
type Config struct {
	// Width is the number of hidden tanh units. Default: WidthFor(dim).
	Width int
	// LearningRate is Adam's step size. Default 1e-3.
	LearningRate float64
	// Beta1 and Beta2 are Adam's moment decay rates. Defaults 0.9 and 0.999.
	Beta1, Beta2 float64
	// Epsilon is Adam's denominator offset. Default 1e-8.
	Epsilon float64
	// BatchSize is the number of points per minibatch, drawn uniformly with
	// replacement from the history. Default 32.
	BatchSize int
	// HistoryCap bounds the number of stored points. Default
	// max(1024, min(1<<20, ⌊128 MiB / (8·(dim+1))⌋)), or Window if larger.
	HistoryCap int
	// Seed seeds the initialization, reservoir and minibatch generators.
	// Zero is a valid seed.
	Seed uint64
	// Floor is the relative floor of the Lipschitz estimates: each L_i is at
	// least Floor × max_j L_j. Default 1e-6.
	Floor float64
	// AbsFloor is the value every L_i takes when all are 0. Default 1e-12.
	AbsFloor float64
	// Scaling selects the input standardization. Default PerCoordinate.
	Scaling Scaling
	// Window, if > 0, makes Train draw its minibatches from the Window most
	// recently added points only, so that f̂ fits the region the optimizer
	// is in now rather than everything it has visited. The history then
	// evicts its oldest point once it holds HistoryCap points (first in,
	// first out) instead of reservoir sampling. The scaling still comes
	// from the whole history. Default 0: every stored point.
	Window int
}

// Default values of Config fields.
const (
	DefaultLearningRate = 1e-3
	DefaultBeta1        = 0.9
	DefaultBeta2        = 0.999
	DefaultEpsilon      = 1e-8
	DefaultBatchSize    = 32
	DefaultFloor        = 1e-6
	DefaultAbsFloor     = 1e-12
	// historyBytes is the memory the default HistoryCap aims at.
	historyBytes = 128 << 20
	minHistory   = 1024
	maxHistory   = 1 << 20
)

// WidthFor returns the hidden width for a policy of n parameters, following
// the paper's choices: n < 64 → 16 (Swimmer 16, Hopper 33), n < 2000 → 64
// (HalfCheetah 102, Ant-v5 840), otherwise 256 (Humanoid-v5 5916).
func WidthFor(n int) int {
	switch {
	case n < 64:
		return 16
	case n < 2000:
		return 64
	default:
		return 256
	}
}

// DefaultHistoryCap returns the default history cap for inputs of dimension
// dim.
func DefaultHistoryCap(dim int) int {
	c := historyBytes / (8 * (dim + 1))
	return max(minHistory, min(maxHistory, c))
}

// resolve fills defaults and validates c for inputs of dimension dim.
func (c Config) resolve(dim int) (Config, error) {
	if c.Width == 0 {
		c.Width = WidthFor(dim)
	}
	def := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.LearningRate, DefaultLearningRate)
	def(&c.Beta1, DefaultBeta1)
	def(&c.Beta2, DefaultBeta2)
	def(&c.Epsilon, DefaultEpsilon)
	def(&c.Floor, DefaultFloor)
	def(&c.AbsFloor, DefaultAbsFloor)
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.HistoryCap == 0 {
		c.HistoryCap = max(DefaultHistoryCap(dim), c.Window)
	}
	bad := func(name string, v any) error { return fmt.Errorf("%w: %s = %v", ErrConfig, name, v) }
	pos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case c.Width < 0:
		return c, bad("Width", c.Width)
	case !pos(c.LearningRate):
		return c, bad("LearningRate", c.LearningRate)
	case !(c.Beta1 > 0 && c.Beta1 < 1):
		return c, bad("Beta1", c.Beta1)
	case !(c.Beta2 > 0 && c.Beta2 < 1):
		return c, bad("Beta2", c.Beta2)
	case !pos(c.Epsilon):
		return c, bad("Epsilon", c.Epsilon)
	case c.BatchSize < 0:
		return c, bad("BatchSize", c.BatchSize)
	case c.HistoryCap < 0:
		return c, bad("HistoryCap", c.HistoryCap)
	case !(c.Floor > 0 && c.Floor <= 1):
		return c, bad("Floor", c.Floor)
	case !pos(c.AbsFloor):
		return c, bad("AbsFloor", c.AbsFloor)
	case c.Scaling != PerCoordinate && c.Scaling != Isotropic:
		return c, bad("Scaling", c.Scaling)
	case c.Window < 0 || c.Window > c.HistoryCap:
		return c, fmt.Errorf("%w: Window = %d, want in [0, HistoryCap = %d]", ErrConfig, c.Window, c.HistoryCap)
	}
	return c, nil
}
