package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stpis/stpis/rundir"
)

// barField is one field of the progress bar; fields of lower keep are
// dropped first when the line is wider than the terminal.
type barField struct {
	text string
	keep int
}

// The fields' keeps: the episodes, the budget's ETA and the best
// evaluation always stay; the iteration, the step and H(p) go first, the
// last evaluation (on the iterations that evaluate) last.
const (
	keepIter = iota
	keepStep
	keepEntropy
	keepSpeed
	keepLabel
	keepTrain
	keepThreshold
	keepEval
	keepAlways
)

// barFields are the bar's fields for p, in the order shown.
func (r *progress) barFields(p rundir.Point, est etaEstimate) []barField {
	max := r.cfg.Limits.MaxEpisodes
	f := []barField{
		{r.cfg.Name, keepLabel},
		{fmt.Sprintf("it %d", p.Iter), keepIter},
		{fmt.Sprintf("%d/%d ep %.0f%%", p.Episodes, max, 100*float64(p.Episodes)/float64(max)), keepAlways},
		{est.budgetText(), keepAlways},
	}
	if t := est.thresholdText(); t != "" {
		f = append(f, barField{t, keepThreshold})
	}
	f = append(f, barField{fmt.Sprintf("best %.1f", p.BestEval), keepAlways})
	if p.HasEval {
		f = append(f, barField{fmt.Sprintf("eval %.1f±%.1f", p.EvalMean, p.EvalStd), keepEval})
	}
	f = append(f, barField{fmt.Sprintf("train %.1f", p.Reward), keepTrain},
		barField{fmt.Sprintf("step %.3g", p.StepSize), keepStep})
	if p.PEntropy > 0 && r.cfg.MethodName() == "stp_is" {
		// Only importance sampling has a distribution worth watching.
		f = append(f, barField{fmt.Sprintf("H(p) %.2f", p.PEntropy), keepEntropy})
	}
	return append(f, barField{fmt.Sprintf("%.1f ep/s", p.EpsPerS), keepSpeed})
}

// fitLine joins the fields that fit in width-1 columns (the last column
// is left free: a terminal that wraps at it would leave fragments of each
// redraw), dropping the fields of lowest keep first, and cuts what still
// does not fit.
func fitLine(fields []barField, width int) string {
	limit := max(width-1, 1)
	for keep := keepIter; ; keep++ {
		var parts []string
		for _, f := range fields {
			if f.keep >= keep {
				parts = append(parts, f.text)
			}
		}
		line := strings.Join(parts, "  ")
		if n := utf8.RuneCountInString(line); n <= limit || keep == keepAlways {
			if n > limit {
				line = string([]rune(line)[:limit])
			}
			return line
		}
	}
}

// termWidth is the width of the terminal w is: asked of the terminal,
// else $COLUMNS, else 80.
func termWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && isTerminal(w) {
		if n := ttyColumns(f); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}
