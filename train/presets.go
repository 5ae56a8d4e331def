package train

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/stpis/stpis/tasks"
)

//go:embed presets.yaml
var presetsYAML []byte

// entry is one task's entry of a preset: its default method and step,
// and a block of settings by name: a method's ("ars"), or for the methods
// with step rules (stepped) a step's ("combined", "adaptive", "fixed"),
// which STP and STP_IS share.
type entry struct {
	Default string `yaml:"default"`
	// Step is the step STP and STP_IS take without --step where the
	// default is another method (Swimmer's CMA-ES): their best there.
	Step   Step                      `yaml:"step,omitempty"`
	Blocks map[string]map[string]any `yaml:",inline"`
}

// block is the settings of method and step in e (nil when e has none).
func (e entry) block(method string, step Step) map[string]any {
	if step != "" {
		return e.Blocks[string(step)]
	}
	return e.Blocks[method]
}

// checkBlocks refuses a block named for no method and no step.
func (e entry) checkBlocks() error {
	for name := range e.Blocks {
		if _, ok := methods[name]; !ok && !slices.Contains(Steps, Step(name)) {
			return fmt.Errorf("%q is no method (%s) and no step (%s)", name, strings.Join(MethodNames(), ", "), stepNames())
		}
	}
	return nil
}

func stepNames() string {
	names := make([]string, len(Steps))
	for i, s := range Steps {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// table is presets.yaml: preset → task → entry ("*": any other task).
type table map[string]map[string]entry

// otherTask is the entry of the tasks a preset does not name.
const otherTask = "*"

var presets = sync.OnceValues(func() (table, error) {
	var doc struct {
		Bases any              `yaml:"bases"`
		Tuned map[string]entry `yaml:"tuned"`
		Paper map[string]entry `yaml:"paper"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(presetsYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("train: presets.yaml: %w", err)
	}
	t := table{PresetTuned: doc.Tuned, PresetPaper: doc.Paper}
	for preset, byTask := range t {
		for task, e := range byTask {
			if err := e.checkBlocks(); err != nil {
				return nil, fmt.Errorf("train: presets.yaml: %s: %s: %w", preset, task, err)
			}
		}
	}
	return t, nil
})

// PresetNames lists the presets.
func PresetNames() []string { return []string{PresetTuned, PresetPaper} }

// Preset returns the complete configuration that preset gives a run of
// env with method and step ("" for each: the entry's default; a step
// alone picks STP's). The settings are the preset table's entry
// (presets.yaml); the budget and threshold are the task's (tasks.Lookup),
// none and 10000 episodes for an env the paper does not run.
func Preset(preset, method string, step Step, env string) (Config, error) {
	t, err := presets()
	if err != nil {
		return Config{}, err
	}
	byTask, ok := t[preset]
	if !ok {
		return Config{}, bad("preset", "%q is not one of %s", preset, strings.Join(PresetNames(), ", "))
	}
	if env == "" {
		return Config{}, bad("env", "is required")
	}
	task := tasks.Name(env)
	e, ok := byTask[task]
	if !ok {
		task = otherTask
		e = byTask[task]
	}
	if method == "" {
		def, defStep, _ := strings.Cut(e.Default, " ")
		method = def
		if step == "" {
			step = Step(defStep)
		}
	}
	m, err := newMethod(method)
	if err != nil {
		return Config{}, err
	}
	if s, ok := m.(stepped); ok {
		if step == "" {
			_, defStep, _ := strings.Cut(e.Default, " ")
			step = Step(defStep)
			if step == "" {
				step = e.Step
			}
			if step == "" {
				step = Combined
			}
		}
		if !slices.Contains(Steps, step) {
			return Config{}, bad("step", "%q is not one of combined, adaptive, fixed", step)
		}
		s.setStep(step)
	} else if step != "" {
		return Config{}, bad("step", "does not apply to --method %s (a step rule of STP and STP_IS)", method)
	}
	block := e.block(method, step)
	if block == nil {
		what := method
		if step != "" {
			what += " --step " + string(step)
		}
		return Config{}, bad("preset", "%s has no entry for --method %s on %s (train/presets.yaml; the paper preset has the paper's methods only)", preset, what, env)
	}
	info, known := tasks.Lookup(env)
	c := Config{Preset: preset, Method: m, Problem: Problem{Env: env},
		Limits: Limits{MaxEpisodes: info.Budget, Threshold: info.Threshold, HasThreshold: info.HasThreshold, StopAtThreshold: true}}
	if !known {
		c.Limits.MaxEpisodes = 10000
	}
	names := make([]string, 0, len(block))
	for k := range block {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !c.owns(k) {
			// The surrogate's keys, in an entry that STP and STP_IS share.
			if sh, ok := m.(interface{ sharedKey(string) bool }); ok && sh.sharedKey(k) {
				continue
			}
			return Config{}, fmt.Errorf("train: presets.yaml: %s: %s: %s %s: %w", preset, task, method, step, c.notHere(k))
		}
		v := fmt.Sprint(block[k])
		if v == fromARS && method != "ars" {
			if v, err = arsValue(e, k, env); err != nil {
				return Config{}, fmt.Errorf("train: presets.yaml: %s: %s: %w", preset, task, err)
			}
		}
		if err := c.set(k, v); err != nil {
			return Config{}, fmt.Errorf("train: presets.yaml: %s: %s: %w", preset, task, err)
		}
	}
	return c, nil
}

// owns says whether name is one of c's settings.
func (c *Config) owns(name string) bool {
	_, ok := findKey(c.keys(), name)
	return ok
}

// fromARS, as a value in the table, takes the setting from the task's ARS
// entry: the shift and the perturbation ν as they are, and for rate ARS's
// step length per iteration, α/√b (the combined step's rate is a length
// whatever its M and Top; ARS's b directions of norm √n move x by about
// α√n/√b).
const fromARS = "ars"

func arsValue(e entry, key, env string) (string, error) {
	m, err := newMethod(fromARS)
	if err != nil {
		return "", err
	}
	c := Config{Method: m, Problem: Problem{Env: env}}
	for k, v := range e.block(fromARS, "") {
		if err := c.set(k, fmt.Sprint(v)); err != nil {
			return "", err
		}
	}
	switch key {
	case "rate":
		rate, _ := c.Get("rate")
		top, _ := c.Get("top")
		r, err1 := strconv.ParseFloat(rate, 64)
		b, err2 := strconv.Atoi(top)
		if err1 != nil || err2 != nil || b < 1 {
			return "", bad("rate", "ars: the task's ARS entry has no rate and top")
		}
		return strconv.FormatFloat(r/math.Sqrt(float64(b)), 'g', -1, 64), nil
	case "noise", "shift":
		v, _ := c.Get(key)
		return v, nil
	}
	return "", bad(key, "ars: only rate, noise and shift follow the task's ARS entry")
}
