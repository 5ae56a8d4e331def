// Package localbridge starts the Python MuJoCo bridge (bridge_py/, run as
// `python -m stpis_bridge`) as a subprocess on this machine, for tests and
// for a trainer that was given no bridge address.
//
// It imports nothing of this module; envclient connects to Bridge.Addr().
package localbridge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// PythonEnv is the environment variable naming the bridge's interpreter;
// `make` exports it as the absolute path of .venv/bin/python.
const PythonEnv = "STPIS_BRIDGE_PYTHON"

// DirEnv is the environment variable naming the bridge's directory (the
// repository's bridge_py, which holds the stpis_bridge package), for a
// trainer that runs away from its repository.
const DirEnv = "STPIS_BRIDGE_DIR"

// Defaults for the zero values of Options.
const (
	DefaultListen       = "127.0.0.1:0"
	DefaultStartTimeout = 90 * time.Second
	DefaultStopGrace    = 15 * time.Second
)

// stackDumpWait is how long a bridge that did not stop gets to print its
// stacks before it is killed.
const stackDumpWait = 500 * time.Millisecond

// readyPrefix starts the one line the bridge prints on stdout once it serves.
const readyPrefix = "LISTENING "

// Options configures Start. The zero value of every field means its default.
type Options struct {
	// Python is the interpreter (default $STPIS_BRIDGE_PYTHON, else
	// .venv/bin/python beside Dir).
	Python string
	// Dir is the working directory, where the stpis_bridge package is
	// (default $STPIS_BRIDGE_DIR, else <repo>/bridge_py, where <repo> is
	// the nearest directory at or above the executable's directory, then
	// at or above the working directory, that holds bridge_py/stpis_bridge).
	Dir string
	// Workers is the number of worker processes (--workers); 0 leaves the
	// bridge's default, one per core, and a negative count is an error. The
	// bridge refuses more than 4 a core or what its available memory holds
	// (100 MiB a worker): Start's error then holds its one line saying so.
	Workers int
	// Listen is the address to bind (default 127.0.0.1:0, a free port).
	Listen string
	// ExtraArgs are appended to the bridge's command line.
	ExtraArgs []string
	// Stderr receives the bridge's log (its stderr); nil discards it. The
	// last lines are kept anyway for error messages.
	Stderr io.Writer
	// StartTimeout bounds the wait for the LISTENING line (default 90s).
	StartTimeout time.Duration
}

// absPathList makes the relative entries of a PYTHONPATH-style list
// absolute against the working directory; an empty entry (the working
// directory, to Python) becomes ".", made absolute.
func absPathList(list string) string {
	parts := filepath.SplitList(list)
	for i, p := range parts {
		if p == "" {
			p = "."
		}
		if abs, err := filepath.Abs(p); err == nil {
			parts[i] = abs
		}
	}
	return strings.Join(parts, string(os.PathListSeparator))
}

// Environ is the environment a Python the trainer starts in the bridge's
// directory runs with: this process's, with PYTHONPATH's relative entries
// made absolute (they name what they named here) and unbuffered output.
// The local bridge and `trainer render` both use it, so that they find a
// user's env module alike.
func Environ() []string {
	env := append(os.Environ(), "PYTHONUNBUFFERED=1")
	if pp, ok := os.LookupEnv("PYTHONPATH"); ok {
		env = append(env, "PYTHONPATH="+absPathList(pp))
	}
	return env
}

// Bridge is a running bridge subprocess.
type Bridge struct {
	cmd    *exec.Cmd
	addr   string
	tail   *tailBuffer
	exited chan struct{} // closed when the process has been waited for
	err    error         // the result of Wait, valid once exited is closed
	stop   sync.Once
	stopE  error
}

// Start runs the bridge and waits until it prints its LISTENING line. ctx
// bounds only the start: the bridge lives until Stop or Kill, or until this
// process dies (the bridge runs with --exit-with-parent, so a trainer killed
// with SIGKILL leaves no bridge or worker behind). The bridge is in its own
// process group, so Kill also kills its worker processes.
func Start(ctx context.Context, opts Options) (*Bridge, error) {
	if opts.Workers < 0 {
		return nil, fmt.Errorf("localbridge: Workers %d: want 0 (the bridge's default, one per core) or a count", opts.Workers)
	}
	python, dir, err := resolvePaths(opts)
	if err != nil {
		return nil, err
	}
	if opts.Listen == "" {
		opts.Listen = DefaultListen
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	args := []string{"-m", "stpis_bridge", "--listen", opts.Listen, "--exit-with-parent"}
	if opts.Workers > 0 {
		args = append(args, "--workers", strconv.Itoa(opts.Workers))
	}
	args = append(args, opts.ExtraArgs...)

	cmd := exec.Command(python, args...)
	cmd.Dir = dir
	// The bridge runs in Dir: PYTHONPATH's relative entries are made
	// absolute, so that they name what they named where Start was called.
	cmd.Env = Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	tail := &tailBuffer{max: 32 << 10} // room for a stack dump
	if opts.Stderr != nil {
		cmd.Stderr = io.MultiWriter(tail, opts.Stderr)
	} else {
		cmd.Stderr = tail
	}
	// Worker processes may hold stderr open after the bridge exits; do not
	// let Wait block on them for long.
	cmd.WaitDelay = 2 * time.Second
	// An os.Pipe rather than cmd.StdoutPipe: Wait must not close our end
	// while the reader below still drains it.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("localbridge: stdout pipe: %w", err)
	}
	cmd.Stdout = stdoutW
	err = cmd.Start()
	_ = stdoutW.Close() // the child has its copy
	if err != nil {
		_ = stdout.Close()
		return nil, fmt.Errorf("localbridge: start %s %s: %w", python, strings.Join(args, " "), err)
	}
	b := &Bridge{cmd: cmd, tail: tail, exited: make(chan struct{})}

	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ready := false
		for sc.Scan() {
			if line := sc.Text(); !ready && strings.HasPrefix(line, readyPrefix) {
				ready = true
				lines <- strings.TrimSpace(strings.TrimPrefix(line, readyPrefix))
			}
			// Keep draining stdout so the bridge never blocks on it.
		}
		_ = stdout.Close()
		close(lines)
	}()
	go func() {
		b.err = cmd.Wait()
		close(b.exited)
	}()

	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	select {
	case addr, ok := <-lines:
		if ok && addr != "" {
			b.addr = addr
			return b, nil
		}
		// stdout closed without the line: the bridge is exiting.
		select {
		case <-b.exited:
		case <-time.After(5 * time.Second):
			b.Kill()
		}
		return nil, fmt.Errorf("localbridge: bridge exited before listening (%v); stderr tail:\n%s", b.err, tail.String())
	case <-b.exited:
		return nil, fmt.Errorf("localbridge: bridge exited before listening (%v); stderr tail:\n%s", b.err, tail.String())
	case <-ctx.Done():
		b.Kill()
		return nil, fmt.Errorf("localbridge: no LISTENING line from the bridge: %w; stderr tail:\n%s", ctx.Err(), tail.String())
	}
}

// WorkerPids returns the pids of the bridge's worker processes (its children
// that multiprocessing's spawn started), read from /proc: for fault
// injection in tests. It fails where there is no /proc.
func (b *Bridge) WorkerPids() ([]int, error) { return WorkerPids(b.Pid()) }

// WorkerPids returns the worker pids of the bridge with process id bridge.
func WorkerPids(bridge int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("localbridge: worker pids: %w", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone meanwhile
		}
		// The fields after the command name, which is in parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(bridge) {
			continue
		}
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(cmdline, []byte("spawn_main")) {
			out = append(out, pid)
		}
	}
	return out, nil
}

// Addr is the host:port the bridge listens on.
func (b *Bridge) Addr() string { return b.addr }

// Pid is the bridge's process id (also its process group id).
func (b *Bridge) Pid() int { return b.cmd.Process.Pid }

// Exited is closed once the bridge process has exited.
func (b *Bridge) Exited() <-chan struct{} { return b.exited }

// StderrTail returns the last few KiB of the bridge's stderr.
func (b *Bridge) StderrTail() string { return b.tail.String() }

// Stop asks the bridge to stop gracefully (SIGTERM: it refuses new calls and
// lets in-flight ones finish) and waits until it exits. When ctx ends or
// DefaultStopGrace passes first, it asks the bridge for its threads' stacks
// (SIGUSR1; they land in the error's stderr tail) and sends SIGKILL to its
// process group. It returns nil when the bridge exited with status 0. Stop
// may be called more than once.
func (b *Bridge) Stop(ctx context.Context) error {
	b.stop.Do(func() {
		b.stopE = b.terminate(ctx)
	})
	return b.stopE
}

func (b *Bridge) terminate(ctx context.Context) error {
	select {
	case <-b.exited:
		return b.exitErr("before Stop")
	default:
	}
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("localbridge: SIGTERM pid %d: %w", b.Pid(), err)
	}
	timer := time.NewTimer(DefaultStopGrace)
	defer timer.Stop()
	select {
	case <-b.exited:
		// Reap any worker left behind in the group.
		_ = syscall.Kill(-b.Pid(), syscall.SIGKILL)
		return b.exitErr("after SIGTERM")
	case <-ctx.Done():
	case <-timer.C:
	}
	b.dumpStacks()
	b.Kill()
	return fmt.Errorf("localbridge: bridge pid %d did not exit after SIGTERM; killed; stderr tail (with its threads' stacks):\n%s", b.Pid(), b.tail.String())
}

// dumpStacks asks a bridge that seems stuck for its threads' Python stacks
// (SIGUSR1, which the bridge's faulthandler answers on stderr), so that the
// error says where it hung, and gives it stackDumpWait to write them.
func (b *Bridge) dumpStacks() {
	if b.cmd.Process.Signal(syscall.SIGUSR1) != nil {
		return
	}
	select {
	case <-b.exited:
	case <-time.After(stackDumpWait):
	}
}

func (b *Bridge) exitErr(when string) error {
	if b.err != nil {
		return fmt.Errorf("localbridge: bridge pid %d exited %s: %w; stderr tail:\n%s", b.Pid(), when, b.err, b.tail.String())
	}
	return nil
}

// Kill sends SIGKILL to the bridge and its workers (its process group) and
// waits until the bridge is reaped, as a crash would look to clients.
func (b *Bridge) Kill() {
	_ = syscall.Kill(-b.Pid(), syscall.SIGKILL)
	_ = b.cmd.Process.Kill()
	<-b.exited
}

var _ io.Writer = (*tailBuffer)(nil)

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
		if i := bytes.IndexByte(t.buf, '\n'); i >= 0 {
			t.buf = t.buf[i+1:]
		}
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
