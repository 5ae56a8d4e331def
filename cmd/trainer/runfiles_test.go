package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// committedRunFiles lists every run.json committed under results/.
func committedRunFiles(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "results/**/run.json").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		files = append(files, filepath.Join(root, f))
	}
	if len(files) < 300 {
		t.Fatalf("only %d committed run.json files: is results/ there?", len(files))
	}
	return files
}

// TestEveryCommittedRunFileLoads: every committed run.json, whatever its
// form, loads with trainer config --config, and the settings the config
// file gives back are the run's: the Config that --config resolves is the
// one train.ReadRunConfig reads (seed and kwargs aside, which the train
// command applies).
func TestEveryCommittedRunFileLoads(t *testing.T) {
	for _, f := range committedRunFiles(t) {
		if err := runConfig([]string{"--config", f}, io.Discard, io.Discard); err != nil {
			t.Errorf("trainer config --config %s: %v", f, err)
			continue
		}
		want := readRunConfig(t, f)
		sel := selection{configFile: f}
		got, err := sel.resolve(nil)
		if err != nil {
			t.Errorf("%s: resolve: %v", f, err)
			continue
		}
		if sel.fileSeed == nil || *sel.fileSeed != want.Problem.Seed {
			t.Errorf("%s: the file's seed reads as %v, want %d", f, sel.fileSeed, want.Problem.Seed)
		}
		got.Problem.Seed, got.Problem.Kwargs = want.Problem.Seed, want.Problem.Kwargs
		a, _ := json.Marshal(got.Named())
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("%s: --config resolves to\n%s\nthe run's settings are\n%s", f, a, b)
		}
	}
}

// TestEqualSettingsGiveEqualNames: committed runs with equal settings (seed
// aside) read with one name, whatever their directories are called (Ant's
// stp-combined and stp-combined-r0.0015 ran at the same rate).
func TestEqualSettingsGiveEqualNames(t *testing.T) {
	names := map[string]string{}
	for _, f := range committedRunFiles(t) {
		c := readRunConfig(t, f)
		c.Problem.Seed = 0
		name, label := c.Name, c.Label
		c.Name, c.Label = "", ""
		b, _ := json.Marshal(c)
		if n, ok := names[string(b)]; ok && n != name {
			t.Errorf("%s: named %s (%s), another run of the same settings %s", f, name, label, n)
		}
		names[string(b)] = name
	}
	ant := []string{"archive/dev-ant/default/runs/Ant-v1/stp-combined/seed105", "archive/dev-ant/default/runs/Ant-v1/stp-combined-r0.0015/seed101"}
	a := readRunConfig(t, filepath.Join("../../results", ant[0], "run.json"))
	b := readRunConfig(t, filepath.Join("../../results", ant[1], "run.json"))
	if a.Name != b.Name {
		t.Errorf("%s reads as %s, %s as %s: the same settings", ant[0], a.Name, ant[1], b.Name)
	}
}

func readRunConfig(t *testing.T, path string) train.Config {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Schema int             `json:"schema"`
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(b, &rf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c, err := train.ReadRunConfig(rf.Schema, rf.Config)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// TestCommittedRunsRepeat: a committed run, given its run.json with
// --config, repeats: the first iterations of its curve come again to the
// bit (training episodes, env steps and returns, and the evaluations).
// One run of each run.json form; the flat form's evaluations are left out
// (their seeds have followed the iteration since, so they differ).
// If a change of the code is meant to change these runs, say so in
// results/MANIFEST.md and take the run off this list.
func TestCommittedRunsRepeat(t *testing.T) {
	for _, tc := range []struct {
		run      string
		episodes string
		evals    bool
	}{
		{"archive/runs/Hopper-v1/ars/seed1", "100", false},                              // schema 1 (flat), ARS V2-t
		{"rl/runs/HalfCheetah-v1/stp_is-adaptive-paper/seed1", "60", true},              // schema 2 (blocks), the paper's STP_IS
		{"rl/runs/HalfCheetah-v1/stp-combined/seed1", "48", true},                       // schema 2, the combined step's rate in the units before 4b94225
		{"rl/runs/Swimmer-v1/stp-adaptive-k1-m8/seed1", "100", true},                    // schema 3, STP adaptive
		{"rl/runs/Hopper-v1/stp-combined/seed11", "100", true},                          // schema 3, the combined step with restarts
		{"archive/hopper-guided/runs/Hopper-v1/stp-combined-guided/seed1", "100", true}, // schema 3, the guided step
		{"archive/hopper-early/runs/Hopper-v1/stp-combined-guided/seed1", "432", true},  // schema 3, restarts at 304 (the check at 300) and 408 (the early check)
	} {
		t.Run(tc.run, func(t *testing.T) {
			committed := filepath.Join("../../results", tc.run)
			out := t.TempDir()
			if code, _, stderr := trainer(t, "--config", filepath.Join(committed, rundir.MetaFile), "--max-episodes", tc.episodes,
				"--bridge", bridgeAddr, "--log-level", "warn", "--out", out); code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			runs, _ := filepath.Glob(filepath.Join(out, "*", "*", "seed*"))
			if len(runs) != 1 {
				t.Fatalf("runs: %v", runs)
			}
			want, got := curve(t, committed), curve(t, runs[0])
			if len(got) < 3 || len(got) > len(want) {
				t.Fatalf("%d points repeated of %d", len(got), len(want))
			}
			evals := 0
			for i, g := range got {
				w := want[i]
				for _, k := range []string{"iter", "episodes", "env_steps", "reward"} {
					if g[k] != w[k] {
						t.Fatalf("point %d: %s %v, the committed run's %v", i, k, g[k], w[k])
					}
				}
				_, gok := g["eval_mean"]
				if _, wok := w["eval_mean"]; tc.evals && gok && wok {
					evals++
					if g["eval_mean"] != w["eval_mean"] || g["eval_std"] != w["eval_std"] {
						t.Fatalf("point %d: evaluation %v ± %v, the committed run's %v ± %v", i, g["eval_mean"], g["eval_std"], w["eval_mean"], w["eval_std"])
					}
				}
			}
			if tc.evals && evals < 2 {
				t.Fatalf("only %d evaluations compared", evals)
			}
		})
	}
}
