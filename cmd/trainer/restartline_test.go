package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// TestRestartLineNamesItsCheck: the restart line names the check that
// fired and its window (issue 53: a restart at 408 episodes by the early
// check, 100x0.07, was logged with the later check's numbers, "the last
// 150 episodes lasted under 0.125 of the horizon").
func TestRestartLineNamesItsCheck(t *testing.T) {
	rule := train.Restart{After: 300, Length: 0.125, Early: 100, EarlyLength: 0.07}
	for _, c := range []struct {
		check rundir.RestartCheck
		want  []string
		not   string
	}{
		{rundir.RestartCheck{Early: true, After: 100, Length: 0.07, From: 354, To: 408, Horizon: 1000, MeanLength: 41.3},
			[]string{"restart at 408 episodes: the early check (100x0.07)", "its last 54 episodes (355-408, since half the check) lasted 41 steps on average, under 0.07 of the horizon (70 of 1000)"}, "0.125"},
		{rundir.RestartCheck{After: 300, Length: 0.125, From: 160, To: 408, Horizon: 1000, MeanLength: 98},
			[]string{"the later check (300x0.125)", "its last 248 episodes (161-408"}, "0.07"},
	} {
		var buf bytes.Buffer
		restartLine(zerolog.New(&buf), rule, rundir.Point{Episodes: 408, Restarted: true, RestartCheck: c.check})
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		msg, _ := m["message"].(string)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q lacks %q", msg, w)
			}
		}
		if strings.Contains(msg, c.not) || m["early"] != c.check.Early || m["window_from"] != float64(c.check.From) {
			t.Errorf("%s", buf.String())
		}
	}
}

// The return check's line names it, its window and the level it fell
// under.
func TestRestartLineNamesTheReturnCheck(t *testing.T) {
	var buf bytes.Buffer
	c := rundir.RestartCheck{Return: true, After: 1000, Fraction: 0.3, Threshold: 3430, From: 496, To: 1008, MeanReturn: 812.4}
	restartLine(zerolog.New(&buf), train.Restart{}, rundir.Point{Episodes: 1008, Restarted: true, RestartCheck: c})
	for _, w := range []string{"the return check (1000x0.3)", "its last 512 training episodes (497-1008", "returned 812.4 on average, under 0.3 of the threshold (1029.0 of 3430)"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("%s lacks %q", buf.String(), w)
		}
	}
}
