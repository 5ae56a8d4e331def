package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// synthRun is a run that reached the threshold after reach episodes (never
// when reach < 0) and ran ran episodes (result.json's count; no result.json
// and a curve to ran when noResult).
func synthRun(label string, reach, ran int, noResult bool) Run {
	r := Run{Meta: Meta{Env: "Hopper-v1", Label: label}}
	if reach >= 0 {
		r.Reached, r.EpisodesToThreshold = true, reach
	}
	if noResult {
		r.Curve = []Point{{Episodes: ran / 2}, {Episodes: ran}}
	} else {
		r.Result = &Result{Episodes: ran, Reached: reach >= 0}
	}
	return r
}

func TestSuccessFraction(t *testing.T) {
	// Five seeds: two reach at 200 (a tie), one at 0, one at 700, one never
	// in 1000 episodes (a run still going, without result.json).
	runs := []Run{
		synthRun("m", 200, 1000, false),
		synthRun("m", 700, 1000, false),
		synthRun("m", -1, 1000, true),
		synthRun("m", 0, 1000, false),
		synthRun("m", 200, 1000, false),
	}
	c := SuccessFraction(runs)
	wantX := []float64{0, 200, 200, 700, 700, 1000}
	wantY := []float64{0.2, 0.2, 0.6, 0.6, 0.8, 0.8}
	if c.Seeds != 5 || !slices.Equal(c.X, wantX) || len(c.Y) != len(wantY) {
		t.Fatalf("curve %+v, want X %v Y %v", c, wantX, wantY)
	}
	for i := range wantY {
		if !near(c.Y[i], wantY[i], 1e-12) {
			t.Fatalf("Y %v, want %v", c.Y, wantY)
		}
	}
	// A group that never reached is flat at 0 to its budget; all reaching
	// at the last episode ends on the step.
	if c := SuccessFraction([]Run{synthRun("m", -1, 500, false), synthRun("m", -1, 400, false)}); !slices.Equal(c.X, []float64{0, 500}) || !slices.Equal(c.Y, []float64{0, 0}) {
		t.Errorf("never reached: %+v", c)
	}
	if c := SuccessFraction([]Run{synthRun("m", 300, 300, false)}); !slices.Equal(c.X, []float64{0, 300, 300}) || !slices.Equal(c.Y, []float64{0, 0, 1}) {
		t.Errorf("reached at the end: %+v", c)
	}
	if c := SuccessFraction(nil); c.Seeds != 0 || len(c.X) != 0 {
		t.Errorf("no runs: %+v", c)
	}
}

func TestSuccessPlot(t *testing.T) {
	runs := fixtureRuns(t)
	dir := t.TempDir()
	var log strings.Builder
	files, err := SuccessPlotFiles(runs, filepath.Join(dir, "success.png"), PlotOptions{DPI: 50, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "success-Swimmer-v1.png"), filepath.Join(dir, "success-Hopper-v1.png")}
	if !slices.Equal(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	for _, f := range files {
		checkPNG(t, f, 300, 200)
		if !strings.Contains(log.String(), "wrote "+f) {
			t.Errorf("log %q lacks %s", log.String(), f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "success.png")); err == nil {
		t.Error("success.png written although runs span two envs")
	}
	// One env: the file named.
	one := filepath.Join(dir, "one", "s.png")
	if files, err := SuccessPlotFiles(runs[:1], one, PlotOptions{DPI: 50}); err != nil || !slices.Equal(files, []string{one}) {
		t.Fatalf("one env: %v, %v", files, err)
	}
	checkPNG(t, one, 300, 200)
	if _, err := SuccessPlotFiles(nil, one, PlotOptions{}); err == nil {
		t.Error("no runs: no error")
	}
}

func TestTickLabel(t *testing.T) {
	var labels []string
	for _, tk := range (unitTicks{}).Ticks(-0.02, 1.3) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	want := []string{"0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1"}
	if !slices.Equal(labels, want) {
		t.Errorf("fraction axis labels %v, want %v", labels, want)
	}
}
