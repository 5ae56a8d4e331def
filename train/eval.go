package train

import (
	"context"
	"fmt"
	"math"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/rundir"
)

// evalDue says whether the iteration that started at episode start ends
// with an evaluation: every EvalEvery iterations, or with EvalSpacing, when
// it crossed a multiple of EvalSpacing episodes.
func (r *Run) evalDue(start int) bool {
	if e := r.cfg.Limits.EvalSpacing; e > 0 {
		return start/e != r.c.Episodes/e
	}
	return r.c.Iter%r.cfg.Limits.EvalEvery == 0
}

// evaluate runs EvalEpisodes at x_k with the current normalizer, on seeds of
// their own; they are not training episodes and do not touch the normalizer.
func (r *Run) evaluate(ctx context.Context, env Roller, pt *rundir.Point) error {
	p, l := r.cfg.Problem, r.cfg.Limits
	// The seeds follow the iteration, so that an evaluation at a given
	// iteration sees the same episodes however the run was chunked.
	mean, std, err := Evaluate(ctx, env, r.Policy(), l.EvalEpisodes, mix(mix(p.Seed, evalStream), uint64(r.c.Iter)), p.Horizon, p.Kwargs)
	if err != nil {
		return fmt.Errorf("train: evaluation at iteration %d: %w", r.c.Iter, err)
	}
	r.c.Evals++
	r.c.EvalEpisodes += l.EvalEpisodes
	r.c.LastEval = mean
	pt.HasEval, pt.EvalMean, pt.EvalStd = true, mean, std
	if !r.c.HasBest || mean > r.c.BestEval {
		r.c.BestEval, r.c.HasBest = mean, true
		r.bestX, r.bestNorm = r.X(), r.norm.Clone()
	}
	if l.HasThreshold && !r.c.Reached && mean >= l.Threshold {
		r.c.Reached, r.c.ThresholdReachedAt = true, r.c.Episodes
		pt.ReachedAt = r.c.Episodes
	}
	return nil
}

// EvaluateInitial evaluates x_0 before any training (iteration 0).
func (r *Run) EvaluateInitial(ctx context.Context, env Roller) (rundir.Point, error) {
	var pt rundir.Point
	if err := r.evaluate(ctx, env, &pt); err != nil {
		return pt, err
	}
	r.c.InitialEval, r.c.HasInitial = pt.EvalMean, true
	return r.point(pt), nil
}

// Evaluate runs n episodes of a saved policy with seeds derived from seed
// and returns the mean and standard deviation of their (unshifted) returns.
// A non-finite episode is an error: it is never averaged.
func Evaluate(ctx context.Context, env Roller, f policy.File, n int, seed uint64, horizon int, kwargs envclient.Kwargs) (mean, std float64, err error) {
	if n < 1 {
		return 0, 0, fmt.Errorf("train: evaluate: episodes %d must be ≥ 1", n)
	}
	norm := f.Normalizer.Snapshot()
	specs := make([]envclient.EpisodeSpec, n)
	for j := range specs {
		specs[j] = envclient.EpisodeSpec{
			EnvID: f.EnvID, Kwargs: kwargs, Rows: f.Policy.Rows, Cols: f.Policy.Cols,
			W: f.Policy.W, Bias: f.Policy.Bias, ObsMean: norm.Mean, ObsStd: norm.Std,
			Seed: mix(seed, uint64(j)), Horizon: horizon,
		}
	}
	res, err := env.Rollout(ctx, specs)
	if err != nil {
		return 0, 0, err
	}
	var s, ss float64
	for j, e := range res {
		if e.NonFinite {
			return 0, 0, fmt.Errorf("train: evaluation episode %d: %s", j, e.NonFiniteDetail)
		}
		s += e.Return
		ss += e.Return * e.Return
	}
	mean = s / float64(n)
	return mean, math.Sqrt(math.Max(ss/float64(n)-mean*mean, 0)), nil
}
