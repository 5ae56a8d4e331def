package rundir

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// finished writes every file of a run: run.json and curve.jsonl (Create),
// the policies and checkpoint.json (Checkpoint), result.json and both npz
// (Finish).
func finished(t *testing.T) string {
	t.Helper()
	path := Path(t.TempDir(), "Hopper-v1", "stp_is-adaptive", 1)
	d, err := Create(path, Meta{Env: "Hopper-v1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Append(Point{Iter: 0}); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(Snapshot{State: []byte(`{}`), Policy: []byte("{}"), Best: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Finish(Result{}, []byte("npz"), []byte("npz")); err != nil {
		t.Fatal(err)
	}
	return path
}

// withUmask runs f under the umask mask.
func withUmask(mask int, f func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

// Issue 34: the files a run's readers open are readable by all (a trainer
// in a container writes as root; the host user reads them); checkpoint.json
// is its owner's alone. No temporary file is left behind.
func TestRunFileModes(t *testing.T) {
	var path string
	withUmask(0o022, func() { path = finished(t) })
	want := map[string]fs.FileMode{
		MetaFile: 0o644, CurveFile: 0o644, ResultFile: 0o644, PolicyFile: 0o644, BestFile: 0o644,
		NPZFile: 0o644, BestNPZFile: 0o644, CheckpointFile: 0o600,
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the run holds %s, want the %d files of a run", strings.Join(names, " "), len(want))
	}
	for name, mode := range want {
		st, err := os.Stat(filepath.Join(path, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := st.Mode().Perm(); got != mode {
			t.Errorf("%s has mode %v, want %v", name, got, mode)
		}
	}
}

// A umask that asks for private files is honoured.
func TestRunFileModesHonourTheUmask(t *testing.T) {
	var path string
	withUmask(0o077, func() { path = finished(t) })
	for _, name := range []string{MetaFile, CurveFile, ResultFile, PolicyFile, NPZFile, CheckpointFile} {
		st, err := os.Stat(filepath.Join(path, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != 0o600 {
			t.Errorf("%s has mode %v under umask 077, want -rw-------", name, got)
		}
	}
}
