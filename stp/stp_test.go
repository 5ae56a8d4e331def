package stp

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/optimize/functions"
)

func sum(v []float64) (s float64) {
	for _, x := range v {
		s += x
	}
	return s
}

// TestImportanceSamplingSpeedup checks Table 1's prediction on a separable
// quadratic whose L_i spread over 100×: with the finite-difference rule
// STP_IS needs fewer evaluations than STP, and the ratio of mean
// evaluations is within [½, 4] × n·max L / Σ L (the ratio of the
// Theorem 4 bounds). f never increases (checked by run).
func TestImportanceSamplingSpeedup(t *testing.T) {
	n := 20
	q := newQuad(n, 100)
	x0 := make([]float64, n)
	r0 := q.f(x0)
	evals := map[Sampling]float64{}
	for _, smp := range []Sampling{Uniform, ISL} {
		for seed := range uint64(10) {
			s, err := NewStepper(x0, Settings{Sampling: smp, L: q.L, Rule: FiniteDifference, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			run(t, s, q.f, 100000, func(s *Stepper) bool { return s.F() <= 1e-6*r0 })
			if s.F() > 1e-6*r0 {
				t.Fatalf("%v seed %d: f = %v after %d iterations", smp, seed, s.F(), s.Iter())
			}
			evals[smp] += float64(s.Points()) / 10
		}
	}
	theory := float64(n) * slices.Max(q.L) / sum(q.L)
	ratio := evals[Uniform] / evals[ISL]
	t.Logf("evaluations STP %.0f, STP_IS %.0f, ratio %.2f, theory n·maxL/ΣL = %.2f", evals[Uniform], evals[ISL], ratio, theory)
	if ratio < theory/2 || ratio > 4*theory {
		t.Errorf("ratio %.2f not within [%.2f, %.2f]", ratio, theory/2, 4*theory)
	}
}

// TestTheorem4Bound: with the finite-difference rule the mean number of
// iterations to reach f − f* ≤ ε stays below Theorem 4's
// (max v_i/p_i)/λ · log(2 r0/ε), for uniform and IS-L sampling.
func TestTheorem4Bound(t *testing.T) {
	n := 10
	q := newQuad(n, 100)
	x0 := make([]float64, n)
	r0 := q.f(x0)
	eps := 1e-4 * r0
	for _, smp := range []Sampling{Uniform, ISL} {
		p, v, err := FromLipschitz(smp, q.L, n)
		if err != nil {
			t.Fatal(err)
		}
		bound, err := Theorem4Iterations(r0, eps, slices.Min(q.L), p, v)
		if err != nil {
			t.Fatal(err)
		}
		var mean float64
		for seed := range uint64(20) {
			s, _ := NewStepper(x0, Settings{Sampling: smp, L: q.L, Rule: FiniteDifference, Seed: seed})
			mean += float64(run(t, s, q.f, int(10*bound), func(s *Stepper) bool { return s.F() <= eps })) / 20
		}
		t.Logf("%v: mean iterations %.0f, Theorem 4 bound %.0f", smp, mean, bound)
		if mean > bound {
			t.Errorf("%v: mean iterations %.0f > bound %.0f", smp, mean, bound)
		}
	}
}

// TestTheorem2Bound: with α = ε/(n v_i) the mean first iteration with
// ‖∇f(x_k)‖₁ ≤ ε stays below Theorem 2's bound, whose condition holds.
func TestTheorem2Bound(t *testing.T) {
	n := 10
	q := newQuad(n, 100)
	x0 := make([]float64, n)
	r0 := q.f(x0)
	eps := 5.0
	for _, smp := range []Sampling{Uniform, ISL} {
		p, v, _ := FromLipschitz(smp, q.L, n)
		bound, ok, err := Theorem2Iterations(r0, eps, p, v, q.L)
		if err != nil || !ok {
			t.Fatalf("%v: bound %v, condition %v, err %v", smp, bound, ok, err)
		}
		var mean float64
		for seed := range uint64(20) {
			s, _ := NewStepper(x0, Settings{Sampling: smp, L: q.L, Rule: Fixed, Epsilon: eps, Seed: seed})
			mean += float64(run(t, s, q.f, int(10*bound), func(s *Stepper) bool { return q.grad1(s.x) <= eps })) / 20
		}
		t.Logf("%v: mean iterations %.0f, Theorem 2 bound %.0f", smp, mean, bound)
		if mean > bound {
			t.Errorf("%v: mean iterations %.0f > bound %.0f", smp, mean, bound)
		}
	}
}

// TestRotatedBasis: STP_IS along the columns of a seeded Gaussian matrix
// (L_i = b_iᵀ H b_i) still converges on the quadratic, though more slowly:
// BᵀHB is far worse conditioned than H, so the bar is f ≤ 1e-4 f(x0).
func TestRotatedBasis(t *testing.T) {
	n := 10
	q := newQuad(n, 100)
	for _, normalize := range []bool{false, true} {
		basis := Gaussian{N: n, Seed: 7, Normalize: normalize}
		L := make([]float64, n)
		col := make([]float64, n)
		for i := range L {
			basis.Column(i, col)
			for j, c := range col {
				L[i] += q.L[j] * c * c
			}
		}
		x0 := make([]float64, n)
		r0 := q.f(x0)
		s, err := NewStepper(x0, Settings{Basis: basis, Sampling: ISL, L: L, Rule: FiniteDifference, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		run(t, s, q.f, 20000, func(s *Stepper) bool { return s.F() <= 1e-4*r0 })
		if s.F() > 1e-4*r0 {
			t.Errorf("normalize=%v: f = %v after %d iterations", normalize, s.F(), s.Iter())
		}
	}
	// The Gaussian basis is reproducible and has N(0,1)-sized columns.
	a, b := make([]float64, 500), make([]float64, 500)
	Gaussian{N: 500, Seed: 3}.Column(4, a)
	Gaussian{N: 500, Seed: 3}.Column(4, b)
	if !slices.Equal(a, b) {
		t.Error("Gaussian column not reproducible")
	}
	if ss := sum(slices.Collect(func(yield func(float64) bool) {
		for _, v := range a {
			yield(v * v)
		}
	})); ss < 400 || ss > 600 {
		t.Errorf("‖b_4‖² = %v, want ≈ 500", ss)
	}
}

func trajectory(t *testing.T, set Settings, iters int) [][]float64 {
	q := newQuad(8, 100)
	s, err := NewStepper(make([]float64, 8), set)
	if err != nil {
		t.Fatal(err)
	}
	var xs [][]float64
	run(t, s, q.f, iters, func(s *Stepper) bool { xs = append(xs, s.X()); return false })
	return append(xs, s.X())
}

func TestSameSeedSameRun(t *testing.T) {
	q := newQuad(8, 100)
	for _, set := range []Settings{
		{Sampling: ISSqrt, L: q.L, Rule: Decaying, Seed: 42},
		{Sampling: ISL, L: q.L, Rule: Fixed, Momentum: 0.5, Directions: 3, Seed: 42},
		{Sampling: ISL, L: q.L, Rule: Fixed, Directions: 4, Top: 2, Rate: 0.1, Momentum: 0.5, Seed: 42},
	} {
		a, b := trajectory(t, set, 100), trajectory(t, set, 100)
		if !slices.EqualFunc(a, b, slices.Equal) {
			t.Errorf("%+v: same seed, different trajectories", set)
		}
		set.Seed = 43
		if c := trajectory(t, set, 100); slices.EqualFunc(a, c, slices.Equal) {
			t.Errorf("%+v: different seeds, same trajectory", set)
		}
	}
}

// noisy is a noisy maximization problem: reward −quad + N(0, σ²) noise
// from its own seeded stream.
func noisy(q quad, r *rand.Rand) func([]float64) float64 {
	return func(x []float64) float64 { return -q.f(x) + 0.1*r.NormFloat64() }
}

// TestCheckpoint runs 50 iterations, checkpoints at 20, restores into a
// fresh stepper and checks that the continuation is bit-identical.
func TestCheckpoint(t *testing.T) {
	q := newQuad(8, 100)
	for _, set := range []Settings{
		{Goal: Maximize, Sampling: ISL, L: q.L, Mixing: 0.1, Rule: FiniteDifference, Remeasure: true, Seed: 9},
		{Goal: Maximize, Sampling: ISL, L: q.L, Mixing: 0.1, Rule: Fixed, Momentum: 0.6, Directions: 3, Remeasure: true, Seed: 9},
		{Goal: Maximize, Sampling: ISL, L: q.L, Rule: Fixed, Directions: 4, Top: 3, Rate: 0.1, Momentum: 0.3, Seed: 9},
		{Goal: Maximize, L: q.L, Rule: FiniteDifference, Momentum: 0.3, Directions: 2, Seed: 9},
	} {
		checkpoint(t, q, set)
	}
}

func checkpoint(t *testing.T, q quad, set Settings) {
	drive := func(s *Stepper, f func([]float64) float64, until int, trace *[][]float64) {
		for s.Iter() < until {
			if _, out := tell(t, s, f); out.Completed {
				*trace = append(*trace, slices.Concat(s.X(), s.Anchor(), s.Velocity(), []float64{s.F(), float64(s.Points())}))
				if s.Iter() == 10 { // p and v change mid-run, as in the trainer
					L := slices.Clone(q.L)
					slices.Reverse(L)
					if err := s.SetLipschitz(L); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	noiseSrc := rand.NewPCG(1, 2)
	a, _ := NewStepper(make([]float64, 8), set)
	var full [][]float64
	drive(a, noisy(q, rand.New(noiseSrc)), 20, &full)
	blob, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	noiseState, _ := noiseSrc.MarshalBinary()
	drive(a, noisy(q, rand.New(noiseSrc)), 50, &full)

	b, _ := NewStepper(make([]float64, 8), set)
	if err := b.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Probabilities(), a.Probabilities()) {
		t.Error("restored p differs")
	}
	noise2 := rand.NewPCG(0, 0)
	if err := noise2.UnmarshalBinary(noiseState); err != nil {
		t.Fatal(err)
	}
	resumed := slices.Clone(full[:20])
	drive(b, noisy(q, rand.New(noise2)), 50, &resumed)
	// The combined step leaves f(x_k) NaN: NaN equals NaN here.
	same := func(a, b []float64) bool {
		return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
	}
	if len(resumed) != 50 || !slices.EqualFunc(full, resumed, same) {
		t.Fatal("resumed trajectory differs from the uninterrupted one")
	}
	if b.Points() != a.Points() || b.Iter() != 50 {
		t.Errorf("counters: %d/%d points, iteration %d", b.Points(), a.Points(), b.Iter())
	}

	// A mismatched stepper and a non-marshalable source are refused.
	other := set
	other.Rule = Decaying
	c, _ := NewStepper(make([]float64, 8), other)
	if err := c.UnmarshalBinary(blob); !errors.Is(err, ErrState) {
		t.Errorf("mismatched restore: %v", err)
	}
	for _, mod := range []func(*Settings){
		func(o *Settings) { o.Momentum += 0.1 },
		func(o *Settings) { o.Directions = max(o.Directions, 1) + 1 },
	} {
		other := set
		mod(&other)
		c, _ := NewStepper(make([]float64, 8), other)
		if err := c.UnmarshalBinary(blob); !errors.Is(err, ErrState) {
			t.Errorf("restore into momentum %v, %d directions: %v", other.Momentum, other.Directions, err)
		}
	}
	other = set
	other.Src = rand.NewChaCha8([32]byte{}) // marshalable too
	if s, _ := NewStepper(make([]float64, 8), other); s != nil {
		if _, err := s.MarshalBinary(); err != nil {
			t.Errorf("ChaCha8: %v", err)
		}
	}
	other.Src = plainSource{}
	s, _ := NewStepper(make([]float64, 8), other)
	if _, err := s.MarshalBinary(); !errors.Is(err, ErrNotMarshalable) {
		t.Errorf("plain source: %v", err)
	}
	// Not between Propose and Tell.
	if _, err := a.Propose(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MarshalBinary(); !errors.Is(err, ErrSequence) {
		t.Errorf("marshal mid-iteration: %v", err)
	}
}

type plainSource struct{}

func (plainSource) Uint64() uint64 { return 12345 }

func TestBadInputs(t *testing.T) {
	x0 := []float64{0, 0, 0}
	L := []float64{1, 2, 3}
	nan := math.NaN()
	for _, c := range []struct {
		name string
		set  Settings
		x0   []float64
		want error
	}{
		{"negative p", Settings{Sampling: Custom, P: []float64{1.2, -0.2, 0}, V: L}, x0, ErrProbabilities},
		{"zero p", Settings{Sampling: Custom, P: []float64{0.5, 0.5, 0}, V: L}, x0, ErrProbabilities},
		{"NaN p", Settings{Sampling: Custom, P: []float64{nan, 0.5, 0.5}, V: L}, x0, ErrProbabilities},
		{"p sum", Settings{Sampling: Custom, P: []float64{0.3, 0.3, 0.3}, V: L}, x0, ErrProbabilities},
		{"p length", Settings{Sampling: Custom, P: []float64{0.5, 0.5}, V: L}, x0, ErrDimension},
		{"zero v", Settings{Sampling: Custom, P: []float64{0.2, 0.3, 0.5}, V: []float64{1, 0, 1}}, x0, ErrStepParams},
		{"Inf v", Settings{Sampling: Custom, P: []float64{0.2, 0.3, 0.5}, V: []float64{1, math.Inf(1), 1}}, x0, ErrStepParams},
		{"bad L", Settings{Sampling: ISL, L: []float64{1, -1, 1}}, x0, ErrStepParams},
		{"missing L", Settings{Sampling: ISSqrt}, x0, ErrStepParams},
		{"L length", Settings{Sampling: ISL, L: []float64{1, 1}}, x0, ErrDimension},
		{"basis dim", Settings{Basis: Canonical(4)}, x0, ErrDimension},
		{"empty x0", Settings{}, nil, ErrDimension},
		{"mu", Settings{Rule: StronglyConvexFStar}, x0, ErrSettings},
		{"gamma", Settings{Mixing: 2}, x0, ErrSettings},
		{"alpha0", Settings{Alpha0: -1}, x0, ErrSettings},
	} {
		if _, err := NewStepper(c.x0, c.set); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	// A zero p is fine once mixing makes it positive.
	if _, err := NewStepper(x0, Settings{Sampling: Custom, P: []float64{0.5, 0.5, 0}, V: L, Mixing: 0.01}); err != nil {
		t.Errorf("mixed zero p: %v", err)
	}
	// A failed SetProbabilities keeps the old p.
	s, _ := NewStepper(x0, Settings{Sampling: ISL, L: L})
	before := s.Probabilities()
	if err := s.SetProbabilities([]float64{1, 0, 0}, L); !errors.Is(err, ErrProbabilities) {
		t.Errorf("SetProbabilities: %v", err)
	}
	if !slices.Equal(before, s.Probabilities()) {
		t.Error("p changed after a failed SetProbabilities")
	}
	// Wrong number of values; Tell before Propose.
	if _, err := s.Tell([]float64{1}); !errors.Is(err, ErrSequence) {
		t.Errorf("Tell first: %v", err)
	}
	b, _ := s.Propose()
	if _, err := s.Tell(make([]float64, len(b.Points)+1)); !errors.Is(err, ErrDimension) {
		t.Errorf("values length: %v", err)
	}
}

// TestNaNNeverAccepted: NaN and the wrong infinity never become x_k, for
// both goals; a NaN probe abandons the iteration with ErrNoValue.
func TestNaNNeverAccepted(t *testing.T) {
	for _, goal := range []Goal{Minimize, Maximize} {
		bad := math.Inf(1)
		if goal == Maximize {
			bad = math.Inf(-1)
		}
		for _, set := range []Settings{{Goal: goal, Seed: 1}, {Goal: goal, Momentum: 0.5, Directions: 3, Rule: Fixed, Seed: 1}} {
			s, _ := NewStepper([]float64{1, 2}, set)
			for k := range 20 {
				b, _ := s.Propose()
				vals := make([]float64, len(b.Points))
				for j, r := range b.Roles {
					switch r {
					case Center:
						vals[j] = 5
					case Plus:
						vals[j] = math.NaN()
					case Minus:
						vals[j] = bad
					}
				}
				out, err := s.Tell(vals)
				if err != nil || out.Accepted != Center || s.F() != 5 || !slices.Equal(s.X(), []float64{1, 2}) || !slices.Equal(s.Anchor(), []float64{1, 2}) {
					t.Fatalf("%+v iteration %d: %+v, %v, x = %v", set, k, out, err, s.X())
				}
			}
		}
	}
	// A NaN f(x0) is replaced by any valid value.
	s, _ := NewStepper([]float64{1}, Settings{Seed: 1})
	b, _ := s.Propose()
	vals := []float64{3, 4, math.NaN()}
	if b.Roles[2] != Center {
		t.Fatalf("roles %v", b.Roles)
	}
	if out, _ := s.Tell(vals); out.Accepted != Plus || s.F() != 3 {
		t.Errorf("NaN f(x0): %+v", out)
	}
	// A NaN probe.
	s, _ = NewStepper([]float64{1}, Settings{Rule: FiniteDifference, Seed: 1})
	b, _ = s.Propose()
	if _, err := s.Tell([]float64{math.NaN(), 1}); !errors.Is(err, ErrNoValue) {
		t.Errorf("NaN probe: %v (roles %v)", err, b.Roles)
	}
	if s.Iter() != 0 || s.Points() != 2 {
		t.Errorf("after NaN probe: iteration %d, evaluations %d", s.Iter(), s.Points())
	}
}

func TestBatchShapes(t *testing.T) {
	f0 := 1.0
	for _, c := range []struct {
		set   Settings
		first []Role
		next  []Role
	}{
		{Settings{}, []Role{Plus, Minus, Center}, []Role{Plus, Minus}},
		{Settings{F0: &f0}, []Role{Plus, Minus}, []Role{Plus, Minus}},
		{Settings{Remeasure: true}, []Role{Plus, Minus, Center}, []Role{Plus, Minus, Center}},
		{Settings{Rule: FiniteDifference}, []Role{Probe, Center}, []Role{Plus, Minus}},
		{Settings{Rule: ConvexFStar}, []Role{Center}, []Role{Plus, Minus}},
	} {
		s, _ := NewStepper([]float64{0, 0}, c.set)
		b, _ := s.Propose()
		if !slices.Equal(b.Roles, c.first) {
			t.Errorf("%+v first batch %v, want %v", c.set, b.Roles, c.first)
		}
		if _, err := s.Tell(make([]float64, len(b.Roles))); err != nil {
			t.Fatal(err)
		}
		b, _ = s.Propose()
		if !slices.Equal(b.Roles, c.next) {
			t.Errorf("%+v second batch %v, want %v", c.set, b.Roles, c.next)
		}
	}
}

func TestStepRules(t *testing.T) {
	L := []float64{1, 4}
	fstar := 1.0
	f0 := 3.0
	for _, c := range []struct {
		set  Settings
		want float64 // α at iteration 0 for the drawn index, times v_i
	}{
		{Settings{Rule: Decaying, Alpha0: 2}, 2},
		{Settings{Rule: Fixed, Epsilon: 0.5}, 0.25},
		{Settings{Rule: ConvexFStar, Alpha0: 0.5, FStar: fstar}, 1},
		{Settings{Rule: StronglyConvexFStar, Alpha0: 0.5, FStar: fstar, Mu: 0.25}, 0.5},
	} {
		c.set.Sampling, c.set.L, c.set.F0 = ISL, L, &f0
		s, _ := NewStepper([]float64{0, 0}, c.set)
		b, _ := s.Propose()
		if got := b.Alpha * L[b.Index]; math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%v: α·v = %v, want %v", c.set.Rule, got, c.want)
		}
	}
	// Finite difference: α = |f(probe) − f(x)| / (t v_i).
	s, _ := NewStepper([]float64{0, 0}, Settings{Rule: FiniteDifference, T: 0.5, Sampling: ISL, L: L, F0: &f0})
	b, _ := s.Propose()
	s.Tell([]float64{2})
	b2, _ := s.Propose()
	if want := 1 / (0.5 * L[b.Index]); b2.Alpha != want || b2.Index != b.Index {
		t.Errorf("FD α = %v, want %v", b2.Alpha, want)
	}
	// Theorem 1's α0.
	p, v, _ := FromLipschitz(ISSqrt, L, 2)
	a0, _ := OptimalAlpha0(2, p, v, L)
	if want := math.Pow(8, 0.25) * math.Sqrt(2/1.0); math.Abs(a0-want) > 1e-12 { // Σ p_i L_i/v_i² = Σ p_i = 1
		t.Errorf("α0* = %v, want %v", a0, want)
	}
}

func TestSamplingAndAlias(t *testing.T) {
	L := []float64{1, 4, 9, 16}
	p, v, _ := FromLipschitz(ISSqrt, L, 4)
	if !slices.Equal(v, []float64{1, 2, 3, 4}) || math.Abs(p[3]-0.4) > 1e-15 {
		t.Errorf("IS-sqrt p %v v %v", p, v)
	}
	p, _, _ = FromLipschitz(ISL, L, 4)
	a := newAlias(p)
	r := rand.New(rand.NewPCG(1, 1))
	counts := make([]float64, 4)
	const draws = 200000
	for range draws {
		counts[a.draw(r)]++
	}
	for i := range p {
		if got := counts[i] / draws; math.Abs(got-p[i]) > 4*math.Sqrt(p[i]/draws) {
			t.Errorf("index %d drawn with frequency %v, want %v", i, got, p[i])
		}
	}
	if h := Entropy([]float64{0.25, 0.25, 0.25, 0.25}); math.Abs(h-math.Log(4)) > 1e-15 {
		t.Errorf("entropy %v", h)
	}
	s, _ := NewStepper(make([]float64, 4), Settings{Sampling: ISL, L: L, Mixing: 0.5})
	if got := s.Probabilities()[0]; math.Abs(got-(0.5/30+0.125)) > 1e-15 {
		t.Errorf("mixed p_0 = %v", got)
	}
}

// TestOptimizeMinimize runs STP and STP_IS through optimize.Minimize on
// gonum's Beale function (minimum 0 at (3, 0.5)), twice each, and checks
// that the reruns agree.
func TestOptimizeMinimize(t *testing.T) {
	p := optimize.Problem{Func: functions.Beale{}.Func}
	for _, m := range []optimize.Method{
		// v must not be too small for FD steps on Beale: with v = 1 every
		// step overshoots, is rejected, and x never moves.
		&Method{Settings: Settings{Rule: FiniteDifference, L: []float64{100, 100}, Seed: 3}},
		&Method{Settings: Settings{Sampling: ISL, Rule: FiniteDifference, L: []float64{10, 100}, Seed: 3}},
	} {
		var first float64
		for rep := range 2 {
			res, err := optimize.Minimize(p, []float64{1, 1}, &optimize.Settings{FuncEvaluations: 30000, Converger: &optimize.FunctionConverge{Absolute: 1e-14, Iterations: 2000}}, m)
			if err != nil {
				t.Fatalf("%T: %v", m, err)
			}
			if res.F > 1e-5 {
				t.Errorf("%T: f = %v at %v (%v, %d evaluations)", m, res.F, res.X, res.Status, res.Stats.FuncEvaluations)
			}
			if rep == 0 {
				first = res.F
			} else if res.F != first {
				t.Errorf("%T: rerun gave %v, first run %v", m, res.F, first)
			}
		}
	}
	// A bad setting ends the run with Failure.
	_, err := optimize.Minimize(p, []float64{1, 1}, nil, &Method{Settings: Settings{Sampling: ISL}})
	if !errors.Is(err, ErrStepParams) {
		t.Errorf("STP_IS without L: %v", err)
	}
	_, err = optimize.Minimize(p, []float64{1, 1}, nil, &Method{Settings: Settings{Goal: Maximize}})
	if !errors.Is(err, ErrSettings) {
		t.Errorf("Maximize: %v", err)
	}
	// The zero Method is plain STP and runs.
	if res, err := optimize.Minimize(p, []float64{1, 1}, &optimize.Settings{FuncEvaluations: 3000}, &Method{}); err != nil || !(res.F < functions.Beale{}.Func([]float64{1, 1})) {
		t.Errorf("zero Method: f = %v, %v", res.F, err)
	}
}

// TestNormalizeLipschitz: the normalized L gives step parameters of mean 1
// and the same p as the raw L, for every sampling, whatever the scale of L;
// the stepper's SetLipschitzNormalized applies it.
func TestNormalizeLipschitz(t *testing.T) {
	raw := []float64{0.5, 3, 40, 7}
	for _, smp := range []Sampling{Uniform, ISSqrt, ISL} {
		for _, scale := range []float64{1e-6, 1, 1e6} {
			L := make([]float64, len(raw))
			for i, l := range raw {
				L[i] = scale * l
			}
			nl, err := NormalizeLipschitz(smp, L)
			if err != nil {
				t.Fatal(err)
			}
			if L[0] != scale*raw[0] {
				t.Fatal("NormalizeLipschitz modified its input")
			}
			p0, _, _ := FromLipschitz(smp, L, len(L))
			p, v, _ := FromLipschitz(smp, nl, len(L))
			if m := sum(v) / float64(len(v)); math.Abs(m-1) > 1e-12 {
				t.Errorf("%v scale %g: mean v = %v, want 1", smp, scale, m)
			}
			for i := range p {
				if math.Abs(p[i]-p0[i]) > 1e-12 {
					t.Errorf("%v scale %g: p changed: %v, want %v", smp, scale, p, p0)
					break
				}
			}
		}
	}
	if _, err := NormalizeLipschitz(Custom, raw); !errors.Is(err, ErrSettings) {
		t.Errorf("Custom: %v", err)
	}
	if _, err := NormalizeLipschitz(ISL, []float64{1, 0}); !errors.Is(err, ErrStepParams) {
		t.Errorf("zero L: %v", err)
	}
	s, _ := NewStepper(make([]float64, 4), Settings{Sampling: ISL, L: []float64{1, 1, 1, 1}})
	if err := s.SetLipschitzNormalized([]float64{2, 4, 6, 8}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0.4, 0.8, 1.2, 1.6} {
		if v := s.StepParams()[i]; math.Abs(v-want) > 1e-15 {
			t.Errorf("v[%d] = %v after SetLipschitzNormalized, want %v", i, v, want)
		}
	}
	if err := s.SetLipschitzNormalized([]float64{1}); !errors.Is(err, ErrDimension) {
		t.Errorf("short L: %v", err)
	}
}

// TestBasisCount: every basis has Count() = Dim() (the method set of
// surrogate.Directions), and only Canonical claims to be the identity.
func TestBasisCount(t *testing.T) {
	m, err := NewMatrix([][]float64{{1, 2}, {3, 4}}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []Basis{Canonical(3), Gaussian{N: 4, Seed: 1}, m} {
		if b.Count() != b.Dim() {
			t.Errorf("%T: Count %d, Dim %d", b, b.Count(), b.Dim())
		}
		_, id := b.(interface{ Identity() bool })
		if _, canonical := b.(Canonical); id != canonical {
			t.Errorf("%T: has Identity %v", b, id)
		}
	}
}
