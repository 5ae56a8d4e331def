package train

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/stpis/stpis/envclient"
)

// The forms of a run's configuration in run.json, by the schema number
// run.json carries (rundir.Meta.Schema). A run.json written before the
// number existed has none: ReadRunConfig tells its form by its shape.
const (
	// SchemaFlat is the first form (before commit c664f3a): one flat
	// object of every setting, env and seed among them.
	SchemaFlat = 1
	// SchemaBlocks is the second (c664f3a to d4659ac): problem and limits,
	// then an "stp" and an "ars" block, both always written.
	SchemaBlocks = 2
	// SchemaSettings is today's (d4659ac on): the method's name and its
	// own settings (Config.MarshalJSON).
	SchemaSettings = 3
	// ConfigSchema is the form this build writes.
	ConfigSchema = SchemaSettings
)

// ReadRunConfig reads the configuration of a run.json in the given form
// (0: unknown, told by its shape) as today's Config, with its name and
// label as today's presets give them (Named): equal settings give equal
// names, whatever the run's directory was called when it ran. A setting
// of an older form that today's build no longer has is accepted only at
// the one value today's build runs with; any other value is an error
// naming it, so that no run reads as something it was not.
func ReadRunConfig(schema int, b []byte) (Config, error) {
	if schema == 0 {
		schema = configSchemaOf(b)
	}
	var c Config
	var err error
	switch schema {
	case SchemaFlat:
		c, err = readFlat(b)
	case SchemaBlocks:
		c, err = readBlocks(b)
	case SchemaSettings:
		err = json.Unmarshal(b, &c)
	default:
		return Config{}, fmt.Errorf("train: run.json schema %d: this build reads schemas %d to %d", schema, SchemaFlat, ConfigSchema)
	}
	if err != nil {
		return Config{}, err
	}
	c.Name, c.Label = "", ""
	return c.Named(), nil
}

// configSchemaOf tells the form of a configuration without a schema
// number: the flat form has its env at the top, the blocks form an "stp"
// or "ars" block.
func configSchemaOf(b []byte) int {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return SchemaSettings // let the decoder say what is wrong
	}
	if _, ok := top["env"]; ok {
		return SchemaFlat
	}
	_, stp := top["stp"]
	_, ars := top["ars"]
	if stp || ars {
		return SchemaBlocks
	}
	return SchemaSettings
}

// oldSeeds is common_seeds as the older forms wrote it: true or false
// (iteration or none, when the setting was a switch), or a sharing's name.
type oldSeeds struct{ Seeds }

func (s *oldSeeds) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		s.Seeds = IterationSeeds
		return nil
	case "false":
		s.Seeds = OwnSeeds
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("train: common_seeds: %w", err)
	}
	if v == "" {
		s.Seeds = OwnSeeds
		return nil
	}
	parsed, err := ParseSeeds(v)
	s.Seeds = parsed
	return err
}

// oldSTP is the STP settings of the older forms, with the knobs since
// dropped (the pointers: absent from some files).
type oldSTP struct {
	Step           Step      `json:"step"`
	Alpha0         float64   `json:"alpha0"`
	Epsilon        float64   `json:"epsilon"`
	Directions     int       `json:"directions"`
	Top            int       `json:"top"`
	Noise          float64   `json:"noise"`
	Rate           float64   `json:"rate"`
	Basis          Basis     `json:"basis"`
	NormalizeBasis bool      `json:"normalize_basis"`
	Width          int       `json:"width"`
	SurrogateSteps int       `json:"surrogate_steps"`
	Lipschitz      Lipschitz `json:"lipschitz"`
	Mixing         float64   `json:"mixing"`
	MinHistory     *int      `json:"min_history"`
	RefreshEvery   *int      `json:"refresh_every"`
	Remeasure      *bool     `json:"remeasure"`
	AverageCenter  *bool     `json:"average_center"`
}

// oldARS is ars.Settings as the older forms wrote it (Go's field names).
type oldARS struct {
	StepSize   float64
	Directions int
	Top        int
	Noise      float64
	Seed       uint64
}

// oldProblem is Problem with the older common_seeds.
type oldProblem struct {
	Problem
	CommonSeeds oldSeeds `json:"common_seeds"`
}

// readBlocks reads the second form.
func readBlocks(b []byte) (Config, error) {
	var j struct {
		Preset  string     `json:"preset"`
		Method  string     `json:"method"`
		Problem oldProblem `json:"problem"`
		Limits  Limits     `json:"limits"`
		STP     oldSTP     `json:"stp"`
		ARS     oldARS     `json:"ars"`
		Restart Restart    `json:"restart"`
	}
	if err := strictJSON(b, &j); err != nil {
		return Config{}, fmt.Errorf("train: run.json schema %d: %w", SchemaBlocks, err)
	}
	p := j.Problem.Problem
	p.CommonSeeds = j.Problem.CommonSeeds.Seeds
	return oldConfig(SchemaBlocks, j.Preset, j.Method, p, j.Limits, j.STP, j.ARS, j.Restart)
}

// readFlat reads the first form.
func readFlat(b []byte) (Config, error) {
	var j struct {
		Preset          string           `json:"preset"`
		Method          string           `json:"method"`
		Env             string           `json:"env"`
		Kwargs          envclient.Kwargs `json:"kwargs"`
		Seed            uint64           `json:"seed"`
		K               int              `json:"k"`
		Shift           float64          `json:"shift"`
		Horizon         int              `json:"horizon"`
		ObsNorm         ObsNorm          `json:"obs_norm"`
		CommonSeeds     oldSeeds         `json:"common_seeds"`
		MaxEpisodes     int              `json:"max_episodes"`
		Threshold       float64          `json:"threshold"`
		HasThreshold    bool             `json:"has_threshold"`
		StopAtThreshold bool             `json:"stop_at_threshold"`
		EvalEvery       int              `json:"eval_every"`
		EvalEpisodes    int              `json:"eval_episodes"`
		oldSTP
		ARS oldARS `json:"ars"`
	}
	if err := strictJSON(b, &j); err != nil {
		return Config{}, fmt.Errorf("train: run.json schema %d: %w", SchemaFlat, err)
	}
	p := Problem{Env: j.Env, Kwargs: j.Kwargs, Seed: j.Seed, K: j.K, Shift: j.Shift, Horizon: j.Horizon, ObsNorm: j.ObsNorm, CommonSeeds: j.CommonSeeds.Seeds}
	l := Limits{MaxEpisodes: j.MaxEpisodes, Threshold: j.Threshold, HasThreshold: j.HasThreshold, StopAtThreshold: j.StopAtThreshold, EvalEvery: j.EvalEvery, EvalEpisodes: j.EvalEpisodes}
	return oldConfig(SchemaFlat, j.Preset, j.Method, p, l, j.oldSTP, j.ARS, Restart{})
}

// oldConfig builds today's Config from an older form's parts. The older
// forms wrote both methods' settings whatever the method; only the run's
// own are read.
func oldConfig(schema int, preset, method string, p Problem, l Limits, s oldSTP, a oldARS, rs Restart) (Config, error) {
	m, err := newMethod(method)
	if err != nil {
		return Config{}, fmt.Errorf("train: run.json schema %d: %w", schema, err)
	}
	old, ok := m.(oldReader)
	if !ok {
		return Config{}, fmt.Errorf("train: run.json schema %d: method %s did not exist then", schema, method)
	}
	if err := old.fromOld(schema, s, a); err != nil {
		return Config{}, err
	}
	return Config{Preset: preset, Method: m, Problem: p, Limits: l, Restart: rs}, nil
}

// oldReader is a method that older forms of run.json held: it takes its
// settings from their blocks (its own file says how).
type oldReader interface {
	fromOld(schema int, s oldSTP, a oldARS) error
}

// check refuses the older STP knobs at any value but the one today's
// build runs with.
func (s oldSTP) check(schema int) error {
	switch {
	case s.Step == Fixed && s.Epsilon != 0:
		return dropped(schema, "epsilon", s.Epsilon, "0 (0.05·n, today's rate 0.05): another ε needs the policy's size n to become a rate ε/n")
	case s.Width != 0:
		return dropped(schema, "width", s.Width, "0 (the paper's width by policy size)")
	case s.Mixing != 0:
		return dropped(schema, "mixing", s.Mixing, "0")
	case s.MinHistory != nil && *s.MinHistory != minHistory:
		return dropped(schema, "min_history", *s.MinHistory, minHistory)
	case s.RefreshEvery != nil && *s.RefreshEvery != 1:
		return dropped(schema, "refresh_every", *s.RefreshEvery, 1)
	case s.Remeasure != nil && !*s.Remeasure:
		return dropped(schema, "remeasure", false, true)
	case s.AverageCenter != nil && *s.AverageCenter:
		return dropped(schema, "average_center", true, false)
	}
	return nil
}

func dropped(schema int, field string, got, only any) error {
	return fmt.Errorf("train: run.json schema %d: %s is %v: today's build has no such setting and runs as %v only", schema, field, got, only)
}

// strictJSON decodes b into v, refusing fields v does not have.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
