package train

import (
	"strings"
	"testing"
)

// Momentum is a β in [0, 1): 1 would never forget a step.
func TestMomentumValidates(t *testing.T) {
	for _, v := range []string{"1", "-0.1", "1.5"} {
		c, _ := Preset(PresetTuned, "stp", Combined, "HalfCheetah-v1")
		if err := c.Set("momentum", v); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "momentum") || !strings.Contains(err.Error(), "[0, 1)") {
			t.Errorf("momentum %s: err = %v, want one naming momentum and its range", v, err)
		}
	}
}
