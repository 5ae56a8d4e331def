package loop

import (
	"context"
	"strings"
	"testing"
)

// The standing shift replaces the shift in the training episodes of a run
// whose x_0 stands, and only there; the choice survives a checkpoint.
func TestStandingShift(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stand, on bool
		want      float64
	}{
		{"standing", true, true, 0},
		{"falling", false, true, 0.5},
		{"standing without the rule", true, false, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig("stp")
			cfg.Problem.HasStandingShift = tc.on
			q := &quadRoller{target: testTarget, truncate: tc.stand, terminate: !tc.stand}
			r, err := New(cfg, testInfo)
			if err != nil {
				t.Fatal(err)
			}
			pt, err := r.EvaluateInitial(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if pt.Standing != tc.stand || r.Progress().Standing != tc.stand {
				t.Fatalf("x_0 standing: point %v, counters %v, want %v", pt.Standing, r.Progress().Standing, tc.stand)
			}
			for range 3 {
				if _, err := r.Iterate(context.Background(), q); err != nil {
					t.Fatal(err)
				}
			}
			if q.shifts[tc.want] == 0 || len(q.shifts) != 1+btoi(tc.want != 0) {
				t.Fatalf("shifts asked for %v, want training episodes at %v (and evaluations at 0)", q.shifts, tc.want)
			}
			if c := roundTrip(t, r); c.Shift() != tc.want {
				t.Fatalf("restored run shifts by %v, want %v", c.Shift(), tc.want)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestStandingShiftKey(t *testing.T) {
	c := testConfig("stp")
	for in, want := range map[string]string{"0": "0", "0.25": "0.25", "none": "none"} {
		if err := c.Set("standing-shift", in); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, _ := c.Get("standing-shift"); got != want {
			t.Errorf("%s reads back as %s", in, got)
		}
	}
	for _, in := range []string{"nan", "inf", "stand"} {
		if err := c.Set("standing-shift", in); err == nil || !strings.Contains(err.Error(), "standing-shift") {
			t.Errorf("%s: %v, want an error naming standing-shift", in, err)
		}
	}
}
