package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runOf creates a run of seed under out with n points, checkpointed after
// the last, finished when finish is set.
func runOf(t *testing.T, out, env string, seed uint64, n int, finish bool) string {
	t.Helper()
	path := Path(out, env, "stp_is-adaptive", seed)
	d, err := Create(path, Meta{Env: env, Method: "stp_is", Seed: seed, Threshold: 3120, HasThreshold: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := 0; i < n; i++ {
		if _, err := d.Append(Point{Iter: i, Episodes: 12 * i, Reward: float64(i) + float64(seed), HasEval: true, EvalMean: 10 * float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Checkpoint(Snapshot{Iter: n - 1, Episodes: 12 * (n - 1), State: []byte(`{"x":[1,2]}`), Policy: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if finish {
		e := 12
		if _, err := d.Finish(Result{Reached: true, EpisodesToThreshold: &e, BestEval: 3200}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// rewrite replaces old with new in the file path (a JSON edit that need
// not keep the length).
func rewrite(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s holds no %q:\n%s", path, old, b)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// blankSeal empties (or, with drop, deletes) the seal of the JSON file path.
func blankSeal(t *testing.T, path string, drop bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["sha256"] = ""
	if drop {
		delete(doc, "sha256")
	}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantDamaged(t *testing.T, what string, err error, says string) {
	t.Helper()
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), says) {
		t.Fatalf("%s: err = %v, want ErrDamaged saying %q", what, err, says)
	}
}

// TestBlankedSealsAreRefused: a file of this version with its seal emptied
// or deleted (and its contents edited) is refused as a wrong seal is.
func TestBlankedSealsAreRefused(t *testing.T) {
	for _, drop := range []bool{false, true} {
		path := runOf(t, t.TempDir(), "Hopper-v1", 1, 3, true)
		res := filepath.Join(path, ResultFile)
		rewrite(t, res, `"reached": true`, `"reached": false`)
		blankSeal(t, res, drop)
		_, _, _, err := ReadRun(path)
		wantDamaged(t, "result.json with a blanked seal", err, "field sha256: missing or empty")

		path = runOf(t, t.TempDir(), "Hopper-v1", 1, 3, true)
		blankSeal(t, filepath.Join(path, MetaFile), drop)
		_, _, _, err = ReadRun(path)
		wantDamaged(t, "run.json with a blanked seal", err, "field sha256: missing or empty")
		_, _, err = Open(path)
		wantDamaged(t, "resume of a run.json with a blanked seal", err, "field sha256")
	}
}

// TestFilesFromBeforeSealsAreRead: a run.json and result.json without a
// version (written before seals) are read as they are, sealed or not.
func TestFilesFromBeforeSealsAreRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "seed3")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		MetaFile:   `{"env":"Hopper-v1","method":"stp","seed":3,"threshold":3120}`,
		ResultFile: `{"episodes_to_threshold":24,"reached":true,"episodes":24}`,
		CurveFile:  `{"iter":0,"episodes":0,"reward":1,"best_eval":1}` + "\n" + `{"iter":1,"episodes":24,"reward":2,"best_eval":3200}` + "\n",
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, pts, res, err := ReadRun(dir)
	if err != nil || m.Version != 0 || len(pts) != 2 || res == nil || !res.Reached {
		t.Fatalf("a run from before seals: %+v %v %+v, %v", m, pts, res, err)
	}
	// A file without a version that names a run had its version removed.
	rewrite(t, filepath.Join(dir, MetaFile), `"seed":3`, `"seed":3,"run_id":"r1"`)
	_, _, _, err = ReadRun(dir)
	wantDamaged(t, "a run.json without a version naming a run", err, "the version was removed")
	rewrite(t, filepath.Join(dir, MetaFile), `"seed":3,"run_id":"r1"`, `"seed":3`)
	// A result of this version does not belong to a run.json of another.
	rewrite(t, filepath.Join(dir, ResultFile), `"reached":true`, `"version":3,"run_id":"x","reached":true`)
	_, _, _, err = ReadRun(dir)
	wantDamaged(t, "a result of this version in a run from before", err, "field sha256")
}

// TestFilesOfAnotherRunAreRefused: each sealed file names its run: a
// result, a curve or a checkpoint copied from another seed or env is
// refused by the reports and by --resume.
func TestFilesOfAnotherRunAreRefused(t *testing.T) {
	out := t.TempDir()
	one := runOf(t, out, "Swimmer-v1", 1, 3, true)
	seven := runOf(t, out, "Swimmer-v1", 7, 3, true)
	hopper := runOf(t, out, "Hopper-v1", 1, 5, false)
	cp := func(from, to string, names ...string) {
		t.Helper()
		for _, name := range names {
			b, err := os.ReadFile(filepath.Join(from, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cp(seven, one, CurveFile, ResultFile)
	_, _, _, err := ReadRun(one)
	wantDamaged(t, "seed 7's result and curve in seed 1", err, "field run_id")

	// Hopper's checkpoint and curve in a Swimmer run.
	swimmer := runOf(t, t.TempDir(), "Swimmer-v1", 1, 3, false)
	cp(hopper, swimmer, CheckpointFile, CurveFile)
	_, _, err = Open(swimmer)
	wantDamaged(t, "resume of Hopper's checkpoint in a Swimmer run", err, "field run_id")
	_, _, _, err = ReadRun(swimmer)
	wantDamaged(t, "report of Hopper's checkpoint in a Swimmer run", err, "field run_id")
}

// TestUnfinishedRunsAreReadUpToTheirCheckpoint: the reports check an
// unfinished run's curve against its checkpoint and read nothing after it.
func TestUnfinishedRunsAreReadUpToTheirCheckpoint(t *testing.T) {
	path := runOf(t, t.TempDir(), "Hopper-v1", 1, 3, false)
	f, err := os.OpenFile(filepath.Join(path, CurveFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"iter":3,"episodes":36,"reward":85,"best_eval":9000,"eval_mean":9000,"eval_std":0,"threshold_reached_at":36}` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, pts, res, err := ReadRun(path)
	if err != nil || res != nil || len(pts) != 3 || pts[2].Iter != 2 {
		t.Fatalf("a line appended after the checkpoint was read: %+v, %v", pts, err)
	}
	rewrite(t, filepath.Join(path, CurveFile), `"reward":2`, `"reward":85`)
	_, _, _, err = ReadRun(path)
	wantDamaged(t, "a line edited before the checkpoint", err, "checksum")

	// Without a checkpoint, an unfinished run of this version cannot be
	// checked, and is not read.
	path = runOf(t, t.TempDir(), "Hopper-v1", 1, 3, false)
	if err := os.Remove(filepath.Join(path, CheckpointFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := ReadRun(path); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("an unfinished run without a checkpoint: %v", err)
	}
}

// TestFilesThatAreNotRegularAreRefused: a run file that is a device or a
// FIFO is refused at once, by the reports and by resume, and resume lets
// go of the lock.
func TestFilesThatAreNotRegularAreRefused(t *testing.T) {
	for _, name := range []string{MetaFile, CurveFile, CheckpointFile, ResultFile} {
		for _, fifo := range []bool{false, true} {
			path := runOf(t, t.TempDir(), "Hopper-v1", 1, 3, name == ResultFile)
			file := filepath.Join(path, name)
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
			if fifo {
				if err := syscall.Mkfifo(file, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Symlink("/dev/zero", file); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 2)
			go func() {
				_, _, _, err := ReadRun(path)
				done <- err
				d, _, err := Open(path)
				if err == nil {
					d.Close()
				}
				done <- err
			}()
			for _, what := range []string{"ReadRun", "Open"} {
				select {
				case err := <-done:
					if name == ResultFile && what == "Open" {
						// Open reads no result: the trainer does, first.
						if err != nil {
							t.Errorf("Open with %s not a file: %v", name, err)
						}
						continue
					}
					wantDamaged(t, what+" of "+name+" not a regular file", err, "not a regular file")
				case <-time.After(10 * time.Second):
					t.Fatalf("%s of %s not a regular file hangs", what, name)
				}
			}
			if _, err := os.Stat(filepath.Join(path, LockFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s not a regular file: the lock is left behind: %v", name, err)
			}
		}
	}
}

// TestResumeRemovesStaleTemporaries: the temporary files of writes cut
// short are removed on resume; other files are kept.
func TestResumeRemovesStaleTemporaries(t *testing.T) {
	path := runOf(t, t.TempDir(), "Hopper-v1", 1, 3, false)
	stale := []string{".policy.json.tmp0123456789abcdef", ".checkpoint.json.tmpfedcba9876543210"}
	kept := []string{"notes.txt", ".policy.json.tmpXYZ"}
	for _, name := range append(append([]string{}, stale...), kept...) {
		if err := os.WriteFile(filepath.Join(path, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(path, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after resume: %v", name, err)
		}
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(path, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}

// TestDiscardLeavesNothingOfARunThatNeverStarted: a run created and never
// checkpointed is removed with the directories made for it; one that
// checkpointed, or was resumed, is not.
func TestDiscardLeavesNothingOfARunThatNeverStarted(t *testing.T) {
	out := t.TempDir()
	path := Path(filepath.Join(out, "runs"), "Hopper-v1", "stp_is-adaptive", 1)
	d, err := Create(path, Meta{Env: "Hopper-v1", Seed: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Discard(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 0 {
		t.Fatalf("left after Discard: %v, %v", entries, err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("Close after Discard: %v", err)
	}
	path = runOf(t, t.TempDir(), "Hopper-v1", 1, 2, false)
	d, _, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Discard(); err == nil || !Exists(path) {
		t.Fatalf("Discard of a resumed run: %v", err)
	}
}
