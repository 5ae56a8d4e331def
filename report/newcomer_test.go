package report

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSuccessPlotLeavesOutEnvsWithoutThreshold: Walker2d has no threshold,
// so its success plot would be flat zero lines that read as "no seed ever
// succeeded": its runs are left out, and runs that all lack a threshold
// are an error naming their envs.
func TestSuccessPlotLeavesOutEnvsWithoutThreshold(t *testing.T) {
	hop := synthRun("STP", 200, 1000, false)
	hop.Meta.HasThreshold, hop.Meta.Threshold = true, 3120
	walker := synthRun("STP", -1, 1000, false)
	walker.Meta.Env = "Walker2d-v1"
	dir := t.TempDir()
	files, err := SuccessPlotFiles([]Run{hop, walker}, filepath.Join(dir, "s.png"), PlotOptions{DPI: 50})
	if err != nil || !slices.Equal(files, []string{filepath.Join(dir, "s.png")}) {
		t.Fatalf("files %v, %v: want s.png for Hopper alone", files, err)
	}
	if got := NoThreshold([]Run{hop, walker, walker}); !slices.Equal(got, []string{"Walker2d-v1"}) {
		t.Errorf("NoThreshold: %v", got)
	}
	if _, err := SuccessPlotFiles([]Run{walker}, filepath.Join(dir, "w.png"), PlotOptions{DPI: 50}); err == nil || !strings.Contains(err.Error(), "Walker2d-v1") {
		t.Errorf("Walker2d alone: %v", err)
	}
}

// TestOneSeedSaysSeed: "1 seed", never "1 seeds", in the summary table.
func TestOneSeedSaysSeed(t *testing.T) {
	walker := synthRun("STP", -1, 1000, false)
	walker.Meta.Env = "Walker2d-v1"
	walker.Result.BestEval, walker.Result.FinalEval = 10, 9
	md, err := SummaryTable([]Run{walker})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md, "1 seeds") || !strings.Contains(md, "(1 seed)") {
		t.Errorf("summary:\n%s", md)
	}
}

// TestPaperTableMarksTheDefault: --paper gives the default method a row,
// marked "ours (default)", though the paper did not run it.
func TestPaperTableMarksTheDefault(t *testing.T) {
	var runs []Run
	for _, label := range []string{"STP combined", "ARS V2-t"} {
		r := synthRun(label, 2000, 4000, false)
		r.Meta.HasThreshold, r.Meta.Threshold = true, 3120
		runs = append(runs, r)
	}
	md, err := Table(runs, TableOptions{Paper: true, Default: map[string]string{"Hopper-v1": "STP combined"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "| Hopper-v1 | **ours (default)**: STP combined | 3120 | 2000 (mean 2000, 1/1) | — |") ||
		!strings.Contains(md, "| Hopper-v1 | ARS V2-t | 3120 |") {
		t.Errorf("table:\n%s", md)
	}
	if strings.Index(md, "ours (default)") > strings.Index(md, "ARS V2-t |") {
		t.Errorf("the default's row is not first:\n%s", md)
	}
}

// TestRestartMarks: a restart on a seed's curve is marked on its method's
// mean curve, at the episodes it happened.
func TestRestartMarks(t *testing.T) {
	r := Run{Curve: []Point{{Episodes: 100}, {Episodes: 300, Restarted: true}, {Episodes: 500}}}
	xys := restartXYs([]Run{r, {}}, []float64{0, 200, 400, 600}, []float64{1, 2, 3, 4})
	if len(xys) != 1 || xys[0].X != 300 || xys[0].Y != 3 {
		t.Errorf("restart marks %v", xys)
	}
}
