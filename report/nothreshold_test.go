package report

import (
	"strings"
	"testing"
)

// TestNoThresholdIsNotNA: the cell of runs without a threshold (Walker2d's
// default) says "no threshold", in --paper's table and the plain one;
// "N/A" stays for runs that had one and never reached it (issue 53).
func TestNoThresholdIsNotNA(t *testing.T) {
	var runs []Run
	for range 2 {
		walker := Run{}
		walker.Meta.Env, walker.Meta.Label = "Walker2d-v1", "STP combined"
		swimmer := Run{}
		swimmer.Meta.Env, swimmer.Meta.Label, swimmer.Meta.HasThreshold, swimmer.Meta.Threshold = "Swimmer-v1", "STP fixed", true, 325
		runs = append(runs, walker, swimmer)
	}
	defaults := map[string]string{"Walker2d-v1": "STP combined"}
	for _, paper := range []bool{true, false} {
		md, err := Table(runs, TableOptions{Paper: paper, Default: defaults})
		if err != nil {
			t.Fatal(err)
		}
		var walker, swimmer string
		for _, l := range strings.Split(md, "\n") {
			switch {
			case strings.HasPrefix(l, "| Walker2d-v1"):
				walker = l
			case strings.HasPrefix(l, "| Swimmer-v1"):
				swimmer = l
			}
		}
		if !strings.Contains(walker, "no threshold (2 seeds)") || strings.Contains(walker, "N/A") {
			t.Errorf("paper %v: Walker2d's row %q", paper, walker)
		}
		if !strings.Contains(swimmer, "N/A (0/2)") {
			t.Errorf("paper %v: Swimmer's row %q", paper, swimmer)
		}
		if !strings.Contains(md, "no threshold: the runs had none") {
			t.Errorf("paper %v: the footnote does not say what no threshold means:\n%s", paper, md)
		}
	}
}
