package archtest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/stpis/stpis/tasks"
)

// The task table has one source, package tasks (tasks/tasks.go); the
// other places that name tasks read it, are generated from it, or are
// checked against it here:
//   - the bridge reads bridge_py/stpis_bridge/paper_tasks.py, generated
//     from it by `go generate ./tasks` (TestBridgeTaskTableIsGenerated);
//     the fast backend's tasks and the paper aliases derive from that
//     (TestBridgeTaskListAgreesWithTasks runs the bridge's Python);
//   - train/presets.yaml has an entry for each task of the table and no
//     other (TestPresetsNameTheTasks);
//   - the experiment matrices (bench/matrices/*.yaml) name tasks of the
//     table only (TestMatricesNameTheTasks).

// TestBridgeTaskTableIsGenerated checks that the bridge's copy of the
// table is what `go generate ./tasks` writes today.
func TestBridgeTaskTableIsGenerated(t *testing.T) {
	path := filepath.Join(moduleRoot(t), "bridge_py", "stpis_bridge", "paper_tasks.py")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, tasks.PythonFile()) {
		t.Errorf("%s is stale: run `go generate ./tasks` and commit it", path)
	}
}

// TestPresetsNameTheTasks checks that each preset of train/presets.yaml
// has an entry for every task of the table, and none for another task
// ("*" is the entry of an env the table does not list).
func TestPresetsNameTheTasks(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "train", "presets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, task := range tasks.All() {
		want = append(want, task.Name)
	}
	want = append(want, "*")
	slices.Sort(want)
	for _, preset := range []string{"tuned", "paper"} {
		var got []string
		for name := range doc[preset] {
			got = append(got, name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("train/presets.yaml %s: tasks %q, want package tasks' %q", preset, got, want)
		}
	}
}

// TestMatricesNameTheTasks checks that every experiment matrix runs tasks
// of the table (any version of their env ids), or says a task runs on the
// fallback on purpose, and then that the table does not know it.
func TestMatricesNameTheTasks(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(moduleRoot(t), "bench", "matrices", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no matrix files: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Tasks []struct {
				Task     string `yaml:"task"`
				Fallback bool   `yaml:"fallback"`
			} `yaml:"tasks"`
		}
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(m.Tasks) == 0 {
			t.Errorf("%s: no tasks", f)
		}
		for _, task := range m.Tasks {
			if _, ok := tasks.Lookup(task.Task); ok == task.Fallback {
				t.Errorf("%s: %q: a task of package tasks: %v, marked fallback: %v", f, task.Task, ok, task.Fallback)
			}
		}
	}
}
