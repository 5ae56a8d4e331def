package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// TestSummarySaysWhichEvaluation: the end-of-run line says which
// evaluation the best and the final are (issue 53: a run that fell back
// to its best point reported a final, 146.9, above its best, 138.8), and
// its hint writes the plot beside the run, not into the working directory,
// quoted where the path needs it.
func TestSummarySaysWhichEvaluation(t *testing.T) {
	for _, c := range []struct {
		res  rundir.Result
		path string
		want []string
	}{
		{rundir.Result{BestEval: 3144.8, FinalEval: 3144.8}, "runs/Hopper-v1/stp-combined-guided/seed1",
			[]string{"best eval 3144.8 (the highest evaluation during training: best_policy.json)", "final eval 3144.8 (the last evaluation, of the point training ended on: policy.json)",
				" plot runs/Hopper-v1/stp-combined-guided/seed1 -o runs/Hopper-v1/stp-combined-guided/seed1/curve.png"}},
		{rundir.Result{BestEval: 138.8, FinalEval: 146.9, BackOffs: 1}, "my runs/x/seed1",
			[]string{"best eval 138.8 (the highest evaluation during training", "final eval 146.9 (the best point evaluated afresh, on other episodes, after the guard sent the run back to it",
				" plot 'my runs/x/seed1' -o 'my runs/x/seed1/curve.png'", "eval --policy 'my runs/x/seed1'"}},
	} {
		var log strings.Builder
		summarize(zerolog.New(&log), io.Discard, train.Config{Label: "STP"}, c.res, c.path)
		var m map[string]any
		if err := json.Unmarshal([]byte(log.String()), &m); err != nil {
			t.Fatal(err)
		}
		msg, _ := m["message"].(string)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q lacks %q", msg, w)
			}
		}
	}
	if q := shellQuote("it's here"); q != `'it'\''s here'` {
		t.Errorf("shellQuote: %s", q)
	}
}
