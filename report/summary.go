package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The bootstrap of SummaryRows: resamples of the seeds, the generator's seed
// (fixed, so the table is the same on every run) and the interval's level.
const (
	BootstrapResamples = 2000
	BootstrapSeed      = 1
	BootstrapLevel     = 0.95
)

// SummaryRow is one (env, method) row of SummaryTable.
type SummaryRow struct {
	Env, Label string
	// Seeds is the number of runs, Reached those that reached the
	// threshold.
	Seeds, Reached int
	// KMMedian is the Kaplan–Meier median of the episodes to the threshold
	// (KMMedian in survival.go), a seed that never reached it being
	// censored at the episodes it ran (SurvivalTime); +Inf when the curve
	// never falls to one half. When every seed ran the same budget it is
	// the episodes by which half the seeds, rounded up, had reached the
	// threshold. KMLow and KMHigh are its percentile bootstrap interval
	// (BootstrapResamples resamples of the seeds, BootstrapLevel), an end
	// +Inf where the resamples' median was not reached. Budget is the most
	// training episodes any seed ran: a median not reached lies beyond it.
	KMMedian, KMLow, KMHigh, Budget float64
	// Against holds this row's tests against each of SummaryPeers, in
	// that order: Against[0] against the env's ARS row, the reference.
	Against []Comparison
	// MedianEpisodes is the median episodes to the threshold over the
	// seeds that reached it (NaN when none did); MedianBest and
	// MedianFinal the medians over all seeds of the best and the last
	// evaluation.
	MedianEpisodes, MedianBest, MedianFinal float64
	// HasThreshold says whether the task has a threshold (Walker2d has
	// none: its row gives evaluations only).
	HasThreshold bool
}

// SummaryPeers are the peers every row is tested against, by the prefix
// of their label: a task's row of a peer is the first label in the
// table's order that starts with it. The first, ARS, is the reference
// every table shows; the others get columns where some task has them.
var SummaryPeers = []string{"ARS", "CMA-ES"}

// Comparison is a row tested against one peer's row of its task.
type Comparison struct {
	// Peer is the label of the peer's row ("" when the env has none).
	Peer string
	// LogRankP is the p-value of the two-sample log-rank test of this
	// row's episodes to the threshold against the peer row's, and FinalP
	// that of the two-sided Mann–Whitney test (MannWhitney) of the final
	// evaluations. NaN for the peer's row itself, an env without one, or
	// samples with nothing to compare (no seed of either reached, or a
	// row without an evaluation).
	LogRankP, FinalP float64
}

// SurvivalTime is a run as a right-censored survival time: the episodes to
// the threshold when it reached it (event true), else the training episodes
// it ran (EpisodesRun; event false).
func SurvivalTime(r Run) (episodes float64, event bool) {
	if r.Reached {
		return float64(r.EpisodesToThreshold), true
	}
	return EpisodesRun(r), false
}

// EpisodesRun is the training episodes a run ran: result.json's count, or
// for a run without one (still running, or killed) the largest count of its
// curve.
func EpisodesRun(r Run) float64 {
	if r.Result != nil {
		return float64(r.Result.Episodes)
	}
	last := 0
	for _, p := range r.Curve {
		last = max(last, p.Episodes)
	}
	return float64(last)
}

// survivalSample is runs as SurvivalTime gives them.
func survivalSample(runs []Run) (times []float64, events []bool) {
	for _, r := range runs {
		t, e := SurvivalTime(r)
		times, events = append(times, t), append(events, e)
	}
	return times, events
}

// SummaryRows groups runs by env and method label, in the paper's order.
func SummaryRows(runs []Run) ([]SummaryRow, error) {
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
	// peers[i][env] is the label of env's row of SummaryPeers[i].
	peers := make([]map[string]string, len(SummaryPeers))
	for i, prefix := range SummaryPeers {
		peers[i] = map[string]string{}
		for _, k := range keys {
			if _, ok := peers[i][k.env]; !ok && strings.HasPrefix(k.label, prefix) {
				peers[i][k.env] = k.label
			}
		}
	}
	// against tests this group against the env's row ref: the log-rank
	// p of the episodes to the threshold and the Mann–Whitney p of the
	// final evaluations (NaN where there is nothing to test).
	against := func(k key, ref string) (lrP, finalP float64, err error) {
		lrP, finalP = math.NaN(), math.NaN()
		if ref == "" || ref == k.label {
			return lrP, finalP, nil
		}
		t1, e1 := survivalSample(groups[k])
		t2, e2 := survivalSample(groups[key{k.env, ref}])
		lr, err := LogRank(t1, e1, t2, e2)
		if err != nil {
			return lrP, finalP, fmt.Errorf("report: summary of %s %s against %s: %w", k.env, k.label, ref, err)
		}
		lrP = lr.P
		if f1, f2 := finals(groups[k]), finals(groups[key{k.env, ref}]); len(f1) > 0 && len(f2) > 0 {
			mw, err := MannWhitney(f1, f2)
			if err != nil {
				return lrP, finalP, fmt.Errorf("report: summary of %s %s against %s: final evaluations: %w", k.env, k.label, ref, err)
			}
			finalP = mw.P
		}
		return lrP, finalP, nil
	}
	rows := make([]SummaryRow, 0, len(keys))
	for _, k := range keys {
		row, err := summaryRow(groups[k])
		if err != nil {
			return nil, fmt.Errorf("report: summary of %s %s: %w", k.env, k.label, err)
		}
		row.Env, row.Label = k.env, k.label
		for _, peer := range peers {
			c := Comparison{Peer: peer[k.env]}
			if c.LogRankP, c.FinalP, err = against(k, c.Peer); err != nil {
				return nil, err
			}
			row.Against = append(row.Against, c)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// summaryRow computes a row's figures but for its names and its tests
// against the peers.
func summaryRow(group []Run) (SummaryRow, error) {
	row := SummaryRow{Seeds: len(group)}
	var best []float64
	for _, r := range group {
		row.HasThreshold = row.HasThreshold || r.Meta.HasThreshold
		if b, _, ok := evals(r); ok {
			best = append(best, b)
		}
	}
	final := finals(group)
	cell := Summarize(group)
	row.Reached = cell.Reached
	row.MedianEpisodes, row.MedianBest, row.MedianFinal = median(cell.Values), median(best), median(final)
	times, events := survivalSample(group)
	for i, r := range group {
		row.Budget = max(row.Budget, times[i], EpisodesRun(r))
	}
	row.KMMedian = KMMedianStat(times, events)
	boot, err := Bootstrap(times, events, BootstrapResamples, BootstrapSeed, KMMedianStat)
	if err != nil {
		return row, err
	}
	row.KMLow, row.KMHigh = PercentileInterval(boot, BootstrapLevel)
	return row, nil
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

// finals is the last evaluation of each run of group that has one.
func finals(group []Run) []float64 {
	var f []float64
	for _, r := range group {
		if _, last, ok := evals(r); ok {
			f = append(f, last)
		}
	}
	return f
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

// SummaryNotes explains every column and mark of SummaryTable.
var SummaryNotes = fmt.Sprintf(`
reached: seeds that reached the threshold / seeds run.
KM median: Kaplan–Meier median of the training episodes to the threshold, a seed that never reached it
  counted as censored at the episodes it ran; with equal budgets, the episodes by which half the seeds had
  reached it. [%g%% CI]: percentile bootstrap over seeds (%d resamples, fixed seed).
>N: not reached within N episodes, the most any seed of the row ran.
median of reached: median episodes to the threshold over the seeds that reached it.
log-rank p vs ARS: two-sample log-rank test (χ², 1 df) of episodes to the threshold against the task's ARS row.
best / final: medians over all seeds of the best and of the last evaluation.
final p vs ARS: two-sided Mann–Whitney U test of the last evaluations against the task's ARS row (exact
  without ties, as R's wilcox.test).
N/A: no seed reached the threshold (the paper's mark, as in trainer table).
—: nothing to show: the ARS row itself, or a task without one; nothing to test; a task without a
  threshold, Walker2d's, whose rows compare evaluations only.
`, 100*BootstrapLevel, BootstrapResamples)

// peerNotes explains the columns of a peer after the first, where the
// table has them.
func peerNotes(peer string) string {
	return fmt.Sprintf(`log-rank p vs %[1]s / final p vs %[1]s: the same tests against the task's %[1]s row (—: the row
  itself, or a task without one).
`, peer)
}

// SummaryTable formats SummaryRows's rows as a Markdown table, followed by
// SummaryNotes. The reference's tests (ARS's) sit beside the evaluations;
// each other peer's two columns follow where some task has its row.
func SummaryTable(runs []Run) (string, error) {
	if len(runs) == 0 {
		return "", fmt.Errorf("report: summary: no runs")
	}
	rows, err := SummaryRows(runs)
	if err != nil {
		return "", err
	}
	var extra []int // the indices of SummaryPeers after the first that some task has
	for i := 1; i < len(SummaryPeers); i++ {
		if slices.ContainsFunc(rows, func(r SummaryRow) bool { return r.Against[i].Peer != "" }) {
			extra = append(extra, i)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| Task | Method | reached | KM median [%g%% CI] | median of reached | log-rank p vs %s | best | final | final p vs %[2]s |",
		100*BootstrapLevel, SummaryPeers[0])
	for _, i := range extra {
		fmt.Fprintf(&b, " log-rank p vs %s | final p vs %[1]s |", SummaryPeers[i])
	}
	b.WriteString("\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	b.WriteString(strings.Repeat(" --- | --- |", len(extra)))
	b.WriteString("\n")
	for _, r := range rows {
		reached, km := fmt.Sprintf("%d/%d", r.Reached, r.Seeds), kmCell(r)
		if !r.HasThreshold {
			reached, km = fmt.Sprintf("%s (%s)", markNone, plural(r.Seeds, "seed")), markNone
		}
		ofReached := dash(r.MedianEpisodes)
		if r.HasThreshold && r.Reached == 0 {
			ofReached = markNotReached
		}
		logRank := func(c Comparison) string {
			if !r.HasThreshold {
				return markNone
			}
			return pValue(c.LogRankP)
		}
		ref := r.Against[0]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |", r.Env, r.Label, reached, km,
			ofReached, logRank(ref), dash(r.MedianBest), dash(r.MedianFinal), pValue(ref.FinalP))
		for _, i := range extra {
			fmt.Fprintf(&b, " %s | %s |", logRank(r.Against[i]), pValue(r.Against[i].FinalP))
		}
		b.WriteString("\n")
	}
	b.WriteString(SummaryNotes)
	for _, i := range extra {
		b.WriteString(peerNotes(SummaryPeers[i]))
	}
	return b.String(), nil
}

// kmCell is "2720 [1808, >4000]".
func kmCell(r SummaryRow) string {
	ep := func(v float64) string {
		if math.IsInf(v, 1) {
			return ">" + fmtNum(r.Budget)
		}
		return dash(v)
	}
	return fmt.Sprintf("%s [%s, %s]", ep(r.KMMedian), ep(r.KMLow), ep(r.KMHigh))
}

// dash is fmtNum, "—" for NaN.
func dash(v float64) string {
	if math.IsNaN(v) {
		return markNone
	}
	return fmtNum(v)
}

// pValue prints p with two significant digits (0.43, 0.012, 4.2e-05), "—"
// for NaN.
func pValue(p float64) string {
	if math.IsNaN(p) {
		return markNone
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}
