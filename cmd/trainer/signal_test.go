package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stpis/stpis/envclient/localbridge"
	"github.com/stpis/stpis/rundir"
)

// watchSignals: the first signal closes graceful and, after the grace,
// cancels; a second signal cancels at once, and then ends the process
// (exit 130) if it has not ended by itself within hardStop, or at a third
// signal (issue 52: `convex` blocked on a FIFO outlived SIGINT and
// SIGTERM).
func TestWatchSignals(t *testing.T) {
	for _, second := range []bool{false, true} {
		sigs := make(chan os.Signal, 3)
		graceful := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		grace := 300 * time.Millisecond
		if second {
			grace = time.Hour
		}
		exited := make(chan int, 1)
		go watchSignals(sigs, graceful, cancel, grace, func(code int) { exited <- code })
		sigs <- syscall.SIGTERM
		<-graceful
		if ctx.Err() != nil {
			t.Fatalf("second %v: cancelled with the first signal", second)
		}
		if second {
			sigs <- syscall.SIGTERM
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("second %v: not cancelled", second)
		}
		select {
		case code := <-exited:
			if !second {
				t.Fatalf("the grace's cancel exited (%d) without a second signal", code)
			}
		default:
		}
		if !second {
			sigs <- syscall.SIGTERM
		} else {
			sigs <- syscall.SIGTERM // the third: at once
		}
		select {
		case code := <-exited:
			if code != exitInterrupted {
				t.Errorf("second %v: exit %d, want %d", second, code, exitInterrupted)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("second %v: the process was not ended after a second signal", second)
		}
	}
}

// A trainer whose bridge has gone retries its rollouts for --bridge-timeout;
// a SIGTERM then must still stop it within stopGrace, on its last
// checkpoint, and the run resumes from there to the same end as an
// undisturbed run. (Before the grace, it retried on for minutes and only
// SIGKILL stopped it.)
func TestSIGTERMWithTheBridgeDown(t *testing.T) {
	bin := buildTrainer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	own, err := localbridge.Start(ctx, localbridge.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Kill()
	common := []string{"--env", "Swimmer-v1", "--method", "stp_is", "--k", "paper", "--directions", "1", "--max-episodes", "150", "--horizon", "300", "--seed", "12",
		"--log-level", "warn", "--config", evalEvery(t, 4), "--eval-episodes", "2"}
	outA, outB := t.TempDir(), t.TempDir()
	if code, _, stderr := trainer(t, append(common, "--out", outA, "--bridge", bridgeAddr)...); code != 0 {
		t.Fatalf("undisturbed run: exit %d\n%s", code, stderr)
	}
	dirB := filepath.Join(outB, "Swimmer-v1", "stp_is-adaptive", "seed12")
	cmd, stderr := startUnderWay(t, bin, append(common, "--out", outB, "--bridge", own.Addr(), "--bridge-timeout", "10m"), dirB)
	own.Kill()
	time.Sleep(2 * time.Second) // the client is retrying now
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the trainer did not stop within 30s of SIGTERM with its bridge down (stopGrace %v)\n%s", stopGrace, stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d after %v, want %d\n%s", code, time.Since(start), exitInterrupted, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dirB, rundir.CheckpointFile)); err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	if code, _, stderr := trainer(t, append(common, "--out", outB, "--bridge", bridgeAddr, "--resume")...); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	sameRun(t, filepath.Join(outA, "Swimmer-v1", "stp_is-adaptive", "seed12"), dirB)
}

// buildTrainer builds the trainer binary into a temporary directory, for
// tests that signal a real process.
func buildTrainer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "trainer")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startUnderWay starts the trainer binary with args and waits until its
// run in dir is under way (three curve lines), for at most a minute.
func startUnderWay(t *testing.T, bin string, args []string, dir string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(dir, rundir.CurveFile))
		if bytes.Count(b, []byte("\n")) >= 3 {
			return cmd, stderr
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no training progress within 60s\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
