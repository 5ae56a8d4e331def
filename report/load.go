package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Meta holds the fields of a run's run.json that the report uses.
type Meta struct {
	Env          string  `json:"env"`          // env as requested, e.g. "Hopper-v1"
	ResolvedEnv  string  `json:"resolved_env"` // env actually run, e.g. "Hopper-v5"
	Method       string  `json:"method"`       // stp, stp_is or ars
	Step         string  `json:"step"`         // adaptive, fixed, or "" for ars
	Label        string  `json:"label"`        // display name; derived from Method+Step when absent
	Seed         int64   `json:"seed"`
	K            int     `json:"k"`
	Threshold    float64 `json:"threshold"`
	HasThreshold bool    `json:"has_threshold"`
}

// Point is one iteration of a run's learning curve (one curve.jsonl line).
type Point struct {
	Iter       int
	Episodes   int   // training episodes so far
	EnvSteps   int64 // environment steps so far
	Reward     float64
	BestEval   float64
	StepSize   float64
	PEntropy   float64
	ElapsedS   float64
	EpsPerS    float64
	HasEval    bool // an evaluation ran on this iteration
	EvalMean   float64
	EvalStd    float64
	HasReached bool // the threshold was first reached on this iteration
	ReachedAt  int  // episodes at which it was reached (threshold_reached_at)
}

// Result is a finished run's result.json.
type Result struct {
	EpisodesToThreshold *int    `json:"episodes_to_threshold"`
	Reached             bool    `json:"reached"`
	FinalEval           float64 `json:"final_eval"`
	Episodes            int     `json:"episodes"`
	Iterations          int     `json:"iterations"`
	WallS               float64 `json:"wall_s"`
}

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
}

// Load reads the run directories found under paths. Each path is a run
// directory (it holds run.json) or any directory above run directories, which
// is searched recursively. A directory reached twice is loaded once. Runs are
// returned sorted by env, label, seed and directory. It is an error when no
// run.json is found.
func Load(paths ...string) ([]Run, error) {
	seen := map[string]bool{}
	var dirs []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || d.Name() != "run.json" {
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
			return nil, fmt.Errorf("report: searching %s: %w", p, err)
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("report: no run.json found under %s", strings.Join(paths, ", "))
	}
	runs := make([]Run, 0, len(dirs))
	for _, dir := range dirs {
		r, err := LoadRun(dir)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
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
	return runs, nil
}

// LoadRun reads one run directory: run.json (required), curve.jsonl
// (optional; a run that has not logged yet has an empty curve) and
// result.json (optional).
func LoadRun(dir string) (Run, error) {
	r := Run{Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return r, fmt.Errorf("report: %w", err)
	}
	var raw struct {
		Meta
		HasThreshold *bool `json:"has_threshold"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return r, fmt.Errorf("report: %s: %w", filepath.Join(dir, "run.json"), err)
	}
	r.Meta = raw.Meta
	if raw.HasThreshold != nil {
		r.Meta.HasThreshold = *raw.HasThreshold
	} else {
		// Older run.json without has_threshold: a non-zero threshold counts.
		r.Meta.HasThreshold = r.Meta.Threshold != 0
	}
	if r.Meta.Label == "" {
		r.Meta.Label = DeriveLabel(r.Meta.Method, r.Meta.Step)
	}

	curvePath := filepath.Join(dir, "curve.jsonl")
	if b, err := os.ReadFile(curvePath); err == nil {
		if r.Curve, err = parseCurve(curvePath, b); err != nil {
			return r, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("report: %w", err)
	}

	resPath := filepath.Join(dir, "result.json")
	if b, err := os.ReadFile(resPath); err == nil {
		var res Result
		if err := json.Unmarshal(b, &res); err != nil {
			return r, fmt.Errorf("report: %s: %w", resPath, err)
		}
		r.Result = &res
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("report: %w", err)
	}

	if r.Result != nil && (!r.Result.Reached || r.Result.EpisodesToThreshold != nil) {
		r.Reached = r.Result.Reached
		if r.Reached {
			r.EpisodesToThreshold = *r.Result.EpisodesToThreshold
		}
	} else {
		r.Reached, r.EpisodesToThreshold = reachedFromCurve(r.Meta, r.Curve)
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

func reachedFromCurve(m Meta, curve []Point) (bool, int) {
	for _, p := range curve {
		if p.HasReached {
			return true, p.ReachedAt
		}
	}
	if !m.HasThreshold {
		return false, 0
	}
	for _, p := range curve {
		if p.HasEval && p.EvalMean >= m.Threshold {
			return true, p.Episodes
		}
	}
	return false, 0
}

// jfloat decodes a JSON number, or the strings zerolog writes for
// non-finite floats ("NaN", "+Inf", "-Inf").
type jfloat float64

func (f *jfloat) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("not a number: %q", s)
		}
		*f = jfloat(v)
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jfloat(v)
	return nil
}

type curveLine struct {
	Iter      *int    `json:"iter"`
	Episodes  *int    `json:"episodes"`
	EnvSteps  int64   `json:"env_steps"`
	Reward    jfloat  `json:"reward"`
	BestEval  jfloat  `json:"best_eval"`
	StepSize  jfloat  `json:"step_size"`
	PEntropy  jfloat  `json:"p_entropy"`
	ElapsedS  jfloat  `json:"elapsed_s"`
	EpsPerS   jfloat  `json:"eps_per_s"`
	EvalMean  *jfloat `json:"eval_mean"`
	EvalStd   jfloat  `json:"eval_std"`
	ReachedAt *int    `json:"threshold_reached_at"`
}

// parseCurve parses curve.jsonl. Blank lines and lines with neither iter nor
// episodes (other log messages) are skipped. A malformed last line is taken
// for a write cut short and skipped; a malformed line before it is an error
// naming the file and line.
func parseCurve(path string, b []byte) ([]Point, error) {
	lines := bytes.Split(b, []byte("\n"))
	last := len(lines) - 1
	for last >= 0 && len(bytes.TrimSpace(lines[last])) == 0 {
		last--
	}
	var pts []Point
	for i := 0; i <= last; i++ {
		line := bytes.TrimSpace(lines[i])
		if len(line) == 0 {
			continue
		}
		var c curveLine
		if err := json.Unmarshal(line, &c); err != nil {
			if i == last {
				break
			}
			return nil, fmt.Errorf("report: %s:%d: %w", path, i+1, err)
		}
		if c.Iter == nil && c.Episodes == nil {
			continue
		}
		p := Point{
			EnvSteps: c.EnvSteps,
			Reward:   float64(c.Reward),
			BestEval: float64(c.BestEval),
			StepSize: float64(c.StepSize),
			PEntropy: float64(c.PEntropy),
			ElapsedS: float64(c.ElapsedS),
			EpsPerS:  float64(c.EpsPerS),
			EvalStd:  float64(c.EvalStd),
		}
		if c.Iter != nil {
			p.Iter = *c.Iter
		}
		if c.Episodes != nil {
			p.Episodes = *c.Episodes
		}
		if c.EvalMean != nil && !math.IsNaN(float64(*c.EvalMean)) {
			p.HasEval = true
			p.EvalMean = float64(*c.EvalMean)
		}
		if c.ReachedAt != nil {
			p.HasReached = true
			p.ReachedAt = *c.ReachedAt
		}
		pts = append(pts, p)
	}
	return pts, nil
}
