package envclient

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// EnvInfo describes one environment as the bridge makes it.
type EnvInfo struct {
	// RequestedID is the id as requested (Hopper-v1).
	RequestedID string
	// ResolvedID is the gymnasium id actually made (Hopper-v5).
	ResolvedID string
	// ResolutionReason says why RequestedID resolved to ResolvedID; empty
	// when they are equal.
	ResolutionReason string
	// ObsDim and ActDim are the observation and action dimensions: a linear
	// policy for this env has ActDim rows and ObsDim columns.
	ObsDim, ActDim int
	// ActionLow and ActionHigh are the action bounds, ActDim entries each.
	// A bound may be infinite (a Box(-inf, inf) action space): the bridge
	// does not clip an action where its bound is; JSON holds it as "-Inf"
	// or "+Inf" (Bounds).
	ActionLow, ActionHigh Bounds
	// MaxEpisodeSteps is the env's time limit.
	MaxEpisodeSteps int
	// FrameSkip is the number of physics steps per control step.
	FrameSkip int
	// Dt is the simulated time per control step, in seconds.
	Dt float64
	// Limits are the bridge's limits on requests; zero from a bridge that
	// predates them.
	Limits BridgeLimits
	// GymnasiumVersion and MujocoVersion are the bridge's library versions.
	GymnasiumVersion, MujocoVersion string
	// Backend is what runs this env's episodes on the bridge: "fast" (the
	// episodes of a call stepped in lockstep, bit-identical to gymnasium) or
	// "gymnasium" (the reference). Empty from a bridge that predates it.
	Backend string
}

// BridgeLimits are what a bridge allows in a request (its flags of the
// same names), and the constants of its episode semantics, as Describe
// reports them: clients read them instead of copying them.
type BridgeLimits struct {
	MaxEpisodesPerCall int
	MaxHorizon         int
	// MaxWeights bounds the entries of W per policy, MaxSimSteps the MuJoCo
	// steps of an episode (horizon × frame skip).
	MaxWeights, MaxSimSteps int64
	// MaxAbsShift bounds |shift|.
	MaxAbsShift float64
	// ObsStdFloor: an observation feature whose ObsStd is below it is
	// zeroed.
	ObsStdFloor float64
}

// EnvList is the set of envs a bridge can make.
type EnvList struct {
	// EnvIDs are the gymnasium ids, sorted.
	EnvIDs []string
	// Aliases maps paper ids to gymnasium ids (Hopper-v1 -> Hopper-v5).
	Aliases map[string]string
}

// Kwargs are keyword arguments for gymnasium.make. A value must be a bool,
// int, int64, float64 or string; any other type is an error naming the key.
type Kwargs map[string]any

// EpisodeSpec is one episode to run: an env, a linear policy and a seed.
//
// The policy computes action = clip(W · (obs − ObsMean) / ObsStd + Bias) to
// the action bounds; an ObsStd entry below 1e-7 zeroes that feature.
type EpisodeSpec struct {
	// EnvID is a gymnasium id (Hopper-v5) or a paper alias (Hopper-v1).
	EnvID string
	// Kwargs are passed to gymnasium.make; nil means none.
	Kwargs Kwargs
	// Rows is the action dimension and Cols the observation dimension.
	Rows, Cols int
	// W holds Rows × Cols weights, row-major.
	W []float64
	// ObsMean and ObsStd hold Cols entries each.
	ObsMean, ObsStd []float64
	// Bias holds Rows entries, or none for no bias.
	Bias []float64
	// Seed is passed to env.reset(seed=...). Episodes are deterministic
	// given their spec, which is what makes re-sending a chunk safe.
	Seed uint64
	// Horizon is the maximum number of steps; 0 means the env's limit.
	Horizon int
	// Shift is the alive-bonus shift: ShiftedReturn = Return − Shift × Length.
	Shift float64
}

// EpisodeResult is the outcome of one episode.
type EpisodeResult struct {
	// Return is the undiscounted sum of rewards.
	Return float64
	// ShiftedReturn is Return − Shift × Length.
	ShiftedReturn float64
	// Length is the number of steps taken.
	Length int
	// Terminated and Truncated are gymnasium's end-of-episode flags.
	Terminated, Truncated bool
	// ObsCount, ObsMean and ObsM2 are the statistics of the raw
	// observations the policy acted on (count, mean, and sum of squared
	// deviations per feature), for Chan's exact parallel merge.
	ObsCount uint64
	ObsMean  []float64
	ObsM2    []float64
	// NonFinite is true when the env produced a NaN or Inf; the episode
	// stopped there and its returns must not be averaged.
	NonFinite bool
	// NonFiniteDetail says what was non-finite and at which step.
	NonFiniteDetail string
}

// Bounds are action bounds. JSON has no infinity, so an infinite bound is
// written as the string "-Inf" or "+Inf" and read back from it; a finite
// one is a number, as before.
type Bounds []float64

// MarshalJSON writes b with its infinite entries as strings.
func (b Bounds) MarshalJSON() ([]byte, error) {
	if b == nil {
		return []byte("null"), nil
	}
	out := make([]any, len(b))
	for i, v := range b {
		switch {
		case math.IsNaN(v):
			return nil, fmt.Errorf("envclient: action bound %d is NaN", i)
		case math.IsInf(v, 1):
			out[i] = "+Inf"
		case math.IsInf(v, -1):
			out[i] = "-Inf"
		default:
			out[i] = v
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads numbers and the strings "-Inf" and "+Inf".
func (b *Bounds) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if raw == nil {
		*b = nil
		return nil
	}
	out := make(Bounds, len(raw))
	for i, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			if s != "-Inf" && s != "+Inf" {
				return fmt.Errorf("envclient: action bound %d: %q is neither a number nor -Inf or +Inf", i, s)
			}
			v, _ := strconv.ParseFloat(s, 64)
			out[i] = v
			continue
		}
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return fmt.Errorf("envclient: action bound %d: %w", i, err)
		}
	}
	*b = out
	return nil
}
