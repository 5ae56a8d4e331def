package stp

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// noisyQuad is quad plus Gaussian noise of standard deviation sigma, drawn
// from its own seeded stream.
func noisyQuad(q quad, sigma float64, seed uint64) func([]float64) float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	return func(x []float64) float64 { return q.f(x) + sigma*r.NormFloat64() }
}

// acceptRate runs set for iters iterations on f and returns the fraction
// of iterations in which x_k moved, and the stepper.
func acceptRate(t *testing.T, set Settings, f func([]float64) float64, iters int) (float64, *Stepper) {
	t.Helper()
	s, err := NewStepper(make([]float64, 4), set)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for s.Iter() < iters {
		if _, out := tell(t, s, f); out.Completed && out.Accepted != Center {
			moved++
		}
	}
	return float64(moved) / float64(iters), s
}

// On pure noise (a flat f) the plain three-point choice moves x_k in about
// 2/3 of the iterations (the best of three equal draws); with a margin of
// two measured spreads it moves in few.
func TestMarginRefusesNoise(t *testing.T) {
	flat := noisyQuad(quad{L: make([]float64, 4), c: make([]float64, 4)}, 1, 7)
	set := Settings{Rule: Fixed, Epsilon: 0.4, Remeasure: true, Seed: 2}
	plain, _ := acceptRate(t, set, flat, 600)
	set.Margin = 2
	aware, s := acceptRate(t, set, flat, 600)
	if plain < 0.55 || plain > 0.8 {
		t.Fatalf("plain choice moved in %.2f of the iterations, want ≈ 2/3", plain)
	}
	if aware > 0.1 {
		t.Fatalf("with Margin 2 x_k moved in %.2f of the iterations, want < 0.1 (plain %.2f)", aware, plain)
	}
	// σ_d² estimates Var(f − f') = 2σ² = 2.
	if sd2 := s.noiseSq; sd2 < 1 || sd2 > 4 {
		t.Fatalf("noise estimate σ_d² = %v, want ≈ 2", sd2)
	}
}

// Where the signal beats the noise the margin still lets x_k descend, and
// on a deterministic f (σ_d = 0) the run is the plain one exactly.
func TestMarginFollowsSignal(t *testing.T) {
	q := newQuad(4, 10)
	set := Settings{Rule: Fixed, Epsilon: 0.4, Remeasure: true, Seed: 5, Margin: 2}
	_, s := acceptRate(t, set, noisyQuad(q, 0.01, 3), 800)
	if f0, f := q.f(make([]float64, 4)), q.f(s.X()); f > f0/20 {
		t.Fatalf("f fell from %v to %v only, want below 1/20 of it", f0, f)
	}
	_, det := acceptRate(t, set, q.f, 300)
	set.Margin = 0
	_, plain := acceptRate(t, set, q.f, 300)
	if !slices.Equal(det.X(), plain.X()) {
		t.Fatalf("deterministic f: x = %v with the margin, %v without", det.X(), plain.X())
	}
}

// The noise estimate is part of the state: a restored stepper continues
// bit for bit, and a bad estimate or a margin without re-measurement is
// refused.
func TestMarginStateAndSettings(t *testing.T) {
	set := Settings{Rule: Fixed, Epsilon: 0.4, Remeasure: true, Seed: 2, Margin: 1.5}
	f := noisyQuad(newQuad(4, 10), 0.3, 11)
	_, a := acceptRate(t, set, f, 50)
	st, err := a.State()
	if err != nil {
		t.Fatal(err)
	}
	if st.NoiseN == 0 {
		t.Fatal("no noise difference measured in 50 iterations")
	}
	b, err := NewStepper(make([]float64, 4), set)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetState(st); err != nil {
		t.Fatal(err)
	}
	g := noisyQuad(newQuad(4, 10), 0.3, 12)
	h := noisyQuad(newQuad(4, 10), 0.3, 12)
	for range 40 {
		tell(t, a, g)
		tell(t, b, h)
	}
	if !slices.Equal(a.X(), b.X()) || a.noiseSq != b.noiseSq {
		t.Fatalf("restored run differs: x %v / %v, σ_d² %v / %v", a.X(), b.X(), a.noiseSq, b.noiseSq)
	}
	st.NoiseSq = math.NaN()
	if err := b.SetState(st); !errors.Is(err, ErrState) {
		t.Fatalf("NaN noise estimate: err = %v, want ErrState", err)
	}
	for _, bad := range []Settings{
		{Margin: -1, Remeasure: true},
		{Margin: math.Inf(1), Remeasure: true},
		{Margin: 1},
		{Margin: 1, Remeasure: true, Directions: 2, Top: 1, Rate: 1},
	} {
		if _, err := NewStepper(make([]float64, 3), bad); !errors.Is(err, ErrSettings) {
			t.Errorf("%+v: err = %v, want ErrSettings", bad, err)
		}
	}
}
