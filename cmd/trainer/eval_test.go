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

// TestEvalBadPolicyFiles: a file that is there but is damaged, or does not
// fit its env, is a failure (exit 1) that names the field or the env; a
// path that is not there is a bad command line (exit 2).
func TestEvalBadPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, env string, m2 float64) string {
		doc := map[string]any{"version": 1, "env_id": env,
			"policy":     map[string]any{"rows": 3, "cols": 11, "w": make([]float64, 33)},
			"normalizer": map[string]any{"count": 5, "mean": make([]float64, 11), "m2": append([]float64{m2}, make([]float64, 10)...)}}
		b, _ := json.Marshal(doc)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{write("negm2.json", "Hopper-v1", -1), 1, "normalizer.m2[0] = -1"},
		{write("swimmer.json", "Swimmer-v1", 1), 1, "does not fit the env it was trained on, Swimmer-v5"},
		{filepath.Join(dir, "none.json"), 2, "no such file"},
	} {
		code, _, stderr := trainer(t, "eval", "--policy", c.path, "--episodes", "1", "--bridge", bridgeAddr, "--log-level", "warn")
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, want %d and %q:\n%s", c.path, code, c.code, c.want, stderr)
		}
	}
}
