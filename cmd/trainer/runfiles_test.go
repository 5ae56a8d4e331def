package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stpis/stpis/train"
)

// committedRunFiles lists every run.json committed under results/.
func committedRunFiles(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "results/**/run.json").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		files = append(files, filepath.Join(root, f))
	}
	if len(files) < 300 {
		t.Fatalf("only %d committed run.json files: is results/ there?", len(files))
	}
	return files
}

// TestEveryCommittedRunFileLoads: every committed run.json, whatever its
// form, loads with trainer config --config, and the settings the config
// file gives back are the run's: the Config that --config resolves is the
// one train.ReadRunConfig reads (seed and kwargs aside, which the train
// command applies).
func TestEveryCommittedRunFileLoads(t *testing.T) {
	for _, f := range committedRunFiles(t) {
		if err := runConfig([]string{"--config", f}, io.Discard, io.Discard); err != nil {
			t.Errorf("trainer config --config %s: %v", f, err)
			continue
		}
		want := readRunConfig(t, f)
		sel := selection{configFile: f}
		got, err := sel.resolve(nil)
		if err != nil {
			t.Errorf("%s: resolve: %v", f, err)
			continue
		}
		if sel.fileSeed == nil || *sel.fileSeed != want.Problem.Seed {
			t.Errorf("%s: the file's seed reads as %v, want %d", f, sel.fileSeed, want.Problem.Seed)
		}
		got.Problem.Seed, got.Problem.Kwargs = want.Problem.Seed, want.Problem.Kwargs
		a, _ := json.Marshal(got.Named())
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("%s: --config resolves to\n%s\nthe run's settings are\n%s", f, a, b)
		}
	}
}

// TestEqualSettingsGiveEqualNames: committed runs with equal settings (seed
// aside) read with one name, whatever their directories are called (Ant's
// stp-combined and stp-combined-r0.0015 ran at the same rate).
func TestEqualSettingsGiveEqualNames(t *testing.T) {
	names := map[string]string{}
	for _, f := range committedRunFiles(t) {
		c := readRunConfig(t, f)
		c.Problem.Seed = 0
		name, label := c.Name, c.Label
		c.Name, c.Label = "", ""
		b, _ := json.Marshal(c)
		if n, ok := names[string(b)]; ok && n != name {
			t.Errorf("%s: named %s (%s), another run of the same settings %s", f, name, label, n)
		}
		names[string(b)] = name
	}
	ant := []string{"dev-ant/default/runs/Ant-v1/stp-combined/seed105", "dev-ant/default/runs/Ant-v1/stp-combined-r0.0015/seed101"}
	a := readRunConfig(t, filepath.Join("../../results", ant[0], "run.json"))
	b := readRunConfig(t, filepath.Join("../../results", ant[1], "run.json"))
	if a.Name != b.Name {
		t.Errorf("%s reads as %s, %s as %s: the same settings", ant[0], a.Name, ant[1], b.Name)
	}
}

func readRunConfig(t *testing.T, path string) train.Config {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Schema int             `json:"schema"`
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(b, &rf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c, err := train.ReadRunConfig(rf.Schema, rf.Config)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}
