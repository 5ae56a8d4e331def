package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/stpis/stpis/tasks"
)

// PaperEpisodes returns the published episodes-to-threshold of the paper's
// Table 2 for env (any version of the task's id) and a method label as
// DeriveLabel gives it ("STP_IS adaptive"). ok is false when the paper has
// no such entry; na is true when the paper reports N/A (never reached).
func PaperEpisodes(env, label string) (episodes int, na, ok bool) {
	t, found := tasks.Lookup(env)
	if !found {
		return 0, false, false
	}
	v, found := t.Table2[label]
	if !found {
		return 0, false, false
	}
	return v, v == 0, true
}

func rank(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return len(list)
}

// envLess orders envs as the paper's rows (Swimmer, Hopper, HalfCheetah, Ant,
// Humanoid), then Walker2d, then the others by name.
func envLess(a, b string) bool {
	ra, rb := tasks.Rank(a), tasks.Rank(b)
	if ra != rb {
		return ra < rb
	}
	return a < b
}

// labelLess orders labels as the paper's columns, unknown labels last by name.
func labelLess(a, b string) bool {
	ra, rb := rank(tasks.Table2Methods, a), rank(tasks.Table2Methods, b)
	if ra != rb {
		return ra < rb
	}
	return a < b
}

// TableOptions configures Table.
type TableOptions struct {
	// Paper sets our runs beside the paper's published Table 2: one row
	// per task and method that the paper ran and we have runs of, with
	// our cell and the paper's (see paperTable).
	Paper bool
	// Default gives, per env, the label of the env's default method: with
	// Paper, its runs get a row of their own, marked "ours (default)",
	// though the paper has no such method.
	Default map[string]string
}

// Marks shared by every table: N/A is a cell whose seeds never reached
// the threshold (as the paper prints it), — one with nothing to show (no
// runs, no threshold, nothing to test).
const (
	markNotReached = "N/A"
	markNone       = "—"
	// markNoThreshold is a cell whose runs had no threshold to reach
	// (Walker2d, --threshold none): not N/A, which says they never reached one.
	markNoThreshold = "no threshold"
)

// Cell summarises one (env, method) cell of the table.
type Cell struct {
	Total   int       // seeds (runs) in the cell
	Reached int       // seeds that reached the threshold
	Median  float64   // median episodes to threshold over the seeds that reached it
	Mean    float64   // mean over the same seeds
	Values  []float64 // episodes to threshold of the seeds that reached it, sorted
}

// String formats the cell as "1870 (mean 1904, 5/5)", or "N/A (0/5)".
func (c Cell) String() string {
	if c.Reached == 0 {
		return fmt.Sprintf("%s (0/%d)", markNotReached, c.Total)
	}
	return fmt.Sprintf("%s (mean %s, %d/%d)", fmtNum(c.Median), fmtNum(c.Mean), c.Reached, c.Total)
}

// cellText is the table's cell for runs: Summarize's, or "no threshold
// (N seeds)" when none of them had a threshold.
func cellText(runs []Run) string {
	for _, r := range runs {
		if r.Meta.HasThreshold {
			return Summarize(runs).String()
		}
	}
	return fmt.Sprintf("%s (%d seeds)", markNoThreshold, len(runs))
}

// Summarize computes the cell for a set of runs (normally the seeds of one
// env and method).
func Summarize(runs []Run) Cell {
	c := Cell{Total: len(runs)}
	for _, r := range runs {
		if r.Reached {
			c.Values = append(c.Values, float64(r.EpisodesToThreshold))
		}
	}
	c.Reached = len(c.Values)
	if c.Reached == 0 {
		return c
	}
	sort.Float64s(c.Values)
	c.Median = median(c.Values)
	sum := 0.0
	for _, v := range c.Values {
		sum += v
	}
	c.Mean = sum / float64(c.Reached)
	return c
}

// fmtNum prints whole numbers without decimals and others with one.
func fmtNum(v float64) string {
	if math.Abs(v-math.Round(v)) < 1e-9 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// Table renders the episodes-to-threshold table in the layout of the
// paper's Table 2, as Markdown: one row per env (as requested, e.g.
// Hopper-v1), ordered Swimmer, Hopper, HalfCheetah, Ant, Humanoid, Walker2d,
// then others; a Threshold column; then one column per method present in the
// runs, in the order STP fixed, STP_IS fixed, STP adaptive, STP_IS adaptive,
// ARS V2-t (other labels after, by name). A cell with no runs is "—". A
// footnote line under the table says how cells are computed.
func Table(runs []Run, opts TableOptions) (string, error) {
	if len(runs) == 0 {
		return "", fmt.Errorf("report: table: no runs")
	}
	type key struct{ env, label string }
	groups := map[key][]Run{}
	envSet := map[string]bool{}
	labelSet := map[string]bool{}
	// paperLabel is the paper's method of a column, the label before its
	// first comma: a run labelled "STP_IS adaptive, K=1" is compared with
	// the paper's STP_IS adaptive, "ARS V1-t" with ARS V1-t.
	paperLabel := map[string]string{}
	for _, r := range runs {
		label := r.Meta.Label
		k := key{r.Meta.Env, label}
		groups[k] = append(groups[k], r)
		envSet[r.Meta.Env] = true
		labelSet[label] = true
		paperLabel[label], _, _ = strings.Cut(label, ",")
	}
	envs := sortedKeys(envSet, envLess)
	labels := sortedKeys(labelSet, labelLess)
	if opts.Paper {
		return paperTable(envs, labels, func(env, label string) []Run { return groups[key{env, label}] }, paperLabel, opts.Default), nil
	}

	header := []string{"Task", "Threshold"}
	header = append(header, labels...)
	var sb strings.Builder
	writeRow(&sb, header)
	writeRow(&sb, separator(len(header)))
	for _, env := range envs {
		name := env
		if name == "" {
			name = "(unknown env)"
		}
		row := []string{name, thresholdCell(runs, env)}
		for _, l := range labels {
			if g := groups[key{env, l}]; len(g) == 0 {
				row = append(row, markNone)
			} else {
				row = append(row, cellText(g))
			}
		}
		writeRow(&sb, row)
	}
	sb.WriteString("\nCells: median episodes to reach the threshold over the seeds that reached it\n" +
		"  (mean over the same seeds, seeds that reached it / seeds run); " +
		markNotReached + ": no seed reached it; " + markNoThreshold + ": the runs had none; " + markNone + ": no runs.\n")
	return sb.String(), nil
}

// paperTable is Table's --paper layout: a row per task and method that
// the paper's Table 2 reports and that runs exist for, ours beside the
// paper's, so that it stays narrow however many methods were run.
//
// The env's default method (defaults), which the paper did not run, comes
// first, marked "ours (default)", with the paper's cell empty: it is the
// row a reader compares the paper's rows with.
func paperTable(envs, labels []string, group func(env, label string) []Run, paperLabel map[string]string, defaults map[string]string) string {
	var sb strings.Builder
	writeRow(&sb, []string{"Task", "Method", "Threshold", "ours", "paper"})
	writeRow(&sb, separator(5))
	for _, env := range envs {
		if d := defaults[env]; d != "" {
			if g := group(env, d); len(g) > 0 {
				if _, _, ok := PaperEpisodes(env, paperLabel[d]); !ok {
					writeRow(&sb, []string{env, "**ours (default)**: " + d, thresholdCell(g, env), cellText(g), markNone})
				}
			}
		}
		for _, l := range labels {
			g := group(env, l)
			if _, _, ok := PaperEpisodes(env, paperLabel[l]); !ok || len(g) == 0 {
				continue
			}
			name := l
			if l == defaults[env] {
				name = "**ours (default)**: " + l
			}
			writeRow(&sb, []string{env, name, thresholdCell(g, env), cellText(g), paperCell(env, paperLabel[l])})
		}
	}
	sb.WriteString("\nours: median episodes to reach the threshold over the seeds that reached it\n" +
		"  (mean over the same seeds, seeds that reached it / seeds run); " + markNotReached + ": no seed reached it;\n" +
		"  " + markNoThreshold + ": the runs had none.\n" +
		"paper: the published Table 2 (v1 tasks, 5 seeds), matched by the task's name and the method before\n" +
		"  its first comma; " + markNotReached + " as published. Only the tasks and methods the paper ran have rows,\n" +
		"  and the default (ours (default)), which the paper did not run: " + markNone + " in its paper cell.\n")
	return sb.String()
}

func writeRow(sb *strings.Builder, cells []string) {
	sb.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

func separator(n int) []string {
	sep := make([]string, n)
	for i := range sep {
		sep[i] = "---"
	}
	return sep
}

func paperCell(env, label string) string {
	v, na, ok := PaperEpisodes(env, label)
	switch {
	case !ok:
		return markNone
	case na:
		return markNotReached
	default:
		return strconv.Itoa(v)
	}
}

// thresholdCell gives the threshold of env's runs; differing thresholds are
// all listed.
func thresholdCell(runs []Run, env string) string {
	var ts []string
	seen := map[float64]bool{}
	for _, r := range runs {
		if r.Meta.Env != env || !r.Meta.HasThreshold || seen[r.Meta.Threshold] {
			continue
		}
		seen[r.Meta.Threshold] = true
		ts = append(ts, fmtNum(r.Meta.Threshold))
	}
	if len(ts) == 0 {
		return markNone
	}
	return strings.Join(ts, ", ")
}

func sortedKeys(set map[string]bool, less func(a, b string) bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
	return keys
}
