package report

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// The statistics of this file aggregate runs across tasks, as rliable does
// (Agarwal et al., "Deep Reinforcement Learning at the Edge of the
// Statistical Precipice", NeurIPS 2021; google-research/rliable): scores
// normalized per task, the interquartile mean (IQM) of the normalized
// scores of all runs with a stratified bootstrap interval, the probability
// of improvement of one method over another, and performance profiles.
//
// A score matrix is ragged: scores[t] holds one score per run of task t,
// and tasks may have different numbers of runs. rliable's matrices are
// rectangular (runs × tasks); on a rectangular matrix every function here
// computes rliable's figure (bench/rliable_check.py checks it).

// The bootstrap of the aggregate statistics: resamples, the generator's seed
// (fixed: the same runs give the same intervals on every machine) and the
// interval's level.
const (
	AggregateResamples = 10000
	AggregateSeed      = 1
)

// IQM is the interquartile mean of the scores of every run of every task
// pooled: the mean of the sorted scores left when ⌊n/4⌋ are cut from each
// end (scipy.stats.trim_mean(x, 0.25), rliable's aggregate_iqm). NaN for
// no scores.
func IQM(scores [][]float64) float64 {
	var all []float64
	for _, s := range scores {
		all = append(all, s...)
	}
	if len(all) == 0 {
		return math.NaN()
	}
	sort.Float64s(all)
	cut := len(all) / 4
	kept := all[cut : len(all)-cut]
	sum := 0.0
	for _, v := range kept {
		sum += v
	}
	return sum / float64(len(kept))
}

// ProbImprovement is the probability of improvement P(X > Y) of x over y,
// rliable's probability_of_improvement: over the tasks, the mean of the
// Mann–Whitney U of task t's x scores against its y scores divided by the
// number of pairs, U counting the pairs with x > y and a tie one half. x
// and y have one entry per task, in the same order; a task where either
// has no score is left out. NaN when no task is left.
func ProbImprovement(x, y [][]float64) float64 {
	sum, tasks := 0.0, 0
	for t := range min(len(x), len(y)) {
		if len(x[t]) == 0 || len(y[t]) == 0 {
			continue
		}
		u := 0.0
		for _, a := range x[t] {
			for _, b := range y[t] {
				switch {
				case a > b:
					u++
				case a == b:
					u += 0.5
				}
			}
		}
		sum += u / float64(len(x[t])*len(y[t]))
		tasks++
	}
	if tasks == 0 {
		return math.NaN()
	}
	return sum / float64(tasks)
}

// ProfileAt is the performance profile of scores at tau: the fraction of
// all runs (every task pooled) whose score is above tau (rliable's
// score_distributions, run_score_deviation). NaN for no scores.
func ProfileAt(scores [][]float64, tau float64) float64 {
	above, n := 0, 0
	for _, s := range scores {
		for _, v := range s {
			n++
			if v > tau {
				above++
			}
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(above) / float64(n)
}

// checkScores refuses a matrix with a score that is not a finite number,
// or with no score at all.
func checkScores(scores [][]float64) error {
	n := 0
	for t, s := range scores {
		for i, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("task %d, run %d: score %v, want a finite number", t, i, v)
			}
		}
		n += len(s)
	}
	if n == 0 {
		return errors.New("no scores")
	}
	return nil
}

// resample fills dst[t] with len(src[t]) scores drawn with replacement from
// src[t]: the stratified resample, each task's runs drawn among that task's.
func resample(rng *rand.Rand, src, dst [][]float64) {
	for t, s := range src {
		for i := range dst[t] {
			dst[t][i] = s[rng.IntN(len(s))]
		}
	}
}

func newLike(src [][]float64) [][]float64 {
	dst := make([][]float64, len(src))
	for t, s := range src {
		dst[t] = make([]float64, len(s))
	}
	return dst
}

// StratifiedBootstrap resamples the runs of each task with replacement
// (as many as the task has, never mixing tasks: rliable's
// StratifiedBootstrap) resamples times, and returns stat of each resample,
// sorted ascending. The draws come from a PCG generator seeded with seed:
// the same arguments give the same values on every run and platform.
func StratifiedBootstrap(scores [][]float64, resamples int, seed uint64, stat func([][]float64) float64) ([]float64, error) {
	return StratifiedBootstrap2(scores, nil, resamples, seed, func(x, _ [][]float64) float64 { return stat(x) })
}

// StratifiedBootstrap2 is StratifiedBootstrap for a statistic of two
// matrices, each resampled on its own (rliable's
// StratifiedIndependentBootstrap, which its probability of improvement
// uses); y may be nil.
func StratifiedBootstrap2(x, y [][]float64, resamples int, seed uint64, stat func(x, y [][]float64) float64) ([]float64, error) {
	if err := checkScores(x); err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	if y != nil {
		if err := checkScores(y); err != nil {
			return nil, fmt.Errorf("bootstrap, second matrix: %w", err)
		}
	}
	if resamples < 1 {
		return nil, fmt.Errorf("bootstrap: %d resamples, want at least 1", resamples)
	}
	rng := rand.New(rand.NewPCG(seed, 0xa66e))
	bx, by := newLike(x), newLike(y)
	values := make([]float64, resamples)
	for b := range values {
		resample(rng, x, bx)
		if y != nil {
			resample(rng, y, by)
		}
		values[b] = stat(bx, by)
	}
	sort.Float64s(values)
	return values, nil
}

// Estimate is a point estimate with its bootstrap interval.
type Estimate struct {
	Value, Low, High float64
}

// String is "0.83 [0.71, 0.92]", "—" for NaN.
func (e Estimate) String() string {
	if math.IsNaN(e.Value) {
		return markNone
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", e.Value, e.Low, e.High)
}

// Excludes reports whether the interval lies wholly above or below v.
func (e Estimate) Excludes(v float64) bool { return e.Low > v || e.High < v }

// IQMEstimate is IQM of scores with its percentile interval of level over
// resamples stratified bootstrap resamples.
func IQMEstimate(scores [][]float64, resamples int, seed uint64, level float64) (Estimate, error) {
	boot, err := StratifiedBootstrap(scores, resamples, seed, IQM)
	if err != nil {
		return Estimate{}, fmt.Errorf("IQM: %w", err)
	}
	lo, hi := PercentileInterval(boot, level)
	return Estimate{IQM(scores), lo, hi}, nil
}

// ProbImprovementEstimate is ProbImprovement of x over y with its
// percentile interval, x and y resampled independently, each within its
// tasks. Only the tasks where both have scores count.
func ProbImprovementEstimate(x, y [][]float64, resamples int, seed uint64, level float64) (Estimate, error) {
	var sx, sy [][]float64
	for t := range min(len(x), len(y)) {
		if len(x[t]) > 0 && len(y[t]) > 0 {
			sx, sy = append(sx, x[t]), append(sy, y[t])
		}
	}
	if len(sx) == 0 {
		return Estimate{math.NaN(), math.NaN(), math.NaN()}, nil
	}
	boot, err := StratifiedBootstrap2(sx, sy, resamples, seed, ProbImprovement)
	if err != nil {
		return Estimate{}, fmt.Errorf("probability of improvement: %w", err)
	}
	lo, hi := PercentileInterval(boot, level)
	return Estimate{ProbImprovement(sx, sy), lo, hi}, nil
}

// Score is what a run is scored by.
type Score int

const (
	// ScoreFinal is the run's last evaluation.
	ScoreFinal Score = iota
	// ScoreAUC is the area under its evaluation curve over the training
	// episodes it ran, divided by them: the mean evaluation over the
	// budget (trapezoid rule between evaluations, from the first, at 0
	// episodes, to the last), which uses every evaluation.
	ScoreAUC
)

func (s Score) String() string {
	if s == ScoreAUC {
		return "AUC"
	}
	return "final"
}

// RunScore is r's score of kind s; ok is false for a run with no
// evaluation.
func RunScore(r Run, s Score) (v float64, ok bool) {
	var xs, ys []float64
	for _, p := range r.Curve {
		if p.HasEval {
			xs, ys = append(xs, float64(p.Episodes)), append(ys, p.EvalMean)
		}
	}
	if len(xs) == 0 {
		if r.Result != nil && s == ScoreFinal {
			return r.Result.FinalEval, true
		}
		return math.NaN(), false
	}
	if s == ScoreFinal {
		return ys[len(ys)-1], true
	}
	span := xs[len(xs)-1] - xs[0]
	if span <= 0 {
		return ys[0], true
	}
	area := 0.0
	for i := 1; i < len(xs); i++ {
		area += (xs[i] - xs[i-1]) * (ys[i] + ys[i-1]) / 2
	}
	return area / span, true
}

// startEval is a run's first evaluation, the start policy's when the curve
// begins with the evaluation at 0 episodes.
func startEval(r Run) (float64, bool) {
	for _, p := range r.Curve {
		if p.HasEval {
			return p.EvalMean, true
		}
	}
	return math.NaN(), false
}

// Normalizer maps a task's scores to normalized scores: Zero to 0 and One
// to 1.
type Normalizer struct {
	Env string
	// Zero is the start policy's evaluation: the median over the task's
	// runs of their first evaluation (at 0 episodes, before any training;
	// every method of a task starts from the same policy).
	Zero float64
	// One is the task's threshold, or where the task has none the median
	// final evaluation of its ARS runs; OneFrom says which.
	One     float64
	OneFrom string
}

// Normalize is (v − Zero) / (One − Zero).
func (n Normalizer) Normalize(v float64) float64 { return (v - n.Zero) / (n.One - n.Zero) }

// isARS reports whether r is a run of ARS (any variant).
func isARS(r Run) bool { return strings.EqualFold(r.Meta.Method, "ars") }

// Normalizers gives each env of runs its Normalizer. It is an error when a
// task has no threshold and no ARS run, or when 1 and 0 coincide.
func Normalizers(runs []Run) (map[string]Normalizer, error) {
	byEnv := map[string][]Run{}
	for _, r := range runs {
		byEnv[r.Meta.Env] = append(byEnv[r.Meta.Env], r)
	}
	out := map[string]Normalizer{}
	for env, group := range byEnv {
		n := Normalizer{Env: env}
		var starts, arsFinals []float64
		for _, r := range group {
			if v, ok := startEval(r); ok {
				starts = append(starts, v)
			}
			if r.Meta.HasThreshold && n.OneFrom == "" {
				n.One, n.OneFrom = r.Meta.Threshold, "threshold"
			}
			if isARS(r) {
				if v, ok := RunScore(r, ScoreFinal); ok {
					arsFinals = append(arsFinals, v)
				}
			}
		}
		if len(starts) == 0 {
			return nil, fmt.Errorf("report: normalizing %s: no run has an evaluation", env)
		}
		n.Zero = median(starts)
		if n.OneFrom == "" {
			if len(arsFinals) == 0 {
				return nil, fmt.Errorf("report: normalizing %s: no threshold and no ARS run to take 1 from", env)
			}
			n.One, n.OneFrom = median(arsFinals), "ARS median final"
		}
		if !(math.Abs(n.One-n.Zero) > 0) {
			return nil, fmt.Errorf("report: normalizing %s: the start evaluation %g is the score 1", env, n.Zero)
		}
		out[env] = n
	}
	return out, nil
}

// The method keys of the aggregate: a task's default (whatever its label
// on that task), ARS (V1-t or V2-t) and the paper's preset are one method
// across tasks; any other label is its own.
const (
	MethodDefault = "default"
	MethodARS     = "ARS"
	MethodPaper   = "paper preset"
)

// MethodKey is the method r counts under in the aggregate, given each
// env's default label.
func MethodKey(r Run, defaults map[string]string) string {
	switch {
	case defaults[r.Meta.Env] != "" && r.Meta.Label == defaults[r.Meta.Env]:
		return MethodDefault
	case isARS(r):
		return MethodARS
	case strings.HasSuffix(r.Meta.Label, "paper preset"):
		return MethodPaper
	}
	return r.Meta.Label
}

// ScoreMatrix is one method's normalized scores: Scores[t] those of its runs
// of Envs[t] (empty where it has none).
type ScoreMatrix struct {
	Method string
	Scores [][]float64
}

// Tasks is the number of tasks with scores.
func (m ScoreMatrix) Tasks() int {
	n := 0
	for _, s := range m.Scores {
		if len(s) > 0 {
			n++
		}
	}
	return n
}

// Runs is the number of scores.
func (m ScoreMatrix) Runs() int {
	n := 0
	for _, s := range m.Scores {
		n += len(s)
	}
	return n
}

// ScoreMatrices gives every method of runs (MethodKey) its normalized
// scores of kind s, over envs (the envs of runs, in the paper's order).
// Runs without an evaluation are left out.
func ScoreMatrices(runs []Run, norm map[string]Normalizer, defaults map[string]string, s Score) (envs []string, ms []ScoreMatrix) {
	envSet := map[string]bool{}
	for _, r := range runs {
		envSet[r.Meta.Env] = true
	}
	envs = sortedKeys(envSet, envLess)
	index := map[string]int{}
	for i, e := range envs {
		index[e] = i
	}
	byMethod := map[string][][]float64{}
	for _, r := range runs {
		v, ok := RunScore(r, s)
		if !ok {
			continue
		}
		k := MethodKey(r, defaults)
		if byMethod[k] == nil {
			byMethod[k] = make([][]float64, len(envs))
		}
		t := index[r.Meta.Env]
		byMethod[k][t] = append(byMethod[k][t], norm[r.Meta.Env].Normalize(v))
	}
	keys := make([]string, 0, len(byMethod))
	for k := range byMethod {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return methodLess(keys[i], keys[j]) })
	for _, k := range keys {
		ms = append(ms, ScoreMatrix{Method: k, Scores: byMethod[k]})
	}
	return envs, ms
}

// methodLess orders the aggregate's methods: the default, ARS, the paper's
// preset, then the others by name.
func methodLess(a, b string) bool {
	r := func(k string) int {
		switch k {
		case MethodDefault:
			return 0
		case MethodARS:
			return 1
		case MethodPaper:
			return 2
		}
		return 3
	}
	if r(a) != r(b) {
		return r(a) < r(b)
	}
	return a < b
}

// AggregateRow is one method's aggregate figures on one kind of score.
type AggregateRow struct {
	Method      string
	Tasks, Runs int
	IQM         Estimate
	// OverARS is the probability of improvement over ARS, on the tasks
	// where both ran (NaN for ARS itself, or no ARS run).
	OverARS Estimate
}

// PeerRow is the probability of improvement of one method over another.
type PeerRow struct {
	X, Y  string
	Tasks int
	P     Estimate
}

// Aggregate holds the aggregate statistics of a set of runs.
type Aggregate struct {
	Envs        []string
	Normalizers map[string]Normalizer
	// Final and AUC have a row per method, in the same order, on the
	// final evaluations and on the AUC.
	Final, AUC []AggregateRow
	// PeersFinal and PeersAUC are P(X > Y) for every ordered pair of
	// methods other than ARS (OverARS has those) that ran on at least two
	// tasks in common, on final evaluations and on the AUC.
	PeersFinal, PeersAUC []PeerRow
	Resamples            int
	Seed                 uint64
	Level                float64
}

// AggregateOptions configures Aggregates; zero values take
// AggregateResamples, AggregateSeed and BootstrapLevel.
type AggregateOptions struct {
	// Default gives, per env, the label of the env's default method.
	Default map[string]string
	// Methods, when not empty, keeps the methods (MethodKey) it names;
	// the normalizers are still those of all the runs.
	Methods   map[string]bool
	Resamples int
	Seed      uint64
	Level     float64
}

// Aggregates computes the aggregate statistics of runs: normalizers, and
// per method (MethodKey) the IQM of normalized final scores and AUCs and
// the probability of improvement over ARS, each with its stratified
// bootstrap interval, and P(X > Y) between peers.
func Aggregates(runs []Run, opts AggregateOptions) (Aggregate, error) {
	if opts.Resamples <= 0 {
		opts.Resamples = AggregateResamples
	}
	if opts.Seed == 0 {
		opts.Seed = AggregateSeed
	}
	if opts.Level == 0 {
		opts.Level = BootstrapLevel
	}
	if len(runs) == 0 {
		return Aggregate{}, errors.New("report: aggregate: no runs")
	}
	norm, err := Normalizers(runs)
	if err != nil {
		return Aggregate{}, err
	}
	a := Aggregate{Normalizers: norm, Resamples: opts.Resamples, Seed: opts.Seed, Level: opts.Level}
	for _, s := range []Score{ScoreFinal, ScoreAUC} {
		envs, all := ScoreMatrices(runs, norm, opts.Default, s)
		a.Envs = envs
		var ms []ScoreMatrix
		for _, m := range all {
			if len(opts.Methods) == 0 || opts.Methods[m.Method] {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			return a, fmt.Errorf("report: aggregate: no run is of the methods asked for")
		}
		var ars *ScoreMatrix
		for i := range ms {
			if ms[i].Method == MethodARS {
				ars = &ms[i]
			}
		}
		var rows []AggregateRow
		var peers []PeerRow
		for _, m := range ms {
			row := AggregateRow{Method: m.Method, Tasks: m.Tasks(), Runs: m.Runs()}
			if row.IQM, err = IQMEstimate(m.Scores, opts.Resamples, opts.Seed, opts.Level); err != nil {
				return a, fmt.Errorf("report: aggregate %s, %s: %w", m.Method, s, err)
			}
			row.OverARS = Estimate{math.NaN(), math.NaN(), math.NaN()}
			if ars != nil && m.Method != MethodARS {
				if row.OverARS, err = ProbImprovementEstimate(m.Scores, ars.Scores, opts.Resamples, opts.Seed, opts.Level); err != nil {
					return a, fmt.Errorf("report: aggregate %s over ARS, %s: %w", m.Method, s, err)
				}
			}
			rows = append(rows, row)
			for _, o := range ms {
				if o.Method == m.Method || o.Method == MethodARS || m.Method == MethodARS {
					continue
				}
				common := 0
				for t := range m.Scores {
					if len(m.Scores[t]) > 0 && len(o.Scores[t]) > 0 {
						common++
					}
				}
				if common < 2 {
					continue
				}
				p, err := ProbImprovementEstimate(m.Scores, o.Scores, opts.Resamples, opts.Seed, opts.Level)
				if err != nil {
					return a, fmt.Errorf("report: aggregate %s over %s, %s: %w", m.Method, o.Method, s, err)
				}
				peers = append(peers, PeerRow{X: m.Method, Y: o.Method, Tasks: common, P: p})
			}
		}
		if s == ScoreFinal {
			a.Final, a.PeersFinal = rows, peers
		} else {
			a.AUC, a.PeersAUC = rows, peers
		}
	}
	return a, nil
}

// AggregateTable formats Aggregates's figures as Markdown: the
// normalizers, a row per method, and P(X > Y) between peers, followed by
// notes on every column.
func AggregateTable(runs []Run, opts AggregateOptions) (string, error) {
	a, err := Aggregates(runs, opts)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	pct := fmt.Sprintf("%g%% CI", 100*a.Level)
	b.WriteString("| Task | 0 (start evaluation) | 1 | 1 from |\n| --- | --- | --- | --- |\n")
	for _, env := range a.Envs {
		n := a.Normalizers[env]
		label := env
		if d := opts.Default[env]; d != "" {
			label += " (default: " + d + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", label, fmtNum(n.Zero), fmtNum(n.One), n.OneFrom)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "| Method | tasks | runs | IQM final [%s] | IQM AUC [%s] | P(X > ARS) final [%s] | P(X > ARS) AUC [%s] |\n", pct, pct, pct, pct)
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, r := range a.Final {
		auc := a.AUC[i]
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s |\n", r.Method, r.Tasks, r.Runs, r.IQM, auc.IQM, r.OverARS, auc.OverARS)
	}
	if len(a.PeersFinal) > 0 {
		fmt.Fprintf(&b, "\n| X | Y | tasks | P(X > Y) final [%s] | P(X > Y) AUC [%s] |\n| --- | --- | --- | --- | --- |\n", pct, pct)
		for i, p := range a.PeersFinal {
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", p.X, p.Y, p.Tasks, p.P, a.PeersAUC[i].P)
		}
	}
	fmt.Fprintf(&b, `
Normalized score: (score − 0) / (1 − 0) per task, 0 the start policy's evaluation (the median over the
  task's runs of the evaluation at 0 episodes), 1 the task's threshold, or ARS's median final evaluation
  where the task has none.
Methods: "default" is each task's default (its label in the first table), "ARS" ARS V1-t or V2-t, "paper
  preset" the paper's STP_IS; any other label is a method of its own, on the tasks it ran.
final: the last evaluation; AUC: the mean evaluation over the training episodes run (trapezoid rule).
IQM: interquartile mean of the normalized scores of all the method's runs, every task pooled (rliable's).
P(X > Y): probability of improvement, the mean over the tasks both ran of P(a run of X scores above a run
  of Y) (Mann–Whitney U / (n·m), ties one half); 0.5 is no difference.
[%s]: percentile interval of the stratified bootstrap (each task's runs resampled within the task; X and Y
  independently), %d resamples, seed %d.
`, pct, a.Resamples, a.Seed)
	return b.String(), nil
}
