package report

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIQM(t *testing.T) {
	for _, c := range []struct {
		scores [][]float64
		want   float64
	}{
		// 8 scores pooled: 2 cut from each end, the mean of 3, 4, 5, 6.
		{[][]float64{{8, 1, 3}, {2, 7}, {6, 5, 4}}, 4.5},
		// 5 scores: 1 cut from each end (⌊5/4⌋), the mean of 2, 3, 10.
		{[][]float64{{100, 2, 3, 10, -50}}, 5},
		// fewer than 4: nothing cut, the mean.
		{[][]float64{{1}, {2, 6}}, 3},
	} {
		if got := IQM(c.scores); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("IQM(%v) = %v, want %v", c.scores, got, c.want)
		}
	}
	if got := IQM([][]float64{{}, nil}); !math.IsNaN(got) {
		t.Errorf("IQM of nothing = %v, want NaN", got)
	}
}

func TestProbImprovement(t *testing.T) {
	// Task 1: x {3, 1} over y {2, 1}: pairs 3>2, 3>1, 1<2, 1=1 (½): 2.5/4.
	// Task 2: x {5} over y {1, 2, 9}: 2/3. Task 3: y has no runs, left out.
	x := [][]float64{{3, 1}, {5}, {7}}
	y := [][]float64{{2, 1}, {1, 2, 9}, {}}
	want := (2.5/4 + 2.0/3) / 2
	if got := ProbImprovement(x, y); math.Abs(got-want) > 1e-12 {
		t.Errorf("P(X > Y) = %v, want %v", got, want)
	}
	// Symmetry: P(X > Y) + P(Y > X) = 1 task by task.
	if got := ProbImprovement(x, y) + ProbImprovement(y, x); math.Abs(got-1) > 1e-12 {
		t.Errorf("P(X > Y) + P(Y > X) = %v, want 1", got)
	}
	if got := ProbImprovement([][]float64{{1}}, [][]float64{{}}); !math.IsNaN(got) {
		t.Errorf("no common task: %v, want NaN", got)
	}
}

func TestProfileAt(t *testing.T) {
	s := [][]float64{{0, 0.5, 1}, {1.5}}
	for tau, want := range map[float64]float64{-1: 1, 0: 0.75, 0.5: 0.5, 1: 0.25, 2: 0} {
		if got := ProfileAt(s, tau); got != want {
			t.Errorf("profile at %v = %v, want %v", tau, got, want)
		}
	}
}

// TestBootstrapStratifiedAndSeeded: resamples never mix tasks (a task whose
// runs all score 0 and one whose runs all score 1 give every resample the
// same IQM), the same seed gives the same values, another seed others.
func TestBootstrapStratifiedAndSeeded(t *testing.T) {
	strata := [][]float64{{0, 0, 0, 0}, {1, 1, 1, 1}}
	boot, err := StratifiedBootstrap(strata, 500, 3, func(s [][]float64) float64 { return s[1][0] - s[0][0] + IQM(s) })
	if err != nil {
		t.Fatal(err)
	}
	if boot[0] != 1.5 || boot[len(boot)-1] != 1.5 {
		t.Fatalf("stratified resamples of constant tasks vary: %v .. %v", boot[0], boot[len(boot)-1])
	}
	x := [][]float64{{0.1, 0.4, 0.9, 1.3, 0.2}, {2, 0.5, 0.7}}
	a, err := IQMEstimate(x, 2000, 5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := IQMEstimate(x, 2000, 5, 0.95)
	if a != b {
		t.Errorf("same seed, different estimates: %v, %v", a, b)
	}
	mean := func(s [][]float64) float64 { return (s[0][0] + s[0][1] + s[1][0]) / 3 }
	b5, _ := StratifiedBootstrap(x, 50, 5, mean)
	b5again, _ := StratifiedBootstrap(x, 50, 5, mean)
	b6, _ := StratifiedBootstrap(x, 50, 6, mean)
	if !slices.Equal(b5, b5again) || slices.Equal(b5, b6) {
		t.Errorf("seed 5 twice: equal %v; seeds 5 and 6: equal %v", slices.Equal(b5, b5again), slices.Equal(b5, b6))
	}
	if !(a.Low <= a.Value && a.Value <= a.High && a.Low < a.High) {
		t.Errorf("interval %v does not hold its estimate", a)
	}
	if _, err := StratifiedBootstrap([][]float64{{1, math.NaN()}}, 10, 1, IQM); err == nil {
		t.Error("a NaN score was bootstrapped")
	}
	if _, err := StratifiedBootstrap([][]float64{{}}, 10, 1, IQM); err == nil {
		t.Error("no scores were bootstrapped")
	}
}

// evalRun is a run of env whose evaluations are evals, every 100 episodes
// from 0.
func evalRun(env, method, label string, seed int, threshold float64, evals ...float64) Run {
	r := Run{Meta: Meta{Env: env, Method: method, Label: label, Seed: uint64(seed), Threshold: threshold, HasThreshold: threshold != 0}}
	for i, v := range evals {
		r.Curve = append(r.Curve, Point{Iter: i, Episodes: 100 * i, HasEval: true, EvalMean: v})
	}
	return r
}

func TestRunScore(t *testing.T) {
	r := evalRun("Hopper-v1", "stp", "STP", 1, 3120, 0, 100, 300, 200)
	if v, ok := RunScore(r, ScoreFinal); !ok || v != 200 {
		t.Errorf("final %v %v, want 200", v, ok)
	}
	// Trapezoids over 300 episodes: 50·100 + 200·100 + 250·100 = 50000.
	if v, ok := RunScore(r, ScoreAUC); !ok || math.Abs(v-50000.0/300) > 1e-9 {
		t.Errorf("AUC %v %v, want %v", v, ok, 50000.0/300)
	}
	if _, ok := RunScore(Run{}, ScoreAUC); ok {
		t.Error("a run without evaluations has an AUC")
	}
}

func TestNormalizers(t *testing.T) {
	runs := []Run{
		evalRun("Hopper-v1", "stp", "STP", 1, 3120, 120, 3000),
		evalRun("Hopper-v1", "ars", "ARS V2-t", 1, 3120, 140, 2000),
		evalRun("Hopper-v1", "ars", "ARS V2-t", 2, 3120, 160, 2500),
		evalRun("Walker2d-v1", "stp", "STP", 1, 0, 90, 600),
		evalRun("Walker2d-v1", "ars", "ARS V2-t", 1, 0, 100, 300),
		evalRun("Walker2d-v1", "ars", "ARS V2-t", 2, 0, 110, 500),
	}
	n, err := Normalizers(runs)
	if err != nil {
		t.Fatal(err)
	}
	if h := n["Hopper-v1"]; h.Zero != 140 || h.One != 3120 || h.OneFrom != "threshold" {
		t.Errorf("Hopper: %+v", h)
	}
	if w := n["Walker2d-v1"]; w.Zero != 100 || w.One != 400 || w.OneFrom != "ARS median final" {
		t.Errorf("Walker2d: %+v", w)
	}
	if got := n["Walker2d-v1"].Normalize(600); math.Abs(got-5.0/3) > 1e-12 {
		t.Errorf("Walker2d 600 normalizes to %v, want 5/3", got)
	}
	// Without ARS, the task's own median final: 1 at 600 here, whose start is 90.
	if w, err := Normalizers(runs[3:4]); err != nil || w["Walker2d-v1"].One != 600 || !strings.Contains(w["Walker2d-v1"].OneFrom, "no ARS run") {
		t.Errorf("a task with neither threshold nor ARS: %+v, %v", w, err)
	}
}

// TestAggregates: on two tasks where the default beats ARS on every run,
// P(default > ARS) is 1 with the interval [1, 1]; ARS has no row against
// itself; the method keys join each task's default under one name.
func TestAggregates(t *testing.T) {
	var runs []Run
	for s := 1; s <= 4; s++ {
		f := float64(s)
		runs = append(runs,
			evalRun("Hopper-v1", "stp", "STP combined, guided", s, 1000, 0, 900+f, 1100+f),
			evalRun("Hopper-v1", "ars", "ARS V2-t", s, 1000, 0, 300+f, 500+f),
			evalRun("Swimmer-v1", "stp", "STP adaptive", s, 100, 0, 80+f, 120+f),
			evalRun("Swimmer-v1", "ars", "ARS V1-t", s, 100, 0, 20+f, 40+f),
			evalRun("Swimmer-v1", "stp", "STP fixed", s, 100, 0, 10, 10),
		)
	}
	defaults := map[string]string{"Hopper-v1": "STP combined, guided", "Swimmer-v1": "STP adaptive"}
	a, err := Aggregates(runs, AggregateOptions{Default: defaults, Resamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]AggregateRow{}
	for _, r := range a.Final {
		got[r.Method] = r
	}
	d, ars := got[MethodDefault], got[MethodARS]
	if d.Tasks != 2 || d.Runs != 8 || ars.Runs != 8 || got["STP fixed"].Tasks != 1 {
		t.Fatalf("rows %+v", a.Final)
	}
	if d.OverARS != (Estimate{1, 1, 1}) {
		t.Errorf("P(default > ARS) %v, want 1 [1, 1]", d.OverARS)
	}
	if !math.IsNaN(ars.OverARS.Value) {
		t.Errorf("ARS over itself: %v", ars.OverARS)
	}
	// Hopper's finals normalize to 1.101..1.104, Swimmer's to 1.21..1.24:
	// the IQM of the 8 is the mean of the middle 4.
	if want := (1.103 + 1.104 + 1.21 + 1.22) / 4; math.Abs(d.IQM.Value-want) > 1e-12 || d.IQM.Low > d.IQM.Value || d.IQM.High < d.IQM.Value {
		t.Errorf("default IQM %v", d.IQM)
	}
	if !d.IQM.Excludes(0.5) || d.OverARS.Excludes(1) {
		t.Errorf("Excludes: %v, %v", d.IQM, d.OverARS)
	}
	md, err := AggregateTable(runs, AggregateOptions{Default: defaults, Resamples: 200, Methods: map[string]bool{MethodDefault: true, MethodARS: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"| default | 2 | 8 |", "| ARS | 2 | 8 |", "| Hopper-v1 (default: STP combined, guided) | 0 | 1000 | threshold |"} {
		if !strings.Contains(md, line) {
			t.Errorf("table lacks %q:\n%s", line, md)
		}
	}
	if strings.Contains(md, "STP fixed") {
		t.Errorf("--methods default,ars kept STP fixed:\n%s", md)
	}
}

func TestProfilePlot(t *testing.T) {
	var runs []Run
	for s := 1; s <= 3; s++ {
		runs = append(runs,
			evalRun("Hopper-v1", "stp", "STP", s, 1000, 0, 500, 900+float64(s)),
			evalRun("Hopper-v1", "ars", "ARS V2-t", s, 1000, 0, 300, 500))
	}
	out := filepath.Join(t.TempDir(), "profile.png")
	if err := ProfilePlot(runs, out, PlotOptions{Default: map[string]string{"Hopper-v1": "STP"}}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, out, 900, 600)
	ps, err := Profiles(runs, map[string]string{"Hopper-v1": "STP"}, ScoreFinal, []float64{0.5, 0.9, 0.902})
	if err != nil {
		t.Fatal(err)
	}
	// The default's finals normalize to 0.901, 0.902, 0.903; ARS's to 0.5.
	if ps[0].Method != MethodDefault || ps[0].Frac[0] != 1 || ps[0].Frac[1] != 1 || math.Abs(ps[0].Frac[2]-1.0/3) > 1e-12 || ps[1].Frac[0] != 0 {
		t.Errorf("profiles %+v", ps)
	}
}
