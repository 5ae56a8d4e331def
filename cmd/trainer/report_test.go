package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stpis/stpis/report"
)

// writeReportRuns writes run directories of Hopper-v1 under root: three ARS
// seeds and three STP seeds, reach[i] the episodes seed i+1 reached the
// threshold at (0: never, in 1000 episodes).
func writeReportRuns(t *testing.T, root string) {
	t.Helper()
	write := func(path string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []struct {
		method, step, label string
		reach               []int
	}{
		{"ars", "", "ARS V2-t", []int{600, 0, 900}},
		{"stp", "combined", "STP combined", []int{200, 300, 0}},
	} {
		for i, reach := range m.reach {
			dir := filepath.Join(root, "Hopper-v1", m.method, fmt.Sprintf("seed%d", i+1))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			write(filepath.Join(dir, "run.json"), map[string]any{
				"env": "Hopper-v1", "resolved_env": "Hopper-v5", "method": m.method, "step": m.step,
				"label": m.label, "seed": i + 1, "threshold": 3120, "has_threshold": true,
			})
			// The curve bears the result out (a result that its curve
			// contradicts is refused): the threshold recorded at reach, every
			// evaluation 3000, as the tables' other figures want.
			curve := `{"iter":2,"episodes":1000,"reward":100,"eval_mean":3000,"eval_std":1,"best_eval":3000}` + "\n"
			var ep any
			if reach > 0 {
				ep = reach
				curve = fmt.Sprintf(`{"iter":1,"episodes":%d,"reward":90,"eval_mean":3000,"eval_std":1,"best_eval":3000,"threshold_reached_at":%d}`+"\n", reach, reach) + curve
			}
			if err := os.WriteFile(filepath.Join(dir, "curve.jsonl"), []byte(curve), 0o644); err != nil {
				t.Fatal(err)
			}
			write(filepath.Join(dir, "result.json"), map[string]any{
				"episodes_to_threshold": ep, "reached": reach > 0, "final_eval": 3000, "best_eval": 3000, "episodes": 1000,
			})
		}
	}
}

func TestTableSummaryCommand(t *testing.T) {
	root := t.TempDir()
	writeReportRuns(t, root)
	code, out, errOut := trainer(t, "table", root, "--summary")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"| Task | Method | reached | KM median [95% CI] | median of reached | log-rank p vs ARS |",
		"| Hopper-v1 | STP combined | 2/3 | 300 [200, >1000] | 250 | ",
		"| Hopper-v1 | ARS V2-t | 2/3 | 900 [600, >1000] | 750 | — |",
		">N: not reached within N episodes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPlotSuccessCommand(t *testing.T) {
	root := t.TempDir()
	writeReportRuns(t, root)
	png := filepath.Join(t.TempDir(), "success.png")
	// The flag after the runs, as the usage line has it.
	code, out, errOut := trainer(t, "plot", root, "--success", "-o", png)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.TrimSpace(out) != png {
		t.Errorf("output %q, want the file %s", out, png)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Fatalf("%s: %v", png, err)
	}
	if code, _, errOut := trainer(t, "plot", "--success", filepath.Join(root, "nothing-here"), "-o", png); code == 0 || !strings.Contains(errOut, "nothing-here") {
		t.Errorf("a missing directory: exit %d, %q", code, errOut)
	}
}

// TestTableAggregateCommand: every run ends at 3000 and starts there, so
// every normalized score is 0 and STP's probability of improvement over
// ARS is one half, ties counted one half, in every resample.
func TestTableAggregateCommand(t *testing.T) {
	root := t.TempDir()
	writeReportRuns(t, root)
	code, out, errOut := trainer(t, "table", root, "--aggregate")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"| Hopper-v1 (default: STP combined, guided by the gradient sum) | 3000 | 3120 | threshold |",
		"| STP combined | 1 | 3 | 0.00 [0.00, 0.00] | 0.00 [0.00, 0.00] | 0.50 [0.50, 0.50] | 0.50 [0.50, 0.50] |",
		"| ARS | 1 | 3 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := trainer(t, "table", root, "--aggregate", "--summary"); code != 2 || !strings.Contains(errOut, "give one of --paper, --summary and --aggregate") {
		t.Errorf("--aggregate --summary: exit %d, %q", code, errOut)
	}
	if code, _, errOut := trainer(t, "table", root, "--summary", "--methods", "ars"); code != 2 || !strings.Contains(errOut, "--methods applies to --aggregate only") {
		t.Errorf("--summary --methods: exit %d, %q", code, errOut)
	}
	png := filepath.Join(t.TempDir(), "profile.png")
	if code, out, errOut := trainer(t, "plot", "--profile", root, "-o", png); code != 0 || strings.TrimSpace(out) != png {
		t.Fatalf("plot --profile: exit %d, %q, %s", code, out, errOut)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Fatalf("%s: %v", png, err)
	}
}

// --methods cmaes keeps CMA-ES where it is a peer (not the task's default):
// its runs count under their label, "CMA-ES", in the aggregate.
func TestTableAggregateKeepsCMAES(t *testing.T) {
	dir := filepath.Join("..", "..", "results", "rl", "runs", "HalfCheetah-v1")
	code, out, errOut := trainer(t, "table", dir, "--aggregate", "--methods", "default,ars,cmaes")
	if code != 0 || !strings.Contains(out, "| CMA-ES | 1 | 20 |") {
		t.Fatalf("--methods default,ars,cmaes: exit %d, no CMA-ES row of 20 runs:\n%s%s", code, out, errOut)
	}
	if code, out, _ := trainer(t, "table", dir, "--aggregate", "--methods", "default,ars"); code != 0 || strings.Contains(out, "| CMA-ES |") {
		t.Errorf("--methods default,ars: exit %d, a CMA-ES row:\n%s", code, out)
	}
}

// TestSelectMethodsByVariant: a label may hold commas, so a list names a
// method by its runs' directory too, for the plots and the aggregate; a
// name that matches no run is refused.
func TestSelectMethodsByVariant(t *testing.T) {
	var runs []report.Run
	for _, v := range [][2]string{{"STP combined, m=4, top 2", "stp-combined-m4-t2"}, {"STP combined", "stp-combined"}, {"ARS V2-t", "ars"}} {
		r := report.Run{}
		r.Meta.Env, r.Meta.Label, r.Meta.Variant, r.Meta.Method = "HalfCheetah-v1", v[0], v[1], "stp"
		runs = append(runs, r)
	}
	kept, err := selectMethods(runs, []string{"stp-combined-m4-t2", "STP combined"}, nil)
	if err != nil || len(kept) != 2 || kept[0].Meta.Variant != "stp-combined-m4-t2" || kept[1].Meta.Variant != "stp-combined" {
		t.Fatalf("kept %+v, err %v", kept, err)
	}
	if _, err := selectMethods(runs, []string{"stp-combined-m8"}, nil); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("err = %v, want one naming what --methods takes", err)
	}
	// The aggregate's rows are methods: a variant names its runs' method.
	keep := aggregateMethods("stp-combined-m4-t2, ars", runs, nil)
	if len(keep) != 2 || !keep["STP combined, m=4, top 2"] || !keep[report.MethodARS] {
		t.Errorf("aggregate keeps %v", keep)
	}
}
