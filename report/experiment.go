package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// ExperimentOf is the experiment a run directory belongs to: the folder a
// matrix's runs go under (a matrix file's out:, holding runs/<env>/
// <variant>/seed<N>), found from the run's path: the folder above its
// env's, or above that when it is named runs (results/rl/runs/Hopper-v1/
// ars/seed1 is of results/rl; out/Hopper-v1/ars/seed1 of out).
func ExperimentOf(dir string) string {
	env := filepath.Dir(filepath.Dir(filepath.Clean(dir)))
	exp := filepath.Dir(env)
	if filepath.Base(exp) == "runs" {
		exp = filepath.Dir(exp)
	}
	return exp
}

// Experiments returns the experiments of runs, sorted, and their runs.
func Experiments(runs []Run) ([]string, map[string][]Run) {
	by := map[string][]Run{}
	for _, r := range runs {
		by[r.Experiment] = append(by[r.Experiment], r)
	}
	names := make([]string, 0, len(by))
	for e := range by {
		names = append(names, e)
	}
	sort.Strings(names)
	return names, by
}

// PerExperiment renders runs with table, an experiment at a time: with one
// experiment it is table(runs); with several, each experiment's tables
// under a heading naming its folder, and the notes under the tables
// (the lines after the last table row) once, at the end. Seeds of
// different experiments are never pooled.
func PerExperiment(runs []Run, table func([]Run) (string, error)) (string, error) {
	names, by := Experiments(runs)
	if len(names) == 1 {
		return table(runs)
	}
	var b strings.Builder
	notes := ""
	for _, e := range names {
		md, err := table(by[e])
		if err != nil {
			return "", fmt.Errorf("experiment %s: %w", e, err)
		}
		body, rest := splitNotes(md)
		if notes == "" {
			notes = rest
		}
		fmt.Fprintf(&b, "### %s\n\n%s\n", e, body)
	}
	b.WriteString(notes)
	return b.String(), nil
}

// splitNotes splits a report's Markdown after its last table row.
func splitNotes(md string) (body, notes string) {
	lines := strings.SplitAfter(md, "\n")
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "|") {
			last = i
		}
	}
	return strings.Join(lines[:last+1], ""), strings.Join(lines[last+1:], "")
}

// OneExperiment refuses runs of several experiments, naming their
// folders: a plot draws one experiment's runs, so that seeds of different
// experiments are never averaged together.
func OneExperiment(runs []Run) error {
	names, by := Experiments(runs)
	if len(names) < 2 {
		return nil
	}
	parts := make([]string, len(names))
	for i, e := range names {
		parts[i] = fmt.Sprintf("%s (%s)", e, plural(len(by[e]), "run"))
	}
	return fmt.Errorf("report: the runs are of %d experiments, %s: plot one at a time (give one folder, or run directories of one)", len(names), strings.Join(parts, ", "))
}
