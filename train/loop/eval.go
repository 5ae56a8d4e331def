package loop

import (
	"context"
	"errors"
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
// It reports whether every episode lasted to the horizon (none terminated).
func (r *Run) evaluate(ctx context.Context, env Roller, pt *rundir.Point) (lasted bool, err error) {
	p, l := r.cfg.Problem, r.cfg.Limits
	// The seeds follow the iteration, so that an evaluation at a given
	// iteration sees the same episodes however the run was chunked.
	res, err := evaluateEpisodes(ctx, env, r.Policy(), l.EvalEpisodes, mix(mix(p.Seed, evalStream), uint64(r.c.Iter)), p.Horizon, p.Kwargs)
	if err != nil {
		return false, fmt.Errorf("train: evaluation at iteration %d: %w", r.c.Iter, err)
	}
	mean, std := returnStats(res)
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
	lasted = true
	for _, e := range res {
		lasted = lasted && e.Truncated && !e.Terminated
	}
	return lasted, nil
}

// EvaluateInitial evaluates x_0 before any training (iteration 0).
func (r *Run) EvaluateInitial(ctx context.Context, env Roller) (rundir.Point, error) {
	var pt rundir.Point
	lasted, err := r.evaluate(ctx, env, &pt)
	if err != nil {
		return pt, err
	}
	r.c.InitialEval, r.c.HasInitial, r.c.Standing = pt.EvalMean, true, lasted
	pt.Standing = lasted
	return r.point(pt), nil
}

// Evaluate runs n episodes of a saved policy with seeds derived from seed
// and returns the mean and standard deviation of their (unshifted) returns.
// A non-finite episode is an error: it is never averaged.
func Evaluate(ctx context.Context, env Roller, f policy.File, n int, seed uint64, horizon int, kwargs envclient.Kwargs) (mean, std float64, err error) {
	res, err := evaluateEpisodes(ctx, env, f, n, seed, horizon, kwargs)
	if err != nil {
		return 0, 0, err
	}
	mean, std = returnStats(res)
	return mean, std, nil
}

// EvaluateEpisodes runs the episodes of Evaluate and returns each one's
// result, in order: episode j starts from gymnasium's reset with the seed
// EvalEpisodeSeed(seed, j).
func EvaluateEpisodes(ctx context.Context, env Roller, f policy.File, n int, seed uint64, horizon int, kwargs envclient.Kwargs) ([]envclient.EpisodeResult, error) {
	return evaluateEpisodes(ctx, env, f, n, seed, horizon, kwargs)
}

// ReturnStats is the mean and standard deviation of the episodes' returns,
// as Evaluate reports them.
func ReturnStats(res []envclient.EpisodeResult) (mean, std float64) { return returnStats(res) }

// EvalEpisodeSeed is the reset seed of episode j of an evaluation with
// seed seed (Evaluate, EvaluateEpisodes).
func EvalEpisodeSeed(seed uint64, j int) uint64 { return mix(seed, uint64(j)) }

// evaluateEpisodes is Evaluate's episodes, every one finite.
func evaluateEpisodes(ctx context.Context, env Roller, f policy.File, n int, seed uint64, horizon int, kwargs envclient.Kwargs) ([]envclient.EpisodeResult, error) {
	if n < 1 {
		return nil, fmt.Errorf("train: evaluate: episodes %d must be ≥ 1", n)
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
		return nil, err
	}
	for j, e := range res {
		if e.NonFinite {
			return nil, fmt.Errorf("train: evaluation episode %d: %s", j, e.NonFiniteDetail)
		}
		if diverged(e) {
			return nil, fmt.Errorf("train: %w: evaluation episode %d returned %g in %d steps, beyond the %g a step that any env pays (--kwarg values such as reset_noise_scale can blow a simulation up)",
				ErrDiverged, j, e.Return, e.Length, MaxRewardPerStep)
		}
	}
	return res, nil
}

// MaxRewardPerStep bounds the reward of one step that a simulation can
// pay: an episode whose return is larger in size than this times its
// length (or not finite) blew up. MuJoCo's tasks pay at most about a
// hundred a step (HumanoidStandup); this is ten thousand times that.
const MaxRewardPerStep = 1e6

// ErrDiverged is wrapped by the error of a run stopped because an
// evaluation's simulation blew up: its returns are not the env's, and
// they count for no threshold.
var ErrDiverged = errors.New("the simulation diverged")

// diverged says whether e's return is beyond what its steps can pay.
func diverged(e envclient.EpisodeResult) bool {
	return !finite(e.Return) || math.Abs(e.Return) > MaxRewardPerStep*float64(max(e.Length, 1))
}

// returnStats is the mean and standard deviation of the episodes' returns.
func returnStats(res []envclient.EpisodeResult) (mean, std float64) {
	var s, ss float64
	for _, e := range res {
		s += e.Return
		ss += e.Return * e.Return
	}
	mean = s / float64(len(res))
	return mean, math.Sqrt(math.Max(ss/float64(len(res))-mean*mean, 0))
}
