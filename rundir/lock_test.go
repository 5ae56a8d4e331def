package rundir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// snapshot returns the names and contents of the files in dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// wantLocked fails unless err wraps ErrLocked and names pid.
func wantLocked(t *testing.T, what string, err error, pid int) {
	t.Helper()
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("%s: err = %v, want ErrLocked", what, err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d ", pid)) {
		t.Errorf("%s: error %q does not name the holder's pid %d", what, err, pid)
	}
}

// Issue 34, defect 2: a second trainer on a run in use, --force included,
// fails at once naming the holder and changes nothing. flock locks belong
// to open file descriptions, so a second Create or Open in this process
// conflicts as another process's would.
func TestRunInUseIsNeitherReplacedNorResumed(t *testing.T) {
	d, path := started(t, 3)
	before := snapshot(t, path)
	if got := strings.TrimSpace(before[LockFile]); got != strconv.Itoa(os.Getpid()) {
		t.Errorf("%s holds %q, want this process's pid %d", LockFile, got, os.Getpid())
	}

	_, err := Create(path, Meta{Env: "Walker2d-v1"}, true)
	wantLocked(t, "Create --force", err, os.Getpid())
	_, err = Create(path, Meta{Env: "Walker2d-v1"}, false)
	wantLocked(t, "Create", err, os.Getpid())
	_, _, err = Open(path)
	wantLocked(t, "Open", err, os.Getpid())
	if after := snapshot(t, path); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused second trainer changed the run:\nbefore %v\nafter  %v", before, after)
	}

	// The holder carries on undisturbed, then lets go.
	if _, err := d.Append(Point{Iter: 3, Episodes: 36}); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(Snapshot{Iter: 3, Episodes: 36, State: []byte(`{}`), Policy: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := os.Stat(filepath.Join(path, LockFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Close left %s behind: %v", LockFile, err)
	}

	d, _, err = Open(path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	_, err = Create(path, Meta{}, true)
	wantLocked(t, "Create --force over a resumed run", err, os.Getpid())
	d.Close()
	d, err = Create(path, Meta{Env: "Walker2d-v1", Seed: 1}, true)
	if err != nil {
		t.Fatalf("Create --force of a run not in use: %v", err)
	}
	defer d.Close()
	if m, err := ReadMeta(path); err != nil || m.Env != "Walker2d-v1" {
		t.Fatalf("the forced run's run.json: %+v, %v", m, err)
	}
	if _, err := os.Stat(filepath.Join(path, CheckpointFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--force kept the old run's checkpoint: %v", err)
	}
}

// holdEnv names the run directory that the helper process holds open.
const holdEnv = "STPIS_RUNDIR_TEST_HOLD"

// TestHelperHoldRun is not a test: run by TestLockOfAnotherProcess as a
// separate process, it creates the run in $STPIS_RUNDIR_TEST_HOLD, says so
// and sleeps until it is killed.
func TestHelperHoldRun(t *testing.T) {
	path := os.Getenv(holdEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	if _, err := Create(path, Meta{Env: "Hopper-v1"}, false); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("holding")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// The lock of a process that is stopped holds (SIGSTOP, as in the issue);
// the lock of a process that was killed does not, and the next trainer
// takes over its stale lock file.
func TestLockOfAnotherProcess(t *testing.T) {
	path := Path(t.TempDir(), "Hopper-v1", "stp_is-adaptive", 1)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldRun$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "holding\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	_, err = Create(path, Meta{}, true)
	wantLocked(t, "Create --force while another process holds the run", err, cmd.Process.Pid)
	if !Exists(path) {
		t.Fatal("--force removed a run that another process holds")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if b, _ := os.ReadFile(filepath.Join(path, LockFile)); !bytes.Equal(b, []byte(strconv.Itoa(cmd.Process.Pid)+"\n")) {
		t.Fatalf("the killed holder's lock file holds %q", b)
	}
	d, err := Create(path, Meta{}, true)
	if err != nil {
		t.Fatalf("Create --force after the holder was killed: %v", err)
	}
	defer d.Close()
	if b, _ := os.ReadFile(filepath.Join(path, LockFile)); string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("the lock file holds %q, want this process's pid", b)
	}
}

// The lock of a directory that does not exist: Open says there is nothing
// to resume, as before the lock.
func TestOpenOfAMissingRun(t *testing.T) {
	_, _, err := Open(filepath.Join(t.TempDir(), "none"))
	if !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("Open of a missing directory: err = %v, want ErrNoCheckpoint", err)
	}
}

// TestInUse says whether another open run holds the directory, taking
// nothing.
func TestInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := InUse(dir); err != nil {
		t.Fatalf("no run: %v", err)
	}
	d, err := Create(dir, Meta{Env: "Hopper-v1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := InUse(dir); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d ", os.Getpid())) {
		t.Fatalf("a run held: %v", err)
	}
	if err := InUse(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("asking twice took the lock: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := InUse(dir); err != nil {
		t.Fatalf("a closed run: %v", err)
	}
}
