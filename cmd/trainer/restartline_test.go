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
