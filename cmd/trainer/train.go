package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/train"
)

// trainFlags are the train subcommand's command line.
type trainFlags struct {
	cfg             train.Config
	seeds           int
	threshold       optFloat
	shift           optFloat
	k               kFlag
	bridge          string
	bridgeTimeout   time.Duration
	workers         int
	out             string
	resume, force   bool
	logLevel        string
	checkpointEvery int
	stopAfter       int
	kwargs          kwargsFlag
}

func parseTrainFlags(args []string, stderr io.Writer) (*trainFlags, error) {
	f := &trainFlags{}
	fs := flag.NewFlagSet("trainer train", flag.ContinueOnError)
	c := &f.cfg
	fs.StringVar(&c.Env, "env", "", "environment: a paper name (Hopper-v1, ...) or a gymnasium id (required)")
	fs.Var(&f.kwargs, "kwarg", "gymnasium.make keyword argument KEY=VALUE (repeatable; true/false, ints, floats, strings)")
	method := fs.String("method", "stp_is", "optimizer: stp, stp_is or ars (ARS V2-t baseline)")
	step := fs.String("step", "adaptive", "step rule of stp/stp_is: adaptive (Theorem 1) or fixed (Theorem 2)")
	fs.Var(&f.k, "k", "episodes averaged per evaluated point: a number, 'paper' (the paper's K for the task) or 'auto' (the preset's: the paper's K, but 1 for STP methods on Swimmer and HalfCheetah with --preset tuned)")
	seed := fs.Uint64("seed", 1, "random seed of the (first) run")
	fs.IntVar(&f.seeds, "seeds", 1, "number of independent runs, seeds seed, seed+1, ...")
	fs.IntVar(&c.MaxEpisodes, "max-episodes", 0, "training-episode budget (0: the task's default)")
	f.threshold = optFloat{auto: true}
	fs.Var(&f.threshold, "threshold", "reward threshold (default: the paper's, from the bridge; 'none' for none)")
	noStop := fs.Bool("continue-after-threshold", false, "keep training after the threshold is reached")
	fs.IntVar(&c.EvalEvery, "eval-every", 0, "evaluate every N iterations (0: 5 for STP, 10 for ARS)")
	fs.IntVar(&c.EvalEpisodes, "eval-episodes", 0, "episodes per evaluation (0: 10)")
	f.shift = optFloat{auto: true}
	fs.Var(&f.shift, "shift", "alive-bonus shift subtracted per step from training returns (default: ARS's for ars and --preset paper, 0 otherwise)")
	fs.IntVar(&c.Horizon, "horizon", 0, "maximum episode length (0: the env's)")
	fs.StringVar(&c.ObsNorm, "obs-norm", "", "observation normalization: running (ARS V2: running mean and std of training states), accepted (STP methods: the same, from the accepted point's episodes only) or none (ARS V1: raw observations) (default: none for STP methods on Swimmer with --preset tuned, else running)")
	fs.IntVar(&c.KMax, "k-max", 0, "grow K by one every --k-ramp iterations up to this (STP methods; 0: K fixed)")
	fs.IntVar(&c.KRamp, "k-ramp", 0, "iterations per step of K's growth, with --k-max")
	fs.Float64Var(&c.Alpha0, "alpha0", 0, "α0 of the adaptive step α0/(v_i √(k+1)) (0: with --preset tuned, Swimmer 2 at K=1 and 1 at other K, HalfCheetah 1 at K=1; else 0.3)")
	fs.Float64Var(&c.Epsilon, "eps", 0, "ε of the fixed step ε/(n v_i) (0: 0.05·n, a step of 0.05/v_i)")
	fs.StringVar(&c.Basis, "basis", "gaussian", "directions: gaussian (the paper's rotated basis) or canonical")
	fs.StringVar(&c.Preset, "preset", "tuned", "defaults for what the paper leaves open: tuned (measured best) or paper (literal)")
	normBasis := fs.Bool("normalize-basis", true, "scale the Gaussian basis columns to unit norm (default: true with --preset tuned, false with paper)")
	remeasure := fs.Bool("remeasure", true, "re-measure f(x_k) with K fresh episodes every iteration")
	commonSeeds := fs.Bool("common-seeds", false, "run the points of an iteration on the same K seeds (default: true for STP methods on Swimmer and HalfCheetah with --preset tuned)")
	fs.IntVar(&c.Width, "width", 0, "surrogate hidden width (0: the paper's by policy size)")
	fs.IntVar(&c.SurrogateSteps, "surrogate-steps", 0, "surrogate Adam steps per iteration (0: 10)")
	fs.IntVar(&c.RefreshEvery, "refresh-every", 0, "refresh p and v from the surrogate every R iterations (0: 1)")
	fs.IntVar(&c.MinHistory, "min-history", 0, "points the surrogate needs before it sets p and v (0: 32)")
	fs.IntVar(&c.SurrogateWindow, "surrogate-window", 0, "train the surrogate on its newest N points only (0: all points)")
	lip := fs.String("lipschitz", "", "surrogate Lipschitz estimate: global bound or local curvature at x_k (default: local for STP methods on HalfCheetah with --preset tuned, else global)")
	fs.Float64Var(&c.Mixing, "mix", 0, "mix p with uniform: p ← (1−γ)p + γ/n")
	fs.StringVar(&f.bridge, "bridge", "", "bridge address list (host:port,host:port) or dns:///host:port; empty starts a local bridge from .venv")
	fs.DurationVar(&f.bridgeTimeout, "bridge-timeout", 60*time.Second, "how long to wait for the bridge to answer before giving up")
	fs.IntVar(&f.workers, "workers", 0, "worker processes of a local bridge (0: one per core)")
	fs.StringVar(&f.out, "out", "runs", "output directory; each run writes <out>/<env>/<method>/seed<N>/")
	fs.BoolVar(&f.resume, "resume", false, "continue the run found in the output directory (start it if there is none)")
	fs.BoolVar(&f.force, "force", false, "replace a run already in the output directory")
	fs.IntVar(&f.checkpointEvery, "checkpoint-every", 10, "checkpoint every N iterations (and at the end, and on SIGINT/SIGTERM)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
	fs.IntVar(&f.stopAfter, "stop-after", 0, "stop (as on SIGTERM) after N iterations of this invocation; for scripted, resumable chunks")
	if err := parseFlags(fs, args, stderr); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if c.Env == "" {
		return nil, usageError{errors.New("flag -env is required (for example --env Hopper-v1)")}
	}
	if f.seeds < 1 || f.seeds > 1000 {
		return nil, usageError{fmt.Errorf("invalid value %d for flag -seeds: want 1..1000", f.seeds)}
	}
	if f.checkpointEvery < 1 {
		return nil, usageError{fmt.Errorf("invalid value %d for flag -checkpoint-every: want ≥ 1", f.checkpointEvery)}
	}
	if f.resume && f.force {
		return nil, usageError{errors.New("flags -resume and -force exclude each other")}
	}
	c.Method, c.Step, c.Lipschitz, c.Seed = train.Method(*method), train.Step(*step), train.Lipschitz(*lip), *seed
	c.StopAtThreshold = !*noStop
	c.Kwargs = f.kwargs.kw
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	// Unset booleans stay nil: Config.Defaults gives the preset's choice.
	for _, b := range []struct {
		flag string
		v    *bool
		dst  **bool
	}{
		{"normalize-basis", normBasis, &c.NormalizeBasis},
		{"remeasure", remeasure, &c.Remeasure},
		{"common-seeds", commonSeeds, &c.CommonSeeds},
	} {
		if set[b.flag] {
			*b.dst = train.Bool(*b.v)
		}
	}
	switch {
	case f.k.paper:
		c.K = train.PaperK(c.Env)
	case f.k.v != 0:
		c.K = f.k.v
	}
	c.Shift = math.NaN()
	if !f.shift.auto {
		c.Shift = f.shift.v
	}
	return f, nil
}

// runTrain is the train subcommand.
func runTrain(ctx context.Context, graceful <-chan struct{}, args []string, stdout, stderr io.Writer) error {
	f, err := parseTrainFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, f.logLevel)
	if err != nil {
		return err
	}
	// Bad settings and an occupied output dir are refused before a bridge
	// starts (the threshold, which comes from the bridge, is checked later).
	if err := f.cfg.Defaults().Validate(); err != nil {
		return usageError{err}
	}
	if !f.resume && !f.force {
		for s := 0; s < f.seeds; s++ {
			c := f.cfg.Defaults()
			c.Seed = f.cfg.Seed + uint64(s)
			dir := runDir(f.out, c)
			if runExists(dir) {
				return errOccupied(dir)
			}
		}
	}
	client, closeBridge, err := connect(ctx, f.bridge, f.workers, f.bridgeTimeout, log, stderr)
	if err != nil {
		return err
	}
	defer closeBridge()
	info, err := describe(ctx, client, f.cfg.Env, f.cfg.Kwargs)
	if err != nil {
		return err
	}
	if info.ResolvedID != info.RequestedID {
		log.Info().Str("env", info.RequestedID).Str("resolved", info.ResolvedID).
			Str("gymnasium", info.GymnasiumVersion).Str("mujoco", info.MujocoVersion).
			Msgf("%s resolves to gymnasium's %s: %s", info.RequestedID, info.ResolvedID, info.ResolutionReason)
	}
	cfg := f.cfg
	switch {
	case !f.threshold.auto && !f.threshold.none:
		cfg.Threshold, cfg.HasThreshold = f.threshold.v, true
	case f.threshold.auto && info.HasPaperThreshold:
		cfg.Threshold, cfg.HasThreshold = info.PaperThreshold, true
	}
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	for s := 0; s < f.seeds; s++ {
		c := cfg
		c.Seed = cfg.Seed + uint64(s)
		dir := runDir(f.out, c)
		stopped, err := trainOne(ctx, graceful, f, c, info, dir, client, log.With().Str("run", dir).Logger(), stdout, stderr)
		if err != nil {
			return err
		}
		if stopped {
			log.Info().Str("run", dir).Msg("stopped on request; continue with --resume")
			return nil
		}
	}
	return nil
}

// describe resolves the env, turning NotFound into a message that lists the
// envs the bridge can make.
func describe(ctx context.Context, c *envclient.Client, env string, kw envclient.Kwargs) (envclient.EnvInfo, error) {
	info, err := c.Describe(ctx, env, kw)
	if err == nil {
		return info, nil
	}
	if status.Code(err) == codes.NotFound {
		list, lerr := c.ListEnvs(ctx)
		if lerr == nil {
			var aliases []string
			for a := range list.Aliases {
				aliases = append(aliases, a)
			}
			sort.Strings(aliases)
			return info, usageError{fmt.Errorf("unknown env %q; the bridge knows the paper names %s and the gymnasium ids %s",
				env, strings.Join(aliases, ", "), strings.Join(list.EnvIDs, ", "))}
		}
	}
	return info, fmt.Errorf("describe %q: %w", env, err)
}

// runDir is <out>/<env>/<method>[-<step>][-k<K>]/seed<N>, with -k<K> when
// an STP method averages a K other than the paper's (so runs at the paper's
// K and at a tuned K sit side by side).
func runDir(out string, c train.Config) string {
	m := string(c.Method)
	if c.Step != "" {
		m += "-" + string(c.Step)
	}
	if c.OffPaperK() {
		m += "-k" + strconv.Itoa(c.K)
	}
	return filepath.Join(out, c.Env, m, "seed"+strconv.FormatUint(c.Seed, 10))
}

// Files of a run directory.
const (
	runFile        = "run.json"
	curveFile      = "curve.jsonl"
	checkpointFile = "checkpoint.json"
	resultFile     = "result.json"
	policyFile     = "policy.json"
	bestFile       = "best_policy.json"
	npzFile        = "lin_policy_plus.npz"
)

// runMeta is run.json.
type runMeta struct {
	Env          string            `json:"env"`
	ResolvedEnv  string            `json:"resolved_env"`
	Resolution   string            `json:"resolution,omitempty"`
	Method       train.Method      `json:"method"`
	Step         train.Step        `json:"step"`
	Label        string            `json:"label"`
	Seed         uint64            `json:"seed"`
	K            int               `json:"k"`
	Threshold    float64           `json:"threshold"`
	HasThreshold bool              `json:"has_threshold"`
	Config       train.Config      `json:"config"`
	Info         envclient.EnvInfo `json:"info"`
	Created      time.Time         `json:"created"`
	Args         []string          `json:"args"`
}

// cmdCheckpoint wraps the run's state with the file state that must match.
type cmdCheckpoint struct {
	Run        json.RawMessage `json:"run"`
	CurveBytes int64           `json:"curve_bytes"`
	ElapsedS   float64         `json:"elapsed_s"`
	CPUS       float64         `json:"cpu_s"`
}

// result is result.json, written when a run ends.
type result struct {
	EpisodesToThreshold *int    `json:"episodes_to_threshold"`
	Reached             bool    `json:"reached"`
	FinalEval           float64 `json:"final_eval"`
	BestEval            float64 `json:"best_eval"`
	Episodes            int     `json:"episodes"`
	EvalEpisodes        int     `json:"eval_episodes"`
	EnvSteps            int64   `json:"env_steps"`
	Iterations          int     `json:"iterations"`
	WallS               float64 `json:"wall_s"`
	CPUS                float64 `json:"cpu_s"`
}

// runExists says whether dir holds a run (its run.json).
func runExists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, runFile))
	return err == nil
}

// errOccupied refuses to overwrite the run in dir.
func errOccupied(dir string) error {
	return usageError{fmt.Errorf("%s holds another run: pass --resume to continue it or --force to replace it", dir)}
}

// prepare opens a fresh or resumed run in dir.
func prepare(f *trainFlags, cfg train.Config, info envclient.EnvInfo, dir string) (*train.Run, *cmdCheckpoint, error) {
	exists := runExists(dir)
	switch {
	case exists && f.force:
		if err := os.RemoveAll(dir); err != nil {
			return nil, nil, fmt.Errorf("replacing %s: %w", dir, err)
		}
	case exists && f.resume:
		b, err := os.ReadFile(filepath.Join(dir, checkpointFile))
		if errors.Is(err, os.ErrNotExist) {
			if err := os.RemoveAll(dir); err != nil {
				return nil, nil, err
			}
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("resume %s: %w", dir, err)
		}
		var cp cmdCheckpoint
		if err := json.Unmarshal(b, &cp); err != nil {
			return nil, nil, fmt.Errorf("resume %s: %w", dir, err)
		}
		r, err := train.Restore(cp.Run)
		if err != nil {
			return nil, nil, fmt.Errorf("resume %s: %w", dir, err)
		}
		return r, &cp, nil
	case exists:
		return nil, nil, errOccupied(dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", dir, err)
	}
	r, err := train.New(cfg, info)
	if err != nil {
		return nil, nil, usageError{err}
	}
	meta := runMeta{Env: cfg.Env, ResolvedEnv: info.ResolvedID, Resolution: info.ResolutionReason, Method: cfg.Method, Step: cfg.Step,
		Label: cfg.Label(), Seed: cfg.Seed, K: cfg.K, Threshold: cfg.Threshold, HasThreshold: cfg.HasThreshold,
		Config: cfg, Info: info, Created: time.Now().UTC(), Args: os.Args}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	if err := policy.WriteFileAtomic(filepath.Join(dir, runFile), b); err != nil {
		return nil, nil, err
	}
	return r, &cmdCheckpoint{}, nil
}

// trainOne trains one seed. It returns stopped=true when asked to stop
// before the run was done.
func trainOne(ctx context.Context, graceful <-chan struct{}, f *trainFlags, cfg train.Config, info envclient.EnvInfo, dir string,
	client *envclient.Client, log zerolog.Logger, stdout, stderr io.Writer) (stopped bool, err error) {
	// A finished run (its result.json) is left as it is unless
	// --max-episodes raises its budget: then it goes on from its last
	// checkpoint.
	var finished []byte
	if f.resume && runExists(dir) {
		finished, _ = os.ReadFile(filepath.Join(dir, resultFile))
	}
	alreadyFinished := func(why string) (bool, error) {
		log.Info().Msg("already finished; " + why)
		fmt.Fprintf(stdout, "%s\n", compactJSON(finished))
		return false, nil
	}
	if finished != nil {
		if f.cfg.MaxEpisodes == 0 {
			return alreadyFinished("nothing to resume")
		}
		if _, err := os.Stat(filepath.Join(dir, checkpointFile)); err != nil {
			return alreadyFinished("it has no checkpoint to extend")
		}
	}
	r, cp, err := prepare(f, cfg, info, dir)
	if err != nil {
		return false, err
	}
	fresh := cp.Run == nil
	cfg = r.Config()
	if !fresh && f.cfg.MaxEpisodes > cfg.MaxEpisodes {
		if err := r.Extend(f.cfg.MaxEpisodes); err != nil {
			if finished != nil {
				return alreadyFinished(err.Error())
			}
			return false, usageError{err}
		}
		log.Info().Int("from", cfg.MaxEpisodes).Int("to", f.cfg.MaxEpisodes).Msg("budget raised; the run goes on from its last checkpoint")
		cfg = r.Config()
		if finished != nil {
			if err := os.Remove(filepath.Join(dir, resultFile)); err != nil {
				return false, fmt.Errorf("extend %s: %w", dir, err)
			}
			finished = nil
		}
	} else if !fresh && f.cfg.MaxEpisodes != 0 && f.cfg.MaxEpisodes < cfg.MaxEpisodes {
		log.Warn().Int("checkpoint", cfg.MaxEpisodes).Int("flag", f.cfg.MaxEpisodes).Msg("--max-episodes is below the resumed run's budget; keeping the run's")
	}
	if finished != nil {
		return alreadyFinished("its budget is not raised")
	}
	curvePath := filepath.Join(dir, curveFile)
	cf, err := os.OpenFile(curvePath, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return false, err
	}
	defer cf.Close()
	// Lines written after the last checkpoint belong to iterations that the
	// resumed run repeats: drop them.
	if err := cf.Truncate(cp.CurveBytes); err != nil {
		return false, fmt.Errorf("curve %s: %w", curvePath, err)
	}
	if _, err := cf.Seek(cp.CurveBytes, io.SeekStart); err != nil {
		return false, err
	}
	curve := zerolog.New(cf).With().Timestamp().Logger()
	start := time.Now()
	cpuStart := cpuSeconds()
	elapsed := func() float64 { return cp.ElapsedS + time.Since(start).Seconds() }
	cpu := func() float64 { return cp.CPUS + cpuSeconds() - cpuStart }
	startEpisodes := r.Counters().Episodes
	progress := isTerminal(stderr) && zerolog.GlobalLevel() <= zerolog.InfoLevel

	emit := func(rec train.Record) {
		el := elapsed()
		eps := 0.0
		if d := time.Since(start).Seconds(); d > 0 {
			eps = float64(rec.Episodes-startEpisodes) / d
		}
		ev := curve.Info().Int("iter", rec.Iter).Int("episodes", rec.Episodes).Int64("env_steps", rec.EnvSteps).
			Float64("reward", finite(rec.Reward)).Float64("best_eval", finite(rec.BestEval)).
			Float64("step_size", finite(rec.StepSize)).Float64("p_entropy", finite(rec.PEntropy)).
			Float64("elapsed_s", round3(el)).Float64("eps_per_s", round3(eps))
		if rec.Evaluated {
			ev = ev.Float64("eval_mean", rec.EvalMean).Float64("eval_std", rec.EvalStd)
		}
		if rec.ThresholdReachedAt > 0 {
			ev = ev.Int("threshold_reached_at", rec.ThresholdReachedAt)
		}
		if rec.NonFinite > 0 {
			ev = ev.Int("non_finite", rec.NonFinite)
		}
		if rec.Accepted != "" {
			ev = ev.Str("accepted", rec.Accepted)
		}
		ev.Send()
		if progress {
			evs := ""
			if rec.Evaluated {
				evs = fmt.Sprintf(" eval %.1f±%.1f", rec.EvalMean, rec.EvalStd)
			}
			fmt.Fprintf(stderr, "\r\033[K%s it %d  episodes %d/%d  reward %.1f%s  best %.1f  α %.3g  H(p) %.2f  %.1f ep/s",
				cfg.Label(), rec.Iter, rec.Episodes, cfg.MaxEpisodes, rec.Reward, evs, rec.BestEval, rec.StepSize, rec.PEntropy, eps)
		}
		if rec.ThresholdReachedAt > 0 {
			log.Info().Int("episodes", rec.ThresholdReachedAt).Float64("eval", rec.EvalMean).Float64("threshold", cfg.Threshold).Msg("threshold reached")
		}
	}
	save := func() error {
		blob, err := r.MarshalBinary()
		if err != nil {
			return err
		}
		off, err := cf.Seek(0, io.SeekCurrent)
		if err != nil {
			return err
		}
		if err := cf.Sync(); err != nil {
			return err
		}
		b, err := json.Marshal(cmdCheckpoint{Run: blob, CurveBytes: off, ElapsedS: elapsed(), CPUS: cpu()})
		if err != nil {
			return err
		}
		if err := policy.Save(filepath.Join(dir, policyFile), r.Policy()); err != nil {
			return err
		}
		if best, ok := r.BestPolicy(); ok {
			if err := policy.Save(filepath.Join(dir, bestFile), best); err != nil {
				return err
			}
		}
		return policy.WriteFileAtomic(filepath.Join(dir, checkpointFile), b)
	}

	if fresh {
		log.Info().Str("method", cfg.Label()).Int("k", cfg.K).Int("max_episodes", cfg.MaxEpisodes).
			Float64("threshold", cfg.Threshold).Float64("shift", cfg.Shift).Uint64("seed", cfg.Seed).Msg("training")
		rec, err := r.EvaluateInitial(ctx, client)
		if err != nil {
			return false, err
		}
		emit(rec)
		if err := save(); err != nil {
			return false, fmt.Errorf("checkpoint: %w", err)
		}
	} else {
		log.Info().Int("iter", r.Counters().Iter).Int("episodes", r.Counters().Episodes).Msg("resuming")
	}
	iters := 0
	for !r.Done() {
		select {
		case <-graceful:
			stopped = true
		default:
		}
		if f.stopAfter > 0 && iters >= f.stopAfter {
			stopped = true
		}
		if stopped {
			break
		}
		rec, err := r.Iterate(ctx, client)
		if err != nil {
			if ctx.Err() != nil {
				return true, fmt.Errorf("interrupted; the last checkpoint in %s is kept: %w", dir, err)
			}
			return false, err
		}
		iters++
		emit(rec)
		if rec.Iter%f.checkpointEvery == 0 {
			if err := save(); err != nil {
				return false, fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	if progress {
		fmt.Fprintln(stderr)
	}
	if err := save(); err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	if stopped {
		return true, nil
	}
	c := r.Counters()
	res := result{Reached: c.ThresholdReachedAt > 0, FinalEval: c.LastEval, BestEval: c.BestEval, Episodes: c.Episodes,
		EvalEpisodes: c.EvalEpisodes, EnvSteps: c.EnvSteps, Iterations: c.Iter, WallS: round3(elapsed()), CPUS: round3(cpu())}
	if res.Reached {
		e := c.ThresholdReachedAt
		res.EpisodesToThreshold = &e
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return false, err
	}
	if err := policy.WriteFileAtomic(filepath.Join(dir, resultFile), b); err != nil {
		return false, err
	}
	p := r.Policy()
	if err := policy.ExportARS(filepath.Join(dir, npzFile), p.Policy, p.Normalizer.Snapshot()); err != nil {
		return false, err
	}
	log.Info().RawJSON("result", b).Msg("run finished")
	fmt.Fprintf(stdout, "%s\n", compactJSON(b))
	return false, nil
}

func compactJSON(b []byte) string {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return string(b)
	}
	out, _ := json.Marshal(m)
	return string(out)
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// cpuSeconds is this process's user+system CPU time (children excluded: a
// local bridge's CPU is not the trainer's).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// kFlag is --k: auto (0), paper, or a positive count.
type kFlag struct {
	v     int
	paper bool
}

func (k *kFlag) String() string {
	switch {
	case k == nil || (k.v == 0 && !k.paper):
		return "auto"
	case k.paper:
		return "paper"
	}
	return strconv.Itoa(k.v)
}

func (k *kFlag) Set(s string) error {
	switch s {
	case "auto", "0":
		*k = kFlag{}
		return nil
	case "paper":
		*k = kFlag{paper: true}
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > 10000 {
		return fmt.Errorf("want a count in [1, 10000], paper or auto")
	}
	*k = kFlag{v: v}
	return nil
}

// optFloat is a float flag with "auto" (the default) and "none" values.
type optFloat struct {
	v          float64
	auto, none bool
}

func (o *optFloat) String() string {
	switch {
	case o == nil || o.auto:
		return "auto"
	case o.none:
		return "none"
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	switch s {
	case "auto":
		*o = optFloat{auto: true}
		return nil
	case "none":
		*o = optFloat{none: true}
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("want a finite number, auto or none")
	}
	*o = optFloat{v: v}
	return nil
}

// kwargsFlag collects repeated --kwarg KEY=VALUE.
type kwargsFlag struct{ kw envclient.Kwargs }

func (k *kwargsFlag) String() string {
	if k == nil || len(k.kw) == 0 {
		return ""
	}
	var parts []string
	for key, v := range k.kw {
		parts = append(parts, fmt.Sprintf("%s=%v", key, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (k *kwargsFlag) Set(s string) error {
	key, val, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	if k.kw == nil {
		k.kw = envclient.Kwargs{}
	}
	switch strings.ToLower(val) {
	case "true":
		k.kw[key] = true
		return nil
	case "false":
		k.kw[key] = false
		return nil
	}
	if i, err := strconv.ParseInt(val, 10, 64); err == nil {
		k.kw[key] = i
		return nil
	}
	if f, err := strconv.ParseFloat(val, 64); err == nil {
		k.kw[key] = f
		return nil
	}
	k.kw[key] = val
	return nil
}
