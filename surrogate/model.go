package surrogate

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// PCG stream constants for the three generators derived from Config.Seed.
const (
	streamInit      = 0x696e6974 // "init"
	streamReservoir = 0x72657376 // "resv"
	streamBatch     = 0x62617463 // "batc"
)

// Model is a one-hidden-layer tanh network with its history, scaling and
// Adam state. Make one with New or decode one with UnmarshalBinary (into a
// zero Model); a Model is not safe for concurrent use.
type Model struct {
	dim, width int
	cfg        Config

	// theta holds W1 (width×dim, row-major), b1 (width), w2 (width), b2.
	theta, mom1, mom2, grad []float64
	step                    uint64 // Adam step count t

	scaled bool      // whether the scaling was computed from data
	muX    []float64 // input means
	sdX    []float64 // input scales
	muY    float64
	sdY    float64

	xs      []float64 // history inputs, row-major, len = Len()*dim
	ys      []float64 // history targets
	seen    uint64    // finite points ever offered to the reservoir
	dropped int       // non-finite targets dropped

	resPCG, batchPCG *rand.PCG
	resRng, batchRng *rand.Rand

	// scratch for training
	scr trainScratch
	idx []int
}

// New returns a model for inputs of dimension dim with weights initialized
// from cfg.Seed: W1 and w2 Glorot-uniform, biases zero.
func New(dim int, cfg Config) (*Model, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("%w: dim = %d", ErrConfig, dim)
	}
	c, err := cfg.resolve(dim)
	if err != nil {
		return nil, err
	}
	m := &Model{dim: dim, width: c.Width, cfg: c}
	m.alloc()
	m.resPCG = rand.NewPCG(c.Seed, streamReservoir)
	m.batchPCG = rand.NewPCG(c.Seed, streamBatch)
	m.resRng = rand.New(m.resPCG)
	m.batchRng = rand.New(m.batchPCG)

	init := rand.New(rand.NewPCG(c.Seed, streamInit))
	w1, _, w2, _ := m.params(m.theta)
	lim1 := math.Sqrt(6 / float64(dim+c.Width))
	for i := range w1 {
		w1[i] = lim1 * (2*init.Float64() - 1)
	}
	lim2 := math.Sqrt(6 / float64(c.Width+1))
	for i := range w2 {
		w2[i] = lim2 * (2*init.Float64() - 1)
	}
	return m, nil
}

func (m *Model) alloc() {
	np := m.width*m.dim + 2*m.width + 1
	m.theta = make([]float64, np)
	m.mom1 = make([]float64, np)
	m.mom2 = make([]float64, np)
	m.grad = make([]float64, np)
	m.muX = make([]float64, m.dim)
	m.sdX = make([]float64, m.dim)
	for i := range m.sdX {
		m.sdX[i] = 1
	}
	m.muY, m.sdY = 0, 1
}

// params splits a parameter-shaped vector into W1, b1, w2 and b2.
func (m *Model) params(p []float64) (w1, b1, w2 []float64, b2 *float64) {
	wd := m.width * m.dim
	return p[:wd], p[wd : wd+m.width], p[wd+m.width : wd+2*m.width], &p[wd+2*m.width]
}

// Dim returns the input dimension.
func (m *Model) Dim() int { return m.dim }

// Width returns the hidden width.
func (m *Model) Width() int { return m.width }

// Config returns the resolved configuration (defaults filled in).
func (m *Model) Config() Config { return m.cfg }

// Len returns the number of points in the history.
func (m *Model) Len() int { return len(m.ys) }

// Seen returns the number of finite points ever added (stored or not).
func (m *Model) Seen() uint64 { return m.seen }

// Dropped returns the number of points dropped for a non-finite target.
func (m *Model) Dropped() int { return m.dropped }

// Steps returns the number of Adam steps taken.
func (m *Model) Steps() uint64 { return m.step }

func (m *Model) checkX(x []float64) error {
	if len(x) != m.dim {
		return fmt.Errorf("%w: len(x) = %d, want %d", ErrDim, len(x), m.dim)
	}
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: x[%d] = %v", ErrNonFiniteX, j, v)
		}
	}
	return nil
}
