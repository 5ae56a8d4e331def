package train

import (
	"math"
	"strings"
	"testing"
)

// The older forms of run.json's config, as the committed runs have them
// (trimmed to what the readers need).
const (
	flatForm = `{"preset":"tuned","method":"stp_is","env":"Swimmer-v1","seed":3,"k":1,"shift":0,"horizon":0,
		"obs_norm":"none","common_seeds":true,"max_episodes":600,"threshold":325,"has_threshold":true,
		"stop_at_threshold":true,"eval_every":5,"eval_episodes":10,"step":"adaptive","alpha0":2,"epsilon":0,
		"basis":"gaussian","normalize_basis":true,"width":0,"surrogate_steps":10,"lipschitz":"global","mixing":0,
		"min_history":32,"refresh_every":1,"remeasure":true,"average_center":false,
		"ars":{"StepSize":0,"Directions":0,"Top":0,"Noise":0,"Seed":0}}`
	blocksForm = `{"preset":"tuned","method":"stp","problem":{"env":"Hopper-v1","seed":1,"k":1,"shift":1,"horizon":0,
		"obs_norm":"running","common_seeds":"iteration"},"limits":{"max_episodes":4000,"threshold":3120,
		"has_threshold":true,"stop_at_threshold":false,"eval_every":5,"eval_spacing":40,"eval_episodes":10},
		"stp":{"step":"combined","alpha0":0.3,"epsilon":0,"directions":4,"top":2,"noise":0.025,"rate":0.01,
		"basis":"orthogonal","normalize_basis":true,"width":0,"surrogate_steps":10,"lipschitz":"global","mixing":0},
		"ars":{"StepSize":0,"Directions":0,"Top":0,"Noise":0,"Seed":0},"restart":{"after":300,"length":0.125}}`
)

func TestReadRunConfigReadsEveryForm(t *testing.T) {
	c, err := ReadRunConfig(0, []byte(flatForm))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := c.Method.(*STPSettings)
	if !ok || !s.IS || s.Step != Adaptive || s.Rate != 2 || s.Directions != 1 || s.Basis != Gaussian || s.SurrogateSteps != 10 {
		t.Errorf("flat form: method %+v", c.Method)
	}
	if p := c.Problem; p.Env != "Swimmer-v1" || p.Seed != 3 || p.CommonSeeds != IterationSeeds || p.ObsNorm != None {
		t.Errorf("flat form: problem %+v", p)
	}
	if c.Limits.MaxEpisodes != 600 || c.Name == "" || c.Label == "" {
		t.Errorf("flat form: limits %+v, name %q label %q", c.Limits, c.Name, c.Label)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("flat form: %v", err)
	}

	c, err = ReadRunConfig(0, []byte(blocksForm))
	if err != nil {
		t.Fatal(err)
	}
	s, ok = c.Method.(*STPSettings)
	if !ok || s.IS || s.Step != Combined || s.Rate != 0.01/math.Sqrt(2) || s.Top != 2 || s.Noise != 0.025 || s.SurrogateSteps != 0 {
		t.Errorf("blocks form: method %+v", c.Method)
	}
	if c.Restart != (Restart{After: 300, Length: 0.125}) || c.Limits.EvalSpacing != 40 || c.Problem.CommonSeeds != IterationSeeds {
		t.Errorf("blocks form: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("blocks form: %v", err)
	}

	// Today's form reads back what it writes, with today's names.
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadRunConfig(ConfigSchema, b)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := d.MarshalJSON(); string(e) != string(b) {
		t.Errorf("today's form does not read back:\n%s\n%s", e, b)
	}
}

// A knob since dropped reads only at the value today's build runs with;
// a field no form has, or a schema this build does not know, is refused.
func TestReadRunConfigRefuses(t *testing.T) {
	for _, tc := range []struct {
		schema     int
		json, want string
	}{
		{0, strings.Replace(blocksForm, `"width":0`, `"width":64`, 1), "width is 64"},
		{0, strings.Replace(flatForm, `"mixing":0`, `"mixing":0.1`, 1), "mixing is 0.1"},
		{0, strings.Replace(flatForm, `"min_history":32`, `"min_history":8`, 1), "min_history is 8"},
		{0, strings.Replace(flatForm, `"average_center":false`, `"average_center":true`, 1), "average_center is true"},
		{0, strings.Replace(flatForm, `"alpha0":2`, `"alpha0":2,"momentum":0.9`, 1), `unknown field "momentum"`},
		{0, strings.Replace(blocksForm, `"Seed":0}`, `"Seed":7}`, 1), ""},
		{9, blocksForm, "schema 9"},
	} {
		_, err := ReadRunConfig(tc.schema, []byte(tc.json))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("want %q read (the ars block of an stp run is not its own), got %v", tc.want, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("want an error with %q, got %v", tc.want, err)
		}
	}
}
