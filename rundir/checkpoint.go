package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// checkpoint is checkpoint.json.
type checkpoint struct {
	Version    int             `json:"version"`
	Iter       int             `json:"iter"`
	Episodes   int             `json:"episodes"`
	CurveBytes int64           `json:"curve_bytes"`
	ElapsedS   float64         `json:"elapsed_s"`
	CPUS       float64         `json:"cpu_s"`
	Run        json.RawMessage `json:"run"`
	// CurveSHA256 is the SHA-256 of the curve's first CurveBytes bytes:
	// resume refuses a curve edited before the checkpoint (absent in
	// checkpoints written before it: not checked).
	CurveSHA256 string `json:"curve_sha256,omitempty"`
	// RunID and Seed are those of the run's run.json: a checkpoint of
	// another run does not resume (absent in version 2).
	RunID string `json:"run_id,omitempty"`
	Seed  uint64 `json:"seed,omitempty"`
	// SHA256 is the hex SHA-256 of the file's JSON with this field empty.
	SHA256 string `json:"sha256"`
}

// checkpointVersion is the version of checkpoint.json this build writes
// (the run files' Version). It also reads version 2, which names no run
// and resumes only a run.json from before versions; checkpoints written
// before version 2 do not resume.
const checkpointVersion = Version

func (c checkpoint) sum() (string, error) {
	c.SHA256 = ""
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// parseCheckpoint decodes and validates checkpoint.json; errors name the
// file and the field.
func parseCheckpoint(path string, b []byte) (checkpoint, error) {
	var cp checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return cp, fmt.Errorf("rundir: %s: %w", path, err)
	}
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("rundir: %w: %s: field %s: %s", ErrDamaged, path, field, fmt.Sprintf(format, a...))
	}
	if cp.Version != checkpointVersion && cp.Version != 2 {
		return cp, bad("version", "%d, this build resumes versions 2 and %d only (a run checkpointed by an older build cannot resume; its curve still plots)", cp.Version, checkpointVersion)
	}
	sum, err := cp.sum()
	if err != nil {
		return cp, fmt.Errorf("rundir: %s: %w", path, err)
	}
	switch {
	case cp.SHA256 != sum:
		return cp, bad("sha256", "the checksum does not match the contents: the file was changed or damaged")
	case cp.Iter < 0:
		return cp, bad("iter", "%d is negative", cp.Iter)
	case cp.Episodes < 0:
		return cp, bad("episodes", "%d is negative", cp.Episodes)
	case cp.CurveBytes < 0:
		return cp, bad("curve_bytes", "%d is negative", cp.CurveBytes)
	case !(cp.ElapsedS >= 0) || !(cp.CPUS >= 0):
		return cp, bad("elapsed_s", "times must be finite and ≥ 0, got %v and %v", cp.ElapsedS, cp.CPUS)
	case cp.Version == checkpointVersion && cp.CurveSHA256 == "":
		return cp, bad("curve_sha256", "missing or empty, but a checkpoint of version %d seals the curve", cp.Version)
	case len(cp.Run) == 0:
		return cp, bad("run", "the run's state is missing")
	}
	return cp, nil
}

// checkCurve cuts curve.jsonl back to the checkpoint's length and checks
// that its last point is the checkpoint's iteration, and that those bytes
// are the ones the checkpoint's checksum covers. It returns the hash of
// those bytes, to go on with.
func checkCurve(f *os.File, path string, cp checkpoint) (hash.Hash, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("rundir: resume: %w", err)
	}
	if st.Size() < cp.CurveBytes {
		return nil, fmt.Errorf("rundir: resume: %w: %s is %d bytes, shorter than the %d its checkpoint recorded", ErrDamaged, path, st.Size(), cp.CurveBytes)
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, io.NewSectionReader(f, 0, cp.CurveBytes)); err != nil {
		return nil, fmt.Errorf("rundir: resume: %w", err)
	}
	if cp.CurveSHA256 != "" && hex.EncodeToString(sum.Sum(nil)) != cp.CurveSHA256 {
		return nil, fmt.Errorf("rundir: resume: %w: the first %d bytes of %s do not match the checkpoint's checksum: the curve was edited or damaged", ErrDamaged, cp.CurveBytes, path)
	}
	if cp.CurveBytes > 0 {
		// The checkpoint's length must end a line: one that ends inside
		// a line would have the next point written onto its rest.
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, cp.CurveBytes-1); err != nil {
			return nil, fmt.Errorf("rundir: resume: %w", err)
		}
		if last[0] != '\n' {
			return nil, fmt.Errorf("rundir: resume: %w: the checkpoint's length of %s, %d bytes, ends inside a line", ErrDamaged, path, cp.CurveBytes)
		}
	}
	if err := f.Truncate(cp.CurveBytes); err != nil {
		return nil, fmt.Errorf("rundir: resume: %w", err)
	}
	if _, err := f.Seek(cp.CurveBytes, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rundir: resume: %w", err)
	}
	pts, err := ReadCurve(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("rundir: resume: %w", err)
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("rundir: resume: %s holds no point before the checkpoint", path)
	}
	if last := pts[len(pts)-1]; last.Iter != cp.Iter || last.Episodes != cp.Episodes {
		return nil, fmt.Errorf("rundir: resume: %w: %s ends at iteration %d (%d episodes) but the checkpoint is at iteration %d (%d episodes)",
			ErrDamaged, path, last.Iter, last.Episodes, cp.Iter, cp.Episodes)
	}
	return sum, nil
}
