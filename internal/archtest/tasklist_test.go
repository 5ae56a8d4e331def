package archtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stpis/stpis/tasks"
)

// moduleRoot returns the directory of go.mod at or above the working
// directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod at or above the working directory")
		}
		dir = up
	}
}

// bridgePython returns the bridge's interpreter: $STPIS_BRIDGE_PYTHON (make
// sets it), else the module's .venv/bin/python.
func bridgePython(t *testing.T, root string) string {
	t.Helper()
	if p := os.Getenv("STPIS_BRIDGE_PYTHON"); p != "" {
		return p
	}
	p := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no bridge python at %s (run `make venv`, or set STPIS_BRIDGE_PYTHON)", p)
	}
	return p
}

// bridgeTasks is what the bridge says of the paper's tasks.
type bridgeTasks struct {
	Tasks   []string          `json:"tasks"`   // envs.PAPER_TASKS
	Aliases map[string]string `json:"aliases"` // envs.paper_aliases()
	Fast    []string          `json:"fast"`    // fast.fast_env_ids()
}

const printBridgeTasks = `
import json
from stpis_bridge import envs, fast
print(json.dumps({"tasks": list(envs.PAPER_TASKS), "aliases": envs.paper_aliases(), "fast": fast.fast_env_ids()}))
`

// TestBridgeTaskListAgreesWithTasks runs the bridge's Python and checks
// that its list of the paper's tasks (bridge_py/stpis_bridge/envs.py,
// PAPER_TASKS) is the Go table's (tasks.All), in the same order, and that
// the paper aliases (Hopper-v1 → Hopper-v5) and the fast backend's tasks
// are those tasks.
func TestBridgeTaskListAgreesWithTasks(t *testing.T) {
	root := moduleRoot(t)
	cmd := exec.Command(bridgePython(t, root), "-c", printBridgeTasks)
	cmd.Dir = filepath.Join(root, "bridge_py")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the bridge's python: %v\n%s", err, stderr.Bytes())
	}
	var got bridgeTasks
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the bridge's task list: %v in %q", err, out)
	}

	var names, fastIDs []string
	aliases := map[string]string{}
	for _, task := range tasks.All() {
		names = append(names, task.Name)
		aliases[tasks.PaperEnv(task.Name)] = tasks.GymnasiumEnv(task.Name)
		fastIDs = append(fastIDs, tasks.GymnasiumEnv(task.Name))
	}
	slices.Sort(fastIDs)
	if !slices.Equal(got.Tasks, names) {
		t.Errorf("bridge_py/stpis_bridge/envs.py PAPER_TASKS = %q, but package tasks lists %q", got.Tasks, names)
	}
	for alias, target := range aliases {
		if got.Aliases[alias] != target {
			t.Errorf("the bridge resolves the paper's %s to %q, want %s", alias, got.Aliases[alias], target)
		}
	}
	for alias := range got.Aliases {
		if _, ok := aliases[alias]; !ok {
			t.Errorf("the bridge has a paper alias %s for a task that package tasks does not list", alias)
		}
	}
	if !slices.Equal(got.Fast, fastIDs) {
		t.Errorf("the bridge's fast backend steps %q, want the paper tasks %q", got.Fast, fastIDs)
	}
}
