package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the errors of a path that is not a regular
// file (after following symbolic links).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the errors of a file over its limit.
var ErrTooLarge = errors.New("file too large")

// Open opens path with flag (os.O_RDONLY, os.O_RDWR, ...) without waiting
// on a FIFO, and refuses anything but a regular file. The error of a path
// that does not exist wraps fs.ErrNotExist.
func Open(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (it is %s): refused", path, ErrNotRegular, kind(st.Mode()))
	}
	return f, nil
}

// Read returns the contents of the regular file path, of at most limit
// bytes.
func Read(path string, limit int64) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w: over the limit of %d bytes (%s)", path, ErrTooLarge, limit, human(limit))
	}
	return b, nil
}

// kind names a file mode that is not a regular file's.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file: mode " + m.String()
}

// human writes a limit in KiB or MiB.
func human(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
