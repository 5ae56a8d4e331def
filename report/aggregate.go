package report

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// This file scores runs, normalizes the scores per task and gathers them
// into the score matrices of aggregatestats.go, per method, for
// Aggregates and AggregateTable.

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
	// final evaluation of its ARS runs (without ARS runs, of all its runs);
	// OneFrom says which.
	One     float64
	OneFrom string
}

// Normalize is (v − Zero) / (One − Zero).
func (n Normalizer) Normalize(v float64) float64 { return (v - n.Zero) / (n.One - n.Zero) }

// isARS reports whether r is a run of ARS (any variant).
func isARS(r Run) bool { return strings.EqualFold(r.Meta.Method, "ars") }

// Normalizers gives each env of runs its Normalizer: 1 is the threshold,
// else ARS's median final, else (a task without ARS runs) the median final
// of all its runs. It is an error when 1 and 0 coincide.
func Normalizers(runs []Run) (map[string]Normalizer, error) {
	byEnv := map[string][]Run{}
	for _, r := range runs {
		byEnv[r.Meta.Env] = append(byEnv[r.Meta.Env], r)
	}
	out := map[string]Normalizer{}
	for env, group := range byEnv {
		n := Normalizer{Env: env}
		var starts, arsFinals, allFinals []float64
		for _, r := range group {
			if v, ok := startEval(r); ok {
				starts = append(starts, v)
			}
			if v, ok := RunScore(r, ScoreFinal); ok {
				allFinals = append(allFinals, v)
				if isARS(r) {
					arsFinals = append(arsFinals, v)
				}
			}
			if r.Meta.HasThreshold && n.OneFrom == "" {
				n.One, n.OneFrom = r.Meta.Threshold, "threshold"
			}
		}
		if len(starts) == 0 {
			return nil, fmt.Errorf("report: normalizing %s: no run has an evaluation", env)
		}
		n.Zero = median(starts)
		switch {
		case n.OneFrom != "":
		case len(arsFinals) > 0:
			n.One, n.OneFrom = median(arsFinals), "ARS median final"
		default:
			// A development matrix without ARS on the task: its runs'
			// own median final, so that the task still counts.
			n.One, n.OneFrom = median(allFinals), "median final of all its runs (no ARS run)"
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
