package surrogate

import (
	"math/rand/v2"
	"testing"
)

// gaussianBasis returns the n×n basis with i.i.d. N(0,1) entries whose
// column j is generated from (seed, j), so it is never stored.
func gaussianBasis(n int, seed uint64) Directions {
	return fromFunc(n, n, func(j int, dst []float64) {
		r := rand.New(rand.NewPCG(seed, uint64(j)))
		for i := range dst {
			dst[i] = r.NormFloat64()
		}
	})
}

// humanoidModel returns a Humanoid-sized model (n = 17×348 = 5916, width
// 256) with nPoints points in its history.
func humanoidModel(b *testing.B, nPoints int) *Model {
	const n = 17 * 348
	m, err := New(n, Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 3))
	x := make([]float64, n)
	for range nPoints {
		for j := range x {
			x[j] = 0.1 * r.NormFloat64()
		}
		if err := m.Add(x, r.NormFloat64()); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// BenchmarkHumanoidRefresh is one refresh at Humanoid size: 10 Adam steps
// (with the scaling refresh) and the global and local Lipschitz estimates
// along a rotated Gaussian basis generated from a seed.
func BenchmarkHumanoidRefresh(b *testing.B) {
	m := humanoidModel(b, 1000)
	dirs := gaussianBasis(m.Dim(), 7)
	x, _ := m.History(0)
	x = append([]float64(nil), x...)
	b.ResetTimer()
	for range b.N {
		if _, err := m.Train(10); err != nil {
			b.Fatal(err)
		}
		if _, _, err := m.Lipschitz(x, dirs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHumanoidCanonical is the same refresh along the canonical basis.
func BenchmarkHumanoidCanonical(b *testing.B) {
	m := humanoidModel(b, 1000)
	dirs := identityBasis(m.Dim())
	x, _ := m.History(0)
	x = append([]float64(nil), x...)
	b.ResetTimer()
	for range b.N {
		if _, err := m.Train(10); err != nil {
			b.Fatal(err)
		}
		if _, _, err := m.Lipschitz(x, dirs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHumanoidTrain10 is the 10 Adam steps alone.
func BenchmarkHumanoidTrain10(b *testing.B) {
	m := humanoidModel(b, 1000)
	b.ResetTimer()
	for range b.N {
		if _, err := m.Train(10); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHumanoidLipschitzGaussian is the rotated-basis pass alone.
func BenchmarkHumanoidLipschitzGaussian(b *testing.B) {
	m := humanoidModel(b, 10)
	dirs := gaussianBasis(m.Dim(), 7)
	b.ResetTimer()
	for range b.N {
		if _, err := m.LipschitzGlobal(dirs); err != nil {
			b.Fatal(err)
		}
	}
}
