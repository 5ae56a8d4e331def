package report

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stpis/stpis/rundir"
)

// Meta is a run's run.json, Point one line of its curve, Result its
// result.json: the formats are rundir's.
type (
	Meta   = rundir.Meta
	Point  = rundir.Point
	Result = rundir.Result
)

// Run is one loaded run directory.
type Run struct {
	Dir    string
	Meta   Meta
	Curve  []Point
	Result *Result // nil when the run has not finished (no result.json)

	// Reached reports whether the run reached its threshold, and
	// EpisodesToThreshold the training episodes it took (0 when not reached).
	// They come from result.json when present, else from the curve: the first
	// line with threshold_reached_at, else the first eval_mean >= threshold.
	Reached             bool
	EpisodesToThreshold int

	// Experiment is the folder of the experiment the run is of
	// (ExperimentOf): seeds of different experiments are never pooled.
	Experiment string
}

// Load reads the run directories found under paths. Each path is a run
// directory (it holds run.json) or any directory above run directories, which
// is searched recursively. A directory reached twice is loaded once. Runs are
// returned sorted by env, label, seed and directory. A run that cannot be
// read (a damaged file), and a seed of an env and method found a second
// time (in another directory), is skipped, with the reason in skipped. It is an
// error when no run.json is found, or no run can be read. The same seed of a
// method in two experiments (ExperimentOf) is two runs: the tables and plots
// keep experiments apart (PerExperiment, OneExperiment).
func Load(paths ...string) (runs []Run, skipped []error, err error) {
	seen := map[string]bool{}
	var dirs []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, nil, fmt.Errorf("report: %w", err)
		}
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || d.Name() != rundir.MetaFile {
				return nil
			}
			dir := filepath.Dir(path)
			key := dir
			if abs, err := filepath.Abs(dir); err == nil {
				key = abs
			}
			if !seen[key] {
				seen[key] = true
				dirs = append(dirs, dir)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("report: searching %s: %w", p, err)
		}
	}
	if len(dirs) == 0 {
		return nil, nil, fmt.Errorf("report: no run.json found under %s", strings.Join(paths, ", "))
	}
	for _, dir := range dirs {
		r, err := LoadRun(dir)
		if err != nil {
			skipped = append(skipped, fmt.Errorf("skipping %s: %w", dir, err))
			continue
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, skipped, fmt.Errorf("report: none of the %d runs under %s could be read: %w", len(dirs), strings.Join(paths, ", "), errors.Join(skipped...))
	}
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if a.Experiment != b.Experiment {
			return a.Experiment < b.Experiment
		}
		if a.Meta.Env != b.Meta.Env {
			return envLess(a.Meta.Env, b.Meta.Env)
		}
		if a.Meta.Label != b.Meta.Label {
			return labelLess(a.Meta.Label, b.Meta.Label)
		}
		if a.Meta.Seed != b.Meta.Seed {
			return a.Meta.Seed < b.Meta.Seed
		}
		return a.Dir < b.Dir
	})
	// The same seed of a method found twice in an experiment (two folders
	// holding copies of a run) would count twice in every mean and test:
	// the first is kept.
	kept := runs[:0]
	for i, r := range runs {
		if i > 0 && kept[len(kept)-1].Experiment == r.Experiment && kept[len(kept)-1].Meta.Env == r.Meta.Env && kept[len(kept)-1].Meta.Label == r.Meta.Label && kept[len(kept)-1].Meta.Seed == r.Meta.Seed {
			skipped = append(skipped, fmt.Errorf("skipping %s: seed %d of %s on %s appears twice; %s is counted", r.Dir, r.Meta.Seed, r.Meta.Label, r.Meta.Env, kept[len(kept)-1].Dir))
			continue
		}
		kept = append(kept, r)
	}
	return kept, skipped, nil
}

// checkPoints refuses a curve that no plot or table can trust: none of its
// points, a value that is not finite, or training episodes that go back.
func checkPoints(pts []rundir.Point) error {
	if len(pts) == 0 {
		return errors.New("no curve point (a run that had not logged yet)")
	}
	for i, p := range pts {
		switch {
		case i > 0 && (p.Episodes < pts[i-1].Episodes || p.Iter <= pts[i-1].Iter):
			return fmt.Errorf("point %d (iteration %d, %d episodes) goes back from iteration %d, %d episodes", i+1, p.Iter, p.Episodes, pts[i-1].Iter, pts[i-1].Episodes)
		case !finite(p.Reward) || !finite(p.BestEval) || (p.HasEval && (!finite(p.EvalMean) || !finite(p.EvalStd))):
			return fmt.Errorf("point %d (iteration %d) holds a value that is not finite", i+1, p.Iter)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// LoadRun reads one run directory, checked by rundir.ReadRun: run.json
// (required), result.json (optional) and curve.jsonl (an unfinished run's
// up to its last checkpoint).
func LoadRun(dir string) (Run, error) {
	r := Run{Dir: dir, Experiment: ExperimentOf(dir)}
	var err error
	if r.Meta, r.Curve, r.Result, err = rundir.ReadRun(dir); err != nil {
		return r, fmt.Errorf("report: %w", err)
	}
	if r.Meta.Label == "" {
		r.Meta.Label = DeriveLabel(r.Meta.Method, r.Meta.Step)
	}
	if r.Meta.Variant == "" {
		// Run directories are <out>/<env>/<variant>/seed<N>.
		r.Meta.Variant = filepath.Base(filepath.Dir(filepath.Clean(dir)))
	}
	if err := checkPoints(r.Curve); err != nil {
		return r, fmt.Errorf("report: %s: %w", filepath.Join(dir, rundir.CurveFile), err)
	}
	if r.Result != nil && (!r.Result.Reached || r.Result.EpisodesToThreshold != nil) {
		r.Reached = r.Result.Reached
		if r.Reached {
			r.EpisodesToThreshold = *r.Result.EpisodesToThreshold
		}
	} else {
		r.Reached, r.EpisodesToThreshold = rundir.ReachedFromCurve(r.Meta, r.Curve)
	}
	return r, nil
}

// DeriveLabel gives the display name used in the paper for a method and step
// rule: "STP fixed", "STP_IS adaptive", "ARS V2-t", ...
func DeriveLabel(method, step string) string {
	var name string
	switch strings.ToLower(method) {
	case "stp":
		name = "STP"
	case "stp_is":
		name = "STP_IS"
	case "ars":
		if step == "" {
			return "ARS V2-t"
		}
		name = "ARS"
	default:
		name = method
	}
	if step == "" {
		return name
	}
	return name + " " + step
}
