package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvexDataShipped: `trainer convex` reads the LIBSVM files shipped
// in the repository from any directory (they are embedded), and a
// --data-dir without them fails with exit 1 (not 2, a bad command line),
// naming the flag.
func TestConvexDataShipped(t *testing.T) {
	out := t.TempDir()
	t.Chdir(t.TempDir()) // no ../shared, no repository around
	code, _, stderr := trainer(t, "convex", "--only", "figure2", "--problem", "ridge", "--runs", "1", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, name := range []string{"heart_scale", "australian_scale", "mushrooms"} {
		if !strings.Contains(stderr, "ridge_"+name) {
			t.Errorf("no progress line for %s:\n%s", name, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "summary_figure2.json")); err != nil {
		t.Error(err)
	}
	code, _, stderr = trainer(t, "convex", "--data-dir", t.TempDir(), "--out", out)
	if code != exitFailure || !strings.Contains(stderr, "--data-dir") {
		t.Errorf("a --data-dir without the files: exit %d, %s", code, stderr)
	}
}
