package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, zero, dir} {
		done := make(chan error, 1)
		go func() { _, err := Read(path, 1<<20); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path) {
				t.Errorf("Read(%s) = %v, want ErrNotRegular naming the path", path, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Read(%s) hangs", path)
		}
	}
}

func TestReadBoundsTheSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(path, 5); err != nil || string(b) != "12345" {
		t.Fatalf("Read at the limit = %q, %v", b, err)
	}
	if _, err := Read(path, 4); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "limit of 4 bytes") {
		t.Fatalf("Read over the limit = %v, want ErrTooLarge naming the limit", err)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none"), 4); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read of a missing file = %v, want fs.ErrNotExist", err)
	}
	// A symbolic link to a regular file is read.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(link, 5); err != nil || string(b) != "12345" {
		t.Fatalf("Read through a link = %q, %v", b, err)
	}
}
