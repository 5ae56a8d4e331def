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
		ResultFile: `{"episodes_to_threshold":24,"reached":true,"episodes":24,"best_eval":3200}`,
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

// TestForgedPreVersionRunsAreRefused is issue 52's forgery: a finished run
// whose run.json and result.json lost their version, identity and seals,
// and whose result then claims the threshold reached with a best eval its
// curve never saw, is refused; so are a result that claims more than its
// curve in each of best_eval, reached and episodes_to_threshold, and a
// run.json without a version whose config holds the restart rule's early
// check (which came after versions). The result as written, stripped the
// same way, is still read.
func TestForgedPreVersionRunsAreRefused(t *testing.T) {
	strip := func(t *testing.T, path string, edit func(map[string]any)) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"version", "run_id", "sha256", "curve_sha256", "schema"} {
			delete(doc, k)
		}
		edit(doc)
		if b, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// runOf's curve: evaluations 0, 10, 20 at 0, 12, 24 episodes; the
	// threshold is 3120, never reached.
	forge := func(t *testing.T, config string, edit func(map[string]any)) string {
		t.Helper()
		path := runOf(t, t.TempDir(), "Hopper-v1", 1, 3, false)
		os.Remove(filepath.Join(path, CheckpointFile))
		strip(t, filepath.Join(path, MetaFile), func(m map[string]any) {
			if config != "" {
				m["config"] = json.RawMessage(config)
			}
		})
		res := map[string]any{"reached": false, "episodes_to_threshold": nil, "best_eval": 0.0, "episodes": 24}
		edit(res)
		b, _ := json.Marshal(res)
		if err := os.WriteFile(filepath.Join(path, ResultFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	same := func(map[string]any) {}
	if _, _, res, err := ReadRun(forge(t, "", same)); err != nil || res == nil || res.Reached {
		t.Fatalf("the result as the curve has it: %+v, %v", res, err)
	}
	for _, c := range []struct {
		name   string
		config string
		edit   func(map[string]any)
		says   string
	}{
		{"the issue's forgery", "", func(m map[string]any) { m["reached"], m["episodes_to_threshold"], m["best_eval"] = true, 16, 3500 }, "best_eval"},
		{"best_eval above the curve's", "", func(m map[string]any) { m["best_eval"] = 3500 }, "best_eval"},
		{"reached, never reached", "", func(m map[string]any) { m["reached"], m["episodes_to_threshold"] = true, 16 }, "no evaluation of the curve reaches"},
		{"restart.early in a config without version", `{"restart":{"after":300,"length":0.125,"early":100}}`, same, "restart.early"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := ReadRun(forge(t, c.config, c.edit))
			wantDamaged(t, c.name, err, c.says)
		})
	}
	// The curve records the threshold at 24 episodes: a result that says 12
	// is refused, and one that says 24 is read.
	for _, ept := range []int{12, 24} {
		path := forge(t, "", func(m map[string]any) { m["reached"], m["episodes_to_threshold"], m["best_eval"] = true, ept, 20 })
		rewrite(t, filepath.Join(path, CurveFile), `"episodes":24,`, `"episodes":24,"threshold_reached_at":24,`)
		rewrite(t, filepath.Join(path, CurveFile), `"reward":3,"best_eval":0`, `"reward":3,"best_eval":20`)
		_, _, res, err := ReadRun(path)
		switch {
		case ept == 12:
			wantDamaged(t, "episodes_to_threshold 12", err, "episodes_to_threshold")
		case err != nil || !res.Reached:
			t.Fatalf("episodes_to_threshold 24 as the curve has it: %+v, %v", res, err)
		}
	}
}
