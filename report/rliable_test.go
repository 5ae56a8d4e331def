package report

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// benchPython is the venv's interpreter: $STPIS_BRIDGE_PYTHON (make sets
// it), else the module's .venv/bin/python. A missing one fails the test:
// `make venv` installs rliable with the rest of the dev requirements.
func benchPython(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STPIS_BRIDGE_PYTHON"); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", ".venv", "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no python at %s (run `make venv`, or set STPIS_BRIDGE_PYTHON)", p)
	}
	return p
}

// rliableMatrix is a runs × tasks matrix (rliable's layout) of scores drawn
// from a seeded generator, rounded to 0.05 so that ties occur, and the same
// matrix per task (report's layout).
func rliableMatrix(rng *rand.Rand, runs, tasks int, mean func(task int) float64, sd float64) (byRun, byTask [][]float64) {
	byRun = make([][]float64, runs)
	byTask = make([][]float64, tasks)
	for i := range byRun {
		byRun[i] = make([]float64, tasks)
		for t := range tasks {
			v := math.Round((mean(t)+sd*rng.NormFloat64())*20) / 20
			byRun[i][t] = v
			byTask[t] = append(byTask[t], v)
		}
	}
	return byRun, byTask
}

// TestAggregatesMatchRliable feeds one score matrix to report and to
// rliable 1.2 (bench/rliable_check.py, the pinned package in the venv):
// the IQM, P(X > Y) and the performance profile agree to rounding, and
// the 95% stratified bootstrap intervals to within the bootstrap's own
// noise (each draws its own resamples: 5% of the interval's width, about
// five standard errors of an end at these resample counts).
func TestAggregatesMatchRliable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	xRuns, x := rliableMatrix(rng, 10, 5, func(t int) float64 { return 0.9 + 0.1*float64(t) }, 0.35)
	yRuns, y := rliableMatrix(rng, 10, 5, func(int) float64 { return 0.8 }, 0.4)
	taus := []float64{-0.5, 0, 0.25, 0.5, 0.8, 1, 1.2, 2}
	req, err := json.Marshal(map[string]any{"x": xRuns, "y": yRuns, "reps": 5000, "seed": 1, "taus": taus})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(benchPython(t), filepath.Join("..", "bench", "rliable_check.py"))
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench/rliable_check.py: %v (is rliable installed? `make venv`)\n%s", err, stderr.String())
	}
	var ref struct {
		IQM     float64    `json:"iqm"`
		IQMCI   [2]float64 `json:"iqm_ci"`
		POI     float64    `json:"poi"`
		POICI   [2]float64 `json:"poi_ci"`
		Profile []float64  `json:"profile"`
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatalf("rliable's answer %q: %v", out, err)
	}

	iqm, err := IQMEstimate(x, 20000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	poi, err := ProbImprovementEstimate(x, y, 20000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(iqm.Value-ref.IQM) > 1e-12 {
		t.Errorf("IQM %v, rliable's %v", iqm.Value, ref.IQM)
	}
	if math.Abs(poi.Value-ref.POI) > 1e-12 {
		t.Errorf("P(X > Y) %v, rliable's %v", poi.Value, ref.POI)
	}
	for _, c := range []struct {
		name string
		got  Estimate
		want [2]float64
	}{{"IQM", iqm, ref.IQMCI}, {"P(X > Y)", poi, ref.POICI}} {
		width := c.want[1] - c.want[0]
		if !(width > 0) {
			t.Fatalf("%s: rliable's interval %v has no width", c.name, c.want)
		}
		if d := math.Max(math.Abs(c.got.Low-c.want[0]), math.Abs(c.got.High-c.want[1])); d > 0.05*width {
			t.Errorf("%s interval [%.4f, %.4f], rliable's [%.4f, %.4f]: ends %.4f apart, more than 5%% of the width", c.name, c.got.Low, c.got.High, c.want[0], c.want[1], d)
		}
		t.Logf("%s %.4f [%.4f, %.4f], rliable's [%.4f, %.4f]", c.name, c.got.Value, c.got.Low, c.got.High, c.want[0], c.want[1])
	}
	if len(ref.Profile) != len(taus) {
		t.Fatalf("rliable's profile has %d points for %d taus", len(ref.Profile), len(taus))
	}
	for i, tau := range taus {
		if got := ProfileAt(x, tau); math.Abs(got-ref.Profile[i]) > 1e-12 {
			t.Errorf("profile at %v: %v, rliable's %v", tau, got, ref.Profile[i])
		}
	}
}
