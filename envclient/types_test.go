package envclient

import (
	"encoding/json"
	"math"
	"testing"
)

// TestBoundsJSON: infinite action bounds go through JSON as "-Inf" and
// "+Inf" and come back; finite ones stay numbers; other strings are refused.
func TestBoundsJSON(t *testing.T) {
	in := EnvInfo{ActionLow: Bounds{math.Inf(-1), -1}, ActionHigh: Bounds{math.Inf(1), 1.5}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back EnvInfo
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(back.ActionLow[0], -1) || back.ActionLow[1] != -1 || !math.IsInf(back.ActionHigh[0], 1) || back.ActionHigh[1] != 1.5 {
		t.Errorf("%s -> %+v", b, back)
	}
	if err := json.Unmarshal([]byte(`{"ActionLow":["big"]}`), &back); err == nil {
		t.Error(`a bound "big" was read`)
	}
	if _, err := json.Marshal(Bounds{math.NaN()}); err == nil {
		t.Error("a NaN bound was written")
	}
}
