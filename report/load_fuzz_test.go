package report

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stpis/stpis/internal/fuzzguard"
)

// The fuzz targets of this file feed `trainer table` and `trainer plot`
// (the readers of run directories besides --resume) with arbitrary run
// files, and the plot's axis labelling with arbitrary ranges: an error or
// an answer, never a panic or a hang. Each runs its seeds in a plain
// `go test`; `make fuzz` fuzzes them.

// FuzzDenseTicks: the reward axis is labelled for any range gonum hands
// it (finite, lo ≤ hi: gonum widens an empty range by ±1, which does
// nothing from 2^53 on), with a bounded number of ticks.
func FuzzDenseTicks(f *testing.F) {
	for _, r := range [][2]float64{{-120, 3500}, {0, 1}, {-1, 1}, {0, 1e-300}, {1e17, 1e17 + 64}, {-1e308, 1e308}, {5, 5}, {0, 5e-324}} {
		f.Add(r[0], r[1])
	}
	f.Fuzz(func(t *testing.T, lo, hi float64) {
		if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi || (lo == hi && math.Abs(lo) < 1<<53) {
			return
		}
		fuzzguard.Within(t, 5*time.Second, func() {
			ticks := denseTicks{}.Ticks(lo, hi)
			if len(ticks) > 100 {
				t.Errorf("Ticks(%v, %v): %d ticks", lo, hi, len(ticks))
			}
			for _, tk := range ticks {
				if math.IsNaN(tk.Value) || math.IsInf(tk.Value, 0) {
					t.Errorf("Ticks(%v, %v): a tick at %v", lo, hi, tk.Value)
				}
			}
		})
	})
}

// fixtureRun is a run directory's files, the seeds' starting point.
var fixtureRun = [3]string{
	`{"env":"Hopper-v1","resolved_env":"Hopper-v5","method":"stp_is","step":"adaptive","label":"STP_IS adaptive","seed":1,"k":4,"threshold":3120,"has_threshold":true}`,
	`{"iter":0,"episodes":0,"env_steps":0,"reward":1,"best_eval":5,"eval_mean":5,"eval_std":1,"step_size":0,"p_entropy":0,"elapsed_s":0,"eps_per_s":0}` + "\n" +
		`{"iter":1,"episodes":12,"env_steps":900,"reward":20,"best_eval":5,"step_size":0.1,"p_entropy":2,"accepted":"plus","elapsed_s":1,"eps_per_s":12}` + "\n" +
		`{"iter":2,"episodes":24,"env_steps":2000,"reward":3000,"best_eval":3200,"eval_mean":3200,"eval_std":30,"threshold_reached_at":24,"step_size":0.1,"p_entropy":2,"elapsed_s":2,"eps_per_s":12}` + "\n",
	`{"episodes_to_threshold":24,"reached":true,"final_eval":3200,"best_eval":3200,"episodes":24,"eval_episodes":20,"env_steps":2000,"iterations":2,"wall_s":2,"cpu_s":1}`,
}

// FuzzLoadRun: a run directory of any run.json, curve.jsonl and
// result.json loads or is refused; one that loads makes a table, a
// summary, a curve plot and a success plot, or an error.
func FuzzLoadRun(f *testing.F) {
	meta, curve, result := fixtureRun[0], fixtureRun[1], fixtureRun[2]
	f.Add([]byte(meta), []byte(curve), []byte(result))
	f.Add([]byte(meta), []byte(curve), []byte(nil))
	f.Add([]byte(meta), []byte(nil), []byte(nil))
	f.Add([]byte(`{}`), []byte(curve), []byte(`{"reached":true}`))
	f.Add([]byte(meta), []byte(`{"iter":0,"episodes":0,"eval_mean":"NaN"}`+"\n"+`{"iter":1,"episodes":-5,"eval_mean":"+Inf"}`), []byte(`{"reached":false,"episodes":-1}`))
	f.Add([]byte(`{"env":"Ant-v1","method":"ars","threshold":-1e308}`), []byte(`{"iter":0,"episodes":9007199254740993,"eval_mean":1e308}`+"\n"+`{"iter":1,"episodes":1,"eval_mean":-1e308}`), []byte(nil))
	f.Add([]byte(`{"env":"","label":"","method":"","step":"x"}`), []byte(`{"iter":2,"episodes":24,"eval_mean":7}`+"\n"+`{"iter":1,"episodes":12,"eval_mean":7}`), []byte(`{"reached":true,"episodes_to_threshold":-3}`))
	root := f.TempDir()
	dir := filepath.Join(root, "runs", "Hopper-v1", "stp_is-adaptive", "seed1")
	f.Fuzz(func(t *testing.T, meta, curve, result []byte) {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{"run.json": meta, "curve.jsonl": curve, "result.json": result} {
			if b == nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fuzzguard.Within(t, 20*time.Second, func() {
			runs, _, err := Load(filepath.Join(root, "runs"))
			if err != nil {
				return
			}
			_, _ = Table(runs, TableOptions{Paper: true})
			_, _ = SummaryTable(runs)
			_, _ = PlotFiles(runs, filepath.Join(root, "curve.png"), PlotOptions{DPI: 20, GridPoints: 20})
			_, _ = SuccessPlotFiles(runs, filepath.Join(root, "success.png"), PlotOptions{DPI: 20, GridPoints: 20})
		})
	})
}

// Found by FuzzDenseTicks (its seed −1e308 to 1e308 hung in gonum's
// DefaultTicks) and then through whole run files: `trainer plot` of a run
// whose evaluations are all 1e17 panicked ("illegal range": gonum cannot
// widen the empty range at that magnitude), and of one whose evaluations
// are 1e17 and 1e17+32 hung, appending ticks until memory ran out (the
// step of 5 is below float64's resolution there). Each plot now ends, with
// its range's ends labelled.
func TestPlotOfRewardsBeyondFloatResolutionEnds(t *testing.T) {
	fuzzguard.Within(t, 10*time.Second, func() {
		if ticks := (denseTicks{}).Ticks(-1e308, 1e308); len(ticks) != 2 {
			t.Errorf("Ticks(-1e308, 1e308) = %v, want its ends", ticks)
		}
	})
	for name, evals := range map[string][2]string{
		"flat at 1e17":   {"1e17", "1e17"},
		"1e17 and +32":   {"1e17", "100000000000000032"},
		"±1e308":         {"1e308", "-1e308"},
		"5e-324 above 0": {"0", "5e-324"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "Hopper-v1", "stp-fixed", "seed1")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{
				"run.json":    `{"env":"Hopper-v1","method":"stp","step":"fixed","threshold":3120,"has_threshold":true}`,
				"curve.jsonl": `{"iter":0,"episodes":0,"eval_mean":` + evals[0] + "}\n" + `{"iter":1,"episodes":12,"eval_mean":` + evals[1] + "}\n",
			}
			for name, s := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			runs, _, err := Load(root)
			if err != nil {
				t.Fatal(err)
			}
			fuzzguard.Within(t, 10*time.Second, func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("plot panicked: %v", r)
					}
				}()
				_, _ = PlotFiles(runs, filepath.Join(root, "curve.png"), PlotOptions{DPI: 20})
				_, _ = SuccessPlotFiles(runs, filepath.Join(root, "success.png"), PlotOptions{DPI: 20})
			})
		})
	}
}
