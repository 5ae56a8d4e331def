package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The files of a run directory.
const (
	MetaFile       = "run.json"
	CurveFile      = "curve.jsonl"
	CheckpointFile = "checkpoint.json"
	ResultFile     = "result.json"
	PolicyFile     = "policy.json"
	BestFile       = "best_policy.json"
	NPZFile        = "lin_policy_plus.npz"
	BestNPZFile    = "best_lin_policy_plus.npz"
)

// Meta is run.json: what a run is.
type Meta struct {
	// Version is the version of the run files (Version); 0 in a run.json
	// written before seals and run identities, which is read as it is.
	Version int `json:"version,omitempty"`
	// RunID names the run, drawn at random when it is created: every other
	// sealed file of the run (result.json, checkpoint.json, the policy
	// files) carries it, so that a file of another run is refused.
	RunID string `json:"run_id,omitempty"`
	// Schema numbers the form of Config (train.ConfigSchema when the run
	// was created); a run.json written before the number existed has none.
	Schema int `json:"schema,omitempty"`
	// Env is the env as requested ("Hopper-v1"), ResolvedEnv the gymnasium
	// id that ran ("Hopper-v5"), Resolution why, Backend which of the
	// bridge's backends stepped it.
	Env         string `json:"env"`
	ResolvedEnv string `json:"resolved_env"`
	Resolution  string `json:"resolution,omitempty"`
	Backend     string `json:"backend,omitempty"`
	// Method is stp, stp_is or ars; Step the step rule ("" for ars); Label
	// the display name ("STP_IS adaptive").
	Method string `json:"method"`
	Step   string `json:"step"`
	Label  string `json:"label"`
	// Variant names the run's directory ("stp-combined-m16"); with Label
	// it is set when the run is created and never recomputed.
	Variant string `json:"variant,omitempty"`
	Seed    uint64 `json:"seed"`
	K       int    `json:"k"`
	// Threshold is the reward threshold; HasThreshold says whether there
	// is one (an older run.json without has_threshold counts a non-zero
	// threshold).
	Threshold    float64 `json:"threshold"`
	HasThreshold bool    `json:"has_threshold"`
	// Config and Info are the trainer's full configuration and the
	// bridge's description of the env, kept for the record.
	Config  json.RawMessage `json:"config,omitempty"`
	Info    json.RawMessage `json:"info,omitempty"`
	Created time.Time       `json:"created"`
	Args    []string        `json:"args,omitempty"`
	// SHA256 seals the file (package seal); ReadMeta checks it.
	SHA256 string `json:"sha256"`
}

// Result is result.json, written when a run ends.
type Result struct {
	// Version, RunID and Seed are those of the run's run.json (Meta): a
	// result of another run is refused. A result without a version was
	// written before seals.
	Version int    `json:"version,omitempty"`
	RunID   string `json:"run_id,omitempty"`
	Seed    uint64 `json:"seed,omitempty"`
	// EpisodesToThreshold is the training episodes used when an evaluation
	// first reached the threshold; nil when none did.
	EpisodesToThreshold *int    `json:"episodes_to_threshold"`
	Reached             bool    `json:"reached"`
	FinalEval           float64 `json:"final_eval"`
	BestEval            float64 `json:"best_eval"`
	Episodes            int     `json:"episodes"`
	EvalEpisodes        int     `json:"eval_episodes"`
	EnvSteps            int64   `json:"env_steps"`
	Iterations          int     `json:"iterations"`
	// Restarts is the number of attempts the run gave up (train.Restart).
	Restarts int `json:"restarts,omitempty"`
	// BackOffs is the number of times the run went back to its best
	// evaluated point (train.Guard).
	BackOffs int     `json:"back_offs,omitempty"`
	WallS    float64 `json:"wall_s"`
	CPUS     float64 `json:"cpu_s"`
	// CurveSHA256 is the SHA-256 of curve.jsonl as the run finished it:
	// readers of a finished run check its curve against it (CheckCurve).
	CurveSHA256 string `json:"curve_sha256,omitempty"`
	// SHA256 seals the file (package seal); ReadResult checks it.
	SHA256 string `json:"sha256"`
}

// Point is one iteration of a run: one line of curve.jsonl. Iteration 0 is
// the evaluation of the initial policy.
type Point struct {
	Iter     int   `json:"iter"`
	Episodes int   `json:"episodes"`
	EnvSteps int64 `json:"env_steps"`
	// Reward is the mean (unshifted) training return at the point the
	// iteration kept; RewardShifted the same with the alive bonus
	// subtracted (what the optimizer compares), where HasShifted says so:
	// not when the run does not shift, nor on a line without it
	// (iteration 0, runs before it).
	Reward        float64 `json:"reward"`
	RewardShifted float64 `json:"-"`
	HasShifted    bool    `json:"-"`
	BestEval      float64 `json:"best_eval"`
	// HasEval says that EvalMean and EvalStd hold an evaluation run on this
	// iteration.
	HasEval  bool    `json:"-"`
	EvalMean float64 `json:"-"`
	EvalStd  float64 `json:"-"`
	// ReachedAt is set (> 0) on the iteration where an evaluation first
	// reached the threshold: the training episodes used by then.
	ReachedAt int     `json:"threshold_reached_at,omitempty"`
	StepSize  float64 `json:"step_size"`
	PEntropy  float64 `json:"p_entropy"`
	NonFinite int     `json:"non_finite,omitempty"`
	// Accepted is the point an STP iteration kept: "plus", "minus" or
	// "center", or "combined" for a step along its directions; empty for
	// ARS.
	Accepted string `json:"accepted,omitempty"`
	// Restarted says the run gave up its attempt after this iteration and
	// starts afresh (train.Restart).
	Restarted bool `json:"restarted,omitempty"`
	// RestartCheck, where Restarted, is the check of the rule that gave the
	// attempt up (for the log line; the curve records only Restarted).
	RestartCheck RestartCheck `json:"-"`
	// BackedOff says the evaluation of this iteration fell below the
	// guard's level and x_k went back to the best evaluated point.
	BackedOff bool `json:"backed_off,omitempty"`
	// GuardEval, where BackedOff, is the evaluation the guard acted on (the
	// run's last at x_k); EvalMean is then the best point's, evaluated
	// afresh.
	GuardEval float64 `json:"guard_eval,omitempty"`
	// Standing, on iteration 0, says every episode of x_0's evaluation
	// lasted to the horizon (train.Problem.StandingShift).
	Standing bool `json:"standing,omitempty"`
	// Surrogate, on an evaluation's iteration of a run that uses a
	// surrogate, is what it knew over the iterations since the last
	// evaluation (train's surrogate diagnostic); nil otherwise.
	Surrogate *SurrogateDiag `json:"-"`
	// ElapsedS is the run's wall time so far (over all its invocations),
	// EpsPerS this invocation's training episodes per second.
	ElapsedS float64 `json:"elapsed_s"`
	EpsPerS  float64 `json:"eps_per_s"`
}

// RestartCheck is the restart rule's check that gave an attempt up: the
// attempt's training episodes in the window the check averaged, the run's
// episodes (From, To], lasted MeanLength steps on average, under Length of
// the horizon.
type RestartCheck struct {
	// Early says it was the rule's early check (100x0.07 in
	// 100x0.07,300x0.125), else its later one.
	Early bool
	// After and Length are the check's: due once the attempt has run After
	// episodes, it gives up an attempt whose episodes since After/2 last on
	// average under Length of the horizon.
	After  int
	Length float64
	// From and To bound the window, in the run's episodes; Horizon is
	// the episodes' horizon in steps.
	From, To, Horizon int
	MeanLength        float64
}

// line is a Point as written: the evaluation only when there is one, and
// non-finite floats as 0 (JSON has no NaN). jfloat also reads the strings
// that older curves (written by zerolog) hold for non-finite values.
type line struct {
	Iter      *int    `json:"iter"`
	Episodes  *int    `json:"episodes"`
	EnvSteps  int64   `json:"env_steps"`
	Reward    jfloat  `json:"reward"`
	Shifted   *jfloat `json:"reward_shifted,omitempty"`
	BestEval  jfloat  `json:"best_eval"`
	EvalMean  *jfloat `json:"eval_mean,omitempty"`
	EvalStd   *jfloat `json:"eval_std,omitempty"`
	ReachedAt int     `json:"threshold_reached_at,omitempty"`
	StepSize  jfloat  `json:"step_size"`
	PEntropy  jfloat  `json:"p_entropy"`
	NonFinite int     `json:"non_finite,omitempty"`
	Accepted  string  `json:"accepted,omitempty"`
	Restarted bool    `json:"restarted,omitempty"`
	BackedOff bool    `json:"backed_off,omitempty"`
	GuardEval *jfloat `json:"guard_eval,omitempty"`
	Standing  bool    `json:"standing,omitempty"`
	SurRank   *jfloat `json:"surrogate_rank,omitempty"`
	SurShare  *jfloat `json:"surrogate_share,omitempty"`
	SurRandom *jfloat `json:"surrogate_random_share,omitempty"`
	SurDim    int     `json:"surrogate_dim,omitempty"`
	ElapsedS  jfloat  `json:"elapsed_s"`
	EpsPerS   jfloat  `json:"eps_per_s"`
}

// MarshalJSON writes p as one curve line.
func (p Point) MarshalJSON() ([]byte, error) {
	l := line{Iter: &p.Iter, Episodes: &p.Episodes, EnvSteps: p.EnvSteps, Reward: jfloat(p.Reward), BestEval: jfloat(p.BestEval),
		ReachedAt: p.ReachedAt, StepSize: jfloat(p.StepSize), PEntropy: jfloat(p.PEntropy), NonFinite: p.NonFinite,
		Accepted: p.Accepted, Restarted: p.Restarted, BackedOff: p.BackedOff, Standing: p.Standing, ElapsedS: jfloat(p.ElapsedS), EpsPerS: jfloat(p.EpsPerS)}
	if p.HasShifted {
		v := jfloat(p.RewardShifted)
		l.Shifted = &v
	}
	if p.HasEval {
		m, s := jfloat(p.EvalMean), jfloat(p.EvalStd)
		l.EvalMean, l.EvalStd = &m, &s
	}
	if p.BackedOff {
		g := jfloat(p.GuardEval)
		l.GuardEval = &g
	}
	if d := p.Surrogate; d != nil {
		// A value that could not be measured is left out, not written as 0.
		opt := func(v float64) *jfloat {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil
			}
			f := jfloat(v)
			return &f
		}
		l.SurRank, l.SurShare, l.SurRandom, l.SurDim = opt(d.Rank), opt(d.Share), opt(d.RandomShare), d.Dim
	}
	return json.Marshal(l)
}

// UnmarshalJSON reads one curve line.
func (p *Point) UnmarshalJSON(b []byte) error {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	if l.Iter == nil && l.Episodes == nil {
		return errNotPoint
	}
	*p = Point{EnvSteps: l.EnvSteps, Reward: float64(l.Reward), BestEval: float64(l.BestEval), ReachedAt: l.ReachedAt,
		StepSize: float64(l.StepSize), PEntropy: float64(l.PEntropy), NonFinite: l.NonFinite, Accepted: l.Accepted,
		Restarted: l.Restarted, BackedOff: l.BackedOff, Standing: l.Standing, ElapsedS: float64(l.ElapsedS), EpsPerS: float64(l.EpsPerS)}
	if l.Shifted != nil {
		p.HasShifted, p.RewardShifted = true, float64(*l.Shifted)
	}
	if l.GuardEval != nil {
		p.GuardEval = float64(*l.GuardEval)
	}
	if l.Iter != nil {
		p.Iter = *l.Iter
	}
	if l.Episodes != nil {
		p.Episodes = *l.Episodes
	}
	if l.EvalMean != nil && !math.IsNaN(float64(*l.EvalMean)) {
		p.HasEval, p.EvalMean = true, float64(*l.EvalMean)
		if l.EvalStd != nil {
			p.EvalStd = float64(*l.EvalStd)
		}
	}
	if l.SurRank != nil || l.SurShare != nil {
		val := func(f *jfloat) float64 {
			if f == nil {
				return math.NaN()
			}
			return float64(*f)
		}
		p.Surrogate = &SurrogateDiag{Rank: val(l.SurRank), Share: val(l.SurShare), RandomShare: val(l.SurRandom), Dim: l.SurDim}
	}
	return nil
}

// errNotPoint marks a curve line that is another log record.
var errNotPoint = errors.New("not a curve point")

// jfloat is a float64 that JSON-encodes a non-finite value as 0 and
// decodes a number or the strings "NaN", "+Inf", "-Inf".
type jfloat float64

func (f jfloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

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

// ReadCurve reads dir's curve.jsonl; a missing file is an empty curve.
// Blank lines and other log records are skipped. A malformed last line is
// taken for a write cut short and skipped; a malformed line before it is an
// error naming the file and the line.
func ReadCurve(dir string) ([]Point, error) {
	path := filepath.Join(dir, CurveFile)
	b, err := readFile(path, maxCurveBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseCurve(path, b)
}

// parseCurve reads the points of b, the contents of the curve file path.
func parseCurve(path string, b []byte) ([]Point, error) {
	lines := bytes.Split(b, []byte("\n"))
	last := len(lines) - 1
	for last >= 0 && len(bytes.TrimSpace(lines[last])) == 0 {
		last--
	}
	var pts []Point
	for i := 0; i <= last; i++ {
		l := bytes.TrimSpace(lines[i])
		if len(l) == 0 {
			continue
		}
		var p Point
		err := json.Unmarshal(l, &p)
		switch {
		case errors.Is(err, errNotPoint):
			continue
		case err != nil && i == last:
			return pts, nil
		case err != nil:
			return nil, fmt.Errorf("rundir: %s:%d: %w", path, i+1, err)
		}
		pts = append(pts, p)
	}
	return pts, nil
}

// Exists says whether dir holds a run (its run.json).
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, MetaFile))
	return err == nil
}
