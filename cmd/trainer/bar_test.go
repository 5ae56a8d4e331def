package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// TestProgressLineFitsTheTerminal: the bar never fills a terminal's width
// (an 80-column terminal wrapped lines of 122-192 characters, issue 53):
// it drops the iteration, the step and H(p) first, keeps the episodes,
// the ETA and the best evaluation, and shows all on a wide terminal.
func TestProgressLineFitsTheTerminal(t *testing.T) {
	cfg, err := train.Preset(train.PresetPaper, "stp_is", "", "Humanoid-v1")
	if err != nil {
		t.Fatal(err)
	}
	r := &progress{cfg: cfg.Named()}
	// The widest values a run shows: a million episodes, six-figure returns.
	p := rundir.Point{Iter: 123456, Episodes: 999999, Reward: -123456.7, BestEval: 123456.7, HasEval: true,
		EvalMean: -123456.7, EvalStd: 12345.6, StepSize: 0.000123456, PEntropy: 5.85, EpsPerS: 1234.5}
	est := etaEstimate{budget: 99 * 3600e9, hasBudget: true, outlook: outlookNotAtRate}
	fields := r.barFields(p, est)
	for _, width := range []int{40, 60, 80, 100, 120} {
		line := fitLine(fields, width)
		if n := utf8.RuneCountInString(line); n >= width {
			t.Errorf("width %d: %d characters: %q", width, n, line)
		}
		if width >= 60 {
			for _, want := range []string{"999999/1000000 ep", "ETA 99h0m0s", "best 123456.7"} {
				if !strings.Contains(line, want) {
					t.Errorf("width %d: %q lacks %q", width, line, want)
				}
			}
		}
		if width == 80 && (strings.Contains(line, "it 123456") || strings.Contains(line, "step ")) {
			t.Errorf("width 80 kept the iteration or the step before the rest: %q", line)
		}
	}
	wide := fitLine(fields, 250)
	for _, want := range []string{cfg.Named().Name, "it 123456", "threshold: not at this rate", "eval -123456.7±12345.6", "train -123456.7", "step 0.000123", "H(p) 5.85", "1234.5 ep/s"} {
		if !strings.Contains(wide, want) {
			t.Errorf("a wide terminal's line %q lacks %q", wide, want)
		}
	}
	// A Hopper run at 80 columns, on an iteration that evaluates: the
	// evaluation stays, the outlook goes before it.
	hopper, err := train.Preset(train.PresetTuned, "", "", "Hopper-v1")
	if err != nil {
		t.Fatal(err)
	}
	h := (&progress{cfg: hopper.Named()}).barFields(rundir.Point{Iter: 65, Episodes: 520, Reward: 375.4, BestEval: 503.7, HasEval: true,
		EvalMean: 503.7, EvalStd: 120.3, StepSize: 0.00707, EpsPerS: 61.2}, etaEstimate{budget: 1e9, hasBudget: true, outlook: outlookNotAtRate})
	if line := fitLine(h, 80); !strings.Contains(line, "eval 503.7±120.3") || utf8.RuneCountInString(line) >= 80 {
		t.Errorf("Hopper at 80 columns: %q", line)
	}
	if len(cfg.Named().Name) > 30 {
		t.Errorf("the bar's label %q is long", cfg.Named().Name)
	}
}

// TestTermWidth: off a terminal the width is $COLUMNS, else 80.
func TestTermWidth(t *testing.T) {
	t.Setenv("COLUMNS", "")
	if w := termWidth(&bytes.Buffer{}); w != 80 {
		t.Errorf("not a terminal: %d", w)
	}
	t.Setenv("COLUMNS", "132")
	if w := termWidth(&bytes.Buffer{}); w != 132 {
		t.Errorf("COLUMNS=132: %d", w)
	}
	t.Setenv("COLUMNS", "x")
	if w := termWidth(&bytes.Buffer{}); w != 80 {
		t.Errorf("COLUMNS=x: %d", w)
	}
}
