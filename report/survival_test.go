package report

import (
	"math"
	"slices"
	"testing"
)

// The remission times in weeks of the 6-MP versus placebo trial of Freireich
// et al., Blood 21:699 (1963), the example of Gehan (1965), Klein and
// Moeschberger (Survival Analysis, §1.2, data set drug6mp) and Kleinbaum and
// Klein (Survival Analysis: A Self-Learning Text, ch. 2). false marks a
// censored time (still in remission at the end of the study).
var (
	sixMPTimes  = []float64{6, 6, 6, 6, 7, 9, 10, 10, 11, 13, 16, 17, 19, 20, 22, 23, 25, 32, 32, 34, 35}
	sixMPEvents = []bool{true, true, true, false, true, false, true, false, false, true, true, false, false, false, true, true, false, false, false, false, false}

	placeboTimes = []float64{1, 1, 2, 2, 3, 4, 4, 5, 5, 8, 8, 8, 8, 11, 11, 12, 12, 15, 17, 22, 23}
)

func allEvents(n int) []bool {
	e := make([]bool, n)
	for i := range e {
		e[i] = true
	}
	return e
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// The 6-MP curve of Klein and Moeschberger's Table 4.1A, which R's
// summary(survfit(Surv(t2, relapse) ~ 1, data = drug6mp)) prints to three
// decimals: 0.857, 0.807, 0.753, 0.690, 0.627, 0.538, 0.448. The exact
// products are 18/21, ·16/17, ·14/15, ·11/12, ·10/11, ·6/7, ·5/6.
func TestKaplanMeierLeukemia(t *testing.T) {
	steps, err := KaplanMeier(sixMPTimes, sixMPEvents)
	if err != nil {
		t.Fatal(err)
	}
	want := []KMStep{
		{6, 21, 3, 18.0 / 21},
		{7, 17, 1, 18.0 / 21 * 16 / 17},
		{10, 15, 1, 18.0 / 21 * 16 / 17 * 14 / 15},
		{13, 12, 1, 18.0 / 21 * 16 / 17 * 14 / 15 * 11 / 12},
		{16, 11, 1, 18.0 / 21 * 16 / 17 * 14 / 15 * 11 / 12 * 10 / 11},
		{22, 7, 1, 18.0 / 21 * 16 / 17 * 14 / 15 * 11 / 12 * 10 / 11 * 6 / 7},
		{23, 6, 1, 18.0 / 21 * 16 / 17 * 14 / 15 * 11 / 12 * 10 / 11 * 6 / 7 * 5 / 6},
	}
	if len(steps) != len(want) {
		t.Fatalf("steps %+v, want %+v", steps, want)
	}
	for i, w := range want {
		s := steps[i]
		if s.Time != w.Time || s.AtRisk != w.AtRisk || s.Events != w.Events || !near(s.Survival, w.Survival, 1e-12) {
			t.Errorf("step %d: %+v, want %+v", i, s, w)
		}
	}
	// The published three-decimal values, read off the curve between and
	// at the steps.
	for _, c := range []struct{ t, s float64 }{
		{0, 1}, {5.9, 1}, {6, 0.857}, {6.5, 0.857}, {7, 0.807}, {9.5, 0.807}, {10, 0.753},
		{13, 0.690}, {16, 0.627}, {21, 0.627}, {22, 0.538}, {23, 0.448}, {35, 0.448}, {100, 0.448},
	} {
		if got := SurvivalAt(steps, c.t); !near(got, c.s, 5e-4) {
			t.Errorf("S(%v) = %.4f, want %.3f", c.t, got, c.s)
		}
	}

	// Placebo, no censoring: S is the fraction still in remission.
	pl, err := KaplanMeier(placeboTimes, allEvents(len(placeboTimes)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ t, s float64 }{{1, 19.0 / 21}, {2, 17.0 / 21}, {5, 12.0 / 21}, {8, 8.0 / 21}, {22.5, 1.0 / 21}, {23, 0}} {
		if got := SurvivalAt(pl, c.t); !near(got, c.s, 1e-12) {
			t.Errorf("placebo S(%v) = %v, want %v", c.t, got, c.s)
		}
	}
}

// R's survfit on the same data prints median 23 for 6-MP and 8 for placebo.
func TestKMMedian(t *testing.T) {
	if m, ok, err := KMMedian(sixMPTimes, sixMPEvents); err != nil || !ok || m != 23 {
		t.Errorf("6-MP median %v %v %v, want 23", m, ok, err)
	}
	if m, ok, err := KMMedian(placeboTimes, allEvents(len(placeboTimes))); err != nil || !ok || m != 8 {
		t.Errorf("placebo median %v %v %v, want 8", m, ok, err)
	}
	// Exactly one half at the second event (2 of 4): that time, the
	// episodes by which half the seeds had reached.
	if m, ok, _ := KMMedian([]float64{300, 100, 400, 400}, []bool{true, true, false, false}); !ok || m != 300 {
		t.Errorf("half-way median %v %v, want 300", m, ok)
	}
	// 2 of 5: never at one half, beyond the largest time.
	if m, ok, _ := KMMedian([]float64{100, 300, 400, 400, 400}, []bool{true, true, false, false, false}); ok || !math.IsInf(m, 1) {
		t.Errorf("median %v %v, want not reached", m, ok)
	}
	if _, _, err := KMMedian([]float64{1, 2}, []bool{true}); err == nil {
		t.Error("lengths 2 and 1: no error")
	}
	if _, err := KaplanMeier([]float64{1, math.NaN()}, []bool{true, true}); err == nil {
		t.Error("NaN time: no error")
	}
	if steps, err := KaplanMeier(nil, nil); err != nil || len(steps) != 0 {
		t.Errorf("empty sample: %v, %v", steps, err)
	}
}

// R's survdiff(Surv(time, cens) ~ group) on the leukemia data prints, for
// 6-MP, N 21, Observed 9, Expected 19.3, (O-E)^2/V 16.8, and "Chisq= 16.8 on
// 1 degrees of freedom, p= 4.17e-05"; Kleinbaum and Klein give the log-rank
// statistic as 16.79. Exactly: E = 19.2505, V = 6.25696, χ² = 16.7929,
// p = 4.1688e-05.
func TestLogRankLeukemia(t *testing.T) {
	placeboEvents := allEvents(len(placeboTimes))
	r, err := LogRank(sixMPTimes, sixMPEvents, placeboTimes, placeboEvents)
	if err != nil {
		t.Fatal(err)
	}
	if r.Observed != 9 || !near(r.Expected, 19.2505, 1e-4) || !near(r.Variance, 6.25696, 1e-5) {
		t.Errorf("O %v E %v V %v, want 9, 19.2505, 6.25696", r.Observed, r.Expected, r.Variance)
	}
	if !near(r.ChiSquare, 16.79, 0.005) || !near(r.P, 4.17e-5, 0.005e-5) {
		t.Errorf("χ² %v p %v, want 16.79 and 4.17e-05", r.ChiSquare, r.P)
	}
	// The test is symmetric in its samples.
	s, err := LogRank(placeboTimes, placeboEvents, sixMPTimes, sixMPEvents)
	if err != nil {
		t.Fatal(err)
	}
	if s.Observed != 21 || !near(s.Expected, 30-r.Expected, 1e-9) || !near(s.ChiSquare, r.ChiSquare, 1e-9) || !near(s.P, r.P, 1e-15) {
		t.Errorf("swapped: %+v, want O 21, E %v, the same χ² and p as %+v", s, 30-r.Expected, r)
	}
}

func TestLogRankEdges(t *testing.T) {
	// The same sample twice: no difference.
	r, err := LogRank(sixMPTimes, sixMPEvents, sixMPTimes, sixMPEvents)
	if err != nil || !near(r.ChiSquare, 0, 1e-12) || !near(r.P, 1, 1e-12) {
		t.Errorf("same samples: %+v, %v; want χ² 0, p 1", r, err)
	}
	// No event in either: nothing to test.
	c := []bool{false, false}
	if r, err := LogRank([]float64{5, 6}, c, []float64{5, 7}, c); err != nil || !math.IsNaN(r.P) || !math.IsNaN(r.ChiSquare) {
		t.Errorf("no events: %+v, %v; want NaN", r, err)
	}
	if _, err := LogRank(nil, nil, []float64{1}, []bool{true}); err == nil {
		t.Error("empty sample: no error")
	}
	if _, err := LogRank([]float64{1}, []bool{true, false}, []float64{1}, []bool{true}); err == nil {
		t.Error("lengths 1 and 2: no error")
	}
	if _, err := LogRank([]float64{1}, []bool{true}, []float64{math.Inf(1)}, []bool{true}); err == nil {
		t.Error("infinite time: no error")
	}
}

func TestBootstrap(t *testing.T) {
	a, err := Bootstrap(sixMPTimes, sixMPEvents, 2000, 7, KMMedianStat)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Bootstrap(sixMPTimes, sixMPEvents, 2000, 7, KMMedianStat)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 2000 || !slices.Equal(a, b) || !slices.IsSorted(a) {
		t.Fatalf("two bootstraps with seed 7 differ, or are not 2000 sorted values")
	}
	c, err := Bootstrap(sixMPTimes, sixMPEvents, 2000, 8, KMMedianStat)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a, c) {
		t.Error("seeds 7 and 8 give the same resamples")
	}
	// Every resampled median is one of the event times or not reached.
	for _, v := range a {
		if !math.IsInf(v, 1) && !slices.Contains([]float64{6, 7, 10, 13, 16, 22, 23}, v) {
			t.Fatalf("resampled median %v is no event time", v)
		}
	}
	lo, hi := PercentileInterval(a, 0.95)
	if !(lo <= 23 && lo >= 6) || !(hi >= 23) {
		t.Errorf("95%% interval [%v, %v] does not hold the median 23", lo, hi)
	}
	if _, err := Bootstrap(sixMPTimes, sixMPEvents, 0, 1, KMMedianStat); err == nil {
		t.Error("0 resamples: no error")
	}
	if _, err := Bootstrap(nil, nil, 10, 1, KMMedianStat); err == nil {
		t.Error("no subjects: no error")
	}
}

func TestPercentileInterval(t *testing.T) {
	v := make([]float64, 2000)
	for i := range v {
		v[i] = float64(i + 1)
	}
	if lo, hi := PercentileInterval(v, 0.95); lo != 50 || hi != 1950 {
		t.Errorf("[%v, %v], want the 50th and 1950th of 2000: [50, 1950]", lo, hi)
	}
	v[1999], v[1998] = math.Inf(1), math.Inf(1)
	if _, hi := PercentileInterval(v, 0.999); !math.IsInf(hi, 1) {
		t.Errorf("upper end %v, want +Inf (not reached)", hi)
	}
	if lo, hi := PercentileInterval(nil, 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Error("no values: want NaN")
	}
}
