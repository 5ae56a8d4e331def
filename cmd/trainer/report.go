package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stpis/stpis/convex/figures"
	"github.com/stpis/stpis/report"
	"github.com/stpis/stpis/train"
)

// runPlot is `trainer plot RUNS... [--success] -o curve.png`.
func runPlot(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("trainer plot")
	out := fs.String("o", "curve.png", "output PNG (one file per env when the runs span several)")
	success := fs.Bool("success", false, "plot the fraction of seeds that have reached the threshold against training episodes, one step line per method, instead of the reward curves")
	profile := fs.Bool("profile", false, "plot the performance profiles of every method across the tasks (the fraction of runs above each normalized score, final evaluations solid and AUC dashed) into the one file -o, instead of the reward curves")
	methods := fs.String("methods", "", "plot only these, comma-separated: default (the task's default), ars, cmaes, paper (the paper preset), a method's label, or its runs' directory name (stp-combined-m4-t2)")
	runs, err := loadRuns(fs, args, stdout, stderr)
	if err != nil {
		return err
	}
	if !strings.EqualFold(filepath.Ext(*out), ".png") {
		// The plots are PNG: x.jpg would hold PNG bytes.
		return usageError{fmt.Errorf("invalid value %q for flag -o: want a name ending in .png (the plots are PNG)", *out)}
	}
	if err := report.OneExperiment(runs); err != nil {
		return err
	}
	defaults := defaultLabels(runs)
	if *methods != "" {
		if runs, err = selectMethods(runs, strings.Split(*methods, ","), defaults); err != nil {
			return err
		}
	}
	if *success && *profile {
		return usageError{errors.New("give --success or --profile, not both")}
	}
	if *profile {
		if err := report.ProfilePlot(runs, *out, report.PlotOptions{Default: defaults}); err != nil {
			return err
		}
		fmt.Fprintln(stdout, *out)
		return nil
	}
	draw := report.PlotFiles
	if *success {
		draw = report.SuccessPlotFiles
		if skip := report.NoThreshold(runs); len(skip) > 0 && len(skip) < len(envsOf(runs)) {
			fmt.Fprintf(stderr, "warning: %s left out: no threshold, so no seed can reach one\n", strings.Join(skip, ", "))
		}
	}
	files, err := draw(runs, *out, report.PlotOptions{Default: defaults})
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}

// envsOf returns the distinct envs of runs.
func envsOf(runs []report.Run) map[string]bool {
	out := map[string]bool{}
	for _, r := range runs {
		out[r.Meta.Env] = true
	}
	return out
}

// defaultLabels gives, per env of runs, the label of the env's default
// method (the tuned preset's entry), which the plots mark.
func defaultLabels(runs []report.Run) map[string]string {
	out := map[string]string{}
	for _, r := range runs {
		if _, ok := out[r.Meta.Env]; ok {
			continue
		}
		if c, err := train.Preset(train.PresetTuned, "", "", r.Meta.Env); err == nil {
			out[r.Meta.Env] = c.Named().Label
		}
	}
	return out
}

// selectMethods keeps the runs of the methods named: default, ars, cmaes,
// paper, a label, or a variant (the runs' directory, "stp-combined-m4-t2":
// a name without the commas a label may hold, for a list).
func selectMethods(runs []report.Run, names []string, defaults map[string]string) ([]report.Run, error) {
	var kept []report.Run
	for _, r := range runs {
		for _, n := range names {
			switch n = strings.TrimSpace(n); {
			case n == "default" && r.Meta.Label == defaults[r.Meta.Env],
				n == "ars" && r.Meta.Method == "ars",
				n == "cmaes" && r.Meta.Method == "cmaes",
				n == "paper" && strings.HasSuffix(r.Meta.Label, "paper preset"),
				n == r.Meta.Label, n == r.Meta.Variant:
				kept = append(kept, r)
			default:
				continue
			}
			break
		}
	}
	if len(kept) == 0 {
		return nil, usageError{fmt.Errorf("flag --methods: no run is of %s (default, ars, cmaes, paper, a label or a run directory's name)", strings.Join(names, ", "))}
	}
	return kept, nil
}

// aggregateMethods maps --methods's names to the aggregate's methods
// (report.MethodKey), which AggregateOptions.Methods keeps; a run
// directory's name (a variant) stands for its runs' method. It is not
// selectMethods: the aggregate reads every run (its normalizers take ARS's
// and each task's start evaluations) and leaves out rows, not runs, and its
// "cmaes" is CMA-ES where it is not the task's default, which is row
// "default" there.
func aggregateMethods(list string, runs []report.Run, defaults map[string]string) map[string]bool {
	keep := map[string]bool{}
	for _, m := range strings.Split(list, ",") {
		switch m = strings.TrimSpace(m); m {
		case "":
		case "default":
			keep[report.MethodDefault] = true
		case "ars":
			keep[report.MethodARS] = true
		case "paper":
			keep[report.MethodPaper] = true
		case "cmaes":
			keep["CMA-ES"] = true
		default:
			for _, r := range runs {
				if r.Meta.Variant == m {
					m = report.MethodKey(r, defaults)
					break
				}
			}
			keep[m] = true
		}
	}
	return keep
}

// runTable is `trainer table RUNS... [--paper]`.
func runTable(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("trainer table")
	paper := fs.Bool("paper", false, "add the paper's published figures beside ours")
	summary := fs.Bool("summary", false, "one row per task and method: seeds that reached the threshold, the Kaplan-Meier median of the episodes to it (a seed that never reached it censored at the episodes it ran) with a 95% bootstrap interval, the median over the seeds that reached it, the log-rank p-value against the task's ARS row, median best and final evaluations, the Mann-Whitney p-value of the final evaluations against ARS's")
	methods := fs.String("methods", "", "with --aggregate: only these methods, comma-separated: default (each task's default), ars, cmaes (CMA-ES where it is not the default), paper (the paper preset), a method's label, or its runs' directory name")
	aggregate := fs.Bool("aggregate", false, "across the tasks, per method (each task's default as one method, ARS as another): normalized scores (0 the start evaluation, 1 the threshold, or ARS's median final where a task has none), their interquartile mean on final evaluations and on the area under the curve, and the probability of improvement over ARS and between peers, with 95% stratified bootstrap intervals (rliable's statistics)")
	runs, err := loadRuns(fs, args, stdout, stderr)
	if err != nil {
		return err
	}
	if *summary && *aggregate || *paper && (*summary || *aggregate) {
		return usageError{errors.New("give one of --paper, --summary and --aggregate")}
	}
	if *methods != "" && !*aggregate {
		return usageError{errors.New("flag --methods applies to --aggregate only (trainer plot --methods selects the curves)")}
	}
	if *aggregate {
		md, err := report.PerExperiment(runs, func(runs []report.Run) (string, error) {
			defaults := defaultLabels(runs)
			return report.AggregateTable(runs, report.AggregateOptions{Default: defaults, Methods: aggregateMethods(*methods, runs, defaults)})
		})
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, md)
		return nil
	}
	if *summary {
		md, err := report.PerExperiment(runs, report.SummaryTable)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, md)
		return nil
	}
	md, err := report.PerExperiment(runs, func(runs []report.Run) (string, error) {
		return report.Table(runs, report.TableOptions{Paper: *paper, Default: defaultLabels(runs)})
	})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, md)
	return nil
}

// loadRuns parses the flags and loads the run directories named by the
// positional arguments.
func loadRuns(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) ([]report.Run, error) {
	dirs, err := parseInterspersed(fs, args, stdout)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, usageError{errors.New("give at least one run directory (or a directory above runs)")}
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			return nil, usageError{fmt.Errorf("%s: no such file or directory", d)}
		}
	}
	runs, skipped, err := report.Load(dirs...)
	if err != nil {
		return nil, err // it names every run it skipped: one line
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "warning: %v\n", s)
	}
	return runs, nil
}

// runConvex is `trainer convex`, the same command as cmd/convex.
func runConvex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("trainer convex")
	cfg := figures.Register(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	err := figures.Execute(ctx, *cfg, stdout, stderr)
	if errors.Is(err, figures.ErrUsage) {
		// A bad command line exits 2, a missing data file too; one that
		// is there but bad is a failure (1).
		return usageError{err}
	}
	return err
}
