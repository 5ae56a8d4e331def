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

// thresholdOutlook is what the recent climb says of the threshold.
type thresholdOutlook int

const (
	// outlookNone: nothing to say (no threshold to stop at, fewer than
	// two evaluations, no speed yet, or the threshold reached).
	outlookNone thresholdOutlook = iota
	// outlookETA: the climb reaches the threshold within the budget, in
	// etaEstimate.threshold.
	outlookETA
	// outlookNextEval: at the climb the threshold is already due, so the
	// next evaluation may show it (none has yet).
	outlookNextEval
	// outlookNotAtRate: the climb is flat, or reaches the threshold only
	// past the budget.
	outlookNotAtRate
)

// etaEstimate is the progress line's ETA: to the budget, and, where the run
// stops at a threshold, what its best evaluation's climb over the last
// etaWindow evaluations says of reaching it.
type etaEstimate struct {
	budget    time.Duration
	hasBudget bool
	outlook   thresholdOutlook
	threshold time.Duration
}

// estimateETA extrapolates: the budget's ETA is the episodes left at the
// current episodes per second. The threshold's projects the best
// evaluation's recent rate (a line through the first and last of the
// window) from the last evaluation to the episode it would reach the
// threshold at: an ETA when that episode lies ahead within the budget,
// "not at this rate" when it lies past the budget or the climb is flat,
// "the next evaluation" when it has already passed (no evaluation since
// could show it).
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
	switch {
	case last.best >= threshold:
		return e
	case last.episodes <= first.episodes || last.best <= first.best || episodes >= maxEpisodes:
		e.outlook = outlookNotAtRate
		return e
	}
	rate := (last.best - first.best) / float64(last.episodes-first.episodes) // per episode
	at := float64(last.episodes) + (threshold-last.best)/rate
	switch {
	case at > float64(maxEpisodes):
		e.outlook = outlookNotAtRate
	case at <= float64(episodes):
		e.outlook = outlookNextEval
	default:
		e.outlook, e.threshold = outlookETA, seconds((at-float64(episodes))/epsPerS)
	}
	return e
}

func seconds(s float64) time.Duration {
	return (time.Duration(s * float64(time.Second))).Round(time.Second)
}

// budgetText is the budget's ETA as the bar shows it: "ETA 1m48s".
func (e etaEstimate) budgetText() string {
	if !e.hasBudget {
		return "ETA ?"
	}
	return "ETA " + e.budget.String()
}

// thresholdText is the threshold's outlook as the bar shows it
// ("threshold ~45s", "threshold: not at this rate"), "" for none.
func (e etaEstimate) thresholdText() string {
	if v := e.thresholdValue(); v != "" {
		if e.outlook == outlookETA {
			return "threshold ~" + v
		}
		return "threshold: " + v
	}
	return ""
}

// thresholdValue is the outlook as the JSON lines' eta_threshold holds it:
// a duration, "not at this rate", "at the next evaluation", or "" for
// none.
func (e etaEstimate) thresholdValue() string {
	switch e.outlook {
	case outlookETA:
		return e.threshold.String()
	case outlookNextEval:
		return "at the next evaluation"
	case outlookNotAtRate:
		return "not at this rate"
	}
	return ""
}
