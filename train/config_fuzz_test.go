package train

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The fuzz targets of this file feed the parsers of outside input (a
// --config file's values, a flag's value, a run's config JSON in run.json
// and the checkpoint) with arbitrary input: they must answer with an
// error, an ErrConfig where the input is a setting, and never panic. Each
// runs its seeds in a plain `go test`; `make fuzz` fuzzes them.

// fuzzConfigSeeds are the configs of every method and step, as JSON.
func fuzzConfigSeeds(f testing.TB) [][]byte {
	f.Helper()
	var out [][]byte
	for _, m := range MethodNames() {
		for _, st := range stepsOf(m) {
			c, err := Preset(PresetTuned, m, st, "Hopper-v1")
			if err != nil {
				f.Fatal(err)
			}
			b, err := json.Marshal(c.Named())
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// FuzzConfigJSON: a Config read from JSON (run.json's config, the
// checkpoint's) validates without a panic; one that validates names itself
// and writes back to JSON that reads back to the same Config.
func FuzzConfigJSON(f *testing.F) {
	for _, b := range fuzzConfigSeeds(f) {
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"method":"stp","settings":{"step":"combined","directions":0}}`))
	f.Add([]byte(`{"method":"ars","settings":null,"problem":{"env":"Hopper-v1","k":-1,"kwargs":{"a":[1]}}}`))
	f.Add([]byte(`{"preset":"tuned","method":"stp_is","problem":{"env":"x","k":1,"obs_norm":"running"},"limits":{"max_episodes":1,"eval_every":1,"eval_episodes":1},"restart":{"after":1e9,"length":2}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Config
		if err := json.Unmarshal(b, &c); err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate: %v is not an ErrConfig", err)
			}
			return
		}
		n := c.Named()
		if n.Name == "" || n.Label == "" {
			t.Fatalf("a valid config has no name: %+v", n)
		}
		out, err := json.Marshal(n)
		if err != nil {
			t.Fatalf("a valid config does not write: %v", err)
		}
		var back Config
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("a valid config does not read back: %v\n%s", err, out)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("a valid config reads back invalid: %v\n%s", err, out)
		}
		again, err := json.Marshal(back)
		if err != nil || string(again) != string(out) {
			t.Fatalf("round trip changed the config (%v):\n%s\n%s", err, out, again)
		}
	})
}

// pick returns list[i] when i indexes it, else raw: most fuzz inputs then
// name a real preset, method, setting... and the rest anything.
func pick(list []string, i uint8, raw string) string {
	if int(i) < len(list) {
		return list[i]
	}
	return raw
}

// FuzzConfigSet: Preset and Set take any names and values (a --config
// file's and the flags'); every error is an ErrConfig, and never a panic.
func FuzzConfigSet(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), "", "", "", "", "k", "3")
	f.Add(uint8(0), uint8(2), uint8(0), uint8(1), uint8(255), "", "", "", "", "restart", "400x0.125")
	f.Add(uint8(1), uint8(1), uint8(1), uint8(2), uint8(255), "", "", "", "", "surrogate-steps", "-1")
	f.Add(uint8(0), uint8(0), uint8(255), uint8(3), uint8(255), "", "", "ars", "", "directions", "1")
	f.Add(uint8(255), uint8(255), uint8(255), uint8(255), uint8(255), "fast", "cma", "leap", "", "mix", "NaN")
	f.Add(uint8(0), uint8(2), uint8(0), uint8(255), uint8(255), "", "", "", "Quad-v0", "threshold", "1e309")
	f.Add(uint8(0), uint8(2), uint8(0), uint8(0), uint8(255), "", "", "", "", "guard", "0.5")
	f.Add(uint8(0), uint8(2), uint8(0), uint8(0), uint8(255), "", "", "", "", "k", "paper")
	f.Fuzz(func(t *testing.T, pi, mi, si, ei, ni uint8, preset, method, step, env, name, value string) {
		c, err := Preset(pick(PresetNames(), pi, preset), pick(append(MethodNames(), ""), mi, method),
			Step(pick([]string{string(Combined), string(Adaptive), string(Fixed), ""}, si, step)),
			pick([]string{"Hopper-v1", "Swimmer-v1", "Humanoid-v1", "Ant-v5"}, ei, env))
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("Preset: %v is not an ErrConfig", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("a preset's config is invalid: %v", err)
		}
		var names []string
		for _, s := range c.Settings() {
			names = append(names, s.Name)
		}
		name = pick(names, ni, name)
		before, _ := json.Marshal(c)
		err = c.Set(name, value)
		switch {
		case err != nil && !errors.Is(err, ErrConfig):
			t.Fatalf("Set(%q, %q): %v is not an ErrConfig", name, value, err)
		case err != nil:
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" || !strings.Contains(err.Error(), name) {
				t.Fatalf("Set(%q, %q): %v does not name the setting", name, value, err)
			}
			return
		}
		if _, ok := c.Get(name); !ok {
			t.Fatalf("Set(%q) succeeded but Get does not know it", name)
		}
		if err := c.Validate(); err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate: %v is not an ErrConfig", err)
			}
			return
		}
		n := c.Named()
		if n.Name == "" {
			t.Fatalf("no name after Set(%q, %q)", name, value)
		}
		after, err := json.Marshal(n)
		if err != nil {
			t.Fatalf("Set(%q, %q) made a config that does not write (from %s): %v", name, value, before, err)
		}
		var back Config
		if err := json.Unmarshal(after, &back); err != nil || back.Validate() != nil {
			t.Fatalf("Set(%q, %q): the config does not read back valid: %v\n%s", name, value, err, after)
		}
	})
}

// FuzzParseRestart: a restart rule parses to an ErrConfig or to a rule
// that writes back to itself.
func FuzzParseRestart(f *testing.F) {
	for _, s := range []string{"none", "0", "300x0.125", "400x1", "1x0", "-5x0.5", "x", "3x", "x0.5", "300xNaN", "300x+Inf", "9223372036854775808x0.1", "1e3x0.1", "300X0.125", "150x0.07,300x0.125", "0x0.5,300x0.1", ",300x0.1", "1x1,2x2,3x3", "150x0.07,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r, err := ParseRestart(v)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("ParseRestart(%q): %v is not an ErrConfig", v, err)
			}
			return
		}
		if !r.On() {
			return
		}
		back, err := ParseRestart(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseRestart(%q) = %+v writes %q, which reads %+v, %v", v, r, r.String(), back, err)
		}
	})
}

// FuzzParseGuard: a guard parses to an ErrConfig or to a drop in [0, 10]
// that writes back to itself.
func FuzzParseGuard(f *testing.F) {
	for _, s := range []string{"none", "0", "0.5", "10", "10.000001", "-0", "NaN", "Inf", "1e-320", "0x1p-2", "", " 0.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		g, err := ParseGuard(v)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("ParseGuard(%q): %v is not an ErrConfig", v, err)
			}
			return
		}
		if v == "none" {
			if g.On {
				t.Fatalf("none is on: %+v", g)
			}
			return
		}
		if !g.On || !(g.Drop >= 0 && g.Drop <= 10) {
			t.Fatalf("ParseGuard(%q) = %+v", v, g)
		}
		back, err := ParseGuard(g.String())
		if err != nil || back != g {
			t.Fatalf("ParseGuard(%q) = %+v writes %q, which reads %+v, %v", v, g, g.String(), back, err)
		}
	})
}

// FuzzParseSeeds: a seed sharing parses to an ErrConfig or to one that
// writes back to itself and validates.
func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{"none", "iteration", "pair", "", "Pair", "all"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := ParseSeeds(v)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("ParseSeeds(%q): %v is not an ErrConfig", v, err)
			}
			return
		}
		if s.String() != v {
			t.Fatalf("ParseSeeds(%q) writes %q", v, s.String())
		}
		c, err := Preset(PresetTuned, "", "", "Hopper-v1")
		if err != nil {
			t.Fatal(err)
		}
		c.Problem.CommonSeeds = s
		if err := c.Validate(); err != nil {
			t.Fatalf("common seeds %q: %v", v, err)
		}
	})
}
