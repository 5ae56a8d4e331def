package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

const hc = "../../results/cmaes-dev/runs/HalfCheetah-v1/"

// TestPowerOnCommittedRuns: on HalfCheetah's committed development runs the
// arm's log-rank p and hazard ratio are those of its seeds against the
// control's, and the power grows with the hazard ratio.
func TestPowerOnCommittedRuns(t *testing.T) {
	var buf bytes.Buffer
	if err := run([]string{"-seeds", "101-140", "-n", "40", "-hr", "1,2", "-sims", "400", hc + "stp-combined", hc + "cmaes"}, &buf); err != nil {
		t.Fatal(err)
	}
	var out output
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("%v in %s", err, buf.String())
	}
	if out.Seeds != 40 || out.Reached != 31 || len(out.Arms) != 1 {
		t.Fatalf("control %d seeds, %d reached, %d arms: want 40, 31 (results/cmaes-dev), 1", out.Seeds, out.Reached, len(out.Arms))
	}
	a := out.Arms[0]
	if a.Seeds != 40 || a.Reached != 26 || a.LogRankP == nil || math.Abs(*a.LogRankP-0.63) > 0.005 || a.HazardRatio == nil || !(*a.HazardRatio < 1) {
		t.Errorf("arm %+v: want 26/40 reached, log-rank p 0.63 (docs/experiments.md), hazard ratio below 1", a)
	}
	if p1, p2 := out.Power["40"]["1"], out.Power["40"]["2"]; !(p1 < 0.15 && p2 > 0.6) {
		t.Errorf("power at 40 seeds: %.3f at ratio 1, %.3f at 2: want under 0.15 and over 0.6", p1, p2)
	}
}

// TestPowerRefusesBadInput: each bad argument is named.
func TestPowerRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "want a control arm's run folder"},
		{[]string{"-seeds", "140-101", hc + "cmaes"}, "-seeds \"140-101\": want FIRST-LAST"},
		{[]string{"-n", "20,x", hc + "cmaes"}, "-n \"20,x\""},
		{[]string{"-hr", "", hc + "cmaes"}, "-hr \"\""},
		{[]string{"-n", "1", hc + "cmaes"}, "seeds 1, want at least 2"},
		{[]string{"-seeds", "1-20", hc + "cmaes"}, "no run of the seeds asked"},
		{[]string{hc}, "seed 101 twice"},
	} {
		err := run(c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}
