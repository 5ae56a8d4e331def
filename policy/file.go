package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/stpis/stpis/internal/seal"
)

// FileVersion is the version of the policy file format that Marshal writes.
const FileVersion = 1

// File is a saved policy: the weights, the normalizer they were trained
// with, and the env they act in.
type File struct {
	Version    int         `json:"version"`
	EnvID      string      `json:"env_id"`
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

// Load reads a policy file that Marshal wrote and validates it.
func Load(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("policy: load: %w", err)
	}
	if _, err := seal.Check(b); err != nil {
		return File{}, fmt.Errorf("policy: load %s: %w", path, err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return File{}, fmt.Errorf("policy: load %s: %w", path, err)
	}
	if f.Version != FileVersion {
		return File{}, fmt.Errorf("policy: load %s: file version %d, this build reads %d", path, f.Version, FileVersion)
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
