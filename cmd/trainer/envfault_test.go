package main

import (
	"os"
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

// TestUnboundedActionSpaceTrains: a Box(-inf, inf, (1,)) action space
// trains (its actions are not clipped), checkpoints, resumes and
// evaluates, where it failed with "json: unsupported value: -Inf"
// (issue 52 item 4).
func TestUnboundedActionSpaceTrains(t *testing.T) {
	t.Setenv("PYTHONPATH", filepath.Join("..", "..", "bridge_py", "tests"))
	out := t.TempDir()
	args := []string{"--env", "user_envs:Unbounded-v0", "--max-episodes", "32", "--workers", "1", "--out", out, "--log-level", "error"}
	if code, _, stderr := trainer(t, append(args, "--stop-after", "1")...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if code, _, stderr := trainer(t, append(args, "--resume")...); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	run := filepath.Join(out, "user_envs_Unbounded-v0", "stp-combined", "seed1")
	if res := readResult(t, run); res.Episodes != 32 {
		t.Errorf("result %+v", res)
	}
	if code, _, stderr := trainer(t, "eval", "--policy", run, "--episodes", "2", "--workers", "1", "--log-level", "error"); code != 0 {
		t.Errorf("eval: exit %d\n%s", code, stderr)
	}
}

// TestBlownUpSimulationIsNotReached: --kwarg reset_noise_scale=1e30 blows
// Hopper's simulation up; its returns (about 1e31) are not the env's, and
// the run stops as a diverged simulation (exit 1) with no result that
// counts them as reached (issue 52 item 9).
func TestBlownUpSimulationIsNotReached(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := trainer(t, "--env", "Hopper-v1", "--kwarg", "reset_noise_scale=1e30", "--max-episodes", "16", "--out", out, "--bridge", bridgeAddr, "--log-level", "error")
	if code != exitFailure || !strings.Contains(stderr, "the simulation diverged") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, want %d and one line saying the simulation diverged:\n%s", code, exitFailure, stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a diverged run left %v", entries)
	}
}
