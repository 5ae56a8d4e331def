package loop

import (
	"context"
	"testing"

	"github.com/stpis/stpis/train"
)

// row is one method and step: the rows of train's conformance table
// (every method, each of its steps), as the loop sees them.
type row struct {
	method string
	step   train.Step
}

func (r row) String() string {
	if r.step == "" {
		return r.method
	}
	return r.method + "-" + string(r.step)
}

// rows lists every method with each of its steps, from train's public
// tables: a method added there is a row here.
func rows(t testing.TB) []row {
	t.Helper()
	var out []row
	for _, m := range train.MethodNames() {
		c, err := train.Preset(train.PresetTuned, m, "", "Quad-v0")
		if err != nil {
			t.Fatal(err)
		}
		if c.Step() == "" {
			out = append(out, row{m, ""})
			continue
		}
		for _, st := range train.Steps {
			out = append(out, row{m, st})
		}
	}
	return out
}

// TestConformanceCheckpointResumesBitForBit: every method and step resumes
// from a checkpoint to the bit.
func TestConformanceCheckpointResumesBitForBit(t *testing.T) {
	for _, r := range rows(t) {
		t.Run(r.String(), func(t *testing.T) {
			cfg, err := train.Preset(train.PresetTuned, r.method, r.step, "Quad-v0")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Problem.Seed, cfg.Problem.Shift, cfg.Problem.K = 3, 0.5, 2
			cfg.Limits = train.Limits{MaxEpisodes: 100000, EvalEvery: 4, EvalEpisodes: 3}
			resumesBitForBit(t, cfg)
		})
	}
}

// resumesBitForBit runs cfg for 30 iterations and, beside it, for 10, then
// through a checkpoint for the other 20: the two must agree to the bit.
func resumesBitForBit(t *testing.T, cfg train.Config) {
	t.Helper()
	a, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(cfg, testInfo)
	qa, qb := &quadRoller{target: testTarget}, &quadRoller{target: testTarget}
	for range 10 {
		if _, err := b.Iterate(context.Background(), qb); err != nil {
			t.Fatal(err)
		}
	}
	continuesAs(t, a, qa, roundTrip(t, b), qb, 10, 30)
}
