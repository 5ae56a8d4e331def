package report

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// HazardRatio is the first sample's hazard of the event relative to the
// second's, as the log-rank test estimates it: (O₁/E₁)/(O₂/E₂), the ratio of
// each sample's observed to expected events (Mantel–Haenszel's estimate
// under proportional hazards). Above 1 the first sample has its events
// (reaches the threshold) sooner or more often. It is NaN when either sample
// expects no event, +Inf when the second observed none and the first some.
func (r LogRankResult) HazardRatio() float64 {
	o2, e2 := r.Events-r.Observed, r.Events-r.Expected
	switch {
	case r.Expected <= 0 || e2 <= 0:
		return math.NaN()
	case o2 == 0:
		if r.Observed == 0 {
			return math.NaN()
		}
		return math.Inf(1)
	}
	return (r.Observed / r.Expected) / (o2 / e2)
}

// PowerOptions are the settings of LogRankPower.
type PowerOptions struct {
	// Seeds is the runs of each simulated arm (at least 2).
	Seeds int
	// HazardRatio is the better arm's hazard relative to the control's
	// (above 0; 1 gives the test's false-positive rate).
	HazardRatio float64
	// Alpha is the level a log-rank p must be under to count (0 < Alpha < 1).
	Alpha float64
	// Sims is the simulated pairs of arms (at least 1).
	Sims int
	// Seed seeds the simulation's PCG generator.
	Seed uint64
}

// LogRankPower estimates by simulation how often the two-sample log-rank
// test finds an arm whose hazard is HazardRatio times a control's ahead of
// it, with p < Alpha, each arm of Seeds runs (at HazardRatio 1 that is
// about Alpha/2: one side of the two-sided test). Both arms are drawn
// from the control's Kaplan–Meier curve S (times, events: a task's own runs,
// censored where they stopped), the other arm from S^HazardRatio
// (proportional hazards): a run's time is the first step where the curve
// falls to or below a uniform draw, and a run the curve never takes that
// low is censored at the largest time observed (the budget). It answers
// what a comparison on that many seeds can decide on that task, from the
// task's own spread of times and its share of runs that never reach. The
// same options give the same estimate.
func LogRankPower(times []float64, events []bool, opts PowerOptions) (float64, error) {
	switch {
	case opts.Seeds < 2:
		return math.NaN(), fmt.Errorf("power: seeds %d, want at least 2 an arm", opts.Seeds)
	case !(opts.HazardRatio > 0) || math.IsInf(opts.HazardRatio, 1):
		return math.NaN(), fmt.Errorf("power: hazard ratio %v, want a finite number above 0", opts.HazardRatio)
	case !(opts.Alpha > 0 && opts.Alpha < 1):
		return math.NaN(), fmt.Errorf("power: alpha %v, want 0 < alpha < 1", opts.Alpha)
	case opts.Sims < 1:
		return math.NaN(), fmt.Errorf("power: sims %d, want at least 1", opts.Sims)
	}
	steps, err := KaplanMeier(times, events)
	if err != nil {
		return math.NaN(), fmt.Errorf("power: %w", err)
	}
	if len(steps) == 0 {
		return math.NaN(), errors.New("power: the control has no event: no curve to draw from")
	}
	budget := math.Inf(-1)
	for _, t := range times {
		budget = math.Max(budget, t)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x706f776572)) // "power"
	draw := func(h float64, t []float64, e []bool) {
		for i := range t {
			target := math.Pow(rng.Float64(), 1/h) // S^h <= u  <=>  S <= u^(1/h)
			j := sort.Search(len(steps), func(k int) bool { return steps[k].Survival <= target })
			if j < len(steps) {
				t[i], e[i] = steps[j].Time, true
			} else {
				t[i], e[i] = budget, false
			}
		}
	}
	t1, e1 := make([]float64, opts.Seeds), make([]bool, opts.Seeds)
	t2, e2 := make([]float64, opts.Seeds), make([]bool, opts.Seeds)
	hits := 0
	for range opts.Sims {
		draw(opts.HazardRatio, t1, e1)
		draw(1, t2, e2)
		r, err := LogRank(t1, e1, t2, e2)
		if err != nil {
			return math.NaN(), fmt.Errorf("power: %w", err)
		}
		if r.P < opts.Alpha && r.Observed > r.Expected { // NaN never counts
			hits++
		}
	}
	return float64(hits) / float64(opts.Sims), nil
}
