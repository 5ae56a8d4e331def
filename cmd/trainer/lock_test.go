package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stpis/stpis/rundir"
)

// Issue 34, defect 2, end to end: a second trainer on a run that another
// has open (a stopped one, say), with --force or --resume, exits at once
// naming the holder's pid, and leaves the run as it was.
func TestSecondTrainerOnARunInUse(t *testing.T) {
	// A bridge that is never reached: the check comes before one is needed.
	args := []string{"--env", "Hopper-v1", "--max-episodes", "40", "--bridge", "127.0.0.1:1", "--bridge-timeout", "60s", "--log-level", "warn"}
	f, err := parseTrainFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	path := rundir.Path(out, cfg.Problem.Env, cfg.Name, cfg.Problem.Seed)
	held, err := rundir.Create(path, rundir.Meta{Env: "the holder's"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	meta, _ := os.ReadFile(filepath.Join(path, rundir.MetaFile))
	for _, flag := range []string{"--force", "--resume"} {
		start := time.Now()
		code, _, stderr := trainer(t, append(args, "--out", out, flag)...)
		if time.Since(start) > 30*time.Second {
			t.Errorf("%s: the run in use was found after %s: after waiting for a bridge", flag, time.Since(start))
		}
		if code != exitFailure || !strings.Contains(stderr, "in use by another trainer") || !strings.Contains(stderr, fmt.Sprintf("pid %d ", os.Getpid())) {
			t.Fatalf("%s on a run in use: exit %d, stderr:\n%s", flag, code, stderr)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: want one line, got:\n%s", flag, stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(path, rundir.MetaFile)); string(b) != string(meta) {
			t.Fatalf("%s changed the held run's run.json:\n%s", flag, b)
		}
		if pts, err := rundir.ReadCurve(path); err != nil || len(pts) != 0 {
			t.Fatalf("%s wrote into the held run's curve: %v, %v", flag, pts, err)
		}
	}
	held.Close()
	args[len(args)-5] = bridgeAddr
	if code, _, stderr := trainer(t, append(args, "--out", out, "--force")...); code != exitOK {
		t.Fatalf("--force once the run is closed: exit %d, stderr:\n%s", code, stderr)
	}
}
