package stp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// samplerCase is one Directioner under the common checks.
type samplerCase struct {
	name string
	// make builds the source for R^n with M directions per iteration.
	make func(t *testing.T, n int) Directioner
	// orthonormal says an iteration's directions are claimed orthonormal.
	orthonormal bool
	// before runs between iterations (a guide that follows x_k).
	before func(src Directioner, x []float64)
}

func orthBasis(t *testing.T, n int) *Orthogonal {
	t.Helper()
	b, err := NewOrthogonal(n, 7)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func samplerCases() []samplerCase {
	return []samplerCase{
		{name: "index, uniform p", make: func(t *testing.T, n int) Directioner {
			s, err := NewIndexSampler(orthBasis(t, n), uniformP(n))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{name: "index, importance p", make: func(t *testing.T, n int) Directioner {
			p := make([]float64, n)
			var sum float64
			for i := range p {
				p[i] = float64(i + 1)
				sum += p[i]
			}
			for i := range p {
				p[i] /= sum
			}
			s, err := NewIndexSampler(Gaussian{N: n, Seed: 3}, p)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{name: "distinct", orthonormal: true, make: func(t *testing.T, n int) Directioner {
			return NewDistinctSampler(orthBasis(t, n))
		}},
		{name: "subspace, no guide", orthonormal: true, make: func(t *testing.T, n int) Directioner {
			return NewSubspaceSampler(n)
		}},
		{name: "subspace, guided by x", orthonormal: true, make: func(t *testing.T, n int) Directioner {
			return NewSubspaceSampler(n)
		}, before: func(src Directioner, x []float64) {
			g := make([]float64, len(x))
			for i := range g {
				g[i] = 1 - x[i] // towards the quadratic's minimum c = 1
			}
			h := make([]float64, len(x))
			h[0] = 1
			if err := src.(*SubspaceSampler).SetGuide([][]float64{g, h}); err != nil {
				panic(err)
			}
		}},
		{name: "spectral", orthonormal: true, make: func(t *testing.T, n int) Directioner {
			return spectralSampler(t, n)
		}},
	}
}

// spectralSampler is a SpectralSampler of R^n whose learned columns are
// the first three of an orthogonal basis, with energies 40, 2 and 1 and
// 0.5 per complement column: the first column's π reaches 1.
func spectralSampler(t *testing.T, n int) *SpectralSampler {
	t.Helper()
	b := orthBasis(t, n)
	vecs := make([][]float64, 3)
	for i := range vecs {
		vecs[i] = make([]float64, n)
		b.Column(i, vecs[i])
	}
	s := NewSpectralSampler(n)
	if err := s.SetSpectrum(vecs, []float64{40, 2, 1}, 0.5); err != nil {
		t.Fatal(err)
	}
	return s
}

func uniformP(n int) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	return p
}

// TestDirectioners runs every direction source through the same checks:
// shapes and finite unit-norm directions, orthonormality where claimed,
// unbiased weights (E[Σ w d dᵀ] ∝ I), the same run from the same seed,
// and a checkpoint that resumes bit for bit.
func TestDirectioners(t *testing.T) {
	const n, m = 9, 4
	q := newQuad(n, 10)
	for _, c := range samplerCases() {
		t.Run(c.name, func(t *testing.T) {
			src := c.make(t, n)
			if src.Dim() != n {
				t.Fatalf("Dim %d, want %d", src.Dim(), n)
			}
			// Shapes, norms, orthogonality.
			rnd := rand.New(rand.NewPCG(1, 2))
			d := Drawn{Dirs: make([][]float64, m), Index: make([]int, m), Weight: make([]float64, m)}
			for j := range d.Dirs {
				d.Dirs[j] = make([]float64, n)
			}
			sum := make([]float64, n*n)
			const draws = 20000
			x := make([]float64, n)
			for it := range draws {
				if c.before != nil && it == 0 {
					c.before(src, x)
				}
				if err := src.Draw(rnd, d); err != nil {
					t.Fatal(err)
				}
				for j, v := range d.Dirs {
					if nv := norm(v); math.Abs(nv-1) > 1e-9 && c.name != "index, importance p" {
						t.Fatalf("direction %d has norm %v", j, nv)
					}
					if !(d.Weight[j] > 0) || d.Index[j] >= n {
						t.Fatalf("direction %d: weight %v index %d", j, d.Weight[j], d.Index[j])
					}
					for a := range n {
						for b := range n {
							sum[a*n+b] += d.Weight[j] * v[a] * v[b]
						}
					}
				}
				if c.orthonormal {
					for a := range m {
						for b := a + 1; b < m; b++ {
							var dot float64
							for i := range n {
								dot += d.Dirs[a][i] * d.Dirs[b][i]
							}
							if math.Abs(dot) > 1e-9 {
								t.Fatalf("directions %d and %d: dot %v", a, b, dot)
							}
						}
					}
				}
			}
			// E[Σ w d dᵀ] ∝ I (the Gaussian basis is not orthogonal: its
			// importance-weighted sum is B Bᵀ / n, which is checked as such).
			want := make([]float64, n*n)
			if c.name == "index, importance p" {
				b := Gaussian{N: n, Seed: 3}
				col := make([]float64, n)
				for i := range n {
					b.Column(i, col)
					for a := range n {
						for bb := range n {
							want[a*n+bb] += float64(m) / float64(n) * col[a] * col[bb]
						}
					}
				}
			} else {
				scale := sum[0] / draws
				for a := range n {
					want[a*n+a] = scale
				}
			}
			var worst float64
			for i := range sum {
				worst = math.Max(worst, math.Abs(sum[i]/draws-want[i]))
			}
			if worst > 0.06*math.Max(1, want[0]) {
				t.Fatalf("E[Σ w d dᵀ] is off by %.3f from %v·I", worst, want[0])
			}
			// The same seed gives the same run; a checkpoint resumes it bit for bit.
			run := func(resumeAt int) []float64 {
				s, err := NewStepper(make([]float64, n), Settings{Source: c.make(t, n), Directions: m, Top: 2, Rate: 0.1, Rule: Fixed, Epsilon: float64(n) * 0.3, Seed: 5})
				if err != nil {
					t.Fatal(err)
				}
				for it := range 30 {
					if it == resumeAt {
						data, err := s.MarshalBinary()
						if err != nil {
							t.Fatal(err)
						}
						r, err := NewStepper(make([]float64, n), Settings{Source: c.make(t, n), Directions: m, Top: 2, Rate: 0.1, Rule: Fixed, Epsilon: float64(n) * 0.3, Seed: 99})
						if err != nil {
							t.Fatal(err)
						}
						if err := r.UnmarshalBinary(data); err != nil {
							t.Fatal(err)
						}
						s = r
					}
					if c.before != nil {
						c.before(s.dir, s.X())
					}
					tell(t, s, q.f)
				}
				return s.X()
			}
			a, b, resumed := run(-1), run(-1), run(13)
			if !slices.Equal(a, b) || !slices.Equal(a, resumed) {
				t.Fatalf("runs differ: %v / %v / resumed %v", a[:3], b[:3], resumed[:3])
			}
			if f0, f := q.f(make([]float64, n)), q.f(a); !(f < f0) {
				t.Fatalf("30 combined steps went from f %v to %v", f0, f)
			}
		})
	}
}

// TestSamplerErrors: a guide with a NaN or of the wrong length is
// refused, as are more distinct directions than columns and as many
// subspace directions as dimensions.
func TestSamplerErrors(t *testing.T) {
	const n = 6
	g := NewSubspaceSampler(n)
	if err := g.SetGuide([][]float64{{1, math.NaN(), 0, 0, 0, 0}}); err == nil {
		t.Fatal("a NaN guide was accepted")
	}
	if err := g.SetGuide([][]float64{{1}}); err == nil {
		t.Fatal("a guide of the wrong length was accepted")
	}
	rnd := rand.New(rand.NewPCG(1, 1))
	d := Drawn{Dirs: [][]float64{make([]float64, n)}, Index: []int{0}, Weight: []float64{0}}
	if err := NewDistinctSampler(Canonical(0)).Draw(rnd, d); err == nil {
		t.Fatal("more distinct directions than columns were drawn")
	}
	full := Drawn{Dirs: make([][]float64, n), Index: make([]int, n), Weight: make([]float64, n)}
	for j := range full.Dirs {
		full.Dirs[j] = make([]float64, n)
	}
	if err := g.Draw(rnd, full); err == nil {
		t.Fatal("n subspace directions were drawn in dimension n")
	}
}

// TestDefaultSourceUnchanged: a stepper without a Source draws the
// indices it drew before the seam existed (an alias table over p fed by
// the stepper's source, one draw per direction).
func TestDefaultSourceUnchanged(t *testing.T) {
	const n, m = 7, 3
	s, err := NewStepper(make([]float64, n), Settings{Directions: m, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(4, 0xda3e39cb94b95bdb))
	table := newAlias(uniformP(n))
	for range 5 {
		b, err := s.Propose()
		if err != nil {
			t.Fatal(err)
		}
		for j := range m {
			if want := table.draw(rnd); b.Indices[j] != want {
				t.Fatalf("index %d: %d, want %d", j, b.Indices[j], want)
			}
		}
		if _, err := s.Tell(make([]float64, len(b.Points))); err != nil {
			t.Fatal(err)
		}
	}
}
