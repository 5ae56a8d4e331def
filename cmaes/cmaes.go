package cmaes

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// MaxDim is the largest dimension the optimizer takes: the covariance and
// its eigenvectors are two n×n matrices, and an eigendecomposition costs
// O(n³). At 2048 that is 64 MiB and a few seconds every few hundred
// generations; Humanoid's 5916 parameters would take 560 MiB and 25 times
// the time.
const MaxDim = 2048

// Settings are CMA-ES's settings.
type Settings struct {
	// Sigma is σ0, the initial step size: the first generation is drawn
	// from N(x0, σ0²·I).
	Sigma float64 `json:"sigma"`
	// Population is λ, the points of a generation; 0 is the default
	// 4 + ⌊3 ln n⌋.
	Population int `json:"population"`
	// Seed seeds the PCG stream that draws the samples.
	Seed uint64 `json:"seed"`
}

// DefaultPopulation is Hansen's λ for dimension n.
func DefaultPopulation(n int) int { return 4 + int(3*math.Log(float64(n))) }

// lambda is λ for dimension n: Population, or the default where it is 0.
func (s Settings) lambda(n int) int {
	if s.Population == 0 {
		return DefaultPopulation(n)
	}
	return s.Population
}

// MaxPopulation bounds λ.
const MaxPopulation = 4096

// SettingError is a setting out of its range. Field is the setting's
// name ("sigma", "population"), Reason what is wrong with its value.
type SettingError struct{ Field, Reason string }

func (e *SettingError) Error() string { return "cmaes: " + e.Field + " " + e.Reason }

// Validate checks σ0 and λ, which do not depend on the dimension; a
// *SettingError names the one out of range.
func (s Settings) Validate() error {
	switch {
	case !(s.Sigma > 0) || math.IsInf(s.Sigma, 0):
		return &SettingError{"sigma", fmt.Sprintf("%v must be positive and finite (CMA-ES's initial step size σ0)", s.Sigma)}
	case s.Population != 0 && (s.Population < 2 || s.Population > MaxPopulation):
		return &SettingError{"population", fmt.Sprintf("%d is outside [2, %d] (0: CMA-ES's default 4 + ⌊3 ln n⌋)", s.Population, MaxPopulation)}
	}
	return nil
}

func (s Settings) check(n int) error {
	switch {
	case n < 1:
		return errors.New("cmaes: x0 is empty")
	case n > MaxDim:
		return fmt.Errorf("cmaes: %d parameters is above the %d a full covariance is kept for", n, MaxDim)
	}
	return s.Validate()
}

// params are the strategy's constants for n and λ (the tutorial's
// defaults).
type params struct {
	n, lam, mu          int
	w                   []float64
	muEff               float64
	cc, cs, c1, cmu, ds float64
	chiN                float64
	eigenEvery          int
}

func newParams(n, lam int) params {
	p := params{n: n, lam: lam, mu: lam / 2}
	p.w = make([]float64, p.mu)
	var sum, sq float64
	for i := range p.w {
		p.w[i] = math.Log(float64(lam+1)/2) - math.Log(float64(i+1))
		sum += p.w[i]
	}
	for i := range p.w {
		p.w[i] /= sum
		sq += p.w[i] * p.w[i]
	}
	p.muEff = 1 / sq
	nf := float64(n)
	p.cc = (4 + p.muEff/nf) / (nf + 4 + 2*p.muEff/nf)
	p.cs = (p.muEff + 2) / (nf + p.muEff + 5)
	p.c1 = 2 / ((nf+1.3)*(nf+1.3) + p.muEff)
	p.cmu = math.Min(1-p.c1, 2*(p.muEff-2+1/p.muEff)/((nf+2)*(nf+2)+p.muEff))
	p.ds = 1 + 2*math.Max(0, math.Sqrt((p.muEff-1)/(nf+1))-1) + p.cs
	p.chiN = math.Sqrt(nf) * (1 - 1/(4*nf) + 1/(21*nf*nf))
	// The tutorial's lazy eigendecomposition: once C has moved by about a
	// tenth of a learning rate's worth per coordinate.
	p.eigenEvery = max(1, int(float64(lam)/(p.c1+p.cmu)/nf/10))
	return p
}

// Optimizer is CMA-ES's state between generations.
type Optimizer struct {
	s Settings
	p params

	mean   []float64
	sigma  float64
	c      *mat.SymDense // covariance C
	b      *mat.Dense    // C's eigenvectors (columns)
	d      []float64     // square roots of C's eigenvalues
	pc, ps []float64
	gen    int // generations told
	eigen  int // generation of the last eigendecomposition

	pcg *rand.PCG
	rng *rand.Rand

	// z and y are the pending generation's N(0, I) draws and their B·D·z;
	// nil when none.
	z, y [][]float64
}

// New returns an optimizer whose mean starts at x0 (copied), with C = I.
func New(x0 []float64, s Settings) (*Optimizer, error) {
	n := len(x0)
	if err := s.check(n); err != nil {
		return nil, err
	}
	for i, v := range x0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("cmaes: x0[%d] is %v", i, v)
		}
	}
	o := &Optimizer{s: s, p: newParams(n, s.lambda(n)), mean: slices.Clone(x0), sigma: s.Sigma,
		c: mat.NewSymDense(n, nil), b: mat.NewDense(n, n, nil), d: make([]float64, n),
		pc: make([]float64, n), ps: make([]float64, n)}
	for i := range n {
		o.c.SetSym(i, i, 1)
		o.b.Set(i, i, 1)
		o.d[i] = 1
	}
	o.pcg = rand.NewPCG(s.Seed, 0x434d412d4553) // "CMA-ES"
	o.rng = rand.New(o.pcg)
	return o, nil
}

// Settings returns the settings.
func (o *Optimizer) Settings() Settings { return o.s }

// Size is λ, the points of a generation.
func (o *Optimizer) Size() int { return o.p.lam }

// Generations is the number of generations told.
func (o *Optimizer) Generations() int { return o.gen }

// Sigma is the step size σ.
func (o *Optimizer) Sigma() float64 { return o.sigma }

// AxisRatio is the condition of the search's shape: the largest over the
// smallest standard deviation along C's eigenvectors (1 for a sphere).
func (o *Optimizer) AxisRatio() float64 {
	return slices.Max(o.d) / slices.Min(o.d)
}

// X returns a copy of the mean.
func (o *Optimizer) X() []float64 { return slices.Clone(o.mean) }

// bdz returns B·D·z.
func (o *Optimizer) bdz(z []float64) []float64 {
	n := o.p.n
	dz := make([]float64, n)
	for i := range n {
		dz[i] = o.d[i] * z[i]
	}
	y := make([]float64, n)
	mat.NewVecDense(n, y).MulVec(o.b, mat.NewVecDense(n, dz))
	return y
}

// Propose returns the λ points of the next generation, m + σ·B·D·z_k. A
// second Propose before Tell returns the same points.
func (o *Optimizer) Propose() [][]float64 {
	if o.z == nil {
		o.z, o.y = make([][]float64, o.p.lam), make([][]float64, o.p.lam)
		for k := range o.z {
			z := make([]float64, o.p.n)
			for i := range z {
				z[i] = o.rng.NormFloat64()
			}
			o.z[k], o.y[k] = z, o.bdz(z)
		}
	}
	pts := make([][]float64, len(o.y))
	for k, y := range o.y {
		x := make([]float64, len(y))
		for i := range y {
			x[i] = o.mean[i] + o.sigma*y[i]
		}
		pts[k] = x
	}
	return pts
}

// ErrNoProposal is returned by Tell without a pending Propose.
var ErrNoProposal = errors.New("cmaes: Tell without a pending Propose")

// Tell takes one value per proposed point, in Propose's order (larger is
// better; NaN is the worst, ties keep Propose's order), and updates the
// mean, the evolution paths, C and σ.
func (o *Optimizer) Tell(values []float64) error {
	if o.z == nil {
		return ErrNoProposal
	}
	p := o.p
	if len(values) != p.lam {
		return fmt.Errorf("cmaes: Tell got %d values, want %d", len(values), p.lam)
	}
	rank := make([]int, p.lam)
	for k := range rank {
		rank[k] = k
	}
	slices.SortStableFunc(rank, func(a, b int) int {
		va, vb := values[a], values[b]
		switch {
		case math.IsNaN(va) && math.IsNaN(vb):
			return 0
		case math.IsNaN(va):
			return 1
		case math.IsNaN(vb):
			return -1
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return 0
	})
	n := p.n
	ys := make([][]float64, p.mu)
	yw := make([]float64, n)
	zw := make([]float64, n)
	for i := range p.mu {
		k := rank[i]
		ys[i] = o.y[k]
		for j := range n {
			yw[j] += p.w[i] * ys[i][j]
			zw[j] += p.w[i] * o.z[k][j]
		}
	}
	for j := range n {
		o.mean[j] += o.sigma * yw[j]
	}
	// C^{-1/2}·y_w = B·z_w.
	bz := make([]float64, n)
	mat.NewVecDense(n, bz).MulVec(o.b, mat.NewVecDense(n, zw))
	a := math.Sqrt(p.cs * (2 - p.cs) * p.muEff)
	var psNorm float64
	for j := range n {
		o.ps[j] = (1-p.cs)*o.ps[j] + a*bz[j]
		psNorm += o.ps[j] * o.ps[j]
	}
	psNorm = math.Sqrt(psNorm)
	o.gen++
	hs := 0.0
	if psNorm/math.Sqrt(1-math.Pow(1-p.cs, 2*float64(o.gen))) < (1.4+2/float64(n+1))*p.chiN {
		hs = 1
	}
	ac := math.Sqrt(p.cc * (2 - p.cc) * p.muEff)
	for j := range n {
		o.pc[j] = (1-p.cc)*o.pc[j] + hs*ac*yw[j]
	}
	keep := 1 - p.c1 - p.cmu + (1-hs)*p.c1*p.cc*(2-p.cc)
	for i := range n {
		for j := i; j < n; j++ {
			v := keep*o.c.At(i, j) + p.c1*o.pc[i]*o.pc[j]
			for k, y := range ys {
				v += p.cmu * p.w[k] * y[i] * y[j]
			}
			o.c.SetSym(i, j, v)
		}
	}
	o.sigma *= math.Exp(p.cs / p.ds * (psNorm/p.chiN - 1))
	o.z, o.y = nil, nil
	if o.gen-o.eigen >= p.eigenEvery {
		if err := o.decompose(); err != nil {
			return err
		}
	}
	if !(o.sigma > 0) || math.IsInf(o.sigma, 0) {
		return fmt.Errorf("cmaes: σ became %v at generation %d", o.sigma, o.gen)
	}
	return nil
}

// decompose refreshes B and D from C.
func (o *Optimizer) decompose() error {
	var eig mat.EigenSym
	if !eig.Factorize(o.c, true) {
		return fmt.Errorf("cmaes: the covariance's eigendecomposition failed at generation %d", o.gen)
	}
	vals := eig.Values(nil)
	for i, v := range vals {
		if !(v > 0) {
			return fmt.Errorf("cmaes: the covariance lost positive definiteness at generation %d (eigenvalue %g)", o.gen, v)
		}
		o.d[i] = math.Sqrt(v)
	}
	eig.VectorsTo(o.b)
	o.eigen = o.gen
	return nil
}

// MoveTo sets the mean to x (between generations), as when a trainer
// backs off to a better point: σ and C stay, the evolution paths, which
// described the way to the old mean, start again from zero.
func (o *Optimizer) MoveTo(x []float64) error {
	switch {
	case o.z != nil:
		return errors.New("cmaes: MoveTo during a pending proposal")
	case len(x) != o.p.n:
		return fmt.Errorf("cmaes: MoveTo got %d parameters, want %d", len(x), o.p.n)
	}
	copy(o.mean, x)
	clear(o.pc)
	clear(o.ps)
	return nil
}
