package localbridge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parentEnv makes the test binary act as a trainer that starts a bridge,
// prints its pid and waits to be killed (TestBridgeDiesWithItsParent).
const parentEnv = "LOCALBRIDGE_TEST_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(parentEnv) == "1" {
		b, err := Start(context.Background(), Options{Workers: 1})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("BRIDGE %d\n", b.Pid())
		select {} // until SIGKILL
	}
	os.Exit(m.Run())
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// TestBridgeDiesWithItsParent kills (SIGKILL) a process that started a bridge
// with Start, as `kill -9` of a trainer without --bridge would: the bridge
// and its workers must exit by themselves within seconds.
func TestBridgeDiesWithItsParent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), parentEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	var bridge int
	if _, scanErr := fmt.Sscanf(line, "BRIDGE %d", &bridge); err != nil || scanErr != nil {
		t.Fatalf("the parent printed %q (%v)", line, err)
	}
	workers, err := WorkerPids(bridge)
	if err != nil {
		t.Fatal(err)
	}
	procs := append([]int{bridge}, workers...)
	if len(procs) < 2 {
		t.Fatalf("bridge %d has no worker process", bridge)
	}
	defer func() {
		for _, p := range procs { // a bridge that did not exit must not outlive the test
			if alive(p) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	}()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []int
		for _, p := range procs {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s after the parent was killed, bridge %d's processes %v are still alive", bridge, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// These tests start the real bridge: they fail, not skip, when the venv is
// missing (`make venv`).

func TestStartStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stderr := &tailBuffer{max: 1 << 20}
	b, err := Start(ctx, Options{Workers: 1, Stderr: stderr})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	host, port, err := net.SplitHostPort(b.Addr())
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("Addr() = %q, want 127.0.0.1:<free port>", b.Addr())
	}
	conn, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatalf("nothing accepts connections at %s: %v", b.Addr(), err)
	}
	_ = conn.Close()
	if err := b.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v (want a clean exit 0 after SIGTERM)", err)
	}
	select {
	case <-b.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
	if err := syscall.Kill(b.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pid %d still exists after Stop (kill -0: %v)", b.Pid(), err)
	}
	if b.Stop(ctx) != nil {
		t.Error("a second Stop did not return the first one's result")
	}
	if b.StderrTail() == "" || stderr.String() != b.StderrTail() {
		t.Errorf("stderr not captured and passed on: tail %q, Options.Stderr got %q", b.StderrTail(), stderr.String())
	}
}

func TestKillKillsWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := Start(ctx, Options{Workers: 1})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	pgid := b.Pid()
	b.Kill()
	// The whole group (bridge and worker processes) must be gone soon.
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still alive 5s after Kill", pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := b.Stop(ctx); err == nil {
		t.Error("Stop after Kill reported a clean exit")
	}
}

// TestDumpStacks: the stack dump that Stop asks a stuck bridge for arrives
// on stderr and leaves the bridge serving and able to stop cleanly.
func TestDumpStacks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := Start(ctx, Options{Workers: 1})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer b.Kill()
	b.dumpStacks()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.StderrTail(), "server.py") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if tail := b.StderrTail(); !strings.Contains(tail, "Thread 0x") || !strings.Contains(tail, "server.py") {
		t.Fatalf("no stack dump with the main thread in server.py on stderr:\n%s", tail)
	}
	conn, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatalf("the bridge stopped serving after the dump: %v", err)
	}
	_ = conn.Close()
	if err := b.Stop(ctx); err != nil {
		t.Fatalf("Stop after a dump: %v", err)
	}
}

func TestStartFailsClearly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	missing := filepath.Join(t.TempDir(), "no-python")
	_, err := Start(ctx, Options{Python: missing})
	if err == nil || !strings.Contains(err.Error(), "bridge python not found at "+missing+": run `make venv`") {
		t.Errorf("missing python: err = %v", err)
	}

	// The bridge rejects --workers 0 and exits; the error carries its stderr.
	_, err = Start(ctx, Options{ExtraArgs: []string{"--workers", "0"}})
	if err == nil || !strings.Contains(err.Error(), "exited before listening") || !strings.Contains(err.Error(), "--workers") {
		t.Errorf("bad flag: err = %v, want the exit and the stderr tail", err)
	}

	// A start timeout kills the process.
	_, err = Start(ctx, Options{StartTimeout: 10 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no LISTENING line") {
		t.Errorf("start timeout: err = %v", err)
	}
}

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("RepoRoot() = %s has no go.mod", root)
	}
	if _, err := os.Stat(filepath.Join(root, "bridge_py")); err != nil {
		t.Errorf("RepoRoot() = %s has no bridge_py", root)
	}
}

// fakeRepo makes root/bridge_py/stpis_bridge/__main__.py and
// root/.venv/bin/python (empty files: locate only looks for them).
func fakeRepo(t *testing.T, root string) {
	t.Helper()
	for _, f := range []string{"bridge_py/stpis_bridge/__main__.py", ".venv/bin/python"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocate: the bridge is found through the options, then
// $STPIS_BRIDGE_PYTHON and $STPIS_BRIDGE_DIR, then above the executable
// (bin/trainer), then above the working directory; else one line says what
// to set.
func TestLocate(t *testing.T) {
	tmp := t.TempDir()
	exeRepo, wdRepo, envRepo := filepath.Join(tmp, "exe-repo"), filepath.Join(tmp, "wd-repo"), filepath.Join(tmp, "env-repo")
	for _, r := range []string{exeRepo, wdRepo, envRepo} {
		fakeRepo(t, r)
	}
	elsewhere := filepath.Join(tmp, "elsewhere", "deep")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(wdRepo, "runs", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(exeRepo, "bin", "trainer")
	wd := filepath.Join(wdRepo, "runs", "x")
	venv := func(root string) string { return filepath.Join(root, ".venv", "bin", "python") }
	bridge := func(root string) string { return filepath.Join(root, "bridge_py") }
	none := map[string]string{}
	both := map[string]string{DirEnv: bridge(envRepo), PythonEnv: venv(envRepo)}

	for _, c := range []struct {
		name        string
		opts        Options
		env         map[string]string
		exe, wd     string
		python, dir string
	}{
		{"options first", Options{Python: venv(wdRepo), Dir: bridge(wdRepo)}, both, exe, wd, venv(wdRepo), bridge(wdRepo)},
		{"environment", Options{}, both, exe, wd, venv(envRepo), bridge(envRepo)},
		{"dir from the environment, its venv", Options{}, map[string]string{DirEnv: bridge(envRepo)}, exe, wd, venv(envRepo), bridge(envRepo)},
		{"python from the environment, dir above the executable", Options{}, map[string]string{PythonEnv: venv(envRepo)}, exe, wd, venv(envRepo), bridge(exeRepo)},
		{"above the executable before the working directory", Options{}, none, exe, wd, venv(exeRepo), bridge(exeRepo)},
		{"above the working directory", Options{}, none, filepath.Join(elsewhere, "trainer"), wd, venv(wdRepo), bridge(wdRepo)},
		{"executable unknown", Options{}, none, "", wd, venv(wdRepo), bridge(wdRepo)},
	} {
		t.Run(c.name, func(t *testing.T) {
			python, dir, err := locate(c.opts, func(k string) string { return c.env[k] }, c.exe, c.wd)
			if err != nil {
				t.Fatal(err)
			}
			if python != c.python || dir != c.dir {
				t.Errorf("locate = %s, %s; want %s, %s", python, dir, c.python, c.dir)
			}
		})
	}

	// Nothing found: one line naming both variables and where it looked.
	_, _, err := locate(Options{}, func(string) string { return "" }, filepath.Join(elsewhere, "trainer"), elsewhere)
	if err == nil {
		t.Fatal("nothing to find: want an error")
	}
	msg := err.Error()
	for _, want := range []string{"no bridge_py/stpis_bridge at or above " + elsewhere, "set STPIS_BRIDGE_DIR to the repository's bridge_py directory (and STPIS_BRIDGE_PYTHON to the bridge's interpreter"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Count(msg, elsewhere) != 1 || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming %s once", msg, elsewhere)
	}

	// A wrong $STPIS_BRIDGE_DIR is reported, not searched past.
	_, _, err = locate(Options{}, func(k string) string { return map[string]string{DirEnv: elsewhere}[k] }, exe, wd)
	if err == nil || !strings.Contains(err.Error(), "$STPIS_BRIDGE_DIR is "+elsewhere+", which holds no stpis_bridge package") {
		t.Errorf("wrong STPIS_BRIDGE_DIR: err = %v", err)
	}

	// A bridge without a venv beside it says what to run or set.
	if err := os.Remove(venv(wdRepo)); err != nil {
		t.Fatal(err)
	}
	_, _, err = locate(Options{}, func(string) string { return "" }, "", wd)
	if err == nil || !strings.Contains(err.Error(), "bridge python not found at "+venv(wdRepo)+": run `make venv`, or set STPIS_BRIDGE_PYTHON") {
		t.Errorf("missing venv: err = %v", err)
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 16}
	for _, s := range []string{"line one\n", "line two\n", "line three\n"} {
		_, _ = tb.Write([]byte(s))
	}
	if got := tb.String(); got != "line three\n" {
		t.Errorf("tail = %q, want the last whole line", got)
	}
}
