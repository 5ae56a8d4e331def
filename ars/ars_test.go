package ars

import (
	"math"
	"testing"
)

// reward is a concave quadratic with its maximum at (1, -2, 3, ...).
func reward(x []float64) float64 {
	s := 0.0
	for i, v := range x {
		t := float64(i%2*-2+1) * float64(i+1)
		s -= (v - t) * (v - t)
	}
	return s
}

func run(t *testing.T, s Settings, iters int, x0 []float64) *Optimizer {
	t.Helper()
	o, err := New(x0, s)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < iters; k++ {
		pts := o.Propose()
		vals := make([]float64, len(pts))
		for i, p := range pts {
			vals[i] = reward(p)
		}
		if err := o.Tell(vals); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

func TestARSImprovesQuadratic(t *testing.T) {
	x0 := make([]float64, 6)
	s := Settings{StepSize: 0.05, Directions: 8, Top: 4, Noise: 0.05, Seed: 7}
	o := run(t, s, 300, x0)
	// The maximum reward is 0, so -reward is the gap to the optimum.
	if gap0, gap := -reward(x0), -reward(o.X()); gap > gap0/20 {
		t.Fatalf("gap %v after 300 iterations, from %v: want it at least 20x smaller", gap, gap0)
	}
	if o.Evaluations() != 300*16 || o.Iter() != 300 {
		t.Fatalf("counters: evals %d iter %d", o.Evaluations(), o.Iter())
	}
}

func TestARSSeedDeterminismAndResume(t *testing.T) {
	x0 := make([]float64, 4)
	s := Settings{Directions: 4, Top: 2, Seed: 11}
	a := run(t, s, 40, x0)
	b := run(t, s, 20, x0)
	blob, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var c Optimizer
	if err := c.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 20; k++ {
		pts := c.Propose()
		vals := make([]float64, len(pts))
		for i, p := range pts {
			vals[i] = reward(p)
		}
		if err := c.Tell(vals); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range a.X() {
		if math.Float64bits(v) != math.Float64bits(c.X()[i]) {
			t.Fatalf("resumed run differs at x[%d]: %v vs %v", i, c.X()[i], v)
		}
	}
}

func TestARSBadInput(t *testing.T) {
	if _, err := New([]float64{1}, Settings{Directions: 2, Top: 3}); err == nil {
		t.Error("top > directions: want error")
	}
	if _, err := New([]float64{math.NaN()}, Settings{}); err == nil {
		t.Error("NaN x0: want error")
	}
	o, _ := New([]float64{0, 0}, Settings{Directions: 2})
	if err := o.Tell([]float64{1, 2, 3, 4}); err != ErrNoProposal {
		t.Errorf("Tell before Propose: err = %v", err)
	}
	o.Propose()
	if err := o.Tell([]float64{1, 2, 3}); err == nil {
		t.Error("wrong value count: want error")
	}
	if err := o.Tell([]float64{1, math.NaN(), 3, 4}); err == nil {
		t.Error("NaN value: want error")
	}
	if x := o.X(); x[0] != 0 || x[1] != 0 {
		t.Errorf("rejected Tell moved x: %v", x)
	}
}

func TestMoveTo(t *testing.T) {
	o, err := New(make([]float64, 3), Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.MoveTo([]float64{1, 2}); err == nil {
		t.Error("a point of the wrong size was accepted")
	}
	if err := o.MoveTo([]float64{1, 2, 3}); err != nil || o.X()[2] != 3 {
		t.Errorf("MoveTo: %v, x = %v", err, o.X())
	}
	o.Propose()
	if err := o.MoveTo([]float64{0, 0, 0}); err == nil {
		t.Error("MoveTo during a proposal was accepted")
	}
}
