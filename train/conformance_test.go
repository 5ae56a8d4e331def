package train

import (
	"encoding/json"
	"strings"
	"testing"
)

// The conformance table, in the spirit of gonum's optimize tests (one table
// of problems run against every method): every method with each of its
// step rules (prototypes, from the methods table) goes through the same
// checks, so a method added to methods gets all of them without a line
// here (the loop's: a checkpoint resumes bit for bit, in package loop).
//   - the preset's entry is named by the method and step alone, and a run
//     keeps its name through its JSON and reads back under it;
//   - its settings, as trainer config prints them and a --config file sets
//     them, rebuild it;
//   - a setting that is not its own, or that it keeps fixed, is refused
//     with an error naming the setting.

// row is one method and step of the table.
type row struct {
	method string
	step   Step
}

func (r row) String() string {
	if r.step == "" {
		return r.method
	}
	return r.method + "-" + string(r.step)
}

// rows lists every method with each of its steps.
func rows() []row {
	var out []row
	for _, m := range prototypes() {
		out = append(out, row{m.Name(), Config{Method: m}.Step()})
	}
	return out
}

// conformanceConfig is the row's tuned entry for the test problem.
func conformanceConfig(t *testing.T, r row) Config {
	t.Helper()
	c, err := Preset(PresetTuned, r.method, r.step, "Quad-v0")
	if err != nil {
		t.Fatal(err)
	}
	c.Problem.Seed, c.Problem.Shift, c.Problem.K = 3, 0.5, 2
	c.Limits = Limits{MaxEpisodes: 100000, EvalEvery: 4, EvalEpisodes: 3}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConformanceTableCoversEveryMethod(t *testing.T) {
	seen := map[string]int{}
	for _, r := range rows() {
		seen[r.method]++
	}
	for _, name := range MethodNames() {
		if seen[name] == 0 {
			t.Errorf("method %s has no row", name)
		}
	}
	if len(rows()) < len(MethodNames()) {
		t.Errorf("%d rows for %d methods", len(rows()), len(MethodNames()))
	}
}

func TestConformanceNaming(t *testing.T) {
	for _, r := range rows() {
		t.Run(r.String(), func(t *testing.T) {
			entry, err := Preset(PresetTuned, r.method, r.step, "Quad-v0")
			if err != nil {
				t.Fatal(err)
			}
			label, dir := entry.Method.base(entry.Problem)
			if n := entry.Named(); n.Name != dir || n.Label != label {
				t.Errorf("the preset's entry is named %q (%q), want %q (%q): nothing sets it apart", n.Name, n.Label, dir, label)
			}
			if !strings.HasPrefix(dir, r.method) {
				t.Errorf("directory stem %q does not start with the method %s", dir, r.method)
			}
			c := conformanceConfig(t, r).Named()
			if c.Name == dir {
				t.Errorf("K 2 and shift 0.5 should set %q apart from its entry", c.Name)
			}
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			var back Config
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Name != c.Name || back.Label != c.Label {
				t.Errorf("through its JSON %q (%q) became %q (%q)", c.Name, c.Label, back.Name, back.Label)
			}
			read, err := ReadRunConfig(ConfigSchema, b)
			if err != nil {
				t.Fatal(err)
			}
			if read.Name != c.Name {
				t.Errorf("read back as a run file, %q is named %q", c.Name, read.Name)
			}
		})
	}
}

func TestConformanceConfigRoundTrip(t *testing.T) {
	for _, r := range rows() {
		t.Run(r.String(), func(t *testing.T) {
			c := conformanceConfig(t, r)
			fresh, err := Preset(c.Preset, c.MethodName(), c.Step(), c.Problem.Env)
			if err != nil {
				t.Fatal(err)
			}
			fresh.Problem.Seed = c.Problem.Seed
			for _, s := range c.Settings() {
				if s.Fixed != "" {
					if v, _ := fresh.Get(s.Name); v != s.Value {
						t.Errorf("%s is fixed at %q, but the entry has %q", s.Name, s.Value, v)
					}
					continue
				}
				if err := fresh.Set(s.Name, s.Value); err != nil {
					t.Errorf("%s: %s: %v", s.Name, s.Value, err)
				}
			}
			a, _ := json.Marshal(c)
			b, _ := json.Marshal(fresh)
			if string(a) != string(b) {
				t.Errorf("its settings rebuild\n%s\nnot\n%s", b, a)
			}
		})
	}
}

func TestConformanceRefusesWhatDoesNotApply(t *testing.T) {
	names := map[string]bool{}
	for _, m := range prototypes() {
		for _, k := range m.keys() {
			names[k.name] = true
		}
	}
	refused := 0
	for _, r := range rows() {
		t.Run(r.String(), func(t *testing.T) {
			c := conformanceConfig(t, r)
			own := map[string]string{}
			for _, s := range c.Settings() {
				own[s.Name] = s.Fixed
			}
			for name := range names {
				fixed, owns := own[name]
				if owns && fixed == "" {
					continue
				}
				err := c.Set(name, "1")
				if err == nil || !strings.Contains(err.Error(), name+": does not apply") {
					t.Errorf("setting %s: err = %v, want one saying it does not apply", name, err)
				}
				refused++
			}
			if err := c.Set("no-such-setting", "1"); err == nil || !strings.Contains(err.Error(), "is not a setting") {
				t.Errorf("an unknown setting: err = %v", err)
			}
		})
	}
	if refused == 0 {
		t.Error("no row refused a setting: the check checked nothing")
	}
}

// stepsOf is the step rules method m runs with: Steps for a method with
// step rules, else the one "" (from the methods table, not a list here).
func stepsOf(m string) []Step {
	if _, ok := methods[m]().(stepped); ok {
		return Steps
	}
	return []Step{""}
}
