package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/stpis/stpis/internal/safefile"
	"github.com/stpis/stpis/internal/seal"
)

// FileVersion is the version of the policy file format that Marshal
// writes: a file of this version is always sealed. Load also reads version
// 1, written before seals (sealed or not): the one exception, recognised
// by its version.
const FileVersion = 2

// maxFileBytes bounds the size of a policy file Load reads (Humanoid's, the
// largest task's, is about 200 KB).
const maxFileBytes = 64 << 20

// File is a saved policy: the weights, the normalizer they were trained
// with, and the env they act in.
type File struct {
	Version int    `json:"version"`
	EnvID   string `json:"env_id"`
	// RunID and Seed name the run whose directory holds the file (its
	// run.json's); a reader of a run directory refuses a policy of another
	// run. Empty in a file written outside a run.
	RunID      string      `json:"run_id,omitempty"`
	Seed       uint64      `json:"seed,omitempty"`
	Policy     *Linear     `json:"policy"`
	Normalizer *Normalizer `json:"normalizer"`
	// SHA256 seals the file (package seal): Marshal fills it and Load
	// refuses a file whose contents do not match it.
	SHA256 string `json:"sha256"`
}

// Marshal validates f and encodes it as JSON, the format Load reads.
// encoding/json writes float64 in the shortest form that parses back to the
// same bits, so Load returns exactly what was marshaled.
func Marshal(f File) ([]byte, error) {
	f.Version = FileVersion
	if f.Policy == nil || f.Normalizer == nil {
		return nil, errors.New("policy: policy and normalizer are required")
	}
	if err := f.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if f.Normalizer.Dim() != f.Policy.Cols {
		return nil, fmt.Errorf("policy: normalizer has %d features, policy %d columns", f.Normalizer.Dim(), f.Policy.Cols)
	}
	f.SHA256 = ""
	b, err := json.Marshal(f)
	if err == nil {
		b, err = seal.Seal(b)
	}
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return b, nil
}

// Stamp returns the policy file b (Marshal's) naming the run runID, seed
// seed, sealed again.
func Stamp(b []byte, runID string, seed uint64) ([]byte, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("policy: stamp: %w", err)
	}
	f.RunID, f.Seed = runID, seed
	return Marshal(f)
}

// ErrNotPolicy is wrapped by Load's error for a file that is no policy
// file at all: not one JSON object with a "policy" or a "normalizer" (a
// run's curve.jsonl, run.json or result.json).
var ErrNotPolicy = errors.New("not a policy file: a policy file is a run's policy.json or best_policy.json (one JSON object holding \"policy\" and \"normalizer\")")

// looksLikePolicy says whether b may be a policy file: false for one JSON
// object, or JSON lines whose first is one, without a policy's keys (a
// damaged or older policy file is Load's to refuse, naming why; so is a
// file that is not JSON).
func looksLikePolicy(b []byte) bool {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		first, _, _ := bytes.Cut(b, []byte("\n"))
		if len(first) == len(b) || json.Unmarshal(first, &m) != nil {
			return true
		}
	}
	_, p := m["policy"]
	_, n := m["normalizer"]
	return p || n
}

// ErrExportOnly is wrapped by Load's error for an npz: ARS's layout is
// written for ARS's own tools, carries no seal, and is not read back.
var ErrExportOnly = errors.New("an .npz is an export in ARS's layout, for ARS's own tools: it carries no seal, and the trainer does not read it back; give policy.json or best_policy.json (or the run directory)")

// Load reads a policy file that Marshal wrote and validates it: a regular
// file of at most 64 MiB, sealed (but for version 1, from before seals).
func Load(path string) (File, error) {
	b, err := safefile.Read(path, maxFileBytes)
	if err != nil {
		return File{}, fmt.Errorf("policy: load: %w", err)
	}
	if strings.EqualFold(filepath.Ext(path), ".npz") || bytes.HasPrefix(b, []byte("PK\x03\x04")) {
		return File{}, fmt.Errorf("policy: load %s: %w", path, ErrExportOnly)
	}
	if !looksLikePolicy(b) {
		return File{}, fmt.Errorf("policy: load %s: %w", path, ErrNotPolicy)
	}
	sealed, err := seal.Check(b)
	if err != nil {
		return File{}, fmt.Errorf("policy: load %s: %w", path, err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return File{}, fmt.Errorf("policy: load %s: %w", path, err)
	}
	if f.Version != FileVersion && f.Version != 1 {
		return File{}, fmt.Errorf("policy: load %s: file version %d, this build reads 1 and %d", path, f.Version, FileVersion)
	}
	if f.Version == 1 && f.RunID != "" {
		return File{}, fmt.Errorf("policy: load %s: field version: 1, but the file names run %q (version 1 names none): the version was changed", path, f.RunID)
	}
	if f.Version == FileVersion && !sealed {
		return File{}, fmt.Errorf("policy: load %s: field sha256: missing or empty, but a file of version %d is always sealed: the file was edited", path, f.Version)
	}
	if f.Policy == nil || f.Normalizer == nil {
		return File{}, fmt.Errorf("policy: load %s: missing policy or normalizer", path)
	}
	if err := f.Policy.Validate(); err != nil {
		return File{}, fmt.Errorf("policy: load %s: %w", path, err)
	}
	if f.Normalizer.Dim() != f.Policy.Cols || len(f.Normalizer.M2) != f.Policy.Cols {
		return File{}, fmt.Errorf("policy: load %s: normalizer has %d features, policy %d columns", path, f.Normalizer.Dim(), f.Policy.Cols)
	}
	for j := range f.Normalizer.M2 {
		if m, v := f.Normalizer.Mean[j], f.Normalizer.M2[j]; math.IsNaN(m) || math.IsInf(m, 0) || !(v >= 0) || math.IsInf(v, 0) {
			return File{}, fmt.Errorf("policy: load %s: normalizer.mean[%d] = %g, normalizer.m2[%d] = %g: want a finite mean and a finite m2 ≥ 0 (a sum of squares)", path, j, m, j, v)
		}
	}
	return f, nil
}
