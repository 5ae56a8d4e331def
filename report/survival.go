package report

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// The functions of this file are survival analysis over right-censored
// times: times[i] is when subject i had its event (events[i] true) or when it
// was last seen without one (events[i] false, censored). For a training run
// the event is reaching the threshold, and a run that never reached it is
// censored at the training episodes it ran.

// KMStep is one step of a Kaplan–Meier curve: at Time, Events of the AtRisk
// subjects still under observation (time >= Time) had their event, and the
// estimated survival from Time until the next step is Survival.
type KMStep struct {
	Time     float64
	AtRisk   int
	Events   int
	Survival float64
}

// checkSample reports a sample that cannot be analysed: times and events of
// different lengths, or a time that is not a finite number.
func checkSample(times []float64, events []bool) error {
	if len(times) != len(events) {
		return fmt.Errorf("survival: %d times but %d event flags", len(times), len(events))
	}
	for i, t := range times {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("survival: time %d is %v, want a finite number", i, t)
		}
	}
	return nil
}

// KaplanMeier is the Kaplan–Meier (product-limit) estimate of the survival
// function: one step per distinct event time t, S(t) = Π_{t_i <= t} (1 −
// d_i/n_i) with d_i events among the n_i subjects at risk at t_i. A subject
// censored at an event time counts as at risk at that time (events come
// before censorings). S is 1 before the first step; after the last event it
// stays at the last step's value (the curve ends at the largest time
// observed). A sample with no events gives no steps.
func KaplanMeier(times []float64, events []bool) ([]KMStep, error) {
	if err := checkSample(times, events); err != nil {
		return nil, err
	}
	idx := make([]int, len(times))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return times[idx[a]] < times[idx[b]] })
	var steps []KMStep
	s := 1.0
	atRisk := len(times)
	for i := 0; i < len(idx); {
		t := times[idx[i]]
		d, n := 0, 0
		for ; i < len(idx) && times[idx[i]] == t; i++ {
			n++
			if events[idx[i]] {
				d++
			}
		}
		if d > 0 {
			s *= 1 - float64(d)/float64(atRisk)
			steps = append(steps, KMStep{Time: t, AtRisk: atRisk, Events: d, Survival: s})
		}
		atRisk -= n
	}
	return steps, nil
}

// SurvivalAt evaluates a Kaplan–Meier curve (as KaplanMeier returns it) at t:
// the survival of the last step at or before t, 1 before the first.
func SurvivalAt(steps []KMStep, t float64) float64 {
	s := 1.0
	for _, st := range steps {
		if st.Time > t {
			break
		}
		s = st.Survival
	}
	return s
}

// halfTol absorbs the rounding of the product in KaplanMeier, so that a curve
// at exactly one half (5 events among 10) counts as having reached it.
const halfTol = 1e-9

// KMMedian is the Kaplan–Meier median: the smallest event time t with
// S(t) <= 1/2 (the convention of Klein and Moeschberger, Survival Analysis,
// §4.5: with no censoring before it, the time by which half the subjects,
// rounded up, had their event). ok is false when the curve never falls to
// one half: the median is beyond the largest time observed.
func KMMedian(times []float64, events []bool) (median float64, ok bool, err error) {
	steps, err := KaplanMeier(times, events)
	if err != nil {
		return math.NaN(), false, err
	}
	for _, st := range steps {
		if st.Survival <= 0.5+halfTol {
			return st.Time, true, nil
		}
	}
	return math.Inf(1), false, nil
}

// LogRankResult is the outcome of LogRank.
type LogRankResult struct {
	// Observed and Expected are the events of the first sample and those
	// expected of it were both samples from one survival function;
	// Variance is the hypergeometric variance of Observed − Expected.
	Observed, Expected, Variance float64
	// Events is the events of both samples together.
	Events float64
	// ChiSquare is (Observed − Expected)² / Variance and P its upper tail
	// under the χ² distribution with one degree of freedom. Both are NaN
	// when Variance is 0: no event happened while both samples had
	// subjects at risk, so there is nothing to compare.
	ChiSquare, P float64
}

// LogRank is the two-sample log-rank (Mantel–Cox) test of equal survival
// functions. At each distinct event time t_j of the pooled samples, with n_j
// subjects at risk (n_1j of them in sample 1) and d_j events, sample 1 is
// expected to have E_j = d_j n_1j / n_j of them, with variance V_j = d_j
// (n_1j/n_j)(1 − n_1j/n_j)(n_j − d_j)/(n_j − 1). The statistic (Σ O_j −
// Σ E_j)² / Σ V_j is referred to χ² with one degree of freedom; it is what
// R's survival::survdiff reports. It is an error when either sample is empty.
func LogRank(times1 []float64, events1 []bool, times2 []float64, events2 []bool) (LogRankResult, error) {
	if err := checkSample(times1, events1); err != nil {
		return LogRankResult{}, fmt.Errorf("log-rank, first sample: %w", err)
	}
	if err := checkSample(times2, events2); err != nil {
		return LogRankResult{}, fmt.Errorf("log-rank, second sample: %w", err)
	}
	if len(times1) == 0 || len(times2) == 0 {
		return LogRankResult{}, errors.New("log-rank: a sample is empty")
	}
	type obs struct {
		t     float64
		event bool
		first bool
	}
	all := make([]obs, 0, len(times1)+len(times2))
	for i, t := range times1 {
		all = append(all, obs{t, events1[i], true})
	}
	for i, t := range times2 {
		all = append(all, obs{t, events2[i], false})
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].t < all[b].t })
	var r LogRankResult
	n1, n := float64(len(times1)), float64(len(all))
	for i := 0; i < len(all); {
		t := all[i].t
		var d, d1, out, out1 float64
		for ; i < len(all) && all[i].t == t; i++ {
			out++
			if all[i].first {
				out1++
			}
			if all[i].event {
				d++
				if all[i].first {
					d1++
				}
			}
		}
		if d > 0 {
			p1 := n1 / n
			r.Events += d
			r.Observed += d1
			r.Expected += d * p1
			if n > 1 {
				r.Variance += d * p1 * (1 - p1) * (n - d) / (n - 1)
			}
		}
		n, n1 = n-out, n1-out1
	}
	if r.Variance <= 0 {
		r.ChiSquare, r.P = math.NaN(), math.NaN()
		return r, nil
	}
	diff := r.Observed - r.Expected
	r.ChiSquare = diff * diff / r.Variance
	r.P = distuv.ChiSquared{K: 1}.Survival(r.ChiSquare)
	return r, nil
}

// Bootstrap resamples the subjects (time and event together) with
// replacement, as many as there are, resamples times, and returns stat of
// each resample, sorted ascending (+Inf, for a statistic not reached, last).
// The resampling is drawn from a PCG generator seeded with seed: the same
// arguments give the same values on every run and platform.
func Bootstrap(times []float64, events []bool, resamples int, seed uint64, stat func(times []float64, events []bool) float64) ([]float64, error) {
	if err := checkSample(times, events); err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	if len(times) == 0 {
		return nil, errors.New("bootstrap: no subjects")
	}
	if resamples < 1 {
		return nil, fmt.Errorf("bootstrap: %d resamples, want at least 1", resamples)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := len(times)
	bt, be := make([]float64, n), make([]bool, n)
	values := make([]float64, resamples)
	for b := range values {
		for i := range bt {
			j := rng.IntN(n)
			bt[i], be[i] = times[j], events[j]
		}
		values[b] = stat(bt, be)
	}
	sort.Float64s(values)
	return values, nil
}

// PercentileInterval is the percentile interval of level (0.95 for 95%) of
// sorted bootstrap values, as Bootstrap returns them: the values of ranks
// ⌈B·α/2⌉ and ⌈B·(1 − α/2)⌉ (1-based, α = 1 − level) among the B values.
// With 2000 values and level 0.95 these are the 50th and the 1950th. An end
// is +Inf where that many resamples did not reach the statistic.
func PercentileInterval(sorted []float64, level float64) (lo, hi float64) {
	if len(sorted) == 0 || !(level > 0 && level < 1) {
		return math.NaN(), math.NaN()
	}
	b := float64(len(sorted))
	alpha := 1 - level
	at := func(q float64) float64 {
		k := int(math.Ceil(b*q - 1e-9))
		k = min(max(k, 1), len(sorted))
		return sorted[k-1]
	}
	return at(alpha / 2), at(1 - alpha/2)
}

// KMMedianStat is KMMedian as a Bootstrap statistic: +Inf when the median is
// not reached.
func KMMedianStat(times []float64, events []bool) float64 {
	m, ok, err := KMMedian(times, events)
	if err != nil || !ok {
		return math.Inf(1)
	}
	return m
}
