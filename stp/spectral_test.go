package stp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSpectralInclusion: each column of the learned basis is among an
// iteration's M directions with probability π_i = min(1, c·p_i), Σ π = M,
// the complement's columns alike; the weights are 1/π_i; p's entropy is
// below uniform's.
func TestSpectralInclusion(t *testing.T) {
	const n, m, draws = 9, 4, 40000
	s := spectralSampler(t, n)
	p := s.Probabilities()
	pi := inclusion(p, m)
	var total float64
	for i, x := range pi {
		total += x
		if x > 1+1e-12 {
			t.Fatalf("π[%d] = %v above 1", i, x)
		}
	}
	if math.Abs(total-m) > 1e-9 || pi[0] != 1 {
		t.Fatalf("π = %v: sum %v, want %d, and the first column certain", pi, total, m)
	}
	if h := Entropy(p); !(h < 0.95*math.Log(n)) {
		t.Fatalf("p's entropy %v is not below 0.95 ln n", h)
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	d := Drawn{Dirs: make([][]float64, m), Index: make([]int, m), Weight: make([]float64, m)}
	for j := range d.Dirs {
		d.Dirs[j] = make([]float64, n)
	}
	count := make([]float64, n)
	for range draws {
		if err := s.Draw(rnd, d); err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for j, i := range s.Slots() {
			if seen[i] {
				t.Fatalf("column %d drawn twice in one iteration", i)
			}
			seen[i] = true
			count[i]++
			if d.Index[j] != -1 || math.Abs(d.Weight[j]-1/pi[i]) > 1e-12 {
				t.Fatalf("direction %d: index %d weight %v, want -1 and %v", j, d.Index[j], d.Weight[j], 1/pi[i])
			}
		}
	}
	for i := range n {
		if got := count[i] / draws; math.Abs(got-pi[i]) > 0.01 {
			t.Fatalf("column %d drawn at rate %.4f, want π = %.4f", i, got, pi[i])
		}
	}
}

// TestSpectralRefusals: a spectrum that is not orthonormal, of the wrong
// shape, with a negative or NaN energy, or without a positive floor for
// its complement is refused, and the sampler keeps what it had.
func TestSpectralRefusals(t *testing.T) {
	const n = 4
	e1, e2 := []float64{1, 0, 0, 0}, []float64{0, 1, 0, 0}
	for _, c := range []struct {
		name   string
		vecs   [][]float64
		energy []float64
		floor  float64
		want   error
	}{
		{"not orthogonal", [][]float64{e1, {1, 1, 0, 0}}, []float64{1, 1}, 0.1, ErrSettings},
		{"not unit", [][]float64{{2, 0, 0, 0}}, []float64{1}, 0.1, ErrSettings},
		{"wrong length", [][]float64{{1, 0}}, []float64{1}, 0.1, ErrDimension},
		{"energies", [][]float64{e1, e2}, []float64{1}, 0.1, ErrDimension},
		{"negative energy", [][]float64{e1}, []float64{-1}, 0.1, ErrProbabilities},
		{"NaN energy", [][]float64{e1}, []float64{math.NaN()}, 0.1, ErrProbabilities},
		{"no floor", [][]float64{e1}, []float64{1}, 0, ErrProbabilities},
		{"too many", [][]float64{e1, e2, e1, e2, e1}, []float64{1, 1, 1, 1, 1}, 0.1, ErrDimension},
	} {
		s := NewSpectralSampler(n)
		before := s.Probabilities()
		err := s.SetSpectrum(c.vecs, c.energy, c.floor)
		if !errors.Is(err, c.want) {
			t.Fatalf("%s: error %v, want %v", c.name, err, c.want)
		}
		if after := s.Probabilities(); after[0] != before[0] || after[3] != before[3] {
			t.Fatalf("%s: a refused spectrum changed p to %v", c.name, after)
		}
	}
	d := Drawn{Dirs: make([][]float64, n+1), Index: make([]int, n+1), Weight: make([]float64, n+1)}
	for j := range d.Dirs {
		d.Dirs[j] = make([]float64, n)
	}
	if err := NewSpectralSampler(n).Draw(rand.New(rand.NewPCG(1, 1)), d); err == nil {
		t.Fatal("more directions than columns were drawn")
	}
}
