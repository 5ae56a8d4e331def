package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stpis/stpis/internal/safefile"
)

// Path is the directory of one run: <out>/<env>/<method>/seed<N>, where
// method names the optimizer and its variant ("stp_is-adaptive") and env
// is the env id as a safe directory name (EnvDir: user_envs:PointMass-v0
// is user_envs_PointMass-v0; run.json keeps the exact id).
func Path(out, env, method string, seed uint64) string {
	return filepath.Join(out, EnvDir(env), method, "seed"+strconv.FormatUint(seed, 10))
}

// LegacyPath is the directory builds before EnvDir gave a run: the env id
// as it is (a module:Id's ":" in the name). Such a run still resumes.
func LegacyPath(out, env, method string, seed uint64) string {
	return filepath.Join(out, env, method, "seed"+strconv.FormatUint(seed, 10))
}

// EnvDir is env as one safe file or directory name: every character but
// ASCII letters, digits, '.', '-' and '_' becomes '_' (a module:Id's ':',
// which breaks PATH-style lists, scp and Windows; a namespace's '/'), and
// an empty id, or one of dots only, becomes "unknown".
func EnvDir(env string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, env)
	if strings.Trim(safe, ".") == "" {
		return "unknown"
	}
	return safe
}

// ErrOccupied is returned by Create when the directory holds another run.
var ErrOccupied = errors.New("holds another run")

// ErrDamaged is returned by Open when the run's files disagree with its
// checkpoint (a damaged or edited file).
var ErrDamaged = errors.New("damaged run")

// ErrNoCheckpoint is returned by Open when the run has no checkpoint (it
// stopped before its first one): there is nothing to resume.
var ErrNoCheckpoint = errors.New("has no checkpoint to resume from")

// Snapshot is a run's state at a checkpoint.
type Snapshot struct {
	// Iter and Episodes are the run's counters, checked against the last
	// curve point on resume.
	Iter, Episodes int
	// State is the run's own serialization, a JSON document.
	State []byte
	// Policy and Best are the encoded policy files; Best is nil when the
	// run has no best policy yet.
	Policy, Best []byte
}

// Dir is a run directory open for writing by one trainer, which holds the
// directory's lock (LockFile) until Close. It is not safe for concurrent
// use.
type Dir struct {
	path  string
	curve *os.File
	// curveSum hashes every byte of curve.jsonl so far.
	curveSum hash.Hash
	lock     *os.File
	// The wall and CPU time of earlier invocations, and where this one
	// started.
	priorWall, priorCPU float64
	start               time.Time
	startCPU            float64
	startEpisodes       int
	// meta is the run's run.json, whose identity every sealed file the
	// run writes carries.
	meta Meta
	// made lists the directories Create made, deepest first, while fresh
	// says that Create made the run and it has not checkpointed yet
	// (Discard).
	made  []string
	fresh bool
}

// Create starts a fresh run in path, writing meta as run.json, and holds
// the directory's lock until Close. A run already there is replaced when
// force is set, and is otherwise an error wrapping ErrOccupied. A run that
// another process has open is never touched, force or not: the error wraps
// ErrLocked and names that process's pid.
func Create(path string, meta Meta, force bool) (*Dir, error) {
	var made []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		made = append(made, p)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("rundir: %w", err)
	}
	lk, err := lock(path)
	if err != nil {
		return nil, err
	}
	d, err := create(path, meta, force)
	if err != nil {
		unlock(lk)
		return nil, err
	}
	d.lock, d.made, d.fresh = lk, made, true
	return d, nil
}

// Discard removes a run that Create made and that never checkpointed (its
// first iteration failed: it never started), with the directories Create
// made for it, and lets go of its lock. It refuses a run that was resumed
// or has checkpointed, and a Dir already closed.
func (d *Dir) Discard() error {
	if !d.fresh || d.curve == nil {
		return errors.New("rundir: discard: the run has started (or was resumed, or is closed)")
	}
	err := d.curve.Close()
	if rerr := emptyRun(d.path); err == nil {
		err = rerr
	}
	if uerr := unlock(d.lock); err == nil {
		err = uerr
	}
	d.curve, d.lock, d.fresh = nil, nil, false
	for _, p := range d.made {
		os.Remove(p) // best effort: one another run shares is not empty, and stays
	}
	if err != nil {
		return fmt.Errorf("rundir: discard %s: %w", d.path, err)
	}
	return nil
}

// create is Create under the lock.
func create(path string, meta Meta, force bool) (*Dir, error) {
	if Exists(path) {
		if !force {
			return nil, fmt.Errorf("%s %w", path, ErrOccupied)
		}
		if err := emptyRun(path); err != nil {
			return nil, fmt.Errorf("rundir: replacing %s: %w", path, err)
		}
	}
	id, err := newRunID()
	if err != nil {
		return nil, err
	}
	meta.Version, meta.RunID, meta.SHA256 = Version, id, ""
	if err := writeSealed(filepath.Join(path, MetaFile), meta); err != nil {
		return nil, fmt.Errorf("rundir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(path, CurveFile), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, filePerm)
	if err != nil {
		return nil, fmt.Errorf("rundir: %w", err)
	}
	return &Dir{path: path, curve: f, curveSum: sha256.New(), start: time.Now(), startCPU: cpuSeconds(), meta: meta}, nil
}

// emptyRun removes everything in the run directory path but the lock file,
// which the caller holds (removing it would let another trainer lock a new
// one).
func emptyRun(path string) error {
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == LockFile {
			continue
		}
		if err := os.RemoveAll(filepath.Join(path, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Open reopens the run in path at its last checkpoint and returns the
// run's state; it holds the directory's lock until Close, and fails with
// an error wrapping ErrLocked, naming the holder's pid, while another
// process has the run open. The checkpoint's checksum and its agreement
// with curve.jsonl are checked, and the curve lines written after the
// checkpoint (whose iterations the resumed run repeats) are cut off. A
// curve shorter than the checkpoint says is refused: the file was damaged.
func Open(path string) (*Dir, []byte, error) {
	lk, err := lock(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s %w", path, ErrNoCheckpoint)
	}
	if err != nil {
		return nil, nil, err
	}
	d, state, err := open(path)
	if err != nil {
		unlock(lk)
		return nil, nil, err
	}
	d.lock = lk
	return d, state, nil
}

// open is Open under the lock: run.json is checked first, then the
// checkpoint (which must belong to it), then the curve.
func open(path string) (*Dir, []byte, error) {
	meta, err := ReadMeta(path)
	if err != nil {
		return nil, nil, err
	}
	if _, err := removeStale(path); err != nil {
		return nil, nil, err
	}
	cp, err := readCheckpoint(path, meta)
	if err != nil {
		return nil, nil, err
	}
	curvePath := filepath.Join(path, CurveFile)
	f, err := safefile.Open(curvePath, os.O_RDWR)
	if errors.Is(err, safefile.ErrNotRegular) {
		return nil, nil, fmt.Errorf("rundir: resume: %w: %w", ErrDamaged, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("rundir: resume: %w", err)
	}
	sum, err := checkCurve(f, curvePath, cp)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	d := &Dir{path: path, curve: f, curveSum: sum, priorWall: cp.ElapsedS, priorCPU: cp.CPUS, start: time.Now(), startCPU: cpuSeconds(),
		startEpisodes: cp.Episodes, meta: meta}
	return d, cp.Run, nil
}

// Path returns the directory.
func (d *Dir) Path() string { return d.path }

// Meta returns the run's run.json.
func (d *Dir) Meta() Meta { return d.meta }

// Elapsed returns the run's wall and CPU seconds over all its invocations.
// CPU time is this process's (a local bridge's is not counted).
func (d *Dir) Elapsed() (wall, cpu float64) {
	return d.priorWall + time.Since(d.start).Seconds(), d.priorCPU + cpuSeconds() - d.startCPU
}

// Append writes p as the next curve line, with its ElapsedS and EpsPerS
// filled in, and returns it so.
func (d *Dir) Append(p Point) (Point, error) {
	wall, _ := d.Elapsed()
	p.ElapsedS = round3(wall)
	if s := time.Since(d.start).Seconds(); s > 0 {
		p.EpsPerS = round3(float64(p.Episodes-d.startEpisodes) / s)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return p, fmt.Errorf("rundir: curve: %w", err)
	}
	line := append(b, '\n')
	if _, err := d.curve.Write(line); err != nil {
		return p, fmt.Errorf("rundir: curve: %w", err)
	}
	d.curveSum.Write(line)
	return p, nil
}

// Checkpoint saves s: the policy files, then checkpoint.json with the
// curve's length, so that a resume continues from here.
func (d *Dir) Checkpoint(s Snapshot) error {
	if !json.Valid(s.State) {
		return errors.New("rundir: checkpoint: the run's state is not a JSON document")
	}
	off, err := d.curve.Seek(0, io.SeekCurrent)
	if err == nil {
		err = d.curve.Sync()
	}
	if err != nil {
		return fmt.Errorf("rundir: checkpoint: %w", err)
	}
	if err := writeAtomic(filepath.Join(d.path, PolicyFile), s.Policy, filePerm); err != nil {
		return fmt.Errorf("rundir: checkpoint: %w", err)
	}
	if s.Best != nil {
		if err := writeAtomic(filepath.Join(d.path, BestFile), s.Best, filePerm); err != nil {
			return fmt.Errorf("rundir: checkpoint: %w", err)
		}
	}
	wall, cpu := d.Elapsed()
	cp := checkpoint{Version: checkpointVersion, Iter: s.Iter, Episodes: s.Episodes, CurveBytes: off, ElapsedS: wall, CPUS: cpu, Run: s.State,
		CurveSHA256: hex.EncodeToString(d.curveSum.Sum(nil)), RunID: d.meta.RunID, Seed: d.meta.Seed}
	if cp.SHA256, err = cp.sum(); err != nil {
		return fmt.Errorf("rundir: checkpoint: %w", err)
	}
	b, err := json.Marshal(cp)
	if err == nil {
		err = writeAtomic(filepath.Join(d.path, CheckpointFile), b, checkpointPerm)
	}
	if err != nil {
		return fmt.Errorf("rundir: checkpoint: %w", err)
	}
	d.fresh = false
	return nil
}

// Finish writes result.json, with the run's wall and CPU time filled in,
// and the final and best policies in ARS's npz layout (bestNPZ may be nil).
func (d *Dir) Finish(res Result, npz, bestNPZ []byte) (Result, error) {
	wall, cpu := d.Elapsed()
	res.WallS, res.CPUS = round3(wall), round3(cpu)
	for name, b := range map[string][]byte{NPZFile: npz, BestNPZFile: bestNPZ} {
		if b == nil {
			continue
		}
		if err := writeAtomic(filepath.Join(d.path, name), b, filePerm); err != nil {
			return res, fmt.Errorf("rundir: finish: %w", err)
		}
	}
	res.Version, res.RunID, res.Seed = Version, d.meta.RunID, d.meta.Seed
	res.CurveSHA256, res.SHA256 = hex.EncodeToString(d.curveSum.Sum(nil)), ""
	if err := writeSealed(filepath.Join(d.path, ResultFile), res); err != nil {
		return res, fmt.Errorf("rundir: finish: %w", err)
	}
	return res, nil
}

// Reopen removes result.json, so that a finished run whose budget was
// raised goes on.
func (d *Dir) Reopen() error {
	if err := os.Remove(filepath.Join(d.path, ResultFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("rundir: %w", err)
	}
	return nil
}

// Close closes the curve file and lets go of the directory's lock; a
// second Close does nothing.
func (d *Dir) Close() error {
	if d.curve == nil {
		return nil
	}
	err := d.curve.Close()
	if uerr := unlock(d.lock); err == nil {
		err = uerr
	}
	d.curve, d.lock = nil, nil
	if err != nil {
		return fmt.Errorf("rundir: close %s: %w", d.path, err)
	}
	return nil
}

func round3(v float64) float64 {
	return math.Round(v*1000) / 1000
}

// cpuSeconds is this process's user+system CPU time (children excluded).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
