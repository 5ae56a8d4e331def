package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/rundir"
)

// TestEvalPrintsJSONOffATerminal: off a terminal (a pipe, a file, here a
// buffer) `trainer eval` prints the one JSON line scripts read, with the
// same keys as before the terminal line existed.
func TestEvalPrintsJSONOffATerminal(t *testing.T) {
	run := t.TempDir()
	l, err := policy.NewLinear(2, 8, false)
	if err != nil {
		t.Fatal(err)
	}
	n, err := policy.NewNormalizer(8)
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.Marshal(policy.File{EnvID: "Swimmer-v1", Policy: l, Normalizer: n})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(run, rundir.BestFile)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := trainer(t, "eval", "--policy", run, "--episodes", "3", "--horizon", "20", "--bridge", bridgeAddr, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("eval: exit %d\n%s", code, stderr)
	}
	if strings.Count(stdout, "\n") != 1 || !strings.HasPrefix(stdout, `{"env":"Swimmer-v1","episodes":3,"mean":`) {
		t.Fatalf("eval printed %q: want one JSON line", stdout)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("eval printed %q: %v", stdout, err)
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"env", "episodes", "mean", "policy", "std"}) || got["policy"] != file {
		t.Errorf("eval JSON %v: want env, episodes, mean, policy (%s) and std", got, file)
	}
	if _, ok := got["mean"].(float64); !ok {
		t.Errorf("mean %v is not a number", got["mean"])
	}
}

// TestEvalLineOnATerminal: on a terminal the same result is one sentence.
func TestEvalLineOnATerminal(t *testing.T) {
	r := evalResult{Policy: "runs/s/best_policy.json", Env: "Swimmer-v1", Resolved: "Swimmer-v5", Episodes: 100, Seed: 0, Mean: 346.2549, Std: 2.31}
	var buf bytes.Buffer
	if err := r.write(&buf, true); err != nil {
		t.Fatal(err)
	}
	want := "runs/s/best_policy.json: mean return 346.3 ± 2.3 (std) over 100 episodes (seed 0) on Swimmer-v1 (gymnasium Swimmer-v5)\n"
	if buf.String() != want {
		t.Errorf("terminal line %q, want %q", buf.String(), want)
	}
	buf.Reset()
	if err := r.write(&buf, false); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\{"env":"Swimmer-v1","episodes":100,"mean":346.2549,"policy":"runs/s/best_policy.json","std":2.31\}\n$`).MatchString(buf.String()) {
		t.Errorf("JSON line %q", buf.String())
	}
}
