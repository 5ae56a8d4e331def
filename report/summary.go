package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// SummaryRow is one (env, method) row of Summary.
type SummaryRow struct {
	Env, Label string
	// Seeds is the number of runs, Reached those that reached the
	// threshold.
	Seeds, Reached int
	// MedianEpisodes is the median episodes to the threshold over the
	// seeds that reached it (NaN when none did); MedianBest and
	// MedianFinal the medians over all seeds of the best and the last
	// evaluation.
	MedianEpisodes, MedianBest, MedianFinal float64
	// HalfEpisodes is the episodes by which half of the seeds (rounded
	// up) had reached the threshold: a median over all the seeds, which
	// counts a seed that never reached it as reaching after its budget,
	// so that reaching on more seeds never raises it. NaN when fewer than
	// half reached.
	HalfEpisodes float64
}

// SummaryRows groups runs by env and method label, in the paper's order.
func SummaryRows(runs []Run) []SummaryRow {
	type key struct{ env, label string }
	groups := map[key][]Run{}
	for _, r := range runs {
		k := key{r.Meta.Env, r.Meta.Label}
		groups[k] = append(groups[k], r)
	}
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].env != keys[j].env {
			return envLess(keys[i].env, keys[j].env)
		}
		return labelLess(keys[i].label, keys[j].label)
	})
	rows := make([]SummaryRow, 0, len(keys))
	for _, k := range keys {
		row := SummaryRow{Env: k.env, Label: k.label, Seeds: len(groups[k])}
		var best, final []float64
		for _, r := range groups[k] {
			if b, f, ok := evals(r); ok {
				best, final = append(best, b), append(final, f)
			}
		}
		cell := Summarize(groups[k])
		row.Reached = cell.Reached
		row.MedianEpisodes, row.MedianBest, row.MedianFinal = median(cell.Values), median(best), median(final)
		row.HalfEpisodes = math.NaN()
		if half := (row.Seeds + 1) / 2; cell.Reached >= half {
			row.HalfEpisodes = cell.Values[half-1] // Summarize sorts them
		}
		rows = append(rows, row)
	}
	return rows
}

// evals returns a run's best and last evaluation, from its curve or, when
// the curve holds none, its result.
func evals(r Run) (best, final float64, ok bool) {
	best = math.Inf(-1)
	for _, p := range r.Curve {
		if p.HasEval {
			best, final, ok = math.Max(best, p.EvalMean), p.EvalMean, true
		}
	}
	if !ok && r.Result != nil {
		return r.Result.BestEval, r.Result.FinalEval, true
	}
	return best, final, ok
}

// median is the median of v, NaN for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// SummaryTable formats SummaryRows's rows as a Markdown table.
func SummaryTable(runs []Run) (string, error) {
	if len(runs) == 0 {
		return "", fmt.Errorf("report: summary: no runs")
	}
	var b strings.Builder
	b.WriteString("| Task | Method | reached | median episodes to threshold | episodes until half the seeds reached | median best eval | median final eval |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "—"
		}
		return fmtNum(v)
	}
	for _, r := range SummaryRows(runs) {
		fmt.Fprintf(&b, "| %s | %s | %d/%d | %s | %s | %s | %s |\n", r.Env, r.Label, r.Reached, r.Seeds, num(r.MedianEpisodes), num(r.HalfEpisodes), num(r.MedianBest), num(r.MedianFinal))
	}
	return b.String(), nil
}
