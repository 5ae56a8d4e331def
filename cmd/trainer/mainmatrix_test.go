package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// seedList expands a matrix file's seeds ("1-20", "101 102", "1-5 9").
func seedList(t *testing.T, s string) []uint64 {
	t.Helper()
	var out []uint64
	for _, f := range strings.Fields(strings.ReplaceAll(s, ",", " ")) {
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			t.Fatalf("seeds %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil {
				t.Fatalf("seeds %q: %v", s, err)
			}
		}
		for v := a; v <= b; v++ {
			out = append(out, v)
		}
	}
	return out
}

// TestMainMatrixIsTodaysDefault: results/rl, the main matrix
// (bench/matrices/rl.yaml) that the README's table and figures come from,
// holds each task's default as `trainer config` names it today: for every
// task of the matrix, a run under the directory the preset names
// (results/rl/runs/<task>/<variant>/seed<N>) for every seed the matrix gives
// the default, labelled as the preset labels it, and summary.md and
// table.md have its row. A preset that changes (another label, another
// directory) fails here until the main matrix's default rows are run again
// (`TASKS=<task> METHODS=default make bench-rl`) and redrawn (`make
// results`); the runs of the old default stay, under their own labels.
func TestMainMatrixIsTodaysDefault(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "bench", "matrices", "rl.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Out   string `yaml:"out"`
		Tasks []struct {
			Task string            `yaml:"task"`
			Runs map[string]string `yaml:"runs"`
		} `yaml:"tasks"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("bench/matrices/rl.yaml: %v", err)
	}
	if m.Out != "results/rl" || len(m.Tasks) < 5 {
		t.Fatalf("bench/matrices/rl.yaml: out %q, %d tasks", m.Out, len(m.Tasks))
	}
	out := filepath.Join(root, m.Out)
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range m.Tasks {
		t.Run(task.Task, func(t *testing.T) {
			c, err := train.Preset(train.PresetTuned, "", "", task.Task)
			if err != nil {
				t.Fatal(err)
			}
			c = c.Named()
			seeds := seedList(t, task.Runs["default"])
			if len(seeds) < 10 {
				t.Fatalf("the matrix gives the default %d seeds (%q), want at least 10", len(seeds), task.Runs["default"])
			}
			dir := filepath.Join(out, "runs", task.Task, c.Name)
			for _, s := range seeds {
				run := filepath.Join(dir, fmt.Sprintf("seed%d", s))
				meta, err := rundir.ReadMeta(run)
				if err != nil {
					t.Fatalf("today's default (%s, %q) has no run of seed %d in the main matrix: %v", c.Name, c.Label, s, err)
				}
				if meta.Label != c.Label || meta.Seed != s {
					t.Errorf("%s: label %q, seed %d; today's default is %q", run, meta.Label, meta.Seed, c.Label)
				}
				if _, err := os.Stat(filepath.Join(run, rundir.ResultFile)); err != nil {
					t.Errorf("%s: not finished: %v", run, err)
				}
			}
			row := fmt.Sprintf("| %s | %s | ", task.Task, c.Label)
			if !strings.Contains(string(summary), row) {
				t.Errorf("%s/summary.md has no row %q: redraw it (make results)", m.Out, row)
			}
			if !strings.Contains(string(table), fmt.Sprintf("| %s | **ours (default)**: %s |", task.Task, c.Label)) {
				t.Errorf("%s/table.md does not mark %q as %s's default: redraw it (make results)", m.Out, c.Label, task.Task)
			}
		})
	}
}

// TestEveryResultsFolderHasItsMatrix: every folder under results/ is the
// out: of one matrix file in bench/matrices/, and results/MANIFEST.md's
// folder table names that file beside it; archive/ is the one folder no
// file makes, and says so there. No loose file but the MANIFEST.
func TestEveryResultsFolderHasItsMatrix(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "bench", "matrices", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no matrix files: %v", err)
	}
	byOut := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Out string `yaml:"out"`
		}
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel := "bench/matrices/" + filepath.Base(f)
		byOut[filepath.Clean(m.Out)] = append(byOut[filepath.Clean(m.Out)], rel)
	}
	manifest, err := os.ReadFile(filepath.Join(root, "results", "MANIFEST.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case !e.IsDir():
			if name != "MANIFEST.md" {
				t.Errorf("results/%s: a loose file; a folder's files belong to its experiment", name)
			}
		case name == "archive":
			if !strings.Contains(string(manifest), "| `archive/` | none: ") {
				t.Errorf("results/MANIFEST.md's folder table has no row for archive/")
			}
		default:
			makers := byOut[filepath.Join("results", name)]
			if len(makers) != 1 {
				t.Errorf("results/%s is the out: of %d matrix files %v, want one (or move it into results/archive)", name, len(makers), makers)
				continue
			}
			if row := fmt.Sprintf("| `%s/` | `%s`", name, makers[0]); !strings.Contains(string(manifest), row) {
				t.Errorf("results/MANIFEST.md's folder table lacks %q", row)
			}
		}
	}
}

// TestResultsSummaryPoolsNothing: `trainer table results --summary` over
// every committed experiment warns of no seed found twice (experiments are
// kept apart, and no experiment holds a copy of a run), and gives each
// folder its own section.
func TestResultsSummaryPoolsNothing(t *testing.T) {
	results := filepath.Join("..", "..", "results")
	code, out, errOut := trainer(t, "table", results, "--summary")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(errOut, "appears twice") {
		t.Errorf("seeds found twice:\n%s", errOut)
	}
	for _, exp := range []string{"rl", "v4", "other", filepath.Join("archive", "hopper-early")} {
		if !strings.Contains(out, "### "+filepath.Join(results, exp)+"\n") {
			t.Errorf("no section for %s", exp)
		}
	}
}
