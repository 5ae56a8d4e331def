package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sealedFile writes a sealed policy file of run "r1", seed 7, and returns
// its path and bytes.
func sealedFile(t *testing.T) (string, []byte) {
	t.Helper()
	l, _ := NewLinear(2, 3, false)
	l.W[0] = 0.5
	n, _ := NewNormalizer(3)
	b, err := Marshal(File{EnvID: "Swimmer-v1", Policy: l, Normalizer: n})
	if err != nil {
		t.Fatal(err)
	}
	if b, err = Stamp(b, "r1", 7); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b
}

func TestStampNamesTheRun(t *testing.T) {
	path, _ := sealedFile(t)
	f, err := Load(path)
	if err != nil || f.RunID != "r1" || f.Seed != 7 || f.Version != FileVersion || f.Policy.W[0] != 0.5 {
		t.Fatalf("a stamped file loads as %+v, %v", f, err)
	}
}

// TestBlankedSealIsRefused: a file of this version with its seal emptied
// or deleted is refused; version 1 (before seals) is read without one.
func TestBlankedSealIsRefused(t *testing.T) {
	path, b := sealedFile(t)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["policy"].(map[string]any)["w"].([]any)[0] = 9.5
	for _, drop := range []bool{false, true} {
		doc["sha256"] = ""
		if drop {
			delete(doc, "sha256")
		}
		out, _ := json.Marshal(doc)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "field sha256: missing or empty") {
			t.Fatalf("a blanked seal (deleted: %v): err = %v", drop, err)
		}
	}
	doc["version"] = 1
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "the version was changed") {
		t.Fatalf("version 1 naming a run: err = %v", err)
	}
	delete(doc, "run_id")
	delete(doc, "seed")
	out, _ = json.Marshal(doc)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Load(path); err != nil || f.Policy.W[0] != 9.5 {
		t.Fatalf("an unsealed version 1 file: %+v, %v", f, err)
	}
}

// TestLoadRefusesNPZAndFilesThatAreNotRegular: an npz is export-only; a
// device is refused before it is read.
func TestLoadRefusesNPZAndFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	npz := filepath.Join(dir, "lin_policy_plus.npz")
	if err := os.WriteFile(npz, []byte("PK\x03\x04 zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(npz); !errors.Is(err, ErrExportOnly) {
		t.Fatalf("load of an npz: %v", err)
	}
	renamed := filepath.Join(dir, "p.json")
	if err := os.WriteFile(renamed, []byte("PK\x03\x04 zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(renamed); !errors.Is(err, ErrExportOnly) {
		t.Fatalf("load of an npz named .json: %v", err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(zero); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("load of /dev/zero: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, bytes.Repeat([]byte(" "), maxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("load of a file over the limit: %v", err)
	}
}
