package stp

import (
	"bytes"
	"encoding"
	"encoding/gob"
	"fmt"
	"math/rand/v2"
	"slices"
)

// stateVersion is bumped when State changes incompatibly.
const stateVersion = 1

// State is everything of a Stepper that changes while it runs. It encodes
// with encoding/gob (float values may be NaN or ±Inf, which encoding/json
// rejects). Settings that do not change (basis, step rule and its
// constants, goal, mixing) are not part of it: restore a State into a
// stepper built with the same Settings. N, Goal, Rule, Mixing, Momentum
// and Directions are stored to detect a mismatch.
type State struct {
	Version int
	N       int
	Goal    Goal
	Rule    StepRule
	Mixing  float64
	// Momentum is β and Directions is M (0 in states written before they
	// existed, which were β = 0 and M = 1).
	Momentum   float64
	Directions int
	// Top is Settings.Top (0 in states written before it existed).
	Top int

	// X is x_k (SMTP's z^k); Anchor and Velocity are SMTP's x^k and v^k
	// (nil without momentum; Anchor nil with Top).
	X                []float64
	Anchor, Velocity []float64
	F                float64
	FKnown           bool
	Iter             int
	Points           int64
	// P is p after mixing; V is v.
	P, V []float64
	// RNG is the random source's MarshalBinary output.
	RNG []byte
}

// State returns the stepper's state. It fails between Propose and the Tell
// that completes the iteration (ErrSequence), and when the random source
// cannot be marshaled (ErrNotMarshalable).
func (s *Stepper) State() (State, error) {
	if err := s.between(); err != nil {
		return State{}, err
	}
	m, ok := s.src.(encoding.BinaryMarshaler)
	if !ok {
		return State{}, fmt.Errorf("%w: %T has no MarshalBinary; use the default source or a *rand.PCG", ErrNotMarshalable, s.src)
	}
	rng, err := m.MarshalBinary()
	if err != nil {
		return State{}, fmt.Errorf("%w: %v", ErrNotMarshalable, err)
	}
	return State{
		Version:    stateVersion,
		N:          s.n,
		Goal:       s.set.Goal,
		Rule:       s.set.Rule,
		Mixing:     s.set.Mixing,
		Momentum:   s.set.Momentum,
		Directions: s.m,
		Top:        s.set.Top,
		X:          append([]float64(nil), s.x...),
		Anchor:     slices.Clone(s.hx),
		Velocity:   slices.Clone(s.vel),
		F:          s.f,
		FKnown:     s.fKnown,
		Iter:       s.iter,
		Points:     s.points,
		P:          append([]float64(nil), s.p...),
		V:          append([]float64(nil), s.v...),
		RNG:        rng,
	}, nil
}

// SetState restores st, taken from a stepper with the same Settings. The
// continuation is then bit-identical to the original run.
func (s *Stepper) SetState(st State) error {
	if err := s.between(); err != nil {
		return err
	}
	switch {
	case st.Version != stateVersion:
		return fmt.Errorf("%w: version %d, want %d", ErrState, st.Version, stateVersion)
	case st.N != s.n || len(st.X) != s.n || len(st.P) != s.n || len(st.V) != s.n:
		return fmt.Errorf("%w: dimension %d, stepper has %d", ErrState, st.N, s.n)
	case st.Goal != s.set.Goal || st.Rule != s.set.Rule || st.Mixing != s.set.Mixing ||
		st.Momentum != s.set.Momentum || max(st.Directions, 1) != s.m || st.Top != s.set.Top:
		return fmt.Errorf("%w: goal/rule/mixing/momentum/directions/top %v/%v/%v/%v/%v/%v, stepper has %v/%v/%v/%v/%v/%v", ErrState,
			st.Goal, st.Rule, st.Mixing, st.Momentum, max(st.Directions, 1), st.Top, s.set.Goal, s.set.Rule, s.set.Mixing, s.set.Momentum, s.m, s.set.Top)
	case (s.hx != nil) != (len(st.Anchor) == s.n) || (s.vel != nil) != (len(st.Velocity) == s.n):
		return fmt.Errorf("%w: momentum state of lengths %d, %d, want %d each with momentum (velocity only with Top), none without", ErrState, len(st.Anchor), len(st.Velocity), s.n)
	}
	if err := checkV(st.V, s.n); err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	if _, err := mix(st.P, 0, s.n); err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	u, ok := s.src.(encoding.BinaryUnmarshaler)
	if !ok {
		return fmt.Errorf("%w: %T has no UnmarshalBinary", ErrNotMarshalable, s.src)
	}
	if err := u.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("%w: random source: %w", ErrState, err)
	}
	s.x = append(s.x[:0], st.X...)
	if s.hx != nil {
		s.hx = append(s.hx[:0], st.Anchor...)
	}
	if s.vel != nil {
		s.vel = append(s.vel[:0], st.Velocity...)
	}
	s.f, s.fKnown = st.F, st.FKnown
	s.iter, s.points = st.Iter, st.Points
	if err := s.sourceProbabilities(st.P); err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	s.p = append([]float64(nil), st.P...)
	s.v = append([]float64(nil), st.V...)
	s.rnd = rand.New(s.src)
	return nil
}

// MarshalBinary encodes State() with encoding/gob.
func (s *Stepper) MarshalBinary() ([]byte, error) {
	st, err := s.State()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return nil, fmt.Errorf("stp: encode state: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary decodes data from MarshalBinary into s, which must have
// been built by NewStepper with the same Settings.
func (s *Stepper) UnmarshalBinary(data []byte) error {
	var st State
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return fmt.Errorf("%w: decode: %w", ErrState, err)
	}
	return s.SetState(st)
}
