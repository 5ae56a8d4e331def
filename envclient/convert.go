package envclient

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	envbridgev1 "github.com/stpis/stpis/proto/envbridge/v1"
)

// SpecError reports an invalid argument found on the client, before any RPC.
// Its gRPC status is INVALID_ARGUMENT, like the bridge's own validation, so
// status.Code(err) is the same wherever the problem was caught.
type SpecError struct {
	// Index is the episode's index in the batch, or -1 outside a batch.
	Index int
	// Field names the field, with an element index where there is one
	// ("W[7]", "Kwargs[\"ctrl_cost_weight\"]").
	Field string
	// Reason says what is wrong.
	Reason string
}

func (e *SpecError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("envclient: invalid %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("envclient: episode %d: invalid %s: %s", e.Index, e.Field, e.Reason)
}

// GRPCStatus makes status.Code(err) report codes.InvalidArgument.
func (e *SpecError) GRPCStatus() *status.Status {
	return status.New(codes.InvalidArgument, e.Error())
}

var (
	_ error                                    = (*SpecError)(nil)
	_ interface{ GRPCStatus() *status.Status } = (*SpecError)(nil)
)

// ErrProtocol is wrapped by errors for replies that break the envbridge.v1
// contract (a wrong number of results, inconsistent statistics).
var ErrProtocol = errors.New("envclient: bridge broke the protocol")

func kwargsToProto(kw Kwargs) (map[string]*envbridgev1.KwargValue, error) {
	return kwargsToProtoAt(-1, kw)
}

func kwargsToProtoAt(index int, kw Kwargs) (map[string]*envbridgev1.KwargValue, error) {
	if len(kw) == 0 {
		return nil, nil
	}
	out := make(map[string]*envbridgev1.KwargValue, len(kw))
	// Sorted so that the first bad key reported is always the same one.
	keys := make([]string, 0, len(kw))
	for k := range kw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" {
			return nil, &SpecError{Index: index, Field: "Kwargs", Reason: "empty key"}
		}
		var v *envbridgev1.KwargValue
		switch x := kw[k].(type) {
		case bool:
			v = &envbridgev1.KwargValue{Kind: &envbridgev1.KwargValue_BoolValue{BoolValue: x}}
		case int:
			v = &envbridgev1.KwargValue{Kind: &envbridgev1.KwargValue_IntValue{IntValue: int64(x)}}
		case int64:
			v = &envbridgev1.KwargValue{Kind: &envbridgev1.KwargValue_IntValue{IntValue: x}}
		case float64:
			v = &envbridgev1.KwargValue{Kind: &envbridgev1.KwargValue_DoubleValue{DoubleValue: x}}
		case string:
			v = &envbridgev1.KwargValue{Kind: &envbridgev1.KwargValue_StringValue{StringValue: x}}
		default:
			return nil, &SpecError{Index: index, Field: fmt.Sprintf("Kwargs[%s]", Quote(k)),
				Reason: fmt.Sprintf("type %T is not one of bool, int, int64, float64, string", x)}
		}
		out[k] = v
	}
	return out, nil
}

// echoLimit is how many bytes of a user value an error message repeats.
const echoLimit = 200

// Quote returns s quoted, cut to 200 bytes (saying how long it was): how
// an error echoes a value (an env id, a kwarg's name) that the user may
// have made very long.
func Quote(s string) string {
	if len(s) <= echoLimit {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:echoLimit], len(s))
}

// Check reports, as a SpecError for episode index (-1 outside a batch), the
// first way spec does not fit this env: a policy that is not ActDim × ObsDim,
// or a Horizon beyond MaxEpisodeSteps, which the env's time limit would cut
// short without a word (raise it with the max_episode_steps kwarg). A
// trainer checks its flags and a loaded policy with it before a run.
func (e EnvInfo) Check(index int, spec *EpisodeSpec) error {
	switch {
	case spec.Rows != e.ActDim:
		return &SpecError{Index: index, Field: "Rows", Reason: fmt.Sprintf("%d, but %s has a %d-dim action", spec.Rows, e.ResolvedID, e.ActDim)}
	case spec.Cols != e.ObsDim:
		return &SpecError{Index: index, Field: "Cols", Reason: fmt.Sprintf("%d, but %s has a %d-dim observation", spec.Cols, e.ResolvedID, e.ObsDim)}
	case e.Limits.MaxAbsShift > 0 && math.Abs(spec.Shift) > e.Limits.MaxAbsShift:
		return &SpecError{Index: index, Field: "Shift", Reason: fmt.Sprintf("%g exceeds the bridge's limit %g (its --max-abs-shift)", spec.Shift, e.Limits.MaxAbsShift)}
	case e.MaxEpisodeSteps > 0 && spec.Horizon > e.MaxEpisodeSteps:
		return &SpecError{Index: index, Field: "Horizon", Reason: fmt.Sprintf("%d exceeds the %d steps %s allows (its max_episode_steps; set that kwarg to run longer)",
			spec.Horizon, e.MaxEpisodeSteps, e.ResolvedID)}
	}
	return nil
}

func envInfoFromProto(r *envbridgev1.DescribeResponse) EnvInfo {
	return EnvInfo{
		RequestedID:      r.GetRequestedId(),
		ResolvedID:       r.GetResolvedId(),
		ResolutionReason: r.GetResolutionReason(),
		ObsDim:           int(r.GetObservationDim()),
		ActDim:           int(r.GetActionDim()),
		ActionLow:        append([]float64(nil), r.GetActionLow()...),
		ActionHigh:       append([]float64(nil), r.GetActionHigh()...),
		MaxEpisodeSteps:  int(r.GetMaxEpisodeSteps()),
		FrameSkip:        int(r.GetFrameSkip()),
		Dt:               r.GetDt(),
		Limits: BridgeLimits{
			MaxEpisodesPerCall: int(r.GetLimits().GetMaxEpisodesPerCall()),
			MaxHorizon:         int(r.GetLimits().GetMaxHorizon()),
			MaxWeights:         int64(r.GetLimits().GetMaxWeights()),
			MaxSimSteps:        int64(r.GetLimits().GetMaxSimSteps()),
			MaxAbsShift:        r.GetLimits().GetMaxAbsShift(),
			ObsStdFloor:        r.GetLimits().GetObsStdFloor(),
		},
		GymnasiumVersion: r.GetGymnasiumVersion(),
		MujocoVersion:    r.GetMujocoVersion(),
		Backend:          r.GetBackend(),
	}
}

// checkFinite returns a SpecError for the first NaN or Inf in xs.
func checkFinite(index int, field string, xs []float64) error {
	for j, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return &SpecError{Index: index, Field: fmt.Sprintf("%s[%d]", field, j), Reason: fmt.Sprintf("%v is not finite", x)}
		}
	}
	return nil
}

// validateSpec checks shapes and values that the client can check cheaply.
// The bridge validates again, with the env's real dimensions.
func validateSpec(i int, s *EpisodeSpec) error {
	switch {
	case s.EnvID == "":
		return &SpecError{Index: i, Field: "EnvID", Reason: "empty"}
	case s.Rows <= 0 || s.Rows > math.MaxUint32:
		return &SpecError{Index: i, Field: "Rows", Reason: fmt.Sprintf("%d is not a positive uint32", s.Rows)}
	case s.Cols <= 0 || s.Cols > math.MaxUint32:
		return &SpecError{Index: i, Field: "Cols", Reason: fmt.Sprintf("%d is not a positive uint32", s.Cols)}
	case len(s.W) != s.Rows*s.Cols:
		return &SpecError{Index: i, Field: "W", Reason: fmt.Sprintf("has %d entries, want Rows×Cols = %d×%d = %d", len(s.W), s.Rows, s.Cols, s.Rows*s.Cols)}
	case len(s.ObsMean) != s.Cols:
		return &SpecError{Index: i, Field: "ObsMean", Reason: fmt.Sprintf("has %d entries, want Cols = %d", len(s.ObsMean), s.Cols)}
	case len(s.ObsStd) != s.Cols:
		return &SpecError{Index: i, Field: "ObsStd", Reason: fmt.Sprintf("has %d entries, want Cols = %d", len(s.ObsStd), s.Cols)}
	case len(s.Bias) != 0 && len(s.Bias) != s.Rows:
		return &SpecError{Index: i, Field: "Bias", Reason: fmt.Sprintf("has %d entries, want 0 or Rows = %d", len(s.Bias), s.Rows)}
	case s.Horizon < 0 || s.Horizon > math.MaxUint32:
		return &SpecError{Index: i, Field: "Horizon", Reason: fmt.Sprintf("%d is not a uint32", s.Horizon)}
	case math.IsNaN(s.Shift) || math.IsInf(s.Shift, 0):
		return &SpecError{Index: i, Field: "Shift", Reason: fmt.Sprintf("%v is not finite", s.Shift)}
	}
	for _, f := range []struct {
		name string
		xs   []float64
	}{{"W", s.W}, {"ObsMean", s.ObsMean}, {"ObsStd", s.ObsStd}, {"Bias", s.Bias}} {
		if err := checkFinite(i, f.name, f.xs); err != nil {
			return err
		}
	}
	for j, x := range s.ObsStd {
		if x < 0 {
			return &SpecError{Index: i, Field: fmt.Sprintf("ObsStd[%d]", j), Reason: fmt.Sprintf("%v is negative", x)}
		}
	}
	return nil
}

// specToProto validates s and converts it. The float slices are shared with
// s, not copied: the message only lives until the RPC is sent.
func specToProto(i int, s *EpisodeSpec) (*envbridgev1.EpisodeSpec, error) {
	if err := validateSpec(i, s); err != nil {
		return nil, err
	}
	kw, err := kwargsToProtoAt(i, s.Kwargs)
	if err != nil {
		return nil, err
	}
	return &envbridgev1.EpisodeSpec{
		EnvId:  s.EnvID,
		Kwargs: kw,
		Policy: &envbridgev1.LinearPolicy{
			Rows:    uint32(s.Rows),
			Cols:    uint32(s.Cols),
			Weights: s.W,
			ObsMean: s.ObsMean,
			ObsStd:  s.ObsStd,
			Bias:    s.Bias,
		},
		Seed:    s.Seed,
		Horizon: uint32(s.Horizon),
		Shift:   s.Shift,
	}, nil
}

// specBytes estimates the encoded size of a spec: 8 bytes per float64 plus
// a generous allowance for tags, lengths, the env id and the kwargs.
func specBytes(s *EpisodeSpec) int {
	n := 8*(len(s.W)+len(s.ObsMean)+len(s.ObsStd)+len(s.Bias)) + len(s.EnvID) + 64
	for k, v := range s.Kwargs {
		n += len(k) + 16
		if str, ok := v.(string); ok {
			n += len(str)
		}
	}
	return n
}

// resultBytes estimates the encoded size of a result for a spec: the mean
// and M2 of Cols observation features, the scalars and a detail string.
func resultBytes(s *EpisodeSpec) int {
	return 16*s.Cols + 256
}

// resultFromProto converts and checks one result of the episode spec s.
func resultFromProto(s *EpisodeSpec, r *envbridgev1.EpisodeResult) (EpisodeResult, error) {
	st := r.GetObsStats()
	mean, m2 := st.GetMean(), st.GetM2()
	if len(mean) != len(m2) {
		return EpisodeResult{}, fmt.Errorf("%w: obs_stats has %d means and %d m2 entries", ErrProtocol, len(mean), len(m2))
	}
	if st.GetCount() > 0 && len(mean) != s.Cols {
		return EpisodeResult{}, fmt.Errorf("%w: obs_stats has %d features for a policy with %d columns", ErrProtocol, len(mean), s.Cols)
	}
	return EpisodeResult{
		Return:          r.GetTotalReturn(),
		ShiftedReturn:   r.GetShiftedReturn(),
		Length:          int(r.GetLength()),
		Terminated:      r.GetTerminated(),
		Truncated:       r.GetTruncated(),
		ObsCount:        st.GetCount(),
		ObsMean:         mean,
		ObsM2:           m2,
		NonFinite:       r.GetNonFinite(),
		NonFiniteDetail: r.GetNonFiniteDetail(),
	}, nil
}
