package rundir

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/stpis/stpis/internal/safefile"
	"github.com/stpis/stpis/internal/seal"
)

// Version is the version of the run files (run.json, result.json,
// checkpoint.json) this build writes. A file of this version carries a
// seal and the run's identity (RunID, Seed), and a file without them is
// refused. Files without a version were written before seals and run
// identities: they are read as they are (their seal is checked where they
// have one). That is the one exception, and it is recognised by the
// missing version, never by a missing seal.
const Version = 3

// The largest run files this package reads; a larger file, or one that is
// not a regular file (a device, a FIFO), is refused as damaged.
const (
	maxMetaBytes       = 1 << 20
	maxResultBytes     = 1 << 20
	maxCheckpointBytes = 256 << 20
	maxCurveBytes      = 256 << 20
)

// readFile reads one of a run's files: a regular file of at most limit
// bytes. A file that is not regular or is over the limit wraps ErrDamaged;
// a missing one wraps fs.ErrNotExist.
func readFile(path string, limit int64) ([]byte, error) {
	b, err := safefile.Read(path, limit)
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge):
		return nil, fmt.Errorf("rundir: %w: %w", ErrDamaged, err)
	}
	return nil, fmt.Errorf("rundir: %w", err)
}

// checkSealed refuses a file whose seal does not match, and a file of a
// version (not 0) without a seal.
func checkSealed(path string, b []byte, version int) error {
	sealed, err := seal.Check(b)
	switch {
	case err != nil:
		return fmt.Errorf("rundir: %w: %s: %w", ErrDamaged, path, err)
	case !sealed && version != 0:
		return fmt.Errorf("rundir: %w: %s: field sha256: missing or empty, but a file of version %d is always sealed: the file was edited", ErrDamaged, path, version)
	}
	return nil
}

// checkVersion refuses a version this build does not read.
func checkVersion(path string, v int) error {
	if v != 0 && v != Version {
		return fmt.Errorf("rundir: %w: %s: field version: %d; this build reads version %d and files from before versions (none)", ErrDamaged, path, v, Version)
	}
	return nil
}

// checkUnversioned refuses a file without a version that names a run:
// files from before versions named none, so its version was removed.
func checkUnversioned(path string, version int, runID string) error {
	if version == 0 && runID != "" {
		return fmt.Errorf("rundir: %w: %s: field version: missing, but the file names run %q (files from before versions name none): the version was removed", ErrDamaged, path, runID)
	}
	return nil
}

// belongs refuses a sealed file of another run: its run identity and, from
// version 3, its seed must be run.json's, and a run of version 3 takes no
// file from before.
func belongs(path string, meta Meta, version int, runID string, seed uint64) error {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("rundir: %w: %s: field %s: %s: a file of another run", ErrDamaged, path, field, fmt.Sprintf(format, a...))
	}
	switch {
	case runID != meta.RunID:
		return bad("run_id", "%q, but %s is run %q", runID, MetaFile, meta.RunID)
	case meta.Version != 0 && version != meta.Version:
		return bad("version", "%d, but %s is version %d", version, MetaFile, meta.Version)
	case version != 0 && seed != meta.Seed:
		return bad("seed", "%d, but %s is seed %d", seed, MetaFile, meta.Seed)
	}
	return nil
}

// ReadMeta reads and checks dir's run.json.
func ReadMeta(dir string) (Meta, error) {
	path := filepath.Join(dir, MetaFile)
	b, err := readFile(path, maxMetaBytes)
	if err != nil {
		return Meta{}, err
	}
	if err := checkSealed(path, b, 0); err != nil {
		return Meta{}, err
	}
	var raw struct {
		Meta
		HasThreshold *bool `json:"has_threshold"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Meta{}, fmt.Errorf("rundir: %s: %w", path, err)
	}
	m := raw.Meta
	if raw.HasThreshold != nil {
		m.HasThreshold = *raw.HasThreshold
	} else {
		m.HasThreshold = m.Threshold != 0
	}
	if err := checkVersion(path, m.Version); err != nil {
		return Meta{}, err
	}
	if err := checkUnversioned(path, m.Version, m.RunID); err != nil {
		return Meta{}, err
	}
	if err := checkPredates(path, m); err != nil {
		return Meta{}, err
	}
	if err := checkSealed(path, b, m.Version); err != nil {
		return Meta{}, err
	}
	if m.Version != 0 && m.RunID == "" {
		return Meta{}, fmt.Errorf("rundir: %w: %s: field run_id: missing or empty, but a run.json of version %d names its run", ErrDamaged, path, m.Version)
	}
	return m, nil
}

// ReadResult reads dir's result.json and checks that it belongs to the
// run whose run.json is meta; nil when the run has not finished.
func ReadResult(dir string, meta Meta) (*Result, error) {
	path := filepath.Join(dir, ResultFile)
	b, err := readFile(path, maxResultBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := checkSealed(path, b, 0); err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("rundir: %s: %w", path, err)
	}
	if err := checkVersion(path, r.Version); err != nil {
		return nil, err
	}
	if err := checkUnversioned(path, r.Version, r.RunID); err != nil {
		return nil, err
	}
	if err := checkSealed(path, b, r.Version); err != nil {
		return nil, err
	}
	if err := belongs(path, meta, r.Version, r.RunID, r.Seed); err != nil {
		return nil, err
	}
	if r.Version != 0 && r.CurveSHA256 == "" {
		return nil, fmt.Errorf("rundir: %w: %s: field curve_sha256: missing or empty, but a result of version %d seals its curve", ErrDamaged, path, r.Version)
	}
	return &r, nil
}

// readCheckpoint reads dir's checkpoint.json and checks that it belongs to
// the run whose run.json is meta. A missing checkpoint wraps
// ErrNoCheckpoint.
func readCheckpoint(dir string, meta Meta) (checkpoint, error) {
	path := filepath.Join(dir, CheckpointFile)
	b, err := readFile(path, maxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return checkpoint{}, fmt.Errorf("%s %w", dir, ErrNoCheckpoint)
	}
	if err != nil {
		return checkpoint{}, err
	}
	cp, err := parseCheckpoint(path, b)
	if err != nil {
		return cp, err
	}
	v := 0 // a checkpoint of version 2 names no run
	if cp.Version == Version {
		v = Version
	}
	return cp, belongs(path, meta, v, cp.RunID, cp.Seed)
}

// ReadRun reads and checks a run directory as the reports see it: its
// run.json; its result.json (nil while the run goes on); and its curve,
// checked against the result's checksum when the run finished, and else,
// in a run of this version, cut at its last checkpoint and checked against
// the checkpoint's checksum (the lines after a checkpoint are not yet
// sealed, and are not read). Every error but a missing checkpoint wraps
// ErrDamaged where a file was changed, damaged or mixed in.
func ReadRun(dir string) (Meta, []Point, *Result, error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		return meta, nil, nil, err
	}
	res, err := ReadResult(dir, meta)
	if err != nil {
		return meta, nil, nil, err
	}
	path := filepath.Join(dir, CurveFile)
	switch {
	case res != nil && res.CurveSHA256 == "": // a result from before curve checksums
		pts, err := ReadCurve(dir)
		if err == nil {
			err = checkAgainstCurve(dir, meta, pts, res)
		}
		return meta, pts, res, err
	case res != nil:
		b, err := readFile(path, maxCurveBytes)
		if err != nil {
			return meta, nil, nil, err
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != res.CurveSHA256 {
			return meta, nil, nil, fmt.Errorf("rundir: %w: %s does not match the checksum in %s: the curve was edited or damaged", ErrDamaged, path, ResultFile)
		}
		pts, err := parseCurve(path, b)
		if err == nil {
			err = checkAgainstCurve(dir, meta, pts, res)
		}
		return meta, pts, res, err
	case meta.Version == 0:
		pts, err := ReadCurve(dir)
		return meta, pts, nil, err
	}
	cp, err := readCheckpoint(dir, meta)
	if err != nil {
		return meta, nil, nil, fmt.Errorf("%w (an unfinished run is read up to its last checkpoint, which seals its curve)", err)
	}
	b, err := readFile(path, maxCurveBytes)
	if err != nil {
		return meta, nil, nil, err
	}
	if int64(len(b)) < cp.CurveBytes {
		return meta, nil, nil, fmt.Errorf("rundir: %w: %s is %d bytes, shorter than the %d its checkpoint recorded", ErrDamaged, path, len(b), cp.CurveBytes)
	}
	b = b[:cp.CurveBytes]
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != cp.CurveSHA256 {
		return meta, nil, nil, fmt.Errorf("rundir: %w: the first %d bytes of %s do not match the checkpoint's checksum: the curve was edited or damaged", ErrDamaged, cp.CurveBytes, path)
	}
	pts, err := parseCurve(path, b)
	return meta, pts, nil, err
}

// newRunID draws a run's identity: 16 random bytes, in hex.
func newRunID() (string, error) {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("rundir: run id: %w", err)
	}
	return hex.EncodeToString(r[:]), nil
}

// staleTemp matches the temporary files writeAtomic writes (createTemp).
var staleTemp = regexp.MustCompile(`^\..+\.tmp[0-9a-f]{16}$`)

// removeStale removes the temporary files that a trainer killed while it
// wrote left in the run directory dir (whose lock the caller holds), and
// returns their names.
func removeStale(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("rundir: %w", err)
	}
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !staleTemp.MatchString(e.Name()) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("rundir: removing a stale temporary file: %w", err)
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}
