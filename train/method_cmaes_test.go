package train

import (
	"errors"
	"strings"
	"testing"

	"github.com/stpis/stpis/cmaes"
)

// A policy too large for a full covariance is refused in one line that
// names the limit and the env, as a configuration error.
func TestCMAESRefusesWhatItCannotHold(t *testing.T) {
	c, err := Preset(PresetTuned, "cmaes", "", "Humanoid-v1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewOptimizer(c, make([]float64, 17*348))
	if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "2048") || !strings.Contains(err.Error(), "Humanoid-v1") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want one line naming the limit 2048 and the env", err)
	}
	if _, err := NewOptimizer(c, make([]float64, cmaes.MaxDim)); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}

func TestCMAESValidates(t *testing.T) {
	for _, set := range [][2]string{{"sigma", "0"}, {"sigma", "-1"}, {"population", "1"}, {"population", "5000"}} {
		c, _ := Preset(PresetTuned, "cmaes", "", "Hopper-v1")
		if err := c.Set(set[0], set[1]); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), set[0]) {
			t.Errorf("%s %s: err = %v, want one naming %s", set[0], set[1], err, set[0])
		}
	}
}
