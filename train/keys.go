package train

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stpis/stpis/tasks"
)

// key is one setting of a Config by the name of its flag (and of its key
// in presets.yaml and in --config files): the one place where a value
// given by name reaches a field.
type key struct {
	name string
	// help is the flag's usage; a key without help has no flag (it is set
	// by the preset table or a --config file).
	help string
	// fixed, when set, refuses overrides (a flag or a --config file) and
	// says why; the preset table still sets the field.
	fixed string
	get   func(c *Config) string
	set   func(c *Config, v string) error
}

func intKey(name, help, fixed string, field func(*Config) *int) key {
	return key{name: name, help: help, fixed: fixed,
		get: func(c *Config) string { return strconv.Itoa(*field(c)) },
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return bad(name, "%q is not an integer", v)
			}
			*field(c) = n
			return nil
		}}
}

func floatKey(name, help, fixed string, field func(*Config) *float64) key {
	return key{name: name, help: help, fixed: fixed,
		get: func(c *Config) string { return strconv.FormatFloat(*field(c), 'g', -1, 64) },
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !finite(f) {
				return bad(name, "%q is not a finite number", v)
			}
			*field(c) = f
			return nil
		}}
}

// optFloatKey is a float that may be absent: a finite number, or none.
func optFloatKey(name, help string, field func(*Config) (*float64, *bool)) key {
	return key{name: name, help: help,
		get: func(c *Config) string {
			f, ok := field(c)
			if !*ok {
				return "none"
			}
			return strconv.FormatFloat(*f, 'g', -1, 64)
		},
		set: func(c *Config, v string) error {
			f, ok := field(c)
			if v == "none" {
				*f, *ok = 0, false
				return nil
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !finite(x) {
				return bad(name, "%q is not a finite number or none", v)
			}
			*f, *ok = x, true
			return nil
		}}
}

func boolKey(name string, field func(*Config) *bool) key {
	return key{name: name,
		get: func(c *Config) string { return strconv.FormatBool(*field(c)) },
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return bad(name, "%q is not true or false", v)
			}
			*field(c) = b
			return nil
		}}
}

func enumKey(name string, values []string, field func(*Config) *string) key {
	return key{name: name,
		get: func(c *Config) string { return *field(c) },
		set: func(c *Config, v string) error {
			if !slices.Contains(values, v) {
				return bad(name, "%q is not one of %s", v, strings.Join(values, ", "))
			}
			*field(c) = v
			return nil
		}}
}

// commonKeys are the settings of every method: the problem, the limits
// and the restart rule.
var commonKeys = []key{
	{name: "k", help: "episodes averaged per evaluated point: a count, or paper (the paper's K for the task)",
		get: func(c *Config) string { return strconv.Itoa(c.Problem.K) },
		set: func(c *Config, v string) error {
			if v == "paper" {
				c.Problem.K = c.Problem.paperK()
				return nil
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				return bad("k", "%q is not a count in [1, 10000] or paper", v)
			}
			c.Problem.K = n
			return nil
		}},
	floatKey("shift", "alive-bonus shift subtracted per step from training returns", "", func(c *Config) *float64 { return &c.Problem.Shift }),
	// standing-shift: the shift used instead when x_0 stands (its initial
	// evaluation episodes all last to the horizon), or none. A config
	// file setting, not a flag.
	optFloatKey("standing-shift", "", func(c *Config) (*float64, *bool) { return &c.Problem.StandingShift, &c.Problem.HasStandingShift }),
	intKey("horizon", "maximum episode length (0: the env's)", "", func(c *Config) *int { return &c.Problem.Horizon }),
	enumKey("obs-norm", []string{string(Running), string(None)}, func(c *Config) *string { return (*string)(&c.Problem.ObsNorm) }),
	{name: "common-seeds",
		get: func(c *Config) string { return c.Problem.CommonSeeds.String() },
		set: func(c *Config, v string) error {
			s, err := ParseSeeds(v)
			c.Problem.CommonSeeds = s
			return err
		}},
	intKey("max-episodes", "training-episode budget; an iteration that would pass it is not run", "", func(c *Config) *int { return &c.Limits.MaxEpisodes }),
	optFloatKey("threshold", "reward threshold, or none", func(c *Config) (*float64, *bool) { return &c.Limits.Threshold, &c.Limits.HasThreshold }),
	boolKey("stop-at-threshold", func(c *Config) *bool { return &c.Limits.StopAtThreshold }),
	intKey("eval-every", "", "", func(c *Config) *int { return &c.Limits.EvalEvery }),
	intKey("eval-spacing", "evaluate after each iteration that crosses a multiple of N training episodes (0: every eval-every iterations)", "", func(c *Config) *int { return &c.Limits.EvalSpacing }),
	intKey("eval-episodes", "episodes per evaluation", "", func(c *Config) *int { return &c.Limits.EvalEpisodes }),
	{name: "restart", help: "AFTERxLENGTH: give up an attempt whose training episodes, after AFTER of them, last on average under LENGTH of the horizon (since AFTER/2), and start afresh within the budget; EARLYxLENGTH,AFTERxLENGTH: a check before it too; none: never",
		get: func(c *Config) string { return c.Restart.String() },
		set: func(c *Config, v string) error {
			r, err := ParseRestart(v)
			c.Restart = r
			return err
		}},
	{name: "guard",
		get: func(c *Config) string { return c.Guard.String() },
		set: func(c *Config, v string) error {
			g, err := ParseGuard(v)
			c.Guard = g
			return err
		}},
}

// paperK is the paper's K for the problem's task (4 for a task the paper
// does not run).
func (p Problem) paperK() int { return tasks.PaperK(p.Env) }

// String writes the rule as the restart key takes it: 300x0.125,
// 150x0.07,300x0.125 (an early check first), or none.
func (r Restart) String() string {
	if !r.On() {
		return "none"
	}
	s := fmt.Sprintf("%dx%g", r.After, r.Length)
	if r.Early != 0 || r.EarlyLength != 0 {
		s = fmt.Sprintf("%dx%g,%s", r.Early, r.EarlyLength, s)
	}
	return s
}

// ParseRestart reads a restart rule: AFTERxLENGTH (300x0.125), an early
// check before it (150x0.07,300x0.125), or none.
func ParseRestart(v string) (Restart, error) {
	if v == "none" || v == "0" {
		return Restart{}, nil
	}
	check := func(c string) (int, float64, error) {
		a, l, ok := strings.Cut(c, "x")
		after, err1 := strconv.Atoi(a)
		length, err2 := strconv.ParseFloat(l, 64)
		if !ok || err1 != nil || err2 != nil || math.IsNaN(length) {
			return 0, 0, bad("restart", "%q is not AFTERxLENGTH (300x0.125), EARLYxLENGTH,AFTERxLENGTH (150x0.07,300x0.125) or none", v)
		}
		return after, length, nil
	}
	var r Restart
	var err error
	if early, final, two := strings.Cut(v, ","); two {
		if r.Early, r.EarlyLength, err = check(early); err != nil {
			return Restart{}, err
		}
		v = final
	}
	if r.After, r.Length, err = check(v); err != nil {
		return Restart{}, err
	}
	return r, nil
}

// keys are the settings of c: the common ones and its method's.
func (c *Config) keys() []key {
	return append(slices.Clone(commonKeys), c.Method.keys()...)
}

func findKey(ks []key, name string) (key, bool) {
	i := slices.IndexFunc(ks, func(k key) bool { return k.name == name })
	if i < 0 {
		return key{}, false
	}
	return ks[i], true
}

// Set overrides the setting name (a flag's or a --config file key's name)
// with value. A setting of another method or step, or one that the method
// keeps fixed, is refused with an error that names it and says why.
func (c *Config) Set(name, value string) error {
	k, ok := findKey(c.keys(), name)
	switch {
	case !ok:
		return c.notHere(name)
	case k.fixed != "":
		return bad(name, "does not apply to --method %s: %s", c.MethodName(), k.fixed)
	}
	return k.set(c, value)
}

// Get returns the value of the setting name, and whether c has it.
func (c *Config) Get(name string) (string, bool) {
	k, ok := findKey(c.keys(), name)
	if !ok {
		return "", false
	}
	return k.get(c), true
}

// set applies a preset table's value, fixed keys included.
func (c *Config) set(name, value string) error {
	k, ok := findKey(c.keys(), name)
	if !ok {
		return c.notHere(name)
	}
	return k.set(c, value)
}

// notHere says why a setting is not one of c's, naming every method (and
// step) whose setting it is.
func (c *Config) notHere(name string) error {
	var owners []string
	byStep := map[Step][]string{}
	for _, m := range prototypes() {
		if k, ok := findKey(m.keys(), name); !ok || k.fixed != "" {
			continue
		}
		st := (Config{Method: m}).Step()
		if st == "" {
			owners = append(owners, "--method "+m.Name())
			continue
		}
		if len(byStep[st]) == 0 {
			owners = append(owners, string(st))
		}
		byStep[st] = append(byStep[st], m.Name())
	}
	for i, o := range owners {
		if ms, ok := byStep[Step(o)]; ok {
			owners[i] = "--method " + strings.Join(ms, " or ") + " --step " + o
		}
	}
	if len(owners) > 0 {
		return bad(name, "does not apply to --method %s%s (it is a setting of %s)", c.MethodName(), stepSuffix(*c), strings.Join(owners, "; "))
	}
	if slices.ContainsFunc(prototypes(), func(m Method) bool { _, ok := findKey(m.keys(), name); return ok }) {
		return bad(name, "does not apply to --method %s%s", c.MethodName(), stepSuffix(*c))
	}
	return bad(name, "is not a setting (trainer config lists them)")
}

func stepSuffix(c Config) string {
	if s := c.Step(); s != "" {
		return " --step " + string(s)
	}
	return ""
}

// prototypes are one settings value of each method and step, for the
// names of every setting.
func prototypes() []Method {
	var ms []Method
	for _, name := range MethodNames() {
		m := methods[name]()
		if _, ok := m.(stepped); ok {
			for _, st := range Steps {
				c := m.clone().(stepped)
				c.setStep(st)
				ms = append(ms, c)
			}
			continue
		}
		ms = append(ms, m)
	}
	return ms
}

// Setting is one setting of a Config, by name.
type Setting struct {
	Name, Value string
	// Help is the flag's usage ("" for a setting without a flag); Fixed
	// says why overrides are refused.
	Help, Fixed string
}

// Settings lists c's settings with their values, in a fixed order: what
// trainer config prints and a --config file sets.
func (c Config) Settings() []Setting {
	var out []Setting
	for _, k := range c.keys() {
		out = append(out, Setting{Name: k.name, Value: k.get(&c), Help: k.help, Fixed: k.fixed})
	}
	return out
}

// Flags lists every setting that has a flag, over all methods and steps,
// with its usage (the first method's that gives one).
func Flags() []Setting {
	var out []Setting
	seen := map[string]bool{}
	add := func(ks []key) {
		for _, k := range ks {
			if k.help != "" && !seen[k.name] {
				seen[k.name] = true
				out = append(out, Setting{Name: k.name, Help: k.help})
			}
		}
	}
	add(commonKeys)
	for _, m := range prototypes() {
		add(m.keys())
	}
	return out
}
