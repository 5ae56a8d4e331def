package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/tasks"
	"github.com/stpis/stpis/train"
)

// trainFlags are the train subcommand's command line.
type trainFlags struct {
	bridgeFlags
	env, method, step, preset string
	kwargs                    kwargsFlag
	k                         kFlag
	seed                      uint64
	seeds                     int
	maxEpisodes               int
	threshold, shift          optFloat
	continueAfter             bool
	evalEvery, evalEpisodes   int
	evalSpacing               int
	horizon                   int
	obsNorm, lipschitz, basis string
	alpha0, eps, mix          float64
	directions, top           int
	rate, noise               float64
	restartAfter              int
	restartLength             float64
	commonSeeds               seedsFlag
	width, surrogateSteps     int
	out                       string
	resume, force             bool
	checkpointEvery           int
	stopAfter                 int
	// set holds the flags given on the command line: only they override
	// the preset.
	set map[string]bool
}

func parseTrainFlags(args []string, stderr io.Writer) (*trainFlags, error) {
	f := &trainFlags{threshold: optFloat{allowNon: true}}
	fs := flag.NewFlagSet("trainer train", flag.ContinueOnError)
	f.bridgeFlags.register(fs)
	fs.StringVar(&f.env, "env", "", "environment: a paper name (Hopper-v1, ...) or a gymnasium id (required)")
	fs.Var(&f.kwargs, "kwarg", "gymnasium.make keyword argument KEY=VALUE (repeatable; true/false, ints, floats, strings)")
	fs.StringVar(&f.method, "method", "", "optimizer: stp, stp_is or ars (ARS V2-t; V1-t with --obs-norm none) (preset: tuned stp, stp_is on Swimmer; paper stp_is)")
	fs.StringVar(&f.step, "step", "", "step rule of stp/stp_is: combined (M directions, the best Top combined into one step; the tuned default), adaptive (Theorem 1; the paper preset's) or fixed (Theorem 2)")
	fs.StringVar(&f.preset, "preset", train.PresetTuned, "settings for what the paper leaves open: tuned (measured best) or paper (literal); the flags below marked (preset) override it")
	fs.Var(&f.k, "k", "episodes averaged per evaluated point: a count, paper (the paper's K) or auto (preset)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed of the (first) run")
	fs.IntVar(&f.seeds, "seeds", 1, "number of runs, with seeds seed, seed+1, ...")
	fs.IntVar(&f.maxEpisodes, "max-episodes", 0, "training-episode cap; an iteration that would pass it is not run (preset: the task's budget)")
	fs.Var(&f.threshold, "threshold", "reward threshold, or none (preset: the paper's)")
	fs.BoolVar(&f.continueAfter, "continue-after-threshold", false, "keep training after the threshold is reached")
	fs.IntVar(&f.evalEvery, "eval-every", 0, "evaluate every N iterations (preset: 5 for STP methods, 10 for ARS)")
	fs.IntVar(&f.evalSpacing, "eval-spacing", 0, "evaluate after each iteration that crosses a multiple of N training episodes, instead of every --eval-every iterations (0: off)")
	fs.IntVar(&f.evalEpisodes, "eval-episodes", 0, "episodes per evaluation (preset: 10)")
	fs.Var(&f.shift, "shift", "alive-bonus shift subtracted per step from training returns (preset: ARS's for ars and paper, else 0)")
	fs.IntVar(&f.horizon, "horizon", 0, "maximum episode length (0: the env's)")
	fs.StringVar(&f.obsNorm, "obs-norm", "", "observation normalization: running (ARS V2) or none (raw, ARS V1) (preset)")
	fs.StringVar(&f.basis, "basis", "", "basis of the directions: gaussian (the paper's N(0,1) matrix) or orthogonal (a random rotation) (preset)")
	fs.Float64Var(&f.alpha0, "alpha0", 0, "α0 of the adaptive step α0/(v_i √(k+1)) (preset)")
	fs.Float64Var(&f.eps, "eps", 0, "ε of the fixed step ε/(n v_i) (preset: 0.05·n, a step of 0.05/v_i)")
	fs.IntVar(&f.directions, "directions", 0, "directions per iteration, 2 points each, plus x_k (0 or 1: the paper's one)")
	fs.IntVar(&f.top, "top", 0, "with --step combined: the number of the iteration's directions combined into its step (preset: 4)")
	fs.Float64Var(&f.noise, "noise", 0, "with --step combined: the points are x_k ± ν√n b_i/v_i, ARS's ν for unit directions (preset: ARS's for the task)")
	fs.Float64Var(&f.rate, "rate", 0, "with --step combined: the step is α√n times the combination, ARS's α for unit directions (preset: ARS's for the task)")
	fs.IntVar(&f.restartAfter, "restart-after", 0, "give up an attempt that, after N training episodes, is still on the first plateau (its episodes since N/2 last less than --restart-length of the horizon) and start afresh within the budget; 0: never (preset)")
	fs.Float64Var(&f.restartLength, "restart-length", 0, "with --restart-after: the mean episode length, as a fraction of the horizon, under which an attempt restarts (preset)")
	fs.Var(&f.commonSeeds, "common-seeds", "which training episodes share their K seeds: none, iteration (all points of an iteration; the flag alone) or pair (the two points x ± σb of each direction) (preset)")
	fs.IntVar(&f.width, "width", 0, "surrogate hidden width (preset: the paper's by policy size)")
	fs.IntVar(&f.surrogateSteps, "surrogate-steps", 0, "surrogate Adam steps per iteration (preset: 10; paper 1)")
	fs.StringVar(&f.lipschitz, "lipschitz", "", "surrogate Lipschitz estimate: global bound or local curvature at x_k (preset)")
	fs.Float64Var(&f.mix, "mix", 0, "mix p with uniform: p ← (1−γ)p + γ/n")
	fs.StringVar(&f.out, "out", "runs", "output directory; each run writes <out>/<env>/<variant>/seed<N>/, the variant naming the method, its step and what sets the run apart (-k<K>, -m<M>, -t<Top>, -orth or -gauss, -s<sharing>, -shift<S>, -n<noise>, -r<rate>, -re<after>x<length>, -paper)")
	fs.BoolVar(&f.resume, "resume", false, "continue the run found in the output directory (start it if there is none); with a larger --max-episodes, extend a finished run")
	fs.BoolVar(&f.force, "force", false, "replace a run already in the output directory")
	fs.IntVar(&f.checkpointEvery, "checkpoint-every", 10, "checkpoint every N iterations (and at the start, the end, and on SIGINT/SIGTERM)")
	fs.IntVar(&f.stopAfter, "stop-after", 0, "stop (as on SIGTERM, but exit 0) after N iterations of this invocation; for scripted, resumable chunks")
	if err := parseFlags(fs, args, stderr); err != nil {
		return nil, err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	switch {
	case fs.NArg() > 0:
		if _, err := train.ParseSeeds(fs.Arg(0)); err == nil && f.set["common-seeds"] {
			// --common-seeds alone is a switch, so its value must follow "=".
			return nil, usageError{fmt.Errorf("unexpected argument %q: give flag -common-seeds its value with \"=\" (--common-seeds=%s)", fs.Arg(0), fs.Arg(0))}
		}
		return nil, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case f.env == "":
		return nil, usageError{errors.New("flag -env is required (for example --env Hopper-v1)")}
	case f.seeds < 1 || f.seeds > 1000:
		return nil, usageError{fmt.Errorf("invalid value %d for flag -seeds: want 1..1000", f.seeds)}
	case f.checkpointEvery < 1:
		return nil, usageError{fmt.Errorf("invalid value %d for flag -checkpoint-every: want ≥ 1", f.checkpointEvery)}
	case f.stopAfter < 0:
		return nil, usageError{fmt.Errorf("invalid value %d for flag -stop-after: want ≥ 0", f.stopAfter)}
	case f.resume && f.force:
		return nil, usageError{errors.New("flags -resume and -force exclude each other")}
	}
	return f, nil
}

// config is the preset's configuration with the flags given on the
// command line applied over it.
func (f *trainFlags) config() (train.Config, error) {
	k := f.k.v
	if f.k.paper {
		k = tasks.PaperK(f.env)
	}
	c, err := train.Preset(f.preset, train.Method(f.method), train.Step(f.step), f.env, k)
	if err != nil {
		return c, usageError{err}
	}
	p, l, s := &c.Problem, &c.Limits, &c.STP
	p.Seed, p.Kwargs, p.Horizon = f.seed, f.kwargs.kw, f.horizon
	l.StopAtThreshold = !f.continueAfter
	for name, apply := range map[string]func(){
		"max-episodes":    func() { l.MaxEpisodes = f.maxEpisodes },
		"threshold":       func() { l.Threshold, l.HasThreshold = f.threshold.v, !f.threshold.none },
		"eval-every":      func() { l.EvalEvery = f.evalEvery },
		"eval-episodes":   func() { l.EvalEpisodes = f.evalEpisodes },
		"eval-spacing":    func() { l.EvalSpacing = f.evalSpacing },
		"shift":           func() { p.Shift = f.shift.v },
		"obs-norm":        func() { p.ObsNorm = train.ObsNorm(f.obsNorm) },
		"common-seeds":    func() { p.CommonSeeds = f.commonSeeds.v },
		"alpha0":          func() { s.Alpha0 = f.alpha0 },
		"basis":           func() { s.Basis = train.Basis(f.basis) },
		"eps":             func() { s.Epsilon = f.eps },
		"width":           func() { s.Width = f.width },
		"surrogate-steps": func() { s.SurrogateSteps = f.surrogateSteps },
		"lipschitz":       func() { s.Lipschitz = train.Lipschitz(f.lipschitz) },
		"mix":             func() { s.Mixing = f.mix },
		"directions":      func() { s.Directions = f.directions },
		"top":             func() { s.Top = f.top },
		"rate":            func() { s.Rate = f.rate },
		"noise":           func() { s.Noise = f.noise },
		"restart-after":   func() { c.Restart.After = f.restartAfter },
		"restart-length":  func() { c.Restart.Length = f.restartLength },
	} {
		if f.set[name] {
			apply()
		}
	}
	if err := c.Validate(); err != nil {
		return c, usageError{err}
	}
	return c, nil
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
	// starts.
	cfg, err := f.config()
	if err != nil {
		return err
	}
	if err := f.checkFree(cfg); err != nil {
		return err
	}
	client, closeBridge, err := connect(ctx, f.bridgeFlags, log)
	if err != nil {
		return err
	}
	defer closeBridge()
	info, err := describe(ctx, client, cfg.Problem.Env, cfg.Problem.Kwargs)
	if err != nil {
		return err
	}
	logEnv(log, info)
	if err := info.Check(-1, &envclient.EpisodeSpec{Rows: info.ActDim, Cols: info.ObsDim, Horizon: cfg.Problem.Horizon, Shift: cfg.Problem.Shift}); err != nil {
		return usageError{fmt.Errorf("flags -horizon and -shift: %w", err)}
	}
	for s := 0; s < f.seeds; s++ {
		if err := stoppedErr(graceful); err != nil {
			return err
		}
		c := cfg
		c.Problem.Seed = cfg.Problem.Seed + uint64(s)
		stopped, err := trainOne(ctx, graceful, f, c, info, client, log, stdout, stderr)
		if err != nil {
			return err
		}
		if stopped {
			return stoppedErr(graceful)
		}
	}
	return nil
}

// logEnv says which gymnasium env a name resolved to, and why, and which
// of the bridge's backends runs it.
func logEnv(log zerolog.Logger, info envclient.EnvInfo) {
	log.Info().Str("env", info.ResolvedID).Str("backend", info.Backend).Msgf("the bridge runs %s on its %s backend", info.ResolvedID, info.Backend)
	if info.ResolvedID != info.RequestedID {
		log.Info().Str("env", info.RequestedID).Str("resolved", info.ResolvedID).
			Str("gymnasium", info.GymnasiumVersion).Str("mujoco", info.MujocoVersion).
			Msgf("%s resolves to gymnasium's %s: %s", info.RequestedID, info.ResolvedID, info.ResolutionReason)
	}
}
