package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is a run directory's lock: the trainer that has the run open
// (Create or Open, until Close) holds an exclusive flock on it and has
// written its pid into it. Close removes it.
const LockFile = ".lock"

// ErrLocked is returned by Create and Open when another process has the
// run open; the error names that process's pid.
var ErrLocked = errors.New("is in use by another trainer")

// lockTries bounds the retries of lock when the lock file it locked was
// removed meanwhile by the holder before it.
const lockTries = 10

// lock takes the exclusive lock of the run directory dir, which must exist,
// without waiting, and writes this process's pid into the lock file. An
// error wraps ErrLocked, naming the holder's pid, when another open file
// description holds it (another process, or another Create or Open in this
// one), and fs.ErrNotExist when dir does not exist.
func lock(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	for try := 1; ; try++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
		if err != nil {
			return nil, fmt.Errorf("rundir: lock: %w", err)
		}
		if err := flock(f); err != nil {
			holder := lockHolder(f)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("rundir: %s %w (%s holds %s): wait for it to end, or stop it; --force does not replace a run in use",
					dir, ErrLocked, holder, LockFile)
			}
			return nil, fmt.Errorf("rundir: lock %s: %w", path, err)
		}
		// The holder before us removes the file as it lets go: a lock taken
		// on the removed file, opened before that, locks nothing.
		if same, err := isFile(f, path); err != nil || !same {
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("rundir: lock: %w", err)
			}
			if try == lockTries {
				return nil, fmt.Errorf("rundir: lock %s: the file was replaced %d times in a row while being locked", path, try)
			}
			continue
		}
		pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
		err = f.Truncate(0)
		if err == nil {
			_, err = f.WriteAt(pid, 0)
		}
		if err != nil {
			unlock(f)
			return nil, fmt.Errorf("rundir: lock %s: writing the pid: %w", path, err)
		}
		return f, nil
	}
}

// unlock removes a lock file that lock returned, then lets go of the lock.
func unlock(f *os.File) error {
	if f == nil {
		return nil
	}
	var err error
	if same, serr := isFile(f, f.Name()); serr == nil && same {
		err = os.Remove(f.Name())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("rundir: unlock: %w", err)
	}
	return nil
}

// flock takes an exclusive flock on f without waiting, retrying when a
// signal interrupts the call.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// isFile says whether the open file f is the file at path now.
func isFile(f *os.File, path string) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	now, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(held, now), nil
}

// lockHolder reads the pid the holder of a lock file wrote into it.
func lockHolder(f *os.File) string {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 32))
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil || pid <= 0 {
		// The holder has the lock but has not written its pid yet.
		return "a process whose pid is not written yet"
	}
	return "pid " + strconv.Itoa(pid)
}

// InUse returns an error wrapping ErrLocked, naming the holder's pid, when
// another process has the run in dir open, and nil otherwise (no run, no
// lock file, or a lock nobody holds). It takes nothing: a trainer asks it
// before it starts a bridge, and Create and Open still lock.
func InUse(dir string) error {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return nil // no lock file: no holder
	}
	defer f.Close()
	if err := flock(f); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("rundir: %s %w (%s holds %s): wait for it to end, or stop it; --force does not replace a run in use",
				dir, ErrLocked, lockHolder(f), LockFile)
		}
		return nil
	}
	// Locked it ourselves: nobody holds it. Closing f lets go.
	return nil
}
