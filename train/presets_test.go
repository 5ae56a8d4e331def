package train

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stpis/stpis/tasks"
)

// The table's values, by what a run gets (they were branches in code
// before; these are the same values).
func TestPresets(t *testing.T) {
	for _, tc := range []struct {
		preset, method string
		step           Step
		env            string
		obsNorm        ObsNorm
		rate           float64
		k              int
		label          string
		lip            Lipschitz
	}{
		{PresetTuned, "stp_is", Adaptive, "Swimmer-v1", None, 2, 1, "STP_IS adaptive, K=1, m=8", Global},
		{PresetTuned, "stp", Adaptive, "Swimmer-v5", None, 2, 1, "STP adaptive, K=1, m=8", ""},
		{PresetPaper, "stp_is", "", "Swimmer-v1", Running, 0.3, 2, "STP_IS adaptive, paper preset", Global},
		{PresetTuned, "stp_is", Adaptive, "Hopper-v1", Running, 0.3, 4, "STP_IS adaptive", Global},
		{PresetTuned, "stp_is", Adaptive, "HalfCheetah-v1", Running, 1, 1, "STP_IS adaptive, K=1", Local},
		{PresetTuned, "stp_is", Fixed, "HalfCheetah-v1", Running, 0.05, 1, "STP_IS fixed, K=1", Local},
		{PresetPaper, "stp_is", "", "HalfCheetah-v1", Running, 0.3, 4, "STP_IS adaptive, paper preset", Global},
		{PresetTuned, "", "", "Hopper-v1", Running, 0.00707, 1, "STP combined, guided by the gradient sum", ""},
		{PresetTuned, "stp", "", "Swimmer-v1", None, 2, 1, "STP adaptive, K=1, m=8", ""}, // the entry's step: the default is CMA-ES
		{PresetPaper, "", "", "Hopper-v1", Running, 0.3, 4, "STP_IS adaptive, paper preset", Global},
		{PresetTuned, "stp_is", "", "Hopper-v1", Running, 0.00707, 1, "STP_IS combined", Global},
		{PresetTuned, "stp", "", "Walker2d-v5", Running, 0.03 / math.Sqrt(30), 1, "STP combined", ""}, // the entry's step: the default is CMA-ES
	} {
		c, err := Preset(tc.preset, tc.method, tc.step, tc.env)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", tc, err)
		}
		s := st(c)
		if c.Problem.ObsNorm != tc.obsNorm || s.Rate != tc.rate || c.Problem.K != tc.k || c.Named().Label != tc.label || s.Lipschitz != tc.lip {
			t.Errorf("%+v: obs norm %q, rate %v, K %d, label %q, lipschitz %q", tc, c.Problem.ObsNorm, s.Rate, c.Problem.K, c.Named().Label, s.Lipschitz)
		}
	}
	// Swimmer's default is CMA-ES on raw observations, ARS V1-t's setting.
	if sw, _ := Preset(PresetTuned, "", "", "Swimmer-v1"); sw.MethodName() != "cmaes" || sw.Problem.ObsNorm != None || sw.Problem.K != 1 || sw.Method.(*CMAESSettings).Sigma != 0.1 {
		t.Errorf("Swimmer's default: %s, obs norm %q, K %d, %+v", sw.MethodName(), sw.Problem.ObsNorm, sw.Problem.K, sw.Method)
	}
	// Walker2d's is CMA-ES on the returns gymnasium gives (no shift).
	if w, _ := Preset(PresetTuned, "", "", "Walker2d-v1"); w.MethodName() != "cmaes" || w.Problem.Shift != 0 || w.Problem.ObsNorm != Running {
		t.Errorf("Walker2d's default: %s, shift %v, obs norm %q", w.MethodName(), w.Problem.Shift, w.Problem.ObsNorm)
	}
	p, _ := Preset(PresetPaper, "stp_is", Adaptive, "Hopper-v1")
	tu, _ := Preset(PresetTuned, "stp_is", Adaptive, "Hopper-v1")
	if p.Problem.Shift != 1 || tu.Problem.Shift != 0 || st(p).NormalizeBasis || !st(tu).NormalizeBasis || st(p).SurrogateSteps != 1 {
		t.Errorf("paper %+v / tuned %+v", st(p), st(tu))
	}
	cb, _ := Preset(PresetTuned, "stp_is", "", "Hopper-v1")
	if s := st(cb); cb.Problem.Shift != 1 || cb.Problem.CommonSeeds != IterationSeeds || s.Noise != 0.025 || s.Rate != 0.00707 || s.Directions != 4 || s.Top != 2 || s.Basis != Orthogonal || cb.Restart != (Restart{After: 300, Length: 0.125, Early: 100, EarlyLength: 0.07}) {
		t.Errorf("combined %+v %+v", cb, s)
	}
	// An env the table does not name gets ARS's default shift (none),
	// the fallback's own ν and step, and all 8 directions combined.
	o, _ := Preset(PresetTuned, "stp", Combined, "Quad-v0")
	if s := st(o); s.Noise != 0.05 || s.Rate != 0.01 || s.Directions != 8 || s.Top != 8 || o.Problem.Shift != 0 {
		t.Errorf("combined on an unknown env: %+v, shift %v", s, o.Problem.Shift)
	}
	e := entry{Blocks: map[string]map[string]any{"ars": {"directions": 8, "top": 8, "rate": 0.02, "noise": 0.03}}}
	if v, err := arsValue(e, "rate", "Quad-v0"); err != nil || v != strconv.FormatFloat(0.02/math.Sqrt(8), 'g', -1, 64) {
		t.Errorf("rate: ars = %s, %v; want α/√b", v, err)
	}
	a, _ := Preset(PresetTuned, "ars", "", "Walker2d-v1")
	if s := a.Method.(*ARSSettings); *s != (ARSSettings{Directions: 40, Top: 30, Noise: 0.025, Rate: 0.03}) || a.Problem.Shift != 1 || a.Limits.EvalEvery != 10 {
		t.Errorf("ARS on Walker2d: %+v %+v", a, s)
	}
}

// Every preset has a valid entry for every task (and an env it does not
// name) and every method and step it offers; the paper preset offers no
// combined step.
func TestPresetTableIsComplete(t *testing.T) {
	envs := []string{"Quad-v0"}
	for _, task := range tasks.All() {
		envs = append(envs, task.Name+"-v1")
	}
	for _, preset := range PresetNames() {
		for _, env := range envs {
			for _, m := range MethodNames() {
				for _, step := range stepsOf(m) {
					c, err := Preset(preset, m, step, env)
					if preset == PresetPaper && step == Combined {
						if err == nil {
							t.Errorf("paper preset offers %s combined on %s", m, env)
						}
						continue
					}
					if err != nil {
						t.Errorf("%s %s %s %s: %v", preset, env, m, step, err)
						continue
					}
					if err := c.Validate(); err != nil {
						t.Errorf("%s %s %s %s: %v", preset, env, m, step, err)
					}
				}
			}
		}
	}
}

// A run names what it changes of its entry, once: Named keeps the names
// it was given.
func TestRunNames(t *testing.T) {
	for _, tc := range []struct {
		env, method string
		step        Step
		set         map[string]string
		label, dir  string
	}{
		{"Hopper-v1", "", "", map[string]string{"directions": "8", "top": "4"}, "STP combined, m=8, top 4, guided by the gradient sum", "stp-combined-m8-t4-guided"},
		{"Hopper-v1", "", "", map[string]string{"restart": "none"}, "STP combined, guided by the gradient sum, no restarts", "stp-combined-guided-norestart"},
		{"Hopper-v1", "", "", map[string]string{"restart": "400x0.125"}, "STP combined, guided by the gradient sum, restarts after 400 below 0.125", "stp-combined-guided-re400x0.125"},
		{"HalfCheetah-v1", "", "", map[string]string{"k": "paper"}, "STP combined, K=4", "stp-combined-k4"},
		{"HalfCheetah-v1", "stp_is", Adaptive, nil, "STP_IS adaptive, K=1", "stp_is-adaptive-k1"},
		{"HalfCheetah-v1", "", "", map[string]string{"directions": "16", "top": "8", "basis": "gaussian"}, "STP combined, m=16, top 8, Gaussian basis", "stp-combined-m16-t8-gauss"},
		{"Hopper-v1", "stp_is", Adaptive, map[string]string{"basis": "orthogonal"}, "STP_IS adaptive, orthogonal basis", "stp_is-adaptive-orth"},
		{"Hopper-v1", "stp_is", Combined, map[string]string{"basis": "learned"}, "STP_IS combined, learned basis", "stp_is-combined-learned"},
		{"Hopper-v1", "stp_is", Combined, map[string]string{"basis": "learned", "learned-p": "sqrt"}, "STP_IS combined, learned basis, p ∝ √energy", "stp_is-combined-learned-sqrt"},
		{"Hopper-v1", "ars", "", map[string]string{"k": "2"}, "ARS V2-t, K=2", "ars-k2"},
		{"Hopper-v1", "ars", "", map[string]string{"shift": "0", "common-seeds": "iteration"}, "ARS V2-t, iteration seeds, shift 0", "ars-siteration-shift0"},
		{"Swimmer-v1", "ars", "", map[string]string{"obs-norm": "none"}, "ARS V1-t", "ars-v1"},
		{"Hopper-v1", "", "", map[string]string{"common-seeds": "pair", "shift": "0.5"}, "STP combined, guided by the gradient sum, pair seeds, shift 0.5", "stp-combined-guided-spair-shift0.5"},
		{"Hopper-v1", "", "", map[string]string{"directions": "16", "top": "8", "rate": "0.02", "noise": "0.05"}, "STP combined, m=16, top 8, guided by the gradient sum, noise 0.05, rate 0.02", "stp-combined-m16-t8-guided-n0.05-r0.02"},
		{"Hopper-v1", "", "", map[string]string{"rate": "0.00707", "noise": "0.025", "shift": "1"}, "STP combined, guided by the gradient sum", "stp-combined-guided"},
		{"Hopper-v1", "", "", map[string]string{"guide": "none"}, "STP combined", "stp-combined"},
		{"Swimmer-v1", "stp", Adaptive, map[string]string{"k": "paper"}, "STP adaptive, m=8", "stp-adaptive-m8"},
		{"Swimmer-v1", "", "", nil, "CMA-ES", "cmaes"},
		{"Swimmer-v1", "", "", map[string]string{"sigma": "0.3", "population": "20"}, "CMA-ES, population 20, σ0 0.3", "cmaes-pop20-sigma0.3"},
		{"Hopper-v1", "cmaes", "", map[string]string{"k": "2"}, "CMA-ES, K=2", "cmaes-k2"},
		{"Hopper-v1", "", "", map[string]string{"guard": "0.5"}, "STP combined, guided by the gradient sum, guard 0.5", "stp-combined-guided-g0.5"},
		{"Swimmer-v1", "stp", Adaptive, map[string]string{"rate": "1"}, "STP adaptive, K=1, m=8, rate 1", "stp-adaptive-k1-m8-r1"},
	} {
		c, err := Preset(PresetTuned, tc.method, tc.step, tc.env)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.set {
			if err := c.Set(k, v); err != nil {
				t.Fatalf("%s %s=%s: %v", tc.env, k, v, err)
			}
		}
		n := c.Named()
		if n.Label != tc.label || n.Name != tc.dir {
			t.Errorf("%s %v: label %q, dir %q; want %q, %q", tc.env, tc.set, n.Label, n.Name, tc.label, tc.dir)
		}
		// The names stay what they were when the run was created.
		n.Problem.K++
		if again := n.Named(); again.Name != n.Name || again.Label != n.Label {
			t.Errorf("Named renamed a named run: %q → %q", n.Name, again.Name)
		}
	}
}

// A setting of another method or step, or one the method keeps fixed, is
// refused with an error that names it; unknown names too.
func TestSetRefusesWhatDoesNotApply(t *testing.T) {
	for _, tc := range []struct {
		method string
		step   Step
		name   string
		want   string
	}{
		{"ars", "", "directions", "published settings"},
		{"ars", "", "rate", "published settings"},
		{"ars", "", "lipschitz", "does not apply to --method ars"},
		{"stp", Adaptive, "top", "--step combined"},
		{"stp", Adaptive, "noise", "--method stp or stp_is --step combined"},
		{"stp", Combined, "surrogate-steps", "--method stp_is"},
		{"stp", Combined, "mix", "is not a setting"},
	} {
		c, err := Preset(PresetTuned, tc.method, tc.step, "Hopper-v1")
		if err != nil {
			t.Fatal(err)
		}
		err = c.Set(tc.name, "1")
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.name || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrConfig) {
			t.Errorf("%s %s: Set(%s) = %v, want an error naming it with %q", tc.method, tc.step, tc.name, err, tc.want)
		}
	}
	c, _ := Preset(PresetTuned, "ars", "", "Hopper-v1")
	if _, err := Preset(PresetTuned, "ars", Combined, "Hopper-v1"); err == nil || !strings.Contains(err.Error(), "step") {
		t.Errorf("ars with a step: %v", err)
	}
	if err := c.Set("k", "0"); err == nil {
		t.Error("k 0 accepted")
	}
}

// A Config reads back from its JSON exactly, and a setting this build does
// not know is refused rather than dropped.
func TestConfigJSON(t *testing.T) {
	for _, m := range MethodNames() {
		c, err := Preset(PresetTuned, m, stepsOf(m)[0], "Hopper-v1")
		if err != nil {
			t.Fatal(err)
		}
		c = c.Named()
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Config
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		b2, _ := json.Marshal(back)
		if string(b) != string(b2) || back.MethodName() != m {
			t.Errorf("%s: %s\n→ %s", m, b, b2)
		}
		bad := strings.Replace(string(b), `"settings":{`, `"settings":{"mixing":0.1,`, 1)
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s: an unknown setting was accepted", m)
		}
	}
}

// A preset entry's blocks are named for a method or a step; a misspelt
// one is refused, not silently left unread.
func TestPresetBlocksAreMethodsOrSteps(t *testing.T) {
	ok := entry{Blocks: map[string]map[string]any{"ars": {}, "combined": {}, "adaptive": {}, "fixed": {}}}
	if err := ok.checkBlocks(); err != nil {
		t.Error(err)
	}
	bad := entry{Blocks: map[string]map[string]any{"combind": {}}}
	if err := bad.checkBlocks(); err == nil || !strings.Contains(err.Error(), `"combind" is no method`) {
		t.Errorf("err = %v", err)
	}
}

// st returns c's STP settings, to read or change them in place.
func st(c Config) *STPSettings { return c.Method.(*STPSettings) }

// TestLearnedBasisNeedsSTPISCombined: the learned basis sets STP_IS's p,
// with the combined step; anywhere else it is refused, naming the field.
func TestLearnedBasisNeedsSTPISCombined(t *testing.T) {
	for _, tc := range []struct {
		method string
		step   Step
	}{{"stp", Combined}, {"stp_is", Adaptive}, {"stp_is", Fixed}} {
		c, err := Preset(PresetTuned, tc.method, tc.step, "Hopper-v1")
		if err != nil {
			t.Fatal(err)
		}
		if tc.method == "stp" {
			if err := c.Set("guide", "none"); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Set("basis", "learned"); err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		if err == nil || !strings.Contains(err.Error(), "basis") || !strings.Contains(err.Error(), "stp_is") {
			t.Errorf("%s %s with the learned basis: %v, want a refusal naming basis", tc.method, tc.step, err)
		}
	}
	c, err := Preset(PresetTuned, "stp_is", Combined, "Hopper-v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set("learned-p", "sqrt"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "learned-p") {
		t.Errorf("learned-p sqrt in the orthogonal basis: %v, want a refusal naming learned-p", err)
	}
	if err := c.Set("learned-p", "cube"); err == nil || !strings.Contains(err.Error(), "learned-p") {
		t.Errorf("learned-p cube: %v, want a refusal naming it", err)
	}
}
