package report

import (
	"math"
	"testing"
)

// The permeability constants of the human chorioamnion at term (x) and at
// 12 to 26 weeks (y): Hollander and Wolfe, Nonparametric Statistical
// Methods (1973), p. 69, the two-sample example of R's ?wilcox.test, which
// prints W = 35 and, one-sided (greater), p = 0.1272: two-sided 0.2544
// (scipy.stats.mannwhitneyu, method="exact": 0.2544122544122544).
var (
	permeabilityTerm  = []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	permeabilityEarly = []float64{1.15, 0.88, 0.90, 0.74, 1.21}
)

func TestMannWhitneyExact(t *testing.T) {
	r, err := MannWhitney(permeabilityTerm, permeabilityEarly)
	if err != nil {
		t.Fatal(err)
	}
	if r.U != 35 || !r.Exact || !near(r.P, 0.2544122544122544, 1e-12) {
		t.Errorf("got %+v, want U 35, exact, p 0.2544122544", r)
	}
	// The other way round: U' = m·n − U, the same p.
	s, err := MannWhitney(permeabilityEarly, permeabilityTerm)
	if err != nil {
		t.Fatal(err)
	}
	if s.U != 15 || !near(s.P, r.P, 1e-12) {
		t.Errorf("reversed: got %+v, want U 15, p %v", s, r.P)
	}
	// Complete separation of 3 and 3: 2/C(6,3) = 0.1.
	c, err := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	if c.U != 0 || !near(c.P, 0.1, 1e-12) {
		t.Errorf("separated: got %+v, want U 0, p 0.1", c)
	}
}

// With ties (and so the normal approximation, tie-corrected variance,
// continuity correction): R's wilcox.test(a, b, exact = FALSE) and scipy's
// mannwhitneyu(a, b, method="asymptotic") give W = 3.5, p = 0.012999854.
// Without ties but 60 values, the approximation too: scipy gives U = 1225,
// p = 0.017466219.
func TestMannWhitneyApproximation(t *testing.T) {
	r, err := MannWhitney([]float64{1, 2, 2, 3, 3, 3, 4}, []float64{3, 4, 4, 5, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	if r.U != 3.5 || r.Exact || !near(r.P, 0.012999854364387305, 1e-9) {
		t.Errorf("ties: got %+v, want U 3.5, approximate, p 0.0129998544", r)
	}
	x, y := make([]float64, 60), make([]float64, 55)
	for i := range x {
		x[i] = float64(i)
	}
	for i := range y {
		y[i] = float64(i) + 10.5
	}
	l, err := MannWhitney(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if l.U != 1225 || l.Exact || !near(l.P, 0.017466219103968242, 1e-9) {
		t.Errorf("large: got %+v, want U 1225, approximate, p 0.0174662191", l)
	}
}

func TestMannWhitneyEdges(t *testing.T) {
	same, err := MannWhitney([]float64{2, 2}, []float64{2, 2, 2})
	if err != nil {
		t.Fatal(err)
	}
	if same.P != 1 || same.U != 3 {
		t.Errorf("all equal: got %+v, want U 3, p 1", same)
	}
	if _, err := MannWhitney(nil, []float64{1}); err == nil {
		t.Error("an empty sample: no error")
	}
	if _, err := MannWhitney([]float64{1, math.NaN()}, []float64{1}); err == nil {
		t.Error("NaN: no error")
	}
	if _, err := MannWhitney([]float64{1}, []float64{math.Inf(1)}); err == nil {
		t.Error("+Inf: no error")
	}
}
