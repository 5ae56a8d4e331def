package cmaes

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"testing"
)

// quad is −|x − c|², maximized at c.
func quad(c []float64) func([]float64) float64 {
	return func(x []float64) float64 {
		var s float64
		for i, v := range x {
			d := v - c[i]
			s += d * d
		}
		return -s
	}
}

func generation(t *testing.T, o *Optimizer, f func([]float64) float64) [][]float64 {
	t.Helper()
	pts := o.Propose()
	vals := make([]float64, len(pts))
	for i, p := range pts {
		vals[i] = f(p)
	}
	if err := o.Tell(vals); err != nil {
		t.Fatal(err)
	}
	return pts
}

func TestFindsTheMaximum(t *testing.T) {
	n := 10
	c := make([]float64, n)
	for i := range c {
		c[i] = 1 + float64(i)/4
	}
	o, err := New(make([]float64, n), Settings{Sigma: 0.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := quad(c)
	start := f(o.X())
	for range 300 {
		generation(t, o, f)
	}
	if got := f(o.X()); got < -1e-6 {
		t.Errorf("after 300 generations the mean's value is %g (start %g), want above −1e-6", got, start)
	}
	if o.Sigma() > 0.01 {
		t.Errorf("the search did not narrow: σ %g", o.Sigma())
	}
}

func TestSameSeedSameRun(t *testing.T) {
	f := quad([]float64{1, -2, 3})
	run := func(seed uint64) [][]float64 {
		o, err := New([]float64{0, 0, 0}, Settings{Sigma: 0.3, Population: 6, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var all [][]float64
		for range 5 {
			all = append(all, generation(t, o, f)...)
		}
		return all
	}
	a, b, c := run(7), run(7), run(8)
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				t.Fatalf("seed 7 twice: point %d differs", i)
			}
		}
	}
	if a[0][0] == c[0][0] {
		t.Error("seeds 7 and 8 drew the same first point")
	}
}

// A restored optimizer continues bit for bit (the replay of its values).
func TestCheckpointResumesBitForBit(t *testing.T) {
	f := quad([]float64{0.5, -0.25, 2, 1})
	x0 := []float64{0.1, 0.2, 0.3, 0.4}
	s := Settings{Sigma: 0.2, Seed: 3}
	straight, _ := New(x0, s)
	stopped, _ := New(x0, s)
	for range 7 {
		generation(t, straight, f)
		generation(t, stopped, f)
	}
	// A NaN value is replayed as the worst too.
	pts := stopped.Propose()
	straight.Propose()
	vals := make([]float64, len(pts))
	for i, p := range pts {
		vals[i] = f(p)
	}
	vals[1] = math.NaN()
	for _, o := range []*Optimizer{straight, stopped} {
		if err := o.Tell(vals); err != nil {
			t.Fatal(err)
		}
	}
	b, err := stopped.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var resumed Optimizer
	if err := resumed.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for g := range 5 {
		p, q := generation(t, straight, f), generation(t, &resumed, f)
		for i := range p {
			for j := range p[i] {
				if p[i][j] != q[i][j] {
					t.Fatalf("generation %d after the restore: point %d coordinate %d is %v, want %v", g, i, j, q[i][j], p[i][j])
				}
			}
		}
	}
	if a, b := straight.X(), resumed.X(); a[0] != b[0] || a[3] != b[3] {
		t.Errorf("means differ: %v and %v", a, b)
	}
}

// The mean is the weighted sum of the best half (the tutorial's weights).
func TestMeanIsTheWeightedBestHalf(t *testing.T) {
	o, err := New([]float64{0, 0}, Settings{Sigma: 0.1, Population: 6, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	f := quad([]float64{1, 1})
	pts := generation(t, o, f)
	slices.SortStableFunc(pts, func(a, b []float64) int { return cmp.Compare(f(b), f(a)) })
	w := []float64{math.Log(3.5) - math.Log(1), math.Log(3.5) - math.Log(2), math.Log(3.5) - math.Log(3)}
	sum := w[0] + w[1] + w[2]
	var want [2]float64
	for i := range w {
		want[0] += w[i] / sum * pts[i][0]
		want[1] += w[i] / sum * pts[i][1]
	}
	if got := o.X(); math.Abs(got[0]-want[0]) > 1e-15 || math.Abs(got[1]-want[1]) > 1e-15 {
		t.Errorf("mean %v, want %v", got, want)
	}
}

// CSA: σ grows on a slope and shrinks at an optimum; the covariance
// learns an ill-conditioned ellipsoid's axes.
func TestAdapts(t *testing.T) {
	o, _ := New(make([]float64, 5), Settings{Sigma: 0.1, Seed: 9})
	for range 20 {
		generation(t, o, func(x []float64) float64 { return x[0] })
	}
	if o.Sigma() < 0.5 {
		t.Errorf("on a slope σ went from 0.1 to %g, want growth", o.Sigma())
	}
	n := 6
	e, _ := New(make([]float64, n), Settings{Sigma: 1, Seed: 9})
	ell := func(x []float64) float64 {
		var s float64
		for i, v := range x {
			s += math.Pow(100, float64(i)/float64(n-1)) * (v - 1) * (v - 1)
		}
		return -s
	}
	for range 400 {
		generation(t, e, ell)
	}
	if r := e.AxisRatio(); r < 5 || r > 20 {
		t.Errorf("axis ratio %g on an ellipsoid of axis ratio 10, want near 10", r)
	}
	if v := ell(e.X()); v < -1e-8 {
		t.Errorf("ellipsoid value %g after 400 generations", v)
	}
}

func TestNaNIsTheWorst(t *testing.T) {
	o, _ := New([]float64{0}, Settings{Sigma: 1, Population: 4, Seed: 2})
	pts := o.Propose()
	vals := []float64{math.NaN(), math.NaN(), math.NaN(), 0}
	if err := o.Tell(vals); err != nil {
		t.Fatal(err)
	}
	// μ = 2: the best (the one finite value) has weight above ½.
	if got := o.X()[0]; math.Abs(got-pts[3][0]) >= math.Abs(got-pts[0][0]) && math.Abs(got-pts[3][0]) >= math.Abs(got-pts[1][0]) {
		t.Errorf("mean %v is not nearest the only finite point %v (NaN points %v)", got, pts[3], pts[:3])
	}
}

func TestRefuses(t *testing.T) {
	for _, c := range []struct {
		n    int
		s    Settings
		want string
	}{
		{MaxDim + 1, Settings{Sigma: 1}, "above the 2048"},
		{0, Settings{Sigma: 1}, "empty"},
		{3, Settings{Sigma: 0}, "sigma"},
		{3, Settings{Sigma: math.Inf(1)}, "sigma"},
		{3, Settings{Sigma: 1, Population: 1}, "population"},
	} {
		if _, err := New(make([]float64, c.n), c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("n %d %+v: err = %v, want one saying %q", c.n, c.s, err, c.want)
		}
	}
	o, _ := New([]float64{1, 2}, Settings{Sigma: 1, Seed: 1})
	if err := o.Tell([]float64{1}); err != ErrNoProposal {
		t.Errorf("Tell before Propose: %v", err)
	}
	o.Propose()
	if err := o.Tell([]float64{1}); err == nil {
		t.Error("Tell with too few values accepted")
	}
	if err := o.MoveTo([]float64{0, 0}); err == nil {
		t.Error("MoveTo with a pending proposal accepted")
	}
	if _, err := o.MarshalBinary(); err == nil {
		t.Error("a checkpoint with a pending proposal accepted")
	}
}

func TestMoveToStartsAfresh(t *testing.T) {
	o, _ := New([]float64{0, 0, 0}, Settings{Sigma: 0.1, Seed: 4})
	generation(t, o, quad([]float64{1, 1, 1}))
	if err := o.MoveTo([]float64{5, 5, 5}); err != nil {
		t.Fatal(err)
	}
	if x := o.X(); x[0] != 5 || o.Generations() != 1 {
		t.Errorf("after MoveTo: x %v, generations %d", x, o.Generations())
	}
	for _, p := range o.Propose() {
		if math.Abs(p[0]-5) > 1 {
			t.Errorf("a sample %v far from the new start", p)
		}
	}
}
