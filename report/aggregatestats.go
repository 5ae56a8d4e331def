package report

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
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
		sum += uStatistic(x[t], y[t]) / float64(len(x[t])*len(y[t]))
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
