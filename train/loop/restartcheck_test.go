package loop

import (
	"context"
	"testing"

	"github.com/stpis/stpis/rundir"
)

// TestRestartNamesItsCheck: a restart's point names the check that gave
// the attempt up, early or later, with its count and fraction, and the
// window it averaged: the attempt's episodes since half the check, all 2
// steps long of a horizon of 10 (issue 53: the log named the later check
// for a restart the early one made).
func TestRestartNamesItsCheck(t *testing.T) {
	for _, tc := range []struct {
		name        string
		earlyLength float64
		want        rundir.RestartCheck
	}{
		{"the early check", 0.5, rundir.RestartCheck{Early: true, After: 24, Length: 0.5}},
		{"the later check", 0.1, rundir.RestartCheck{After: 48, Length: 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := restartConfig()
			cfg.Restart.Early, cfg.Restart.EarlyLength = 24, tc.earlyLength
			r, err := New(cfg, testInfo)
			if err != nil {
				t.Fatal(err)
			}
			q := &quadRoller{target: testTarget, length: 2}
			start, restarts := 0, 0
			for !r.Done() {
				pt, err := r.Iterate(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				c := &pt.RestartCheck
				if pt.Restarted != (c.After > 0) {
					t.Fatalf("at %d episodes: restarted %v, check %+v", pt.Episodes, pt.Restarted, *c)
				}
				if !pt.Restarted {
					continue
				}
				restarts++
				if c.Early != tc.want.Early || c.After != tc.want.After || c.Length != tc.want.Length || c.Horizon != 10 || c.MeanLength != 2 ||
					c.To != pt.Episodes || c.From < start+c.After/2 || c.From >= c.To || pt.Episodes-start < c.After {
					t.Fatalf("restart at %d episodes (attempt from %d): %+v, want %+v over a window within the attempt", pt.Episodes, start, *c, tc.want)
				}
				start = pt.Episodes
			}
			if restarts == 0 {
				t.Fatal("no restart")
			}
		})
	}
}
