package archtest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The longest hand-written files allowed: a file past its limit does
// several jobs and is split by concern. Go's _test.go files are exempt
// (their tables run long); generated code (*.pb.go, the bridge's
// envbridge/ package) is exempt.
const (
	maxGoLines     = 400
	maxPythonLines = 500
)

// TestNoFileOverItsLimit checks every tracked Go and Python file of the
// repository against its limit.
func TestNoFileOverItsLimit(t *testing.T) {
	root := moduleRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*.go", "*.py").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	checked := 0
	for _, rel := range strings.Fields(string(out)) {
		limit := 0
		switch {
		case strings.HasSuffix(rel, ".pb.go"), strings.HasSuffix(rel, "_test.go"),
			strings.Contains(rel, "/envbridge/"), strings.HasPrefix(rel, "results/"):
			continue
		case strings.HasSuffix(rel, ".go"):
			limit = maxGoLines
		case strings.HasSuffix(rel, ".py"):
			limit = maxPythonLines
		default:
			continue
		}
		n, err := countLines(filepath.Join(root, rel))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if n > limit {
			t.Errorf("%s has %d lines, over the limit of %d: split it by concern", rel, n, limit)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d files checked: is this the repository's root?", checked)
	}
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for s.Scan() {
		n++
	}
	return n, s.Err()
}
