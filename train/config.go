package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/stpis/stpis/envclient"
)

// Config is one run's complete configuration: the problem, the limits,
// the method with its settings, and the run's name. Preset fills one from
// the preset table (presets.yaml); Set overrides one of its fields by the
// name of its flag.
type Config struct {
	// Preset is the preset the run started from: tuned or paper.
	Preset  string  `json:"preset"`
	Problem Problem `json:"problem"`
	Limits  Limits  `json:"limits"`
	// Method is the optimizer with its settings (*STPSettings, *ARSSettings).
	Method Method `json:"-"`
	// Restart is the rule that replaces an attempt still on the first
	// plateau by a fresh one (off when zero).
	Restart Restart `json:"restart,omitzero"`
	// Guard backs off to the best evaluated point when an evaluation falls
	// far below the initial one (off when zero).
	Guard Guard `json:"guard,omitzero"`
	// Name and Label name the run for good: they are set when the run is
	// created (Named) and never recomputed, so that a later change of a
	// preset renames no run. Name is its directory's variant
	// ("stp-combined-m16"), Label its display name ("STP combined, m=16").
	Name  string `json:"name,omitempty"`
	Label string `json:"label,omitempty"`
}

// Problem is what a run optimizes: the env, and how a point's value is
// measured from its episodes.
type Problem struct {
	// Env is a paper name (Hopper-v1) or a gymnasium id; Kwargs go to
	// gymnasium.make.
	Env    string           `json:"env"`
	Kwargs envclient.Kwargs `json:"kwargs,omitempty"`
	// Seed seeds everything random in the run.
	Seed uint64 `json:"seed"`
	// K is the number of episodes averaged per evaluated point.
	K int `json:"k"`
	// Shift is the alive-bonus shift subtracted per step from training
	// returns (never from evaluation returns).
	Shift float64 `json:"shift"`
	// StandingShift, when HasStandingShift, replaces Shift in a run whose
	// x_0 stands: every episode of its initial evaluation lasts to the
	// horizon (Progress.Standing). There a shift as large as the per-step
	// reward makes ending an episode early the cheapest way up.
	StandingShift    float64 `json:"standing_shift,omitempty"`
	HasStandingShift bool    `json:"has_standing_shift,omitempty"`
	// Horizon caps episode length; 0 is the env's limit.
	Horizon int     `json:"horizon"`
	ObsNorm ObsNorm `json:"obs_norm"`
	// CommonSeeds is which training episodes of an iteration share their
	// seeds (their start states).
	CommonSeeds Seeds `json:"common_seeds,omitempty"`
}

// TrainingShift is the per-step shift of training returns: StandingShift
// for a run whose x_0 stands, when the problem has one, else Shift.
func (p Problem) TrainingShift(standing bool) float64 {
	if standing && p.HasStandingShift {
		return p.StandingShift
	}
	return p.Shift
}

// ObsNorm is how the policy's observations are normalized.
type ObsNorm string

// The observation normalizations.
const (
	// Running standardizes observations by the running mean and std of the
	// training episodes' states (ARS V2).
	Running ObsNorm = "running"
	// None gives the policy raw observations (ARS V1).
	None ObsNorm = "none"
)

// Seeds is which training episodes of an iteration run on the same seeds.
type Seeds string

// The seed sharings.
const (
	// OwnSeeds gives every training episode its own seed (ARS's rollouts).
	OwnSeeds Seeds = ""
	// IterationSeeds gives the points of an iteration the same K seeds, so
	// that all of them are compared on the same start states (what the
	// three-point rule compares).
	IterationSeeds Seeds = "iteration"
	// PairSeeds gives the two points of each antithetic pair x ± σb the
	// same K seeds and each pair its own: f(x+σb) − f(x−σb) is taken on
	// one start state, and the step averages over as many start states as
	// pairs. The pairs are points 2i and 2i+1 of a batch, the order in
	// which every optimizer here proposes them.
	PairSeeds Seeds = "pair"
)

// String names the sharing as the flag takes it.
func (s Seeds) String() string {
	if s == OwnSeeds {
		return "none"
	}
	return string(s)
}

// ParseSeeds reads a sharing: none, iteration or pair.
func ParseSeeds(v string) (Seeds, error) {
	switch v {
	case "none":
		return OwnSeeds, nil
	case "iteration":
		return IterationSeeds, nil
	case "pair":
		return PairSeeds, nil
	}
	return OwnSeeds, bad("common-seeds", "%q is not one of none, iteration, pair", v)
}

// Limits are a run's budget, threshold and evaluation cadence.
type Limits struct {
	// MaxEpisodes caps the training episodes: an iteration that would
	// exceed it is not run.
	MaxEpisodes int `json:"max_episodes"`
	// Threshold is the reward threshold; HasThreshold says if there is one.
	Threshold    float64 `json:"threshold"`
	HasThreshold bool    `json:"has_threshold"`
	// StopAtThreshold ends the run at the first evaluation ≥ Threshold.
	StopAtThreshold bool `json:"stop_at_threshold"`
	// EvalEvery is the evaluation period in iterations. EvalSpacing, when
	// > 0, replaces it by a period in training episodes: the policy is
	// evaluated after the first iteration that crosses each multiple of
	// EvalSpacing, so that methods with iterations of different sizes are
	// measured at the same spacing. EvalEpisodes is the number of episodes
	// of an evaluation.
	EvalEvery    int `json:"eval_every"`
	EvalSpacing  int `json:"eval_spacing,omitempty"`
	EvalEpisodes int `json:"eval_episodes"`
}

// The presets: complete configurations for what the paper leaves open.
const (
	// PresetTuned is our measured choice (docs/design.md says why).
	PresetTuned = "tuned"
	// PresetPaper follows the paper literally where it speaks.
	PresetPaper = "paper"
)

// Step returns the step rule of an STP method, "" for a method without
// step rules.
func (c Config) Step() Step {
	if s, ok := c.Method.(stepped); ok {
		return s.step()
	}
	return ""
}

// MethodName returns the name of the run's method ("" when it has none).
func (c Config) MethodName() string {
	if c.Method == nil {
		return ""
	}
	return c.Method.Name()
}

// Clone returns a deep copy of c (the method's settings are a pointer).
func (c Config) Clone() Config {
	if c.Method != nil {
		c.Method = c.Method.clone()
	}
	return c
}

// configJSON is Config's form in run files: the method's name and its
// settings under "settings".
type configJSON struct {
	Preset   string          `json:"preset"`
	Method   string          `json:"method"`
	Problem  Problem         `json:"problem"`
	Limits   Limits          `json:"limits"`
	Settings json.RawMessage `json:"settings,omitempty"`
	Restart  Restart         `json:"restart,omitzero"`
	Guard    Guard           `json:"guard,omitzero"`
	Name     string          `json:"name,omitempty"`
	Label    string          `json:"label,omitempty"`
}

// MarshalJSON writes c with its method's name and settings.
func (c Config) MarshalJSON() ([]byte, error) {
	j := configJSON{Preset: c.Preset, Method: c.MethodName(), Problem: c.Problem, Limits: c.Limits, Restart: c.Restart, Guard: c.Guard, Name: c.Name, Label: c.Label}
	if c.Method != nil {
		b, err := json.Marshal(c.Method)
		if err != nil {
			return nil, fmt.Errorf("train: config: %w", err)
		}
		j.Settings = b
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; unknown fields are refused,
// so that a setting this build does not know is never silently dropped.
func (c *Config) UnmarshalJSON(b []byte) error {
	var j configJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("train: config: %w", err)
	}
	m, err := newMethod(j.Method)
	if err != nil {
		return err
	}
	if len(j.Settings) > 0 {
		dec := json.NewDecoder(bytes.NewReader(j.Settings))
		dec.DisallowUnknownFields()
		if err := dec.Decode(m); err != nil {
			return fmt.Errorf("train: config: settings of %s: %w", j.Method, err)
		}
	}
	*c = Config{Preset: j.Preset, Method: m, Problem: j.Problem, Limits: j.Limits, Restart: j.Restart, Guard: j.Guard, Name: j.Name, Label: j.Label}
	return nil
}

// ErrConfig wraps every configuration error.
var ErrConfig = errors.New("invalid config")

// FieldError is a configuration error of one field, named as its flag.
type FieldError struct{ Field, Reason string }

func (e *FieldError) Error() string { return ErrConfig.Error() + ": " + e.Field + ": " + e.Reason }

// Is makes every FieldError an ErrConfig.
func (e *FieldError) Is(target error) bool { return target == ErrConfig }

func bad(field, format string, a ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, a...)}
}

// finite reports whether v is a finite number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
