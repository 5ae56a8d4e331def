package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Issue 34, defect 1: --workers passes to the local bridge; a count below 0
// (which became the core count) or above the limit exits 2 with one line
// naming the flag and the limit, before a bridge or a run directory exists.
func TestWorkersFlagIsBounded(t *testing.T) {
	limit := workersPerCore * runtime.NumCPU()
	for _, v := range []string{"-1", strconv.Itoa(limit + 1), "100000", "many"} {
		out := filepath.Join(t.TempDir(), "runs")
		code, _, stderr := trainer(t, "--env", "Hopper-v1", "--workers", v, "--max-episodes", "40", "--out", out, "--log-level", "warn")
		if code != exitUsage || !strings.Contains(stderr, "-workers") {
			t.Fatalf("--workers %s: exit %d, stderr:\n%s", v, code, stderr)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--workers %s: want one line, got:\n%s", v, stderr)
		}
		if v != "many" && !strings.Contains(stderr, fmt.Sprintf("the limit %d (", limit)) {
			t.Errorf("--workers %s: the line does not name the limit %d: %s", v, limit, stderr)
		}
		if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("--workers %s left %s behind (%v)", v, out, err)
		}
	}
	for _, v := range []int{0, 1, limit} {
		f, err := parseTrainFlags([]string{"--env", "Hopper-v1", "--workers", strconv.Itoa(v)}, io.Discard)
		if err != nil || f.workers != v {
			t.Errorf("--workers %d: %v, workers %v", v, err, f)
		}
	}
}
