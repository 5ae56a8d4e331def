package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stpis/stpis/internal/fuzzguard"
)

// Found while writing FuzzTrainFlags (whose harness must keep --config off
// device files): `--config /dev/zero` read without end, the size limit
// being checked only after the whole file was in memory, until the
// process ran out of memory. A device is refused before it is read, and a
// FIFO before it is waited on; a regular file over the limit at the limit.
func TestConfigFileWithoutEndIsRefusedAtTheLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero:", err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, maxConfigFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	fuzzguard.Within(t, 20*time.Second, func() {
		for path, want := range map[string]string{"/dev/zero": "not a regular file", fifo: "not a regular file", big: "over the limit"} {
			if _, err := readConfigFile(path); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("readConfigFile(%s) = %v, want %q", path, err, want)
			}
		}
	})
}

// TestConfigFileOfTwoDocumentsIsRefused: a second YAML document (after
// ---) was ignored; it is refused, naming its line.
func TestConfigFileOfTwoDocumentsIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	for _, text := range []string{"env: Hopper-v1\n---\nrate: 5\n", "env: Hopper-v1\n---\n- a\n"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readConfigFile(path); err == nil || !strings.Contains(err.Error(), "second YAML document") {
			t.Errorf("readConfigFile(%q) = %v, want the second document refused", text, err)
		}
	}
	if err := os.WriteFile(path, []byte("env: Hopper-v1\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := readConfigFile(path); err != nil || len(s) != 1 {
		t.Errorf("a document ended by --- and nothing after: %v, %v", s, err)
	}
}
