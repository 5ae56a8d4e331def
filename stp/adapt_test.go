package stp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// adaptStepper is a combined-step stepper with Settings.Adapt.
func adaptStepper(t *testing.T, n int, goal Goal, rate float64) *Stepper {
	t.Helper()
	s, err := NewStepper(make([]float64, n), Settings{Goal: goal, Rule: Fixed, Epsilon: 0.01 * float64(n), Directions: 8, Top: 4, Rate: rate, Adapt: true, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAdaptScale: on a linear f every step agrees with the last and the
// scale grows; on pure noise the steps are independent and it stays near
// 1, from the first step on; on a quadratic from far away it grows, then shrinks once the steps
// overshoot the minimum. Without Adapt the scale is 1.
func TestAdaptScale(t *testing.T) {
	n := 20
	lin := func(x []float64) float64 {
		var s float64
		for i := range x {
			s += float64(i+1) * x[i]
		}
		return s
	}
	s := adaptStepper(t, n, Maximize, 0.01)
	for range 30 {
		tell(t, s, lin)
	}
	if got := s.Scale(); !(got > 10) {
		t.Errorf("linear f: scale %v after 30 iterations, want > 10 (every step agrees)", got)
	}

	noise := rand.New(rand.NewPCG(1, 2))
	s = adaptStepper(t, n, Maximize, 0.01)
	lo, hi := 1.0, 1.0
	for range 300 {
		tell(t, s, func([]float64) float64 { return noise.NormFloat64() })
		lo, hi = math.Min(lo, s.Scale()), math.Max(hi, s.Scale())
	}
	if !(lo > 0.4 && hi < 2.5) {
		t.Errorf("pure noise: scale ranged over [%v, %v] in 300 iterations, want within [0.4, 2.5]", lo, hi)
	}

	// Early in a long path (n large, c small) |p|² is below 1 however the
	// steps fall; the rule compares it with its mean then, so pure noise
	// leaves s where it is (comparing with 1 would give 0.86 here).
	big := adaptStepper(t, 2000, Maximize, 0.01)
	for range 60 {
		tell(t, big, func([]float64) float64 { return noise.NormFloat64() })
	}
	if got := big.Scale(); !(got > 0.97 && got < 1.03) {
		t.Errorf("pure noise, n = 2000: scale %v after 60 iterations, want within [0.97, 1.03]", got)
	}

	q := newQuad(n, 1)
	s, err := NewStepper(onesTimes(n, 10), Settings{Rule: Fixed, Epsilon: 0.01 * float64(n), Directions: 8, Top: 4, Rate: 0.01, Adapt: true, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	peak := 1.0
	for range 400 {
		tell(t, s, q.f)
		peak = math.Max(peak, s.Scale())
	}
	if f, f0 := q.f(s.X()), q.f(onesTimes(n, 10)); !(peak > 5 && s.Scale() < peak/5 && f < f0*1e-4) {
		t.Errorf("quadratic: peak scale %v, last %v, f %v from %v; want a peak above 5, the last under a fifth of it, f below 1e-4 of f(x0)", peak, s.Scale(), f, f0)
	}

	s, err = NewStepper(make([]float64, n), Settings{Goal: Maximize, Rule: Fixed, Epsilon: 1, Directions: 8, Top: 4, Rate: 0.01, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		tell(t, s, lin)
	}
	if s.Scale() != 1 {
		t.Errorf("without Adapt: scale %v, want 1", s.Scale())
	}
}

func onesTimes(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}

// TestAdaptCheckpoint: a stepper restored from a checkpoint mid-run goes
// on as the original does, to the bit; a state with Adapt does not restore
// into a stepper without it, nor the reverse; Adapt needs Top.
func TestAdaptCheckpoint(t *testing.T) {
	n := 12
	q := newQuad(n, 3)
	a := adaptStepper(t, n, Minimize, 0.05)
	for range 7 {
		tell(t, a, q.f)
	}
	data, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b := adaptStepper(t, n, Minimize, 0.05)
	if err := b.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		tell(t, a, q.f)
		tell(t, b, q.f)
	}
	if a.Scale() == 1 || a.Scale() != b.Scale() || !near(a.X(), b.X(), 0) {
		t.Fatalf("restored run: scale %v against %v, x equal %v", b.Scale(), a.Scale(), near(a.X(), b.X(), 0))
	}
	plain, err := NewStepper(make([]float64, n), Settings{Rule: Fixed, Epsilon: 0.12, Directions: 8, Top: 4, Rate: 0.05, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.UnmarshalBinary(data); !errors.Is(err, ErrState) {
		t.Errorf("an Adapt state into a stepper without it: err = %v, want ErrState", err)
	}
	pd, err := plain.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := adaptStepper(t, n, Minimize, 0.05).UnmarshalBinary(pd); !errors.Is(err, ErrState) {
		t.Errorf("a state without Adapt into a stepper with it: err = %v, want ErrState", err)
	}
	if _, err := NewStepper(make([]float64, n), Settings{Rule: Fixed, Adapt: true}); !errors.Is(err, ErrSettings) {
		t.Errorf("Adapt without Top: err = %v, want ErrSettings", err)
	}
}
