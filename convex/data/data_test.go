package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbeddedSums checks every shipped file, as embedded, against
// SHA256SUMS, and that SHA256SUMS names exactly the shipped files.
func TestEmbeddedSums(t *testing.T) {
	sums, err := FS.ReadFile("SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		want, name, _ := strings.Cut(line, "  ")
		b, err := FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != want {
			t.Errorf("%s: SHA-256 %x, want %s", name, h, want)
		}
		names = append(names, name)
	}
	if strings.Join(names, " ") != strings.Join(Shipped, " ") {
		t.Errorf("SHA256SUMS names %v, want %v", names, Shipped)
	}
}

// fetch runs fetch.sh with the environment env added.
func fetch(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("fetch.sh needs curl: %v", err)
	}
	cmd := exec.Command("bash", append([]string{"fetch.sh"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestFetchChecksSums runs `make data`'s script on the shipped files,
// served from a file:// "mirror": a file whose sum matches its pin is
// kept and recorded, a corrupted one is refused and removed, and one with
// no pin is refused until DATA_PIN=1 pins the sum it printed.
func TestFetchChecksSums(t *testing.T) {
	mirror, dir := t.TempDir(), t.TempDir()
	sums := map[string]string{}
	for _, name := range []string{"heart_scale", "australian_scale"} {
		b, err := FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		sums[name] = hex.EncodeToString(h[:])
		if name == "australian_scale" {
			b = append(b, "+1 1:1\n"...) // not what was pinned
		}
		if err := os.WriteFile(filepath.Join(mirror, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sources := filepath.Join(t.TempDir(), "SOURCES")
	text := "# test\nheart_scale https://example.org/heart_scale " + sums["heart_scale"] + "\n" +
		"australian_scale https://example.org/australian_scale " + sums["australian_scale"] + "\n"
	if err := os.WriteFile(sources, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"DATA_URL_BASE=file://" + mirror, "DATA_DIR=" + dir, "DATA_SOURCES=" + sources}
	out, err := fetch(t, env)
	if err == nil || !strings.Contains(out, "heart_scale: ok (270 rows)") || !strings.Contains(out, "australian_scale: SHA-256") {
		t.Fatalf("a corrupted file: err %v, output:\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "australian_scale")); !os.IsNotExist(err) {
		t.Errorf("the corrupted file is kept: %v", err)
	}
	if out, err := fetch(t, env, "--check"); err != nil || !strings.Contains(out, "extra data: 1 files match") {
		t.Errorf("--check: %v\n%s", err, out)
	}

	// No pin: refused, with the sum to check; DATA_PIN=1 pins it.
	if err := os.WriteFile(sources, []byte("mushrooms https://example.org/mushrooms -\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := FS.ReadFile("mushrooms")
	if err := os.WriteFile(filepath.Join(mirror, "mushrooms"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	want := hex.EncodeToString(h[:])
	if out, err := fetch(t, env); err == nil || !strings.Contains(out, "no sum is pinned") || !strings.Contains(out, want) {
		t.Errorf("an unpinned set: err %v\n%s", err, out)
	}
	if out, err := fetch(t, append(env, "DATA_PIN=1")); err != nil || !strings.Contains(out, "pinned "+want) {
		t.Errorf("DATA_PIN=1: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(sources); !strings.Contains(string(got), want) {
		t.Errorf("SOURCES after pinning: %s", got)
	}
}
