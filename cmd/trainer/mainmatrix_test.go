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
