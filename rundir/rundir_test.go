package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// started creates a run with n points, checkpointed after the last.
func started(t *testing.T, n int) (*Dir, string) {
	t.Helper()
	path := Path(t.TempDir(), "Hopper-v1", "stp_is-adaptive", 1)
	d, err := Create(path, Meta{Env: "Hopper-v1", Method: "stp_is", Seed: 1, Threshold: 3120, HasThreshold: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := d.Append(Point{Iter: i, Episodes: 12 * i, Reward: float64(i), HasEval: i%2 == 0, EvalMean: 10 * float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Checkpoint(Snapshot{Iter: n - 1, Episodes: 12 * (n - 1), State: []byte(`{"x":[1,2]}`), Policy: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	return d, path
}

func TestResumeCutsLinesAfterTheCheckpoint(t *testing.T) {
	d, path := started(t, 3)
	if _, err := d.Append(Point{Iter: 3, Episodes: 36}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := Create(path, Meta{}, false); !errors.Is(err, ErrOccupied) {
		t.Fatalf("Create over a run: err = %v, want ErrOccupied", err)
	}
	d, state, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if string(state) != `{"x":[1,2]}` {
		t.Errorf("state = %s", state)
	}
	pts, err := ReadCurve(path)
	if err != nil || len(pts) != 3 || pts[2].Iter != 2 || !pts[2].HasEval || pts[2].EvalMean != 20 || pts[1].HasEval {
		t.Fatalf("curve after resume = %+v, %v", pts, err)
	}
}

func TestResumeRefusesDamage(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, path string){
		"short curve": func(t *testing.T, path string) {
			if err := os.Truncate(filepath.Join(path, CurveFile), 10); err != nil {
				t.Fatal(err)
			}
		},
		"flipped byte": func(t *testing.T, path string) { edit(t, path, `[1,2]`, `[1,3]`) },
		"negative episodes": func(t *testing.T, path string) {
			edit(t, path, `"episodes":24`, `"episodes":-12`)
		},
		"length inside a line": func(t *testing.T, path string) {
			p := filepath.Join(path, CheckpointFile)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var cp checkpoint
			if err := json.Unmarshal(b, &cp); err != nil {
				t.Fatal(err)
			}
			cp.CurveBytes -= 5
			cp.SHA256, _ = cp.sum()
			if b, err = json.Marshal(cp); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			d, path := started(t, 3)
			d.Close()
			damage(t, path)
			before, _ := os.Stat(filepath.Join(path, CurveFile))
			if _, _, err := Open(path); err == nil {
				t.Fatal("resume of a damaged run: want error")
			} else if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the run", err)
			}
			// A refused resume leaves the curve as it was.
			if st, _ := os.Stat(filepath.Join(path, CurveFile)); st.Size() != before.Size() {
				t.Errorf("the curve was changed from %d to %d bytes", before.Size(), st.Size())
			}
		})
	}
}

// edit replaces old by new in the checkpoint, keeping its checksum when
// the field is not the state (a consistent but wrong file).
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	p := filepath.Join(path, CheckpointFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %s", p, old)
	}
	b = []byte(strings.Replace(string(b), old, new, 1))
	if old != `[1,2]` {
		var cp checkpoint
		if err := json.Unmarshal(b, &cp); err != nil {
			t.Fatal(err)
		}
		cp.SHA256, _ = cp.sum()
		b, _ = json.Marshal(cp)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadCurveOldFormat(t *testing.T) {
	dir := t.TempDir()
	curve := `{"level":"info","iter":0,"episodes":0,"reward":"NaN","eval_mean":12.5,"eval_std":1,"time":"x"}
{"level":"info","message":"another record"}
{"iter":1,"episodes":12,"reward":3,"threshold_reached_at":12}
{"iter":2,"epis`
	if err := os.WriteFile(filepath.Join(dir, CurveFile), []byte(curve), 0o644); err != nil {
		t.Fatal(err)
	}
	pts, err := ReadCurve(dir)
	if err != nil || len(pts) != 2 || !pts[0].HasEval || pts[0].EvalMean != 12.5 || pts[0].Reward == pts[0].Reward || pts[1].ReachedAt != 12 {
		t.Fatalf("ReadCurve = %+v, %v", pts, err)
	}
	if err := os.WriteFile(filepath.Join(dir, CurveFile), []byte("{bad\n"+curve), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCurve(dir); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("a malformed first line: err = %v, want one naming line 1", err)
	}
}

func TestFinish(t *testing.T) {
	d, path := started(t, 2)
	defer d.Close()
	e := 12
	if _, err := d.Finish(Result{Reached: true, EpisodesToThreshold: &e, BestEval: 3200}, []byte("npz"), nil); err != nil {
		t.Fatal(err)
	}
	r, err := ReadResult(path, readMeta(t, path))
	if err != nil || r == nil || !r.Reached || *r.EpisodesToThreshold != 12 || r.WallS < 0 { // wall_s is rounded to ms: a fast finish may read 0
		t.Fatalf("ReadResult = %+v, %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(path, BestNPZFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a nil best npz was written: %v", err)
	}
	m, err := ReadMeta(path)
	if err != nil || m.Env != "Hopper-v1" || !m.HasThreshold {
		t.Fatalf("ReadMeta = %+v, %v", m, err)
	}
}

// TestEditedFilesAreRefused edits each file a finished run wrote, keeping
// its length (so that only a checksum can tell): run.json's env,
// result.json's episodes to the threshold, a curve line; and, before the
// run finished, a curve line the checkpoint covers.
func TestEditedFilesAreRefused(t *testing.T) {
	edit := func(t *testing.T, path, from, to string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(from) != len(to) || !bytes.Contains(b, []byte(from)) {
			t.Fatalf("%s holds no %q to edit:\n%s", path, from, b)
		}
		if err := os.WriteFile(path, bytes.Replace(b, []byte(from), []byte(to), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	finished := func(t *testing.T) string {
		d, path := started(t, 3)
		e := 12
		if _, err := d.Finish(Result{Reached: true, EpisodesToThreshold: &e, BestEval: 3200}, []byte("npz"), nil); err != nil {
			t.Fatal(err)
		}
		d.Close()
		return path
	}
	t.Run("run.json", func(t *testing.T) {
		path := finished(t)
		edit(t, filepath.Join(path, MetaFile), `"Hopper-v1"`, `"Walker-v1"`)
		if _, err := ReadMeta(path); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), MetaFile) {
			t.Fatalf("ReadMeta of an edited run.json: %v", err)
		}
	})
	t.Run("result.json", func(t *testing.T) {
		path := finished(t)
		edit(t, filepath.Join(path, ResultFile), `"episodes_to_threshold": 12`, `"episodes_to_threshold": 5 `)
		if _, _, _, err := ReadRun(path); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), ResultFile) {
			t.Fatalf("ReadResult of an edited result.json: %v", err)
		}
	})
	t.Run("curve of a finished run", func(t *testing.T) {
		path := finished(t)
		if _, _, _, err := ReadRun(path); err != nil {
			t.Fatalf("the untouched run: %v", err)
		}
		edit(t, filepath.Join(path, CurveFile), `"iter":2`, `"iter":7`)
		if _, _, _, err := ReadRun(path); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), CurveFile) {
			t.Fatalf("ReadRun of an edited curve: %v", err)
		}
	})
	t.Run("curve before the checkpoint", func(t *testing.T) {
		d, path := started(t, 3)
		d.Close()
		edit(t, filepath.Join(path, CurveFile), `"iter":1`, `"iter":4`)
		if _, _, err := Open(path); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "checksum") {
			t.Fatalf("resume of a curve edited before its checkpoint: %v", err)
		}
	})
}

// readMeta reads path's run.json or fails the test.
func readMeta(t *testing.T, path string) Meta {
	t.Helper()
	m, err := ReadMeta(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
