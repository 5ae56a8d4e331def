package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvThatCrashesItsWorkerIsTheEnvsFault: an env whose step ends its
// worker (os._exit(3)) is not retried as if the bridge were down: the
// second crash fails the run with exit 1 and a line that names the env and
// says it is the env's fault (issue 52 item 3).
func TestEnvThatCrashesItsWorkerIsTheEnvsFault(t *testing.T) {
	t.Setenv("PYTHONPATH", filepath.Join("..", "..", "bridge_py", "tests"))
	code, _, stderr := trainer(t, "--env", "user_envs:CrashStep-v0", "--max-episodes", "16", "--workers", "1", "--out", t.TempDir(), "--log-level", "error")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code != exitFailure || !strings.Contains(last, "user_envs:CrashStep-v0") || !strings.Contains(last, "the env's fault") || strings.Contains(stderr, "bridge unavailable") {
		t.Errorf("exit %d, want %d and a line naming the env and its fault:\n%s", code, exitFailure, stderr)
	}
}
