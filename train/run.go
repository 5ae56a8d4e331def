package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/stpis/stpis/ars"
	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/stp"
	"github.com/stpis/stpis/surrogate"
)

// Roller runs batches of episodes; *envclient.Client is one.
type Roller interface {
	Rollout(ctx context.Context, specs []envclient.EpisodeSpec) ([]envclient.EpisodeResult, error)
}

// Record is what one iteration reports: one line of the reward curve.
type Record struct {
	Iter     int   `json:"iter"`
	Episodes int   `json:"episodes"`
	EnvSteps int64 `json:"env_steps"`
	// Reward is the mean (unshifted) return of the episodes run at the
	// point the iteration kept.
	Reward float64 `json:"reward"`
	// Evaluated says that EvalMean and EvalStd hold this iteration's
	// evaluation of x_k.
	Evaluated bool    `json:"-"`
	EvalMean  float64 `json:"eval_mean,omitempty"`
	EvalStd   float64 `json:"eval_std,omitempty"`
	BestEval  float64 `json:"best_eval"`
	// ThresholdReachedAt is set (> 0) on the iteration where an evaluation
	// first reached the threshold: the training episodes used by then.
	ThresholdReachedAt int     `json:"threshold_reached_at,omitempty"`
	StepSize           float64 `json:"step_size"`
	PEntropy           float64 `json:"p_entropy"`
	NonFinite          int     `json:"non_finite,omitempty"`
	// Accepted is the point an STP iteration kept: "plus", "minus" or
	// "center" (x_k stayed); empty for ARS.
	Accepted string `json:"accepted,omitempty"`
}

// Counters are a run's totals.
type Counters struct {
	Iter               int     `json:"iter"`
	Episodes           int     `json:"episodes"`
	EnvSteps           int64   `json:"env_steps"`
	EvalEpisodes       int     `json:"eval_episodes"`
	Evals              int     `json:"evals"`
	BestEval           float64 `json:"best_eval"`
	HasBest            bool    `json:"has_best"`
	ThresholdReachedAt int     `json:"threshold_reached_at"`
	LastEval           float64 `json:"last_eval"`
	NonFinite          int     `json:"non_finite"`
	// Reward is the latest mean (unshifted) training return measured at x_k.
	Reward float64 `json:"reward"`
}

// Run is one training run. It is not safe for concurrent use.
type Run struct {
	cfg  Config
	info envclient.EnvInfo
	lin  *policy.Linear
	norm *policy.Normalizer

	stepper *stp.Stepper
	basis   stp.Basis
	sur     *surrogate.Model
	ars     *ars.Optimizer

	c     Counters
	bestX []float64
}

// New starts a run for an env described by the bridge.
func New(cfg Config, info envclient.EnvInfo) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
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
	if err := r.build(lin.Params()); err != nil {
		return nil, err
	}
	return r, nil
}

// build creates the optimizer (and surrogate) at x0.
func (r *Run) build(x0 []float64) error {
	n := len(x0)
	if r.cfg.Method == ARS {
		s := r.cfg.ARS
		s.Seed = r.cfg.Seed
		o, err := ars.New(x0, s)
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		r.ars = o
		return nil
	}
	if r.cfg.Basis == "canonical" {
		r.basis = stp.Canonical(n)
	} else {
		r.basis = stp.Gaussian{N: n, Seed: mix(r.cfg.Seed, 0xba515), Normalize: *r.cfg.NormalizeBasis}
	}
	set := stp.Settings{
		Goal:      stp.Maximize,
		Basis:     r.basis,
		Sampling:  stp.Uniform,
		Rule:      stp.Decaying,
		Alpha0:    r.cfg.Alpha0,
		Epsilon:   r.cfg.Epsilon,
		Remeasure: *r.cfg.Remeasure,
		Mixing:    r.cfg.Mixing,
		Seed:      mix(r.cfg.Seed, 0x57e9),
	}
	if r.cfg.Step == Fixed {
		set.Rule = stp.Fixed
		if set.Epsilon == 0 {
			set.Epsilon = defaultStep[Fixed].eps * float64(n)
		}
	}
	if r.cfg.Method == STPIS {
		// Theorem 1 pairs the decaying step with IS-sqrt, Theorems 2-4 the
		// others with IS-L. Until the surrogate has data, all L_i are equal:
		// p is uniform and v = 1, exactly plain STP.
		set.Sampling = stp.ISSqrt
		if r.cfg.Step == Fixed {
			set.Sampling = stp.ISL
		}
		set.L = make([]float64, n)
		for i := range set.L {
			set.L[i] = 1
		}
	}
	st, err := stp.NewStepper(x0, set)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	r.stepper = st
	if r.cfg.Method == STPIS {
		sur, err := surrogate.New(n, surrogate.Config{Width: r.cfg.Width, Seed: mix(r.cfg.Seed, 0x5a66), Window: r.cfg.SurrogateWindow})
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		r.sur = sur
	}
	return nil
}

// Config returns the run's configuration.
func (r *Run) Config() Config { return r.cfg }

// Counters returns the run's totals.
func (r *Run) Counters() Counters { return r.c }

// Done says whether the run has used its budget or reached its threshold
// (when it stops there).
func (r *Run) Done() bool {
	if r.c.Episodes >= r.cfg.MaxEpisodes {
		return true
	}
	return r.cfg.StopAtThreshold && r.c.ThresholdReachedAt > 0
}

// k is the number of episodes per point at the current iteration: K, or
// with KMax, K + ⌊iter/KRamp⌋ up to KMax.
func (r *Run) k() int {
	if r.cfg.KMax == 0 {
		return r.cfg.K
	}
	return min(r.cfg.KMax, r.cfg.K+r.c.Iter/r.cfg.KRamp)
}

// Extend raises the run's episode budget to maxEpisodes, so that a run
// that used its budget can go on where it stopped. A budget is never
// lowered (the episodes already run stay counted), and a run that stopped
// at its threshold has nothing to extend.
func (r *Run) Extend(maxEpisodes int) error {
	switch {
	case maxEpisodes < r.cfg.MaxEpisodes:
		return bad("max-episodes", "%d is below the run's budget %d; a budget can only be raised", maxEpisodes, r.cfg.MaxEpisodes)
	case r.cfg.StopAtThreshold && r.c.ThresholdReachedAt > 0:
		return bad("max-episodes", "the run stopped at its threshold (%d episodes); there is nothing to extend", r.c.ThresholdReachedAt)
	}
	r.cfg.MaxEpisodes = maxEpisodes
	return nil
}

// X returns the current policy parameters.
func (r *Run) X() []float64 {
	if r.ars != nil {
		return r.ars.X()
	}
	return r.stepper.X()
}

// Policy returns the current policy and the normalizer it acts with.
func (r *Run) Policy() policy.File { return r.file(r.X()) }

// file is the policy with parameters x and the current normalizer.
func (r *Run) file(x []float64) policy.File {
	lin := *r.lin
	lin.W = append([]float64(nil), x[:len(r.lin.W)]...)
	return policy.File{EnvID: r.cfg.Env, Policy: &lin, Normalizer: r.norm.Clone()}
}

// BestPolicy returns the policy with the best evaluation so far (with the
// current normalizer), and false when nothing was evaluated yet.
func (r *Run) BestPolicy() (policy.File, bool) {
	if !r.c.HasBest {
		return policy.File{}, false
	}
	return r.file(r.bestX), true
}

// mix derives independent 64-bit seeds (SplitMix64 finalizer).
func mix(a, b uint64) uint64 {
	z := a ^ (b * 0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

const (
	trainStream = 0x7261696e // "rain"
	evalStream  = 0x6576616c // "eval"
)

// specs builds the episodes for points × K with the frozen normalization.
func (r *Run) specs(points [][]float64, k int, norm policy.Frozen, seed func(p, j int) uint64, shift float64) []envclient.EpisodeSpec {
	out := make([]envclient.EpisodeSpec, 0, len(points)*k)
	for p, x := range points {
		w, bias := r.lin.Split(x)
		for j := 0; j < k; j++ {
			out = append(out, envclient.EpisodeSpec{
				EnvID: r.cfg.Env, Kwargs: r.cfg.Kwargs,
				Rows: r.lin.Rows, Cols: r.lin.Cols, W: w, Bias: bias,
				ObsMean: norm.Mean, ObsStd: norm.Std,
				Seed: seed(p, j), Horizon: r.cfg.Horizon, Shift: shift,
			})
		}
	}
	return out
}

// pointValue is the outcome of K episodes at one point.
type pointValue struct {
	shifted, raw float64 // means; NaN when an episode was non-finite
	// obs holds the statistics of the raw observations of the point's
	// finite episodes.
	obs *policy.Normalizer
}

// learn merges the observation statistics of vals into pending.
func learn(pending *policy.Normalizer, vals ...pointValue) error {
	for _, v := range vals {
		if err := pending.Merge(v.obs.Count, v.obs.Mean, v.obs.M2); err != nil {
			return fmt.Errorf("train: normalizer: %w", err)
		}
	}
	return nil
}

// train runs K training episodes at each point, counts them, and returns
// each point's mean returns and observation statistics (merged into the
// live normalizer by the caller, after the iteration: the whole iteration
// sees the frozen one). With common seeds, the batches of an iteration
// share seeds except for round: a re-check batch (round 1) gets K fresh
// ones.
func (r *Run) train(ctx context.Context, env Roller, points [][]float64, norm policy.Frozen, k, round int) ([]pointValue, error) {
	base := r.c.Episodes
	iter := r.c.Iter
	seed := func(p, j int) uint64 {
		if *r.cfg.CommonSeeds {
			return mix(mix(r.cfg.Seed, trainStream), uint64(iter)<<20|uint64(round*k+j))
		}
		return mix(mix(r.cfg.Seed, trainStream), uint64(base+p*k+j))
	}
	specs := r.specs(points, k, norm, seed, r.cfg.Shift)
	res, err := env.Rollout(ctx, specs)
	if err != nil {
		return nil, fmt.Errorf("train: iteration %d: %w", iter, err)
	}
	if len(res) != len(specs) {
		return nil, fmt.Errorf("train: iteration %d: %d results for %d episodes", iter, len(res), len(specs))
	}
	vals := make([]pointValue, len(points))
	for p := range points {
		var s, raw float64
		obs, err := policy.NewNormalizer(r.info.ObsDim)
		if err != nil {
			return nil, fmt.Errorf("train: iteration %d: %w", iter, err)
		}
		for j := 0; j < k; j++ {
			e := res[p*k+j]
			r.c.Episodes++
			r.c.EnvSteps += int64(e.Length)
			if e.NonFinite {
				r.c.NonFinite++
				s, raw = math.NaN(), math.NaN()
				continue
			}
			s += e.ShiftedReturn
			raw += e.Return
			if err := obs.Merge(e.ObsCount, e.ObsMean, e.ObsM2); err != nil {
				return nil, fmt.Errorf("train: iteration %d: %w", iter, err)
			}
		}
		vals[p] = pointValue{shifted: s / float64(k), raw: raw / float64(k), obs: obs}
	}
	return vals, nil
}

// Iterate runs one training iteration and, when due, an evaluation.
func (r *Run) Iterate(ctx context.Context, env Roller) (Record, error) {
	if r.Done() {
		return Record{}, errors.New("train: the run is done")
	}
	frozen := r.norm.Snapshot()
	pending := r.norm.Clone()
	nonFinite := r.c.NonFinite
	var rec Record
	var err error
	if r.ars != nil {
		rec, err = r.iterateARS(ctx, env, frozen, pending)
	} else {
		rec, err = r.iterateSTP(ctx, env, frozen, pending)
	}
	if err != nil {
		return Record{}, err
	}
	r.norm = pending
	r.c.Iter++
	if r.c.Iter%r.cfg.EvalEvery == 0 || r.Done() {
		if err := r.evaluate(ctx, env, &rec); err != nil {
			return Record{}, err
		}
	}
	rec.Iter = r.c.Iter
	rec.NonFinite = r.c.NonFinite - nonFinite
	rec.Episodes = r.c.Episodes
	rec.EnvSteps = r.c.EnvSteps
	rec.BestEval = r.c.BestEval
	return rec, nil
}

func (r *Run) iterateSTP(ctx context.Context, env Roller, frozen policy.Frozen, pending *policy.Normalizer) (Record, error) {
	var rec Record
	byRole := map[stp.Role]pointValue{}
	for {
		b, err := r.stepper.Propose()
		if err != nil {
			return rec, fmt.Errorf("train: %w", err)
		}
		vals, err := r.train(ctx, env, b.Points, frozen, r.k(), 0)
		if err != nil {
			return rec, err
		}
		if r.cfg.ObsNorm == ObsNormRunning {
			if err := learn(pending, vals...); err != nil {
				return rec, err
			}
		}
		shifted := make([]float64, len(vals))
		for i, v := range vals {
			shifted[i] = v.shifted
			byRole[b.Roles[i]] = v
			if r.sur != nil && !math.IsNaN(v.shifted) {
				if err := r.sur.Add(b.Points[i], v.shifted); err != nil {
					return rec, fmt.Errorf("train: surrogate: %w", err)
				}
			}
		}
		out, err := r.stepper.Tell(shifted)
		if err != nil && !errors.Is(err, stp.ErrNoValue) {
			return rec, fmt.Errorf("train: %w", err)
		}
		if out.Completed {
			rec.StepSize = b.Alpha
			rec.Accepted = out.Accepted.String()
			// x_k's reward: the accepted point's, or x_k's own when it was
			// kept and measured this iteration; else the last known one.
			v, ok := byRole[out.Accepted]
			if ok && !math.IsNaN(v.raw) {
				r.c.Reward = v.raw
			}
			if ok && r.cfg.ObsNorm == ObsNormAccepted {
				if err := learn(pending, v); err != nil {
					return rec, err
				}
			}
			rec.Reward = r.c.Reward
			break
		}
	}
	if r.sur != nil {
		if err := r.refresh(); err != nil {
			return rec, err
		}
	}
	rec.PEntropy = stp.Entropy(r.stepper.Probabilities())
	return rec, nil
}

// refresh trains the surrogate and, every RefreshEvery iterations once it
// has MinHistory points, replaces p and v by its Lipschitz estimates.
func (r *Run) refresh() error {
	if r.sur.Len() < r.cfg.MinHistory {
		return nil
	}
	if r.cfg.SurrogateSteps > 0 {
		if _, err := r.sur.Train(r.cfg.SurrogateSteps); err != nil {
			return fmt.Errorf("train: surrogate: %w", err)
		}
	}
	if (r.c.Iter+1)%r.cfg.RefreshEvery != 0 {
		return nil
	}
	var L []float64
	var err error
	if r.cfg.Lipschitz == Local {
		L, err = r.sur.LipschitzLocal(r.stepper.X(), r.basis)
	} else {
		L, err = r.sur.LipschitzGlobal(r.basis)
	}
	if err != nil {
		return fmt.Errorf("train: surrogate: %w", err)
	}
	// Normalized so that the mean v is 1, as plain STP's v: then α0 (or ε)
	// means the same step length before and after every refresh.
	if err := r.stepper.SetLipschitzNormalized(L); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

func (r *Run) iterateARS(ctx context.Context, env Roller, frozen policy.Frozen, pending *policy.Normalizer) (Record, error) {
	pts := r.ars.Propose()
	vals, err := r.train(ctx, env, pts, frozen, r.cfg.K, 0)
	if err != nil {
		return Record{}, err
	}
	if r.cfg.ObsNorm != ObsNormNone {
		if err := learn(pending, vals...); err != nil {
			return Record{}, err
		}
	}
	shifted := make([]float64, len(vals))
	var raw float64
	for i, v := range vals {
		shifted[i] = v.shifted
		raw += v.raw
	}
	if err := r.ars.Tell(shifted); err != nil {
		return Record{}, fmt.Errorf("train: %w", err)
	}
	r.c.Reward = raw / float64(len(vals))
	return Record{Reward: r.c.Reward, StepSize: r.ars.Settings().StepSize}, nil
}

// evaluate runs EvalEpisodes at x_k with the current normalizer, on seeds of
// their own; they are not training episodes and do not touch the normalizer.
func (r *Run) evaluate(ctx context.Context, env Roller, rec *Record) error {
	mean, std, err := Evaluate(ctx, env, r.Policy(), r.cfg.EvalEpisodes, mix(mix(r.cfg.Seed, evalStream), uint64(r.c.Evals)), r.cfg.Horizon, r.cfg.Kwargs)
	if err != nil {
		return fmt.Errorf("train: evaluation at iteration %d: %w", r.c.Iter, err)
	}
	r.c.Evals++
	r.c.EvalEpisodes += r.cfg.EvalEpisodes
	r.c.LastEval = mean
	rec.Evaluated, rec.EvalMean, rec.EvalStd = true, mean, std
	if !r.c.HasBest || mean > r.c.BestEval {
		r.c.BestEval, r.c.HasBest = mean, true
		r.bestX = r.X()
	}
	if r.cfg.HasThreshold && r.c.ThresholdReachedAt == 0 && mean >= r.cfg.Threshold {
		r.c.ThresholdReachedAt = r.c.Episodes
		rec.ThresholdReachedAt = r.c.Episodes
	}
	return nil
}

// EvaluateInitial evaluates x_0 before any training (iteration 0).
func (r *Run) EvaluateInitial(ctx context.Context, env Roller) (Record, error) {
	var rec Record
	if err := r.evaluate(ctx, env, &rec); err != nil {
		return Record{}, err
	}
	rec.BestEval = r.c.BestEval
	return rec, nil
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

// checkpoint is the serialized state of a Run between iterations.
type checkpoint struct {
	Version    int                `json:"version"`
	Config     Config             `json:"config"`
	Info       envclient.EnvInfo  `json:"info"`
	Counters   Counters           `json:"counters"`
	Normalizer *policy.Normalizer `json:"normalizer"`
	BestX      []float64          `json:"best_x,omitempty"`
	Stepper    []byte             `json:"stepper,omitempty"`
	Surrogate  []byte             `json:"surrogate,omitempty"`
	ARS        []byte             `json:"ars,omitempty"`
	Saved      time.Time          `json:"saved"`
}

const checkpointVersion = 1

// MarshalBinary serializes the run between iterations.
func (r *Run) MarshalBinary() ([]byte, error) {
	cp := checkpoint{Version: checkpointVersion, Config: r.cfg, Info: r.info, Counters: r.c, Normalizer: r.norm, BestX: r.bestX, Saved: time.Now().UTC()}
	var err error
	if r.ars != nil {
		if cp.ARS, err = r.ars.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("train: checkpoint: %w", err)
		}
	} else {
		if cp.Stepper, err = r.stepper.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("train: checkpoint: %w", err)
		}
	}
	if r.sur != nil {
		if cp.Surrogate, err = r.sur.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("train: checkpoint: %w", err)
		}
	}
	b, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	}
	return b, nil
}

// upgrade fills the fields that a version-1 checkpoint written before they
// existed lacks, with what such a run did: it normalized observations, and
// its preset was the default one, and it kept the latest measurement of
// f(x_k). (A preset only picks defaults, which the
// checkpoint already holds, so it changes nothing on restore.)
func (c Config) upgrade() Config {
	if c.ObsNorm == "" {
		c.ObsNorm = ObsNormRunning
	}
	if c.Preset == "" {
		c.Preset = PresetTuned
	}
	if c.CommonSeeds == nil {
		c.CommonSeeds = Bool(false)
	}
	return c
}

// Restore rebuilds a run from MarshalBinary's output.
func Restore(b []byte) (*Run, error) {
	var cp checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("train: restore: %w", err)
	}
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("train: restore: checkpoint version %d, this build reads %d", cp.Version, checkpointVersion)
	}
	r, err := New(cp.Config.upgrade(), cp.Info)
	if err != nil {
		return nil, fmt.Errorf("train: restore: %w", err)
	}
	if cp.Normalizer == nil || cp.Normalizer.Dim() != cp.Info.ObsDim {
		return nil, errors.New("train: restore: checkpoint has no normalizer of the env's size")
	}
	r.c, r.norm, r.bestX = cp.Counters, cp.Normalizer, cp.BestX
	if r.ars != nil {
		if err := r.ars.UnmarshalBinary(cp.ARS); err != nil {
			return nil, fmt.Errorf("train: restore: %w", err)
		}
		return r, nil
	}
	if err := r.stepper.UnmarshalBinary(cp.Stepper); err != nil {
		return nil, fmt.Errorf("train: restore: %w", err)
	}
	if r.sur != nil {
		if err := r.sur.UnmarshalBinary(cp.Surrogate); err != nil {
			return nil, fmt.Errorf("train: restore: %w", err)
		}
	}
	return r, nil
}
