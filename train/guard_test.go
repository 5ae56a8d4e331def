package train

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseGuard(t *testing.T) {
	for in, want := range map[string]Guard{"none": {}, "0": {On: true}, "0.5": {On: true, Drop: 0.5}} {
		g, err := ParseGuard(in)
		if err != nil || g != want || (g.On && g.String() != in) {
			t.Errorf("%s: %+v, %v", in, g, err)
		}
	}
	for _, in := range []string{"-1", "nan", "11", "half"} {
		if _, err := ParseGuard(in); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

func TestSeedsJSON(t *testing.T) {
	for in, want := range map[string]Seeds{`"pair"`: PairSeeds, `"iteration"`: IterationSeeds, `""`: OwnSeeds} {
		var s Seeds
		if err := json.Unmarshal([]byte(in), &s); err != nil || s != want {
			t.Errorf("%s: got %q, %v; want %q", in, s, err, want)
		}
	}
	c, err := Preset(PresetTuned, "stp", Adaptive, "Quad-v0")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`"all"`), &c.Problem.CommonSeeds); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "common-seeds") {
		t.Errorf(`"all": err = %v`, err)
	}
	b, err := json.Marshal(Problem{Env: "Quad-v0", CommonSeeds: PairSeeds})
	if err != nil || !strings.Contains(string(b), `"common_seeds":"pair"`) {
		t.Errorf("marshal: %s, %v", b, err)
	}
}
