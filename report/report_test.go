package report

import (
	"encoding/json"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stpis/stpis/rundir"
)

type seedSpec struct {
	method, step, label string
	seed                int
	reachAt             int  // episodes at which eval first crosses the threshold; 0 = never
	markReached         bool // write threshold_reached_at on that line
	result              any  // result.json content, nil = none
	truncated           bool // append a truncated last line
	iters               int  // iterations to log
	epsPerIter          int  // episodes per iteration
	evalEvery           int  // eval every n iterations
	env, resolved       string
	threshold           float64
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeRun writes a synthetic run directory. Eval reward rises linearly and
// jumps over the threshold at s.reachAt episodes.
func writeRun(t *testing.T, dir string, s seedSpec) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{
		"env": s.env, "resolved_env": s.resolved, "method": s.method, "step": s.step,
		"seed": s.seed, "k": 4, "threshold": s.threshold, "has_threshold": true, "n_dirs": 8,
	}
	if s.label != "" {
		meta["label"] = s.label
	}
	writeJSON(t, filepath.Join(dir, "run.json"), meta)
	var sb strings.Builder
	reachedLogged := false
	for it := 1; it <= s.iters; it++ {
		ep := it * s.epsPerIter
		line := map[string]any{
			"level": "info", "time": "2026-01-01T00:00:00Z", "iter": it, "episodes": ep,
			"env_steps": ep * 1000, "reward": float64(ep), "best_eval": 0, "step_size": 0.01,
			"p_entropy": 3.4, "elapsed_s": float64(it), "eps_per_s": 7.8, "message": "iter",
		}
		if it%s.evalEvery == 0 {
			v := float64(ep) + float64(s.seed)
			if s.reachAt > 0 && ep >= s.reachAt {
				v = s.threshold + float64(s.seed)
				if s.markReached && !reachedLogged {
					line["threshold_reached_at"] = ep
					reachedLogged = true
				}
			}
			line["eval_mean"] = v
			line["eval_std"] = 10.0
		}
		b, _ := json.Marshal(line)
		sb.Write(b)
		sb.WriteByte('\n')
	}
	if s.truncated {
		sb.WriteString(`{"level":"info","iter":99,"episo`)
	}
	if err := os.WriteFile(filepath.Join(dir, "curve.jsonl"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if s.result != nil {
		writeJSON(t, filepath.Join(dir, "result.json"), s.result)
	}
}

// fixtureRuns writes the fixture (with Swimmer) to a temporary folder
// and loads it.
func fixtureRuns(t *testing.T) []Run {
	t.Helper()
	root := t.TempDir()
	writeFixture(t, root, true)
	runs, _, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// writeFixture writes 2 methods x 3 seeds of Hopper-v1 under root/hopper and,
// when swimmer, 2 seeds of Swimmer-v1 that never reach the threshold.
//
// STP_IS adaptive: seed 1 result.json 1000, seed 2 result.json 1400, seed 3
// no result.json, eval crosses at 1300 (no threshold_reached_at) and a
// truncated last line -> median 1300, mean 3700/3 = 1233.3, 3/3.
// ARS V2-t (no label): seed 1 threshold_reached_at 2000 (no result.json),
// seed 2 result.json not reached, seed 3 result.json 3000 (its curve's
// first evaluation above the threshold) -> median 2500,
// mean 2500, 2/3.
func writeFixture(t *testing.T, root string, swimmer bool) {
	t.Helper()
	hop := func(s seedSpec) seedSpec {
		s.env, s.resolved, s.threshold = "Hopper-v1", "Hopper-v5", 3120
		s.iters, s.epsPerIter, s.evalEvery = 50, 50, 2
		return s
	}
	res := func(ep any, reached bool) map[string]any {
		return map[string]any{"episodes_to_threshold": ep, "reached": reached, "final_eval": 3200, "episodes": 2500, "iterations": 50, "wall_s": 10}
	}
	specs := map[string]seedSpec{
		"hopper/stp_is/seed1": hop(seedSpec{method: "stp_is", step: "adaptive", label: "STP_IS adaptive", seed: 1, reachAt: 1000, markReached: true, result: res(1000, true)}),
		"hopper/stp_is/seed2": hop(seedSpec{method: "stp_is", step: "adaptive", label: "STP_IS adaptive", seed: 2, reachAt: 1400, markReached: true, result: res(1400, true)}),
		"hopper/stp_is/seed3": hop(seedSpec{method: "stp_is", step: "adaptive", label: "STP_IS adaptive", seed: 3, reachAt: 1300, truncated: true}),
		"hopper/ars/seed1":    hop(seedSpec{method: "ars", seed: 1, reachAt: 2000, markReached: true}),
		"hopper/ars/seed2":    hop(seedSpec{method: "ars", seed: 2, result: res(nil, false)}),
		"hopper/ars/seed3":    hop(seedSpec{method: "ars", seed: 3, reachAt: 3000, markReached: true, result: res(3000, true)}),
	}
	// ARS seed 3 ran 60 episodes an iteration, to 3000: a result that its
	// curve contradicts is refused (rundir's checkAgainstCurve).
	ars3 := specs["hopper/ars/seed3"]
	ars3.epsPerIter = 60
	ars3.result.(map[string]any)["episodes"] = 3000
	specs["hopper/ars/seed3"] = ars3
	if swimmer {
		for _, seed := range []int{1, 2} {
			specs[fmt.Sprintf("swimmer/seed%d", seed)] = seedSpec{
				method: "stp", step: "fixed", seed: seed, env: "Swimmer-v1", resolved: "Swimmer-v5",
				threshold: 325, iters: 20, epsPerIter: 4, evalEvery: 5,
			}
		}
	}
	for d, s := range specs {
		writeRun(t, filepath.Join(root, d), s)
	}
}

func TestLoad(t *testing.T) {
	root := t.TempDir()
	writeFixture(t, root, false)
	runs, _, err := Load(root, filepath.Join(root, "hopper", "ars")) // overlapping paths: loaded once
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("got %d runs, want 6", len(runs))
	}
	// Sorted: STP_IS adaptive before ARS V2-t, by seed.
	wantLabels := []string{"STP_IS adaptive", "STP_IS adaptive", "STP_IS adaptive", "ARS V2-t", "ARS V2-t", "ARS V2-t"}
	wantEp := []int{1000, 1400, 1300, 2000, 0, 3000}
	wantReached := []bool{true, true, true, true, false, true}
	for i, r := range runs {
		if r.Meta.Label != wantLabels[i] || r.Meta.Seed != uint64(i%3+1) {
			t.Errorf("run %d: label %q seed %d", i, r.Meta.Label, r.Meta.Seed)
		}
		if r.Reached != wantReached[i] || r.EpisodesToThreshold != wantEp[i] {
			t.Errorf("run %d (%s): reached %v at %d, want %v at %d", i, r.Dir, r.Reached, r.EpisodesToThreshold, wantReached[i], wantEp[i])
		}
		if len(r.Curve) != 50 {
			t.Errorf("run %d: %d curve points, want 50 (truncated line skipped)", i, len(r.Curve))
		}
	}
	r := runs[0]
	if r.Meta.Env != "Hopper-v1" || r.Meta.ResolvedEnv != "Hopper-v5" || r.Meta.K != 4 || r.Meta.Threshold != 3120 || !r.Meta.HasThreshold {
		t.Errorf("meta %+v", r.Meta)
	}
	if r.Result == nil || r.Result.Iterations != 50 || runs[2].Result != nil {
		t.Errorf("result.json: %+v / %+v", r.Result, runs[2].Result)
	}
	p0, p1 := r.Curve[0], r.Curve[1]
	if p0.Iter != 1 || p0.Episodes != 50 || p0.EnvSteps != 50000 || p0.Reward != 50 || p0.HasEval {
		t.Errorf("point 0: %+v", p0)
	}
	if !p1.HasEval || p1.EvalMean != 101 || p1.EvalStd != 10 {
		t.Errorf("point 1: %+v", p1)
	}
}

func TestLoadMalformedLine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "bad")
	writeRun(t, dir, seedSpec{method: "stp", step: "fixed", seed: 1, env: "Hopper-v1", threshold: 3120, iters: 4, epsPerIter: 8, evalEvery: 2})
	path := filepath.Join(dir, "curve.jsonl")
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = "{\"iter\":3,\"episodes\":\n" // line 3 broken, with lines after it
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	// A damaged run alone: an error naming the file and line.
	_, _, err := Load(root)
	if err == nil || !strings.Contains(err.Error(), "curve.jsonl:3:") || !strings.HasPrefix(err.Error(), "report: ") {
		t.Fatalf("err = %v, want report: ...curve.jsonl:3: ...", err)
	}
	// Beside a good run it is skipped, with the reason.
	writeRun(t, filepath.Join(root, "good"), seedSpec{method: "stp", step: "fixed", seed: 2, env: "Hopper-v1", threshold: 3120, iters: 4, epsPerIter: 8, evalEvery: 2})
	runs, skipped, err := Load(root)
	if err != nil || len(runs) != 1 || len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "curve.jsonl:3:") {
		t.Fatalf("Load = %d runs, skipped %v, err %v; want the good run and the bad one skipped", len(runs), skipped, err)
	}
	if _, _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of an empty dir: no error")
	}
}

func TestDeriveLabel(t *testing.T) {
	for _, c := range [][3]string{{"stp", "fixed", "STP fixed"}, {"stp_is", "adaptive", "STP_IS adaptive"}, {"ars", "", "ARS V2-t"}} {
		if got := DeriveLabel(c[0], c[1]); got != c[2] {
			t.Errorf("DeriveLabel(%q,%q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestTable(t *testing.T) {
	runs := fixtureRuns(t)
	md, err := Table(runs, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md)
	lines := strings.Split(md, "\n")
	want := []string{
		"| Task | Threshold | STP fixed | STP_IS adaptive | ARS V2-t |",
		"| --- | --- | --- | --- | --- |",
		"| Swimmer-v1 | 325 | N/A (0/2) | — | — |",
		"| Hopper-v1 | 3120 | — | 1300 (mean 1233.3, 3/3) | 2500 (mean 2500, 2/3) |",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], w)
		}
	}
	if !strings.Contains(md, "over the seeds that reached it") {
		t.Error("no footnote")
	}

	md, err = Table(runs, TableOptions{Paper: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md)
	lines = strings.Split(md, "\n")
	want = []string{
		"| Task | Method | Threshold | ours | paper |",
		"| --- | --- | --- | --- | --- |",
		"| Swimmer-v1 | STP fixed | 325 | N/A (0/2) | 320 |",
		"| Hopper-v1 | STP_IS adaptive | 3120 | 1300 (mean 1233.3, 3/3) | 1870 |",
		"| Hopper-v1 | ARS V2-t | 3120 | 2500 (mean 2500, 2/3) | 1973 |",
		"",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("paper line %d:\n got %s\nwant %s", i, lines[i], w)
		}
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("paper line %d is %d columns wide, over 120: %s", i, n, l)
		}
	}
}

// TestTablePaperMethod checks that a column labelled with an off-paper K
// gets the paper's figure of its method and step.
func TestTablePaperMethod(t *testing.T) {
	runs := []Run{{Meta: Meta{Env: "HalfCheetah-v1", Method: "stp_is", Step: "adaptive", Label: "STP_IS adaptive, K=1",
		K: 1, Threshold: 3430, HasThreshold: true}}}
	md, err := Table(runs, TableOptions{Paper: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "| HalfCheetah-v1 | STP_IS adaptive, K=1 | 3430 | N/A (0/1) | 2710 |"
	if lines := strings.Split(md, "\n"); len(lines) < 3 || lines[2] != want {
		t.Errorf("table:\n%s\nwant row %s", md, want)
	}
}

func TestPaperLookup(t *testing.T) {
	if v, na, ok := PaperEpisodes("Hopper-v5", "STP_IS adaptive"); !ok || na || v != 1870 {
		t.Errorf("Hopper-v5 STP_IS adaptive: %d %v %v", v, na, ok)
	}
	if _, na, ok := PaperEpisodes("Humanoid-v1", "STP fixed"); !ok || !na {
		t.Error("Humanoid STP fixed should be N/A")
	}
	if _, _, ok := PaperEpisodes("HumanoidStandup-v4", "STP fixed"); ok {
		t.Error("HumanoidStandup is not a paper task")
	}
}

func TestMeanBand(t *testing.T) {
	mk := func(pts ...[2]float64) Run {
		var r Run
		for _, p := range pts {
			r.Curve = append(r.Curve, Point{Episodes: int(p[0]), HasEval: true, EvalMean: p[1]})
		}
		return r
	}
	// a: evals at 10 (1) and 20 (3); b: eval at 20 (5), 40 (7) then stops.
	// c: no evals: training reward used.
	runs := []Run{mk([2]float64{10, 1}, [2]float64{20, 3}), mk([2]float64{20, 5}, [2]float64{40, 7})}
	b, evalOnly := MeanBand(runs, 5) // grid 0, 10, 20, 30, 40
	if !evalOnly {
		t.Error("evalOnly false")
	}
	wantX := []float64{10, 20, 30, 40}
	wantMean := []float64{1, 4, 4, 5}
	wantStd := []float64{0, 1, 1, 2}
	wantN := []int{1, 2, 2, 2}
	if len(b.X) != len(wantX) {
		t.Fatalf("band %+v", b)
	}
	for i := range wantX {
		if b.X[i] != wantX[i] || math.Abs(b.Mean[i]-wantMean[i]) > 1e-12 || math.Abs(b.Std[i]-wantStd[i]) > 1e-12 || b.N[i] != wantN[i] {
			t.Errorf("point %d: x %v mean %v std %v n %d", i, b.X[i], b.Mean[i], b.Std[i], b.N[i])
		}
	}
	c := Run{Curve: []Point{{Episodes: 0, Reward: 2}, {Episodes: 40, Reward: 4}}}
	if b, evalOnly := MeanBand([]Run{c}, 3); evalOnly || len(b.X) != 3 || b.Mean[1] != 2 || b.Mean[2] != 4 {
		t.Errorf("reward fallback: %+v %v", b, evalOnly)
	}
}

func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s: size %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
	colors := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bb, a := img.At(x, y).RGBA()
			colors[[4]uint32{r >> 8, g >> 8, bb >> 8, a >> 8}] = true
		}
	}
	if len(colors) < 3 {
		t.Errorf("%s: only %d distinct colours", path, len(colors))
	}
	// The method colours are drawn.
	for _, label := range []string{"STP_IS adaptive", "ARS V2-t"} {
		c := MethodColor(label)
		found := false
		for k := range colors {
			if k == [4]uint32{uint32(c.R), uint32(c.G), uint32(c.B), 255} {
				found = true
				break
			}
		}
		if !found && strings.Contains(path, "Hopper") {
			t.Errorf("%s: colour of %s not found", path, label)
		}
	}
}

func TestPlot(t *testing.T) {
	root := t.TempDir()
	writeFixture(t, root, false)
	runs, _, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "curve.png")
	files, err := PlotFiles(runs, out, PlotOptions{DPI: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0] != out {
		t.Fatalf("files %v, want [%s]", files, out)
	}
	checkPNG(t, out, 600, 400)
}

func TestPlotPerEnv(t *testing.T) {
	runs := fixtureRuns(t)
	dir := t.TempDir()
	var log strings.Builder
	files, err := PlotFiles(runs, filepath.Join(dir, "curve.png"), PlotOptions{DPI: 50, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "curve-Swimmer-v1.png"), filepath.Join(dir, "curve-Hopper-v1.png")}
	if len(files) != 2 || files[0] != want[0] || files[1] != want[1] {
		t.Fatalf("files %v, want %v", files, want)
	}
	for _, f := range files {
		checkPNG(t, f, 300, 200)
		if !strings.Contains(log.String(), "wrote "+f) {
			t.Errorf("log %q lacks %s", log.String(), f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "curve.png")); err == nil {
		t.Error("curve.png written although runs span two envs")
	}
}

func TestDenseTicks(t *testing.T) {
	var labels []string
	for _, tk := range (denseTicks{}).Ticks(-120, 3500) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if len(labels) < 5 || len(labels) > 11 || labels[0] != "0" || labels[1] != "500" {
		t.Fatalf("labels %v: want 5 to 10 round ones (0, 500, 1000, ...)", labels)
	}
	if plural(1, "seed") != "1 seed" || plural(5, "seed") != "5 seeds" {
		t.Error("plural")
	}
}

func TestSummaryTable(t *testing.T) {
	runs := fixtureRuns(t)
	md, err := SummaryTable(runs)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md)
	rows, err := SummaryRows(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Env != "Swimmer-v1" || rows[1].Label != "STP_IS adaptive" || rows[2].Label != "ARS V2-t" {
		t.Fatalf("rows %+v", rows)
	}
	// STP_IS reached at 1000, 1300 and 1400: the KM median is the second.
	// Against ARS (2000, censored at 2500, 3000) the log-rank test has
	// O 3, E 0.5 + 0.4 + 0.25 = 1.15, V 0.25 + 0.24 + 0.1875 = 0.6775,
	// χ² = 1.85²/0.6775 = 5.0517, p = 0.0246.
	if r := rows[1]; r.Seeds != 3 || r.Reached != 3 || r.MedianEpisodes != 1300 || r.KMMedian != 1300 ||
		r.KMLow != 1000 || r.KMHigh != 1400 || r.Against[0].Peer != "ARS V2-t" || !near(r.Against[0].LogRankP, 0.0246, 1e-4) || !(r.MedianBest >= r.MedianFinal) {
		t.Errorf("Hopper STP_IS row %+v", r)
	}
	// ARS reached at 2000 and 3000, and one seed stopped at 2500 without:
	// the median of those that reached is 2500; the KM curve is 2/3 after
	// 2000 and 0 after 3000. It is its task's reference: no test.
	// The final evaluations, STP_IS's against ARS's, by MannWhitney.
	mw, err := MannWhitney(finals(runsOf(runs, "STP_IS adaptive")), finals(runsOf(runs, "ARS V2-t")))
	if err != nil || math.IsNaN(rows[1].Against[0].FinalP) || rows[1].Against[0].FinalP != mw.P || !math.IsNaN(rows[2].Against[0].FinalP) || !math.IsNaN(rows[0].Against[0].FinalP) {
		t.Errorf("final p: rows %v %v %v, want %v (%v)", rows[0].Against[0].FinalP, rows[1].Against[0].FinalP, rows[2].Against[0].FinalP, mw.P, err)
	}
	if r := rows[2]; r.Reached != 2 || r.MedianEpisodes != 2500 || r.KMMedian != 3000 || !math.IsNaN(r.Against[0].LogRankP) {
		t.Errorf("Hopper ARS row %+v", r)
	}
	// Swimmer's two seeds never reach in their 80 episodes, and the task has
	// no ARS row.
	if r := rows[0]; r.Reached != 0 || !math.IsInf(r.KMMedian, 1) || !math.IsInf(r.KMLow, 1) || r.Budget != 80 || r.Against[0].Peer != "" || !math.IsNaN(r.Against[0].LogRankP) {
		t.Errorf("Swimmer row %+v, want not reached within 80", r)
	}
	for _, want := range []string{
		"| Swimmer-v1 | STP fixed | 0/2 | >80 [>80, >80] | N/A | — |",
		"| Hopper-v1 | STP_IS adaptive | 3/3 | 1300 [1000, 1400] | 1300 | 0.025 |",
		"| Hopper-v1 | ARS V2-t | 2/3 | 3000 [2000, >3000] | 2500 | — |",
		"log-rank p vs ARS: ", ">N: not reached", "N/A: no seed reached", "—: nothing to show",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("line of %d columns: %s", n, line)
		}
	}
	again, err := SummaryTable(runs)
	if err != nil || again != md {
		t.Errorf("a second summary differs (bootstrap not deterministic?):\n%s", again)
	}
}

// TestSummaryAgainstCMAES: a task with a CMA-ES row gets the same tests
// against it, in two more columns (a table without CMA-ES has none).
func TestSummaryAgainstCMAES(t *testing.T) {
	runs := fixtureRuns(t)
	plain, err := SummaryTable(runs)
	if err != nil || strings.Contains(plain, "CMA-ES") {
		t.Fatalf("a table without CMA-ES names it (%v):\n%s", err, plain)
	}
	// CMA-ES: ARS's runs again under another label, so each test against
	// it gives what the test against ARS gives.
	for _, r := range runsOf(runs, "ARS V2-t") {
		r.Meta.Label = "CMA-ES"
		runs = append(runs, r)
	}
	rows, err := SummaryRows(runs)
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for _, r := range rows {
		switch {
		case r.Env != "Hopper-v1":
			if c := r.Against[1]; c.Peer != "" || !math.IsNaN(c.LogRankP) {
				t.Errorf("%s %s: peer %q p %v, want none", r.Env, r.Label, c.Peer, c.LogRankP)
			}
		case r.Label == "STP_IS adaptive":
			checked++
			if c, a := r.Against[1], r.Against[0]; c.Peer != "CMA-ES" || c.LogRankP != a.LogRankP || c.FinalP != a.FinalP {
				t.Errorf("against CMA-ES: %+v, against ARS %+v", c, a)
			}
		case r.Label == "CMA-ES":
			checked++
			if !math.IsNaN(r.Against[1].LogRankP) || math.IsNaN(r.Against[0].LogRankP) {
				t.Errorf("the CMA-ES row against itself %v, against ARS %v", r.Against[1].LogRankP, r.Against[0].LogRankP)
			}
		}
	}
	md, err := SummaryTable(runs)
	if err != nil || checked != 2 {
		t.Fatalf("%d rows checked, %v", checked, err)
	}
	for _, want := range []string{"| final p vs ARS | log-rank p vs CMA-ES | final p vs CMA-ES |",
		"| Hopper-v1 | STP_IS adaptive | 3/3 | 1300 [1000, 1400] | 1300 | 0.025 |", "log-rank p vs CMA-ES / final p vs CMA-ES: "} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
}

// Labels whose colours collide get different ones within a plot, and a
// label keeps its own colour while it is free.
func TestPlotColorDistinct(t *testing.T) {
	labels := []string{"STP combined", "STP combined, iteration seeds", "STP_IS adaptive, paper preset", "STP combined, pair seeds", "STP_IS adaptive, K=1, m=8", "STP_IS adaptive, K=1, m=4"}
	used := map[color.NRGBA]bool{}
	for i, l := range labels {
		c := plotColor(l, used)
		if used[c] {
			t.Fatalf("%q got colour %v, already used by one of %q", l, c, labels[:i])
		}
		if i == 0 && c != MethodColor(l) {
			t.Errorf("%q: %v, want its own %v", l, c, MethodColor(l))
		}
		used[c] = true
	}
}

// TestLoadCountsASeedOnce loads an experiment folder that holds two copies
// of the same runs: each seed counts once, and each copy left out is
// named.
func TestLoadCountsASeedOnce(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeFixture(t, a, false)
	writeFixture(t, b, false)
	// The copies, under another env folder of the same experiment a.
	copies := filepath.Join(a, "zcopy")
	if err := os.Rename(filepath.Join(b, "hopper"), copies); err != nil {
		t.Fatal(err)
	}
	runs, skipped, err := Load(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 || len(skipped) != 6 {
		t.Fatalf("%d runs, %d skipped; want 6 and 6: %v", len(runs), len(skipped), skipped)
	}
	for _, r := range runs {
		if strings.HasPrefix(r.Dir, copies) {
			t.Errorf("kept %s, want the runs under %s", r.Dir, filepath.Join(a, "hopper"))
		}
	}
	if msg := skipped[0].Error(); !strings.Contains(msg, "appears twice") || !strings.Contains(msg, copies) {
		t.Errorf("warning %q", msg)
	}
}

// TestExperimentsKeptApart: the same seeds in two experiment folders are
// two experiments' runs: all are loaded, the tables give each experiment
// its own rows under its folder's name (never pooling its seeds with the
// other's), and a plot refuses them, naming both folders.
func TestExperimentsKeptApart(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeFixture(t, a, false)
	writeFixture(t, filepath.Join(b, "runs"), false)
	runs, skipped, err := Load(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 12 || len(skipped) != 0 {
		t.Fatalf("%d runs, %d skipped; want 12 and 0: %v", len(runs), len(skipped), skipped)
	}
	names, by := Experiments(runs)
	if len(names) != 2 || len(by[a]) != 6 || len(by[b]) != 6 {
		t.Fatalf("experiments %v", names)
	}
	md, err := PerExperiment(runs, SummaryTable)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{a, b} {
		// Each experiment's own row: 3 seeds, not 6.
		i := strings.Index(md, "### "+e+"\n")
		if i < 0 || !strings.Contains(md[i:], "| Hopper-v1 | STP_IS adaptive | 3/3 |") {
			t.Errorf("no section of %s with its own row:\n%s", e, md)
		}
	}
	if strings.Count(md, "reached: seeds that reached") != 1 || strings.Contains(md, "6/6") {
		t.Errorf("notes once, no pooled row:\n%s", md)
	}
	err = OneExperiment(runs)
	if err == nil || !strings.Contains(err.Error(), a+" (6 runs)") || !strings.Contains(err.Error(), b+" (6 runs)") {
		t.Errorf("plot of two experiments: %v", err)
	}
	if err := OneExperiment(by[a]); err != nil {
		t.Errorf("one experiment refused: %v", err)
	}
	if got := ExperimentOf(filepath.Join("results", "rl", "runs", "Hopper-v1", "ars", "seed1")); got != filepath.Join("results", "rl") {
		t.Errorf("ExperimentOf: %s, want results/rl", got)
	}
}

// TestLoadSkipsWhatItCannotTrust: an edited result.json (sealed by rundir),
// an empty curve, a curve that goes back, and one with a value that is not
// finite are each skipped with a warning that names the run; the rest load.
func TestLoadSkipsWhatItCannotTrust(t *testing.T) {
	root := t.TempDir()
	mk := func(seed uint64, pts []rundir.Point) string {
		path := rundir.Path(root, "Hopper-v1", "ars", seed)
		d, err := rundir.Create(path, rundir.Meta{Env: "Hopper-v1", Method: "ars", Label: "ARS V2-t", Seed: seed, Threshold: 3120, HasThreshold: true}, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			if _, err := d.Append(p); err != nil {
				t.Fatal(err)
			}
		}
		e := 12
		if _, err := d.Finish(rundir.Result{Reached: true, EpisodesToThreshold: &e}, nil, nil); err != nil {
			t.Fatal(err)
		}
		d.Close()
		return path
	}
	good := []rundir.Point{{Iter: 0, Episodes: 0, HasEval: true, EvalMean: 10}, {Iter: 1, Episodes: 12, HasEval: true, EvalMean: 3200}}
	mk(1, good)
	edited := mk(2, good)
	b, _ := os.ReadFile(filepath.Join(edited, rundir.ResultFile))
	os.WriteFile(filepath.Join(edited, rundir.ResultFile), []byte(strings.Replace(string(b), `"episodes_to_threshold": 12`, `"episodes_to_threshold": 5 `, 1)), 0o644)
	empty := mk(3, nil)
	back := mk(4, []rundir.Point{{Iter: 0, Episodes: 24}, {Iter: 1, Episodes: 12}})
	// A NaN reaches a curve only as older builds wrote it, as a string.
	nan := mk(5, good)
	os.Remove(filepath.Join(nan, rundir.ResultFile))
	f, _ := os.OpenFile(filepath.Join(nan, rundir.CurveFile), os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintln(f, `{"iter":2,"episodes":24,"reward":"NaN","best_eval":3200,"step_size":0,"p_entropy":0}`)
	f.Close()
	runs, skipped, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Meta.Seed != 1 {
		t.Fatalf("loaded %d runs, want seed 1 only: %+v", len(runs), runs[len(runs)-1].Meta.Seed)
	}
	for _, dir := range []string{edited, empty, back, nan} {
		found := false
		for _, s := range skipped {
			found = found || strings.Contains(s.Error(), dir)
		}
		if !found {
			t.Errorf("%s was not skipped with a warning naming it: %v", dir, skipped)
		}
	}
}

// runsOf is the runs labelled label.
func runsOf(runs []Run, label string) []Run {
	var out []Run
	for _, r := range runs {
		if r.Meta.Label == label {
			out = append(out, r)
		}
	}
	return out
}
