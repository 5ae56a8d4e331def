package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/gif"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stpis/stpis/policy"
)

// hopperPolicy writes a Hopper-v1 policy file with random weights, so that
// the robot moves, and returns its path.
func hopperPolicy(t *testing.T) string {
	t.Helper()
	lin, err := policy.NewLinear(3, 11, false)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range lin.W {
		lin.W[i] = rng.NormFloat64()
	}
	norm, err := policy.NewNormalizer(11)
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.Marshal(policy.File{EnvID: "Hopper-v1", Policy: lin, Normalizer: norm})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRenderGIF renders a short episode through the venv's Python (EGL) and
// decodes the GIF back with Go's own decoder: one frame a step, the
// frames differ, and the result line names them.
func TestRenderGIF(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sub", "hop.gif")
	code, stdout, stderr := trainer(t, "render", "--policy", hopperPolicy(t), "-o", out, "--size", "64x48", "--every", "1", "--horizon", "12", "--seed", "3")
	if code != 0 {
		t.Fatalf("render: exit %d\n%s", code, stderr)
	}
	var r rendered
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("render's line off a terminal: %v: %q", err, stdout)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := gif.DecodeAll(f)
	if err != nil {
		t.Fatal(err)
	}
	// As eval's line: compact JSON, env as the policy file names it.
	if strings.Contains(stdout, `": `) || strings.Contains(stdout, `", "`) || r.Resolved != "Hopper-v5" {
		t.Errorf("render's line %q: want compact JSON with env and resolved", stdout)
	}
	if r.Env != "Hopper-v1" || len(r.Lengths) != 1 || r.Lengths[0] < 2 || r.Lengths[0] > 12 || len(g.Image) != r.Lengths[0] || r.Frames != len(g.Image) {
		t.Fatalf("episode of %v steps, %d frames said, %d in the file", r.Lengths, r.Frames, len(g.Image))
	}
	if b := g.Image[0].Bounds(); b.Dx() != 64 || b.Dy() != 48 {
		t.Fatalf("frame size %v", b)
	}
	for i := 1; i < len(g.Image); i++ {
		if samePixels(g.Image[i-1], g.Image[i]) {
			t.Fatalf("frames %d and %d are the same", i-1, i)
		}
	}
}

// samePixels says whether two frames have the same colour everywhere.
func samePixels(a, b image.Image) bool {
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}

func TestRenderBadInput(t *testing.T) {
	pol := hopperPolicy(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--policy", pol, "-o", filepath.Join(dir, "x.avi")},
		{"--policy", filepath.Join(dir, "none.json"), "-o", filepath.Join(dir, "x.gif")},
		{"--policy", pol, "-o", filepath.Join(dir, "x.gif"), "--episodes", "0"},
		{"--policy", pol, "-o", filepath.Join(dir, "x.gif"), "--size", "33x20"},
		{"--policy", pol, "-o", filepath.Join(dir, "x.gif"), "--every", "-2"},
		{"--policy", pol},
		// Issue 52: both names of the output (the last silently won), and a
		// horizon beyond Hopper's 1000 steps (eval refuses it).
		{"--policy", pol, "-o", filepath.Join(dir, "x.gif"), "--out", filepath.Join(dir, "x.mp4")},
		{"--policy", pol, "-o", filepath.Join(dir, "x.gif"), "--horizon", "5000"},
	} {
		code, _, stderr := trainer(t, append([]string{"render"}, args...)...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "trainer render: ") {
			t.Errorf("%v: exit %d, want 2 with one line\n%s", args, code, stderr)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "x.*")); len(m) != 0 {
		t.Errorf("bad input left files: %v", m)
	}
}

// TestRenderFindsUserModulesAsTrainDoes: with a relative PYTHONPATH, render
// finds a user's module as train and eval do (it failed with
// ModuleNotFoundError), and a policy of an env outside MuJoCo is refused in
// one line saying render needs a MuJoCo env (it gave a raw AttributeError)
// (issue 52 item 6).
func TestRenderFindsUserModulesAsTrainDoes(t *testing.T) {
	t.Setenv("PYTHONPATH", filepath.Join("..", "..", "bridge_py", "tests"))
	pol := writePolicy(t, "user_envs:PointMass-v0", 1, 2)
	out := filepath.Join(t.TempDir(), "x.gif")
	code, _, stderr := trainer(t, "render", "--policy", pol, "-o", out)
	if code != exitFailure || !strings.Contains(stderr, "is not a MuJoCo env") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, want %d and one line saying render needs a MuJoCo env:\n%s", code, exitFailure, stderr)
	}
}

// TestInterruptedRenderLeavesNoTemporary: a render interrupted (its context
// cancelled, as a signal does) exits 130 and leaves neither its temporary
// file nor a target (issue 52 item 5).
func TestInterruptedRenderLeavesNoTemporary(t *testing.T) {
	pol := hopperPolicy(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(ctx, make(chan struct{}), []string{"render", "--policy", pol, "-o", filepath.Join(dir, "x.mp4"), "--episodes", "100", "--every", "1"}, io.Discard, &stderr)
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, ".x.mp4.tmp*")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no temporary file within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	if code := <-done; code != exitInterrupted {
		t.Errorf("exit %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an interrupted render left %v", entries)
	}
}
