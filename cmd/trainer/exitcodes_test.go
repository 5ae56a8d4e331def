package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/rundir"
)

// writePolicy writes a policy file for env of rows x cols (unsealed
// version 1 when v1) and returns its path.
func writePolicy(t *testing.T, env string, rows, cols int) string {
	t.Helper()
	lin, err := policy.NewLinear(rows, cols, false)
	if err != nil {
		t.Fatal(err)
	}
	norm, err := policy.NewNormalizer(cols)
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.Marshal(policy.File{EnvID: env, Policy: lin, Normalizer: norm})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExitCodes is the rule of `trainer -h` (0 done, 1 failed: a file that
// is there but bad, 2 bad command line, a missing file included) over the
// cases issues 43 and 52 found broken, each subcommand the same way, each
// said in one line of at most 1000 characters.
func TestExitCodes(t *testing.T) {
	hopper := writePolicy(t, "Hopper-v1", 3, 11)
	nowhere := writePolicy(t, "Nowhere-v1", 3, 11)
	shape := writePolicy(t, "Hopper-v1", 2, 11)
	npz := filepath.Join(t.TempDir(), "lin_policy_plus.npz")
	if err := os.WriteFile(npz, []byte("PK\x03\x04"), 0o644); err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(t.TempDir(), rundir.ResultFile)
	if err := os.WriteFile(result, []byte(`{"version":3,"run_id":"r","reached":false,"episodes":40,"sha256":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	gif := filepath.Join(t.TempDir(), "x.gif")
	bridge := []string{"--bridge", bridgeAddr, "--log-level", "error"}
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		names string
	}{
		{"bad --kwarg value", append([]string{"--env", "Hopper-v1", "--kwarg", "reset_noise_scale=1e308", "--out", out}, bridge...), exitUsage, "reset_noise_scale"},
		{"eval --horizon beyond the env", append([]string{"eval", "--policy", hopper, "--horizon", "5000"}, bridge...), exitUsage, "-horizon"},
		{"eval of a policy naming an unknown env", append([]string{"eval", "--policy", nowhere}, bridge...), exitFailure, nowhere},
		{"eval of a wrong-shaped policy", append([]string{"eval", "--policy", shape}, bridge...), exitFailure, shape},
		{"render of a wrong-shaped policy", []string{"render", "--policy", shape, "-o", gif}, exitFailure, shape},
		{"eval of an npz", append([]string{"eval", "--policy", npz}, bridge...), exitFailure, "export"},
		{"eval of a missing file", []string{"eval", "--policy", filepath.Join(out, "none.json")}, exitUsage, "none.json"},
		// Issue 52's rows.
		{"table of a missing directory", []string{"table", "/nonexistent"}, exitUsage, "/nonexistent"},
		{"plot of a missing directory", []string{"plot", "/nonexistent", "-o", filepath.Join(out, "c.png")}, exitUsage, "/nonexistent"},
		{"convex of a missing --data", []string{"convex", "--data", "/nonexistent", "--out", filepath.Join(t.TempDir(), "cv")}, exitUsage, "/nonexistent"},
		{"plot to a .jpg", []string{"plot", filepath.Join("..", "..", "results", "other"), "-o", filepath.Join(out, "c.jpg")}, exitUsage, "c.jpg"},
		{"eval of a result.json", append([]string{"eval", "--policy", result}, bridge...), exitFailure, "not a policy file"},
		{"version with a flag", []string{"version", "--bogus-flag"}, exitUsage, "--bogus-flag"},
		{"eval with a missing TLS CA", []string{"eval", "--policy", hopper, "--bridge", bridgeAddr, "--bridge-tls", "ca=/nonexistent"}, exitUsage, "ca=/nonexistent"},
		{"eval with a malformed --bridge", []string{"eval", "--policy", hopper, "--bridge", "http://x y"}, exitUsage, "--bridge"},
		{"a flag as --env's module", append([]string{"--env", "--workers=64:X", "--out", out}, bridge...), exitUsage, "not a Python module name"},
		{"-h as --env's module", []string{"--env", "-h:X", "--out", out}, exitUsage, "not a Python module name"},
		{"an env that needs jax", append([]string{"--env", "phys2d/CartPole-v0", "--out", out}, bridge...), exitFailure, "needs a package"},
		{"a 5000-character env id", append([]string{"--env", strings.Repeat("x", 5000), "--out", out}, bridge...), exitUsage, "(5000 bytes)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := trainer(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.names) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || len(stderr) > 1000 {
				t.Errorf("exit %d, want %d, one line naming %q:\n%s", code, c.code, c.names, stderr)
			}
		})
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a run that never started left %v in --out", entries)
	}
	if _, err := os.Stat(gif); err == nil {
		t.Errorf("a failed render left %s", gif)
	}
}

// TestResumeRefusesAnotherRunsCheckpointBeforeTraining: Hopper's
// checkpoint and curve copied into a Swimmer run, or a run.json whose seal
// was blanked, are refused by --resume at once (exit 1), and nothing is
// trained or written.
func TestResumeRefusesAnotherRunsCheckpointBeforeTraining(t *testing.T) {
	out := t.TempDir()
	common := []string{"--method", "stp_is", "--step", "adaptive", "--k", "paper", "--directions", "1", "--max-episodes", "400", "--horizon", "50",
		"--seed", "3", "--out", out, "--bridge", bridgeAddr, "--log-level", "error"}
	swimmerArgs := append([]string{"--env", "Swimmer-v1"}, common...)
	for _, env := range []string{"Swimmer-v1", "Hopper-v1"} {
		if code, _, stderr := trainer(t, append(append([]string{"--env", env}, common...), "--stop-after", "1")...); code != 0 {
			t.Fatalf("%s: exit %d\n%s", env, code, stderr)
		}
	}
	swimmer := filepath.Join(out, "Swimmer-v1", "stp_is-adaptive", "seed3")
	hopper := filepath.Join(out, "Hopper-v1", "stp_is-adaptive", "seed3")
	for _, name := range []string{rundir.CheckpointFile, rundir.CurveFile} {
		b, err := os.ReadFile(filepath.Join(hopper, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(swimmer, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	curve, _ := os.ReadFile(filepath.Join(swimmer, rundir.CurveFile))
	code, _, stderr := trainer(t, append(swimmerArgs, "--resume")...)
	if code != exitFailure || !strings.Contains(stderr, "a file of another run") {
		t.Fatalf("resume of Hopper's checkpoint in a Swimmer run: exit %d\n%s", code, stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(swimmer, rundir.CurveFile)); string(now) != string(curve) {
		t.Error("the refused resume changed the curve")
	}
	if _, err := os.Stat(filepath.Join(swimmer, rundir.LockFile)); err == nil {
		t.Error("the refused resume left its lock")
	}

	var meta map[string]any
	b, err := os.ReadFile(filepath.Join(hopper, rundir.MetaFile))
	if err != nil || json.Unmarshal(b, &meta) != nil {
		t.Fatal(err)
	}
	meta["sha256"] = ""
	b, _ = json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(hopper, rundir.MetaFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	hopperArgs := append([]string{"--env", "Hopper-v1"}, common...)
	code, _, stderr = trainer(t, append(hopperArgs, "--resume")...)
	if code != exitFailure || !strings.Contains(stderr, "sha256: missing or empty") {
		t.Fatalf("resume of a run.json with a blanked seal: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(hopper, rundir.ResultFile)); err == nil {
		t.Error("the run whose run.json was blanked trained to the end")
	}
}
