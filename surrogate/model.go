package surrogate

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// maxTanh2 is max_x |tanh”(x)| = 4/(3√3), reached at tanh(x) = ±1/√3.
var maxTanh2 = 4 / (3 * math.Sqrt(3))

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

// Add offers the point (x, y) to the history. x is copied. A point with a
// NaN or infinite y is dropped, counted in Dropped, and ErrNonFiniteTarget is
// returned; a wrong length or non-finite x returns an error and changes
// nothing. Once the history holds HistoryCap points, the point replaces a
// uniformly chosen stored one with probability HistoryCap/Seen (reservoir
// sampling), so the history stays a uniform sample of all points added;
// with a Window it replaces the oldest one.
func (m *Model) Add(x []float64, y float64) error {
	if err := m.checkX(x); err != nil {
		return err
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		m.dropped++
		return fmt.Errorf("%w: y = %v", ErrNonFiniteTarget, y)
	}
	m.seen++
	if len(m.ys) < m.cfg.HistoryCap {
		m.xs = append(m.xs, x...)
		m.ys = append(m.ys, y)
		return nil
	}
	if m.cfg.Window > 0 {
		m.put(m.slot(0), x, y)
		return nil
	}
	k := m.resRng.Uint64N(m.seen)
	if k < uint64(m.cfg.HistoryCap) {
		m.put(int(k), x, y)
	}
	return nil
}

// slot returns where the j-th most recently added point is stored (j = 0:
// the newest) in a windowed history, which is a ring: the Seen-th point
// added went to slot (Seen−1) mod HistoryCap. j must be < Len.
func (m *Model) slot(j int) int {
	return int((m.seen - 1 - uint64(j)) % uint64(m.cfg.HistoryCap))
}

func (m *Model) put(i int, x []float64, y float64) {
	copy(m.xs[i*m.dim:(i+1)*m.dim], x)
	m.ys[i] = y
}

// History returns the i-th stored point; x aliases the model's storage and
// must not be modified.
func (m *Model) History(i int) (x []float64, y float64) {
	return m.xs[i*m.dim : (i+1)*m.dim], m.ys[i]
}

// Scale returns copies of the current scaling: inputs are standardized as
// (x − muX)/sdX and targets as (y − muY)/sdY.
func (m *Model) Scale() (muX, sdX []float64, muY, sdY float64) {
	return append([]float64(nil), m.muX...), append([]float64(nil), m.sdX...), m.muY, m.sdY
}

// RefreshScaling recomputes the scaling from the history and re-expresses
// the weights so that f̂ is unchanged in original units (see the package
// documentation). Train calls it first; it returns ErrEmpty on an empty
// history.
func (m *Model) RefreshScaling() error {
	n := len(m.ys)
	if n == 0 {
		return fmt.Errorf("%w: cannot compute scaling", ErrEmpty)
	}
	d := m.dim
	mu := make([]float64, d)
	sd := make([]float64, d)
	for i := range n {
		row := m.xs[i*d : (i+1)*d]
		for j, v := range row {
			mu[j] += v
		}
	}
	inv := 1 / float64(n)
	for j := range mu {
		mu[j] *= inv
	}
	for i := range n {
		row := m.xs[i*d : (i+1)*d]
		for j, v := range row {
			e := v - mu[j]
			sd[j] += e * e
		}
	}
	ms := 0.0
	for j := range sd {
		sd[j] *= inv
		ms += sd[j]
		sd[j] = math.Sqrt(sd[j])
	}
	rms := math.Sqrt(ms / float64(d))
	for j := range sd {
		switch {
		case rms == 0:
			sd[j] = 1
		case m.cfg.Scaling == Isotropic:
			sd[j] = rms
		default:
			sd[j] = max(sd[j], 1e-3*rms)
		}
	}
	my, vy := 0.0, 0.0
	for _, y := range m.ys {
		my += y
	}
	my *= inv
	for _, y := range m.ys {
		vy += (y - my) * (y - my)
	}
	sy := math.Sqrt(vy * inv)
	if sy == 0 || math.IsInf(sy, 0) {
		sy = 1
	}
	if m.scaled {
		m.reexpress(mu, sd, my, sy)
	}
	m.muX, m.sdX, m.muY, m.sdY, m.scaled = mu, sd, my, sy, true
	return nil
}

// reexpress changes the weights so that f̂ in original units is the same
// under the new scaling (mu, sd, my, sy) as under the current one.
func (m *Model) reexpress(mu, sd []float64, my, sy float64) {
	w1, b1, w2, b2 := m.params(m.theta)
	d := m.dim
	ratio := make([]float64, d) // σ'/σ
	shift := make([]float64, d) // (μ'−μ)/σ
	for j := range d {
		ratio[j] = sd[j] / m.sdX[j]
		shift[j] = (mu[j] - m.muX[j]) / m.sdX[j]
	}
	for h := range m.width {
		row := w1[h*d : (h+1)*d]
		s := 0.0
		for j, w := range row {
			s += w * shift[j]
			row[j] = w * ratio[j]
		}
		b1[h] += s
	}
	r := m.sdY / sy
	for h := range w2 {
		w2[h] *= r
	}
	*b2 = (m.sdY**b2 + m.muY - my) / sy
}

// Train refreshes the scaling from the history (RefreshScaling), then takes
// steps Adam steps, each on a minibatch of BatchSize points drawn uniformly
// with replacement from the history (from its Window newest points, with a
// Window). It returns the mean over the steps of the minibatch mean squared
// error, in standardized target units (NaN when steps is 0). It returns
// ErrEmpty on an empty history.
func (m *Model) Train(steps int) (float64, error) {
	if steps < 0 {
		return 0, fmt.Errorf("%w: steps = %d", ErrConfig, steps)
	}
	if err := m.RefreshScaling(); err != nil {
		return 0, err
	}
	if steps == 0 {
		return math.NaN(), nil
	}
	bs := m.cfg.BatchSize
	if cap(m.idx) < bs {
		m.idx = make([]int, bs)
	}
	idx := m.idx[:bs]
	n := len(m.ys)
	windowed := m.cfg.Window > 0 && n > m.cfg.Window
	total := 0.0
	for range steps {
		for i := range idx {
			if windowed {
				idx[i] = m.slot(m.cfg.Window - 1 - m.batchRng.IntN(m.cfg.Window))
			} else {
				idx[i] = m.batchRng.IntN(n)
			}
		}
		total += m.gradient(idx)
		m.adam()
	}
	return total / float64(steps), nil
}

// hidden computes t = tanh(W1 z + b1) at x (already checked) into t.
func (m *Model) hidden(x, t []float64) {
	d := m.dim
	w1, b1, _, _ := m.params(m.theta)
	z := make([]float64, d)
	for j, v := range x {
		z[j] = (v - m.muX[j]) / m.sdX[j]
	}
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: m.width, Cols: d, Stride: d, Data: w1},
		blas64.Vector{N: d, Inc: 1, Data: z}, 0, blas64.Vector{N: m.width, Inc: 1, Data: t})
	for h := range t {
		t[h] = math.Tanh(t[h] + b1[h])
	}
}

// Predict returns f̂(x) in original units.
func (m *Model) Predict(x []float64) (float64, error) {
	if err := m.checkX(x); err != nil {
		return 0, err
	}
	t := make([]float64, m.width)
	m.hidden(x, t)
	_, _, w2, b2 := m.params(m.theta)
	out := *b2
	for h, v := range t {
		out += w2[h] * v
	}
	return m.muY + m.sdY*out, nil
}

// Gradient writes ∇f̂(x) (original units) into dst, which must have length
// Dim.
func (m *Model) Gradient(x, dst []float64) error {
	if err := m.checkX(x); err != nil {
		return err
	}
	if len(dst) != m.dim {
		return fmt.Errorf("%w: len(dst) = %d, want %d", ErrDim, len(dst), m.dim)
	}
	t := make([]float64, m.width)
	m.hidden(x, t)
	w1, _, w2, _ := m.params(m.theta)
	for h, v := range t {
		t[h] = w2[h] * (1 - v*v)
	}
	d := m.dim
	blas64.Gemv(blas.Trans, 1, blas64.General{Rows: m.width, Cols: d, Stride: d, Data: w1},
		blas64.Vector{N: m.width, Inc: 1, Data: t}, 0, blas64.Vector{N: d, Inc: 1, Data: dst})
	for j := range dst {
		dst[j] *= m.sdY / m.sdX[j]
	}
	return nil
}

// curvCoef writes σ_y w2_h tanh”(h) at x into c.
func (m *Model) curvCoef(x, c []float64) {
	m.hidden(x, c)
	_, _, w2, _ := m.params(m.theta)
	for h, t := range c {
		c[h] = m.sdY * w2[h] * (-2 * t * (1 - t*t))
	}
}

// HessianDiag writes the diagonal of ∇²f̂(x) (original units) into dst,
// which must have length Dim.
func (m *Model) HessianDiag(x, dst []float64) error {
	if err := m.checkX(x); err != nil {
		return err
	}
	if len(dst) != m.dim {
		return fmt.Errorf("%w: len(dst) = %d, want %d", ErrDim, len(dst), m.dim)
	}
	c := make([]float64, m.width)
	m.curvCoef(x, c)
	w1, _, _, _ := m.params(m.theta)
	d := m.dim
	for j := range dst {
		dst[j] = 0
	}
	for h, ch := range c {
		row := w1[h*d : (h+1)*d]
		for j, w := range row {
			dst[j] += ch * w * w
		}
	}
	for j := range dst {
		dst[j] /= m.sdX[j] * m.sdX[j]
	}
	return nil
}

// Curvature returns dᵀ ∇²f̂(x) d (original units), the second derivative of
// f̂ along d at x.
func (m *Model) Curvature(x, d []float64) (float64, error) {
	if err := m.checkX(x); err != nil {
		return 0, err
	}
	if len(d) != m.dim {
		return 0, fmt.Errorf("%w: len(d) = %d, want %d", ErrDim, len(d), m.dim)
	}
	c := make([]float64, m.width)
	m.curvCoef(x, c)
	w1, _, _, _ := m.params(m.theta)
	u := make([]float64, m.dim)
	for j := range u {
		u[j] = d[j] / m.sdX[j]
	}
	s := 0.0
	for h, ch := range c {
		p := blas64.Dot(blas64.Vector{N: m.dim, Inc: 1, Data: w1[h*m.dim : (h+1)*m.dim]},
			blas64.Vector{N: m.dim, Inc: 1, Data: u})
		s += ch * p * p
	}
	return s, nil
}
