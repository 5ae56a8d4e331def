package rundir

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
)

// laterKeys are configuration keys that came after run files had versions
// (version 3, 2026-11-26 17:28): the restart rule's early check
// (restart.early, 22:49 the same day). A run.json that claims to predate
// versions (it has none) cannot hold them. The restart rule and the guide
// themselves came before versions: committed runs without a version hold
// them (results/rl, results/surrogate-diag).
var laterKeys = [][]string{{"restart", "early"}, {"restart", "early_length"}}

// checkPredates refuses a run.json without a version whose configuration
// holds a key that came later: its version was removed.
func checkPredates(path string, m Meta) error {
	if m.Version != 0 || len(m.Config) == 0 {
		return nil
	}
	var cfg any
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		return fmt.Errorf("rundir: %w: %s: field config: %w", ErrDamaged, path, err)
	}
	for _, key := range laterKeys {
		if has(cfg, key) {
			return fmt.Errorf("rundir: %w: %s: field version: missing, but its config holds %s, which came after versions: the version was removed", ErrDamaged, path, strings.Join(key, "."))
		}
	}
	return nil
}

// has says whether v holds the object key path.
func has(v any, path []string) bool {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

// sameFloat says whether a and b are the same value, allowing for a value
// rounded when it was written (older files were written by a logger).
func sameFloat(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// checkAgainstCurve refuses a result that its own curve contradicts: the
// best evaluation, whether the threshold was reached and the training
// episodes it took must follow from the curve's lines. A sealed result
// always does and is not checked again; one without a version (from before
// versions, or one whose version was removed) may have been edited.
func checkAgainstCurve(dir string, meta Meta, pts []Point, res *Result) error {
	if res == nil || res.Version != 0 || len(pts) == 0 {
		return nil
	}
	path := filepath.Join(dir, ResultFile)
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("rundir: %w: %s: field %s: %s, but %s says otherwise: the result was edited", ErrDamaged, path, field, fmt.Sprintf(format, a...), CurveFile)
	}
	last := pts[len(pts)-1]
	if !sameFloat(res.BestEval, last.BestEval) {
		return bad("best_eval", "%g where the curve's last line has %g", res.BestEval, last.BestEval)
	}
	best, evaluated := math.Inf(-1), false
	hasReachedAt := false
	for _, p := range pts {
		if p.HasEval {
			best, evaluated = math.Max(best, p.EvalMean), true
		}
		if p.BackedOff {
			best = math.Max(best, p.GuardEval)
		}
		hasReachedAt = hasReachedAt || p.ReachedAt > 0
	}
	if evaluated && res.BestEval > best && !sameFloat(res.BestEval, best) {
		return bad("best_eval", "%g is above every evaluation of the curve (best %g)", res.BestEval, best)
	}
	if res.Episodes != 0 && res.Episodes < last.Episodes {
		return bad("episodes", "%d is fewer than the curve's last line's %d", res.Episodes, last.Episodes)
	}
	if !res.Reached {
		if hasReachedAt {
			return bad("reached", "false where a line of the curve records the threshold reached")
		}
		return nil
	}
	if res.EpisodesToThreshold == nil {
		return nil // read as not reached (report.LoadRun)
	}
	ept := *res.EpisodesToThreshold
	if !meta.HasThreshold {
		return bad("reached", "true for a run without a threshold")
	}
	found, at := ReachedFromCurve(meta, pts)
	if !found && !evaluated {
		// A curve from before eval_mean: the first best_eval at the threshold.
		for _, p := range pts {
			if p.BestEval >= meta.Threshold {
				at, found = p.Episodes, true
				break
			}
		}
	}
	switch {
	case !found:
		return bad("reached", "true where no evaluation of the curve reaches the threshold %g", meta.Threshold)
	case at == ept:
		return nil
	case hasReachedAt:
		return bad("episodes_to_threshold", "%d where the curve records the threshold reached at %d", ept, at)
	}
	return bad("episodes_to_threshold", "%d where the curve's first evaluation at the threshold %g is at %d", ept, meta.Threshold, at)
}

// ReachedFromCurve says whether a run's curve reached its threshold and at
// how many training episodes: the first line that records it
// (threshold_reached_at), else, in a curve from before that field, the
// first evaluation at the threshold. A run without a threshold reached none.
func ReachedFromCurve(m Meta, pts []Point) (reached bool, episodes int) {
	for _, p := range pts {
		if p.ReachedAt > 0 {
			return true, p.ReachedAt
		}
	}
	if !m.HasThreshold {
		return false, 0
	}
	for _, p := range pts {
		if p.HasEval && p.EvalMean >= m.Threshold {
			return true, p.Episodes
		}
	}
	return false, 0
}
