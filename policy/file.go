package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// FileVersion is the version of the policy file format written by Save.
const FileVersion = 1

// File is a saved policy: the weights, the normalizer they were trained
// with, and the env they act in.
type File struct {
	Version    int         `json:"version"`
	EnvID      string      `json:"env_id"`
	Policy     *Linear     `json:"policy"`
	Normalizer *Normalizer `json:"normalizer"`
}

// Save writes f as JSON to path atomically (a temporary file, then rename).
// encoding/json writes float64 in the shortest form that parses back to the
// same bits, so Load returns exactly what was saved.
func Save(path string, f File) error {
	f.Version = FileVersion
	if f.Policy == nil || f.Normalizer == nil {
		return fmt.Errorf("policy: save %s: policy and normalizer are required", path)
	}
	if err := f.Policy.Validate(); err != nil {
		return fmt.Errorf("policy: save %s: %w", path, err)
	}
	if f.Normalizer.Dim() != f.Policy.Cols {
		return fmt.Errorf("policy: save %s: normalizer has %d features, policy %d columns", path, f.Normalizer.Dim(), f.Policy.Cols)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("policy: save %s: %w", path, err)
	}
	return WriteFileAtomic(path, b)
}

// Load reads a policy file written by Save and validates it.
func Load(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("policy: load: %w", err)
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
	return f, nil
}

// WriteFileAtomic writes b to path through a temporary file in the same
// directory and a rename, so a crash never leaves a half-written file.
func WriteFileAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
