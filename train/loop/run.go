package loop

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// Roller runs batches of episodes; *envclient.Client is one.
type Roller interface {
	Rollout(ctx context.Context, specs []envclient.EpisodeSpec) ([]envclient.EpisodeResult, error)
}

// Progress is where a run stands: its totals (iterations, episodes,
// evaluations), its best and latest evaluations, whether it reached the
// threshold, and the bookkeeping of its restarts, guard and standing
// shift. (Checkpoints keep it under "counters", its former name.)
type Progress struct {
	Iter         int     `json:"iter"`
	Episodes     int     `json:"episodes"`
	EnvSteps     int64   `json:"env_steps"`
	EvalEpisodes int     `json:"eval_episodes"`
	Evals        int     `json:"evals"`
	BestEval     float64 `json:"best_eval"`
	HasBest      bool    `json:"has_best"`
	// Reached says an evaluation reached the threshold, ThresholdReachedAt
	// after how many training episodes.
	Reached            bool    `json:"reached"`
	ThresholdReachedAt int     `json:"threshold_reached_at"`
	LastEval           float64 `json:"last_eval"`
	NonFinite          int     `json:"non_finite"`
	// Reward is the latest mean (unshifted) training return measured at x_k.
	Reward float64 `json:"reward"`
	// Attempt is the restart rule's bookkeeping (Config.Restart).
	Attempt Attempt `json:"attempt"`
	// InitialEval is the evaluation of x_0 (HasInitial once it is made);
	// BackOffs counts the guard's back-offs (Config.Guard).
	InitialEval float64 `json:"initial_eval,omitempty"`
	HasInitial  bool    `json:"has_initial,omitempty"`
	BackOffs    int     `json:"back_offs,omitempty"`
	// Standing says every episode of x_0's evaluation lasted to the horizon
	// (Problem.StandingShift).
	Standing bool `json:"standing,omitempty"`
}

// Run is one training run. It is not safe for concurrent use.
type Run struct {
	cfg  train.Config
	info envclient.EnvInfo
	lin  *policy.Linear
	norm *policy.Normalizer
	opt  train.Optimizer
	c    Progress
	// bestX and bestNorm are the point with the best evaluation and the
	// normalizer it was evaluated with.
	bestX    []float64
	bestNorm *policy.Normalizer
}

// maxWeights bounds the policy (action dim × observation dim) of a run: the
// env's dimensions come from the bridge or from a checkpoint, and a run
// beyond it could not be allocated (a damaged checkpoint's 2×3e9 policy
// crashed the trainer out of memory).
const maxWeights = 1 << 24

// New starts a run for an env described by the bridge.
func New(cfg train.Config, info envclient.EnvInfo) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if info.ActDim < 1 || info.ObsDim < 1 || info.ActDim > maxWeights/info.ObsDim {
		return nil, fmt.Errorf("train: a %d×%d policy (action × observation dims) is outside 1 to %d weights", info.ActDim, info.ObsDim, maxWeights)
	}
	lin, err := policy.NewLinear(info.ActDim, info.ObsDim, false)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	norm, err := policy.NewNormalizer(info.ObsDim)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	r := &Run{cfg: cfg, info: info, lin: lin, norm: norm}
	if r.opt, err = r.newAttemptOptimizer(); err != nil {
		return nil, err
	}
	per := r.opt.Size() * cfg.Problem.K
	switch {
	case cfg.Limits.MaxEpisodes < per:
		return nil, bad("max-episodes", "%d is below one iteration's %d episodes (%d points × K %d)", cfg.Limits.MaxEpisodes, per, r.opt.Size(), cfg.Problem.K)
	case cfg.Restart.On() && cfg.Restart.After < 2*per:
		return nil, bad("restart", "%d episodes is below two iterations' %d (the check needs an iteration after half of them)", cfg.Restart.After, 2*per)
	case cfg.Restart.Early > 0 && cfg.Restart.Early < 2*per:
		return nil, bad("restart", "the early check's %d episodes are below two iterations' %d (the check needs an iteration after half of them)", cfg.Restart.Early, 2*per)
	}
	return r, nil
}

// Config returns the run's configuration.
func (r *Run) Config() train.Config { return r.cfg }

// Info returns the bridge's description of the env the run started with.
func (r *Run) Info() envclient.EnvInfo { return r.info }

// Progress returns where the run stands.
func (r *Run) Progress() Progress { return r.c }

// Done says whether the run has reached its threshold (when it stops
// there) or cannot run another iteration within its episode budget.
func (r *Run) Done() bool {
	if r.cfg.Limits.StopAtThreshold && r.c.Reached {
		return true
	}
	return r.c.Episodes+r.opt.Size()*r.cfg.Problem.K > r.cfg.Limits.MaxEpisodes
}

// Extend raises the run's episode budget to maxEpisodes, so that a run
// that used its budget can go on where it stopped. A budget is never
// lowered (the episodes already run stay counted), and a run that stopped
// at its threshold has nothing to extend.
func (r *Run) Extend(maxEpisodes int) error {
	l := &r.cfg.Limits
	switch {
	case maxEpisodes < l.MaxEpisodes:
		return bad("max-episodes", "%d is below the run's budget %d; a budget can only be raised", maxEpisodes, l.MaxEpisodes)
	case l.StopAtThreshold && r.c.Reached:
		return bad("max-episodes", "the run stopped at its threshold (%d episodes); there is nothing to extend", r.c.ThresholdReachedAt)
	}
	l.MaxEpisodes = maxEpisodes
	return nil
}

// X returns the current policy parameters.
func (r *Run) X() []float64 { return r.opt.X() }

// Policy returns the current policy and the normalizer it acts with.
func (r *Run) Policy() policy.File { return r.file(r.X(), r.norm) }

// BestPolicy returns the policy with the best evaluation so far, with the
// normalizer it was evaluated with, and false when nothing was evaluated.
func (r *Run) BestPolicy() (policy.File, bool) {
	if !r.c.HasBest {
		return policy.File{}, false
	}
	return r.file(r.bestX, r.bestNorm), true
}

func (r *Run) file(x []float64, norm *policy.Normalizer) policy.File {
	lin := *r.lin
	lin.W = append([]float64(nil), x[:len(r.lin.W)]...)
	return policy.File{EnvID: r.cfg.Problem.Env, Policy: &lin, Normalizer: norm.Clone()}
}

// bad is a configuration error of one field, named as its flag.
func bad(field, format string, a ...any) error {
	return &train.FieldError{Field: field, Reason: fmt.Sprintf(format, a...)}
}

// finite reports whether v is a finite number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// mix derives the loop's seeds from the run's (train.DeriveSeed).
var mix = train.DeriveSeed

const (
	trainStream = 0x7261696e // "rain"
	evalStream  = 0x6576616c // "eval"
)

// pointValue is the outcome of K episodes at one point.
type pointValue struct {
	shifted, raw float64 // means; NaN when an episode was non-finite
	// obs holds the statistics of the raw observations of the point's
	// finite episodes.
	obs *policy.Normalizer
}

// trainEpisodes runs K training episodes at each point with the frozen
// normalization, counts them, and returns each point's mean returns and
// observation statistics. Problem.CommonSeeds says which points share
// their K seeds.
func (r *Run) trainEpisodes(ctx context.Context, env Roller, points [][]float64, norm policy.Frozen) ([]pointValue, error) {
	// The attempt's own iterations and episodes: an attempt is a function
	// of its seed, whenever it starts.
	p, k := r.cfg.Problem, r.cfg.Problem.K
	iter, base := r.c.Iter-r.c.Attempt.StartIter, r.c.Episodes-r.c.Attempt.Start
	specs := make([]envclient.EpisodeSpec, 0, len(points)*k)
	stream := mix(r.seed(), trainStream)
	for i, x := range points {
		w, bias := r.lin.Split(x)
		for j := 0; j < k; j++ {
			var seed uint64
			switch p.CommonSeeds {
			case train.IterationSeeds:
				seed = mix(stream, uint64(iter)<<20|uint64(j))
			case train.PairSeeds:
				seed = mix(mix(stream, uint64(iter)<<20|uint64(j)), uint64(i/2))
			default:
				seed = mix(stream, uint64(base+i*k+j))
			}
			specs = append(specs, envclient.EpisodeSpec{
				EnvID: p.Env, Kwargs: p.Kwargs, Rows: r.lin.Rows, Cols: r.lin.Cols, W: w, Bias: bias,
				ObsMean: norm.Mean, ObsStd: norm.Std, Seed: seed, Horizon: p.Horizon, Shift: r.Shift(),
			})
		}
	}
	res, err := env.Rollout(ctx, specs)
	if err != nil {
		return nil, fmt.Errorf("train: iteration %d: %w", r.c.Iter, err)
	}
	if len(res) != len(specs) {
		return nil, fmt.Errorf("train: iteration %d: %d results for %d episodes", r.c.Iter, len(res), len(specs))
	}
	vals := make([]pointValue, len(points))
	for i := range points {
		var s, raw float64
		obs, err := policy.NewNormalizer(r.info.ObsDim)
		if err != nil {
			return nil, fmt.Errorf("train: iteration %d: %w", r.c.Iter, err)
		}
		for _, e := range res[i*k : (i+1)*k] {
			r.c.Episodes++
			r.c.EnvSteps += int64(e.Length)
			if e.NonFinite || !finite(e.ShiftedReturn) || diverged(e) {
				r.c.NonFinite++
				s, raw = math.NaN(), math.NaN()
				continue
			}
			s += e.ShiftedReturn
			raw += e.Return
			if err := obs.Merge(e.ObsCount, e.ObsMean, e.ObsM2); err != nil {
				return nil, fmt.Errorf("train: iteration %d: %w", r.c.Iter, err)
			}
		}
		vals[i] = pointValue{shifted: s / float64(k), raw: raw / float64(k), obs: obs}
	}
	return vals, nil
}

// Iterate runs one training iteration and, when due, an evaluation, and
// returns its curve point.
func (r *Run) Iterate(ctx context.Context, env Roller) (rundir.Point, error) {
	if r.Done() {
		return rundir.Point{}, errors.New("train: the run is done")
	}
	// The whole iteration sees the frozen normalizer; the statistics of its
	// episodes are merged after it.
	frozen := r.norm.Snapshot()
	pending := r.norm.Clone()
	nonFinite, start := r.c.NonFinite, r.c.Episodes
	var pt rundir.Point
	points, err := r.opt.Propose()
	if err != nil {
		return pt, err
	}
	vals, err := r.trainEpisodes(ctx, env, points, frozen)
	if err != nil {
		return pt, err
	}
	shifted := make([]float64, len(vals))
	var rawSum float64
	for i, v := range vals {
		shifted[i] = v.shifted
		rawSum += v.raw
		if r.cfg.Problem.ObsNorm == train.Running {
			if err := pending.Merge(v.obs.Count, v.obs.Mean, v.obs.M2); err != nil {
				return pt, fmt.Errorf("train: normalizer: %w", err)
			}
		}
	}
	out, err := r.opt.Tell(shifted)
	if err != nil {
		return pt, err
	}
	// x_k's reward: the kept point's, else (ARS) the batch's mean; the
	// shifted one beside it when the run shifts.
	reward, shiftedReward := rawSum/float64(len(vals)), mean(shifted)
	if out.Kept >= 0 {
		reward, shiftedReward = vals[out.Kept].raw, vals[out.Kept].shifted
	}
	if !math.IsNaN(reward) {
		r.c.Reward = reward
	}
	if r.Shift() != 0 && !math.IsNaN(shiftedReward) && !math.IsInf(shiftedReward, 0) {
		pt.HasShifted, pt.RewardShifted = true, shiftedReward
	}
	pt.StepSize, pt.PEntropy, pt.Accepted = out.Step, out.PEntropy, out.Accepted
	r.norm = pending
	r.c.Iter++
	if r.evalDue(start) || r.Done() {
		if _, err := r.evaluate(ctx, env, &pt); err != nil {
			return pt, err
		}
		if err := r.guard(ctx, env, &pt); err != nil {
			return pt, err
		}
		pt.Surrogate = train.Diagnosis(r.opt)
	}
	fired, err := r.checkRestart()
	if err != nil {
		return pt, err
	}
	if fired != nil {
		pt.Restarted, pt.RestartCheck = true, *fired
	}
	pt.NonFinite = r.c.NonFinite - nonFinite
	return r.point(pt), nil
}

// point fills p's counters.
func (r *Run) point(p rundir.Point) rundir.Point {
	p.Iter, p.Episodes, p.EnvSteps, p.Reward, p.BestEval = r.c.Iter, r.c.Episodes, r.c.EnvSteps, r.c.Reward, r.c.BestEval
	return p
}

// Result is the run's result.json (without its times, which the run
// directory knows).
func (r *Run) Result() rundir.Result {
	c := r.c
	res := rundir.Result{Reached: c.Reached, FinalEval: c.LastEval, BestEval: c.BestEval, Episodes: c.Episodes,
		EvalEpisodes: c.EvalEpisodes, EnvSteps: c.EnvSteps, Iterations: c.Iter, Restarts: c.Attempt.Restarts, BackOffs: c.BackOffs}
	if res.Reached {
		e := c.ThresholdReachedAt
		res.EpisodesToThreshold = &e
	}
	return res
}

// Exports returns the final and the best policy in ARS's npz layout (best
// is nil when nothing was evaluated).
func (r *Run) Exports() (final, best []byte, err error) {
	p := r.Policy()
	if final, err = policy.MarshalARS(p.Policy, p.Normalizer.Snapshot()); err != nil {
		return nil, nil, err
	}
	if b, ok := r.BestPolicy(); ok {
		if best, err = policy.MarshalARS(b.Policy, b.Normalizer.Snapshot()); err != nil {
			return nil, nil, err
		}
	}
	return final, best, nil
}

// Snapshot returns the run's state and policies for a checkpoint.
func (r *Run) Snapshot() (rundir.Snapshot, error) {
	s := rundir.Snapshot{Iter: r.c.Iter, Episodes: r.c.Episodes}
	var err error
	if s.State, err = r.MarshalBinary(); err != nil {
		return s, err
	}
	if s.Policy, err = policy.Marshal(r.Policy()); err != nil {
		return s, fmt.Errorf("train: %w", err)
	}
	if best, ok := r.BestPolicy(); ok {
		if s.Best, err = policy.Marshal(best); err != nil {
			return s, fmt.Errorf("train: %w", err)
		}
	}
	return s, nil
}

// mean is the mean of v (NaN when a value is NaN or v is empty).
func mean(v []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// Shift is the per-step shift of the run's training returns
// (Problem.TrainingShift of whether x_0 was found standing).
func (r *Run) Shift() float64 { return r.cfg.Problem.TrainingShift(r.c.Standing) }
