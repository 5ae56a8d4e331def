package main

import (
	"time"
)

// etaWindow is how many of the latest evaluations the threshold's ETA
// extrapolates from.
const etaWindow = 5

// evalAt is the best evaluation so far at a point of the run.
type evalAt struct {
	episodes int
	best     float64
}

// etaEstimate is the progress line's ETA: to the budget, and, where the run
// stops at a threshold and its best evaluation has been climbing, to the
// threshold at the climb of its last etaWindow evaluations.
type etaEstimate struct {
	budget, threshold    time.Duration
	hasBudget, hasThresh bool
}

// estimateETA extrapolates: the budget's ETA is the episodes left at the
// current episodes per second; the threshold's, the episodes the best
// evaluation needs to climb from its last value to the threshold at its
// recent rate (a line through the first and last of the window), at the
// same speed, and never beyond the budget's.
func estimateETA(evals []evalAt, episodes, maxEpisodes int, epsPerS, threshold float64, stopsAtThreshold bool) etaEstimate {
	var e etaEstimate
	if epsPerS <= 0 {
		return e
	}
	e.budget, e.hasBudget = seconds(float64(maxEpisodes-episodes)/epsPerS), true
	if !stopsAtThreshold || len(evals) < 2 {
		return e
	}
	w := evals[max(0, len(evals)-etaWindow):]
	first, last := w[0], w[len(w)-1]
	if last.best >= threshold || last.episodes <= first.episodes || last.best <= first.best {
		return e
	}
	rate := (last.best - first.best) / float64(last.episodes-first.episodes) // per episode
	need := (threshold-last.best)/rate - float64(episodes-last.episodes)
	e.threshold, e.hasThresh = min(seconds(max(need, 0)/epsPerS), e.budget), true
	return e
}

func seconds(s float64) time.Duration {
	return (time.Duration(s * float64(time.Second))).Round(time.Second)
}

// text is the ETA as the bar shows it: "ETA ~45s to the threshold at the
// recent climb (≤1m48s to the budget)", or the budget's alone.
func (e etaEstimate) text() string {
	switch {
	case !e.hasBudget:
		return "ETA ?"
	case e.hasThresh:
		return "ETA ~" + e.threshold.String() + " to the threshold at the recent climb (≤" + e.budget.String() + " to the budget)"
	}
	return "ETA " + e.budget.String() + " to the budget"
}
