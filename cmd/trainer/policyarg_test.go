package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyFlagSaysWhatAPolicyIs: --policy naming a run's curve.jsonl or
// run.json gets one line saying which files are policies (issue 53: a raw
// JSON parse error), before any bridge starts, in eval and render alike.
func TestPolicyFlagSaysWhatAPolicyIs(t *testing.T) {
	dir := t.TempDir()
	curve := filepath.Join(dir, "curve.jsonl")
	if err := os.WriteFile(curve, []byte("{\"iter\":0,\"episodes\":0}\n{\"iter\":1,\"episodes\":8}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(dir, "run.json")
	if err := os.WriteFile(meta, []byte(`{"version":3,"env":"Hopper-v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"eval", "--policy", curve}, {"eval", "--policy", meta}, {"render", "--policy", curve, "-o", filepath.Join(dir, "x.gif")}} {
		code, _, stderr := trainer(t, args...)
		if code != exitFailure || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
			!strings.Contains(stderr, "is not a policy file: give") || !strings.Contains(stderr, "policy.json or best_policy.json") || strings.Contains(stderr, "invalid character") {
			t.Errorf("%v: exit %d:\n%s", args, code, stderr)
		}
	}
}
