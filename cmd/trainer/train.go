package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/train"
)

// trainFlags are the train subcommand's command line.
type trainFlags struct {
	bridgeFlags
	selection
	kwargs        kwargsFlag
	seed          uint64
	seeds         int
	jobs          int
	continueAfter bool
	out           string
	resume, force bool
	stopAfter     int
	// settings are the flags that set a setting of the run's Config
	// (train.Flags), by name, in the order given.
	settings []setting
	// set holds the flags given on the command line.
	set map[string]bool
}

// setting is one setting given by name.
type setting struct{ name, value string }

// selection picks the preset entry a run starts from, and a --config file
// over it.
type selection struct {
	env, method, step, preset, configFile string
	// fileSeed and fileKwargs are the seed and env kwargs the --config
	// file gives (a run.json does); the flags win over them.
	fileSeed   *uint64
	fileKwargs kwargsFlag
}

func (s *selection) register(fs *flag.FlagSet) {
	fs.StringVar(&s.env, "env", "", "environment: a paper name (Hopper-v1, ...) or a gymnasium id (required; trainer envs lists them)")
	fs.StringVar(&s.method, "method", "", "optimizer: stp, stp_is, ars (ARS V2-t; V1-t with obs-norm: none in a --config file, as bench/ars-v1.yaml) or cmaes (CMA-ES; sigma and population in a --config file) (default: the preset's for the task: STP with the combined step, CMA-ES on Swimmer and Walker2d; paper: STP_IS adaptive). On Hopper the default's first direction is guided by a surrogate, the sum of the run's gradient estimates; stp_is's importance sampling by the paper's tanh MLP measured no better than uniform sampling (README)")
	fs.StringVar(&s.step, "step", "", "step rule of stp and stp_is: combined (M directions, the best Top combined into one step), adaptive (Theorem 1) or fixed (Theorem 2) (default: the preset's)")
	fs.StringVar(&s.preset, "preset", "", "the table of settings a run starts from (train/presets.yaml): tuned (measured best) or paper (the paper's method as it states it) (default tuned)")
	fs.StringVar(&s.configFile, "config", "", "YAML file of settings (trainer config writes one; a run's run.json does too) applied over the preset; flags apply over it")
}

// trainUsage groups the train flags for -h: the five that matter first.
var trainUsage = []struct {
	title string
	flags []string
}{
	{"The five that matter", []string{"env", "method", "preset", "seed", "max-episodes"}},
	{"The problem", []string{"step", "config", "k", "kwarg", "shift", "horizon"}},
	{"Budget and evaluation", []string{"threshold", "continue-after-threshold", "eval-spacing", "eval-episodes"}},
	{"The method (each applies to the methods and steps it names; others refuse it)", []string{"directions", "top", "noise", "rate", "restart"}},
	{"The bridge", []string{"bridge", "bridge-timeout", "bridge-tls", "workers", "log-level"}},
	{"Output", []string{"out", "resume", "force", "stop-after", "jobs"}},
}

// parseTrainFlags parses the train flags; -h prints their usage to stdout.
func parseTrainFlags(args []string, stdout io.Writer) (*trainFlags, error) {
	f := &trainFlags{set: map[string]bool{}}
	fs := newFlagSet("trainer train")
	f.bridgeFlags.register(fs)
	f.selection.register(fs)
	fs.Var(&f.kwargs, "kwarg", "gymnasium.make keyword argument KEY=VALUE (repeatable; true/false, ints, floats, strings)")
	fs.Func("seed", "random seed of the run, or FIRST-LAST for one run per seed (1-10) (default 1)", func(v string) error {
		first, last, err := parseSeeds(v)
		f.seed, f.seeds = first, int(last-first)+1
		return err
	})
	f.seed, f.seeds = 1, 1
	fs.IntVar(&f.jobs, "jobs", 1, fmt.Sprintf("with --seed FIRST-LAST, train this many seeds at a time on one bridge (at most %d); each run is bit-identical to the run of its seed alone", maxJobs))
	fs.BoolVar(&f.continueAfter, "continue-after-threshold", false, "keep training after the threshold is reached")
	for _, s := range train.Flags() {
		fs.Func(s.Name, s.Help, func(v string) error {
			f.settings = append(f.settings, setting{s.Name, v})
			return nil
		})
	}
	fs.StringVar(&f.out, "out", "runs", "output directory; each run writes <out>/<env>/<variant>/seed<N>/ (<env> with ':' and other characters unsafe in a file name as '_': user_envs_PointMass-v0), the variant naming the method, its step and what sets the run apart from its preset (-k<K>, -m<M>, -t<Top>, -orth or -gauss, -n<noise>, -r<rate>, -s<sharing>, -shift<S>, -re<after>x<length>, -paper)")
	fs.BoolVar(&f.resume, "resume", false, "continue the run found in the output directory (start it if there is none); with a larger --max-episodes, extend a finished run")
	fs.BoolVar(&f.force, "force", false, "replace a run already in the output directory")
	fs.IntVar(&f.stopAfter, "stop-after", 0, "stop (as on SIGTERM, but exit 0) after N iterations of this invocation; for scripted, resumable chunks")
	fs.Usage = func() { groupedUsage(fs, trainUsage) }
	if err := parseFlags(fs, args, stdout); err != nil {
		return nil, err
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	switch {
	case fs.NArg() > 0:
		return nil, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case f.env == "" && f.configFile == "":
		return nil, usageError{errors.New("flag --env is required (for example --env Hopper-v1)")}
	case f.jobs < 1 || f.jobs > maxJobs:
		return nil, usageError{fmt.Errorf("invalid value %d for flag --jobs: want 1..%d", f.jobs, maxJobs)}
	case f.stopAfter < 0:
		return nil, usageError{fmt.Errorf("invalid value %d for flag --stop-after: want ≥ 0", f.stopAfter)}
	case f.resume && f.force:
		return nil, usageError{errors.New("flags --resume and --force exclude each other")}
	case strings.TrimSpace(f.out) == "":
		return nil, usageError{errors.New("flag --out is empty: want the directory runs go to (default runs)")}
	}
	if err := f.bridgeFlags.check(); err != nil {
		return nil, usageError{err}
	}
	return f, nil
}

// parseSeeds reads --seed: N, or FIRST-LAST (at most 1000 runs).
func parseSeeds(v string) (first, last uint64, err error) {
	a, b, isRange := strings.Cut(v, "-")
	first, err1 := strconv.ParseUint(a, 10, 64)
	last, err2 := first, error(nil)
	if isRange {
		last, err2 = strconv.ParseUint(b, 10, 64)
	}
	switch {
	case err1 != nil || err2 != nil:
		return 1, 1, errors.New("want a seed (3) or a range FIRST-LAST (1-10)")
	case last < first || last-first >= 1000:
		return 1, 1, fmt.Errorf("range %s: want FIRST ≤ LAST and at most 1000 seeds", v)
	}
	return first, last, nil
}

// config is the preset's entry, with the --config file applied over it
// and then the flags given on the command line.
func (f *trainFlags) config() (train.Config, error) {
	c, err := f.selection.resolve(f.settings)
	if err != nil {
		return c, err
	}
	c.Problem.Seed = f.seed
	if f.fileSeed != nil && !f.set["seed"] {
		c.Problem.Seed = *f.fileSeed
	}
	c.Problem.Kwargs = f.kwargs.kw
	if len(f.fileKwargs.kw) > 0 {
		c.Problem.Kwargs = envclient.Kwargs{}
		maps.Copy(c.Problem.Kwargs, f.fileKwargs.kw)
		maps.Copy(c.Problem.Kwargs, f.kwargs.kw)
	}
	if f.continueAfter {
		c.Limits.StopAtThreshold = false
	}
	if err := c.Validate(); err != nil {
		return c, usageError{err}
	}
	return c.Named(), nil
}

// resolve returns the configuration that s selects, with the --config
// file's settings and then flags applied over it, unvalidated.
func (s *selection) resolve(flags []setting) (train.Config, error) {
	var file []setting
	if s.configFile != "" {
		var err error
		if file, err = readConfigFile(s.configFile); err != nil {
			return train.Config{}, usageError{err}
		}
	}
	// The file may name the entry; a flag wins.
	var rest []setting
	for _, kv := range file {
		p := map[string]*string{"env": &s.env, "method": &s.method, "step": &s.step, "preset": &s.preset}[kv.name]
		switch {
		case kv.name == "seed":
			seed, err := strconv.ParseUint(kv.value, 10, 64)
			if err != nil {
				return train.Config{}, usageError{fmt.Errorf("%s: seed: %q is not a seed (0 to 2^64-1)", s.configFile, kv.value)}
			}
			s.fileSeed = &seed
		case kv.name == "kwarg":
			if err := s.fileKwargs.Set(kv.value); err != nil {
				return train.Config{}, usageError{fmt.Errorf("%s: kwarg: %w", s.configFile, err)}
			}
		case p == nil:
			rest = append(rest, kv)
		case *p == "":
			*p = kv.value
		}
	}
	if s.preset == "" {
		s.preset = train.PresetTuned
	}
	c, err := train.Preset(s.preset, s.method, train.Step(s.step), s.env)
	if err != nil {
		return c, usageError{err}
	}
	for _, kv := range rest {
		if v, ok := c.Get(kv.name); ok && v == kv.value {
			// What the entry has already (trainer config writes every
			// setting, those the method keeps fixed too).
			continue
		}
		if err := c.Set(kv.name, kv.value); err != nil {
			return c, usageError{fmt.Errorf("%s: %w", s.configFile, err)}
		}
	}
	for _, kv := range flags {
		if err := c.Set(kv.name, kv.value); err != nil {
			if fe := (*train.FieldError)(nil); errors.As(err, &fe) && fe.Field == kv.name {
				err = fmt.Errorf("--%s %s", fe.Field, fe.Reason)
			}
			return c, usageError{err}
		}
	}
	return c, nil
}

// runTrain is the train subcommand.
func runTrain(ctx context.Context, graceful <-chan struct{}, args []string, stdout, stderr io.Writer) error {
	f, err := parseTrainFlags(args, stdout)
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
	if err := checkEnvID(cfg.Problem.Env); err != nil {
		return err
	}
	if s := misspeltTask(cfg.Problem.Env); s != "" {
		return usageError{fmt.Errorf("flag --env: %q is not a task the trainer knows: did you mean %s?", cfg.Problem.Env, s)}
	}
	if err := f.checkFree(cfg); err != nil {
		return err
	}
	f.envModules = envModule(cfg.Problem.Env)
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
		return usageError{fmt.Errorf("flags --horizon and --shift: %w", err)}
	}
	return trainSeeds(ctx, graceful, f, cfg, info, client, log, stdout, stderr)
}

// logEnv says which gymnasium env a name resolved to, and which of the
// bridge's backends runs it: one line at info; why the name resolves so,
// and how the envs differ, at debug (run.json records it too).
func logEnv(log zerolog.Logger, info envclient.EnvInfo) {
	if info.ResolvedID == info.RequestedID {
		log.Info().Str("env", info.ResolvedID).Str("backend", info.Backend).Msgf("the bridge runs %s on its %s backend", info.ResolvedID, info.Backend)
		return
	}
	log.Info().Str("env", info.RequestedID).Str("resolved", info.ResolvedID).Str("backend", info.Backend).
		Msgf("%s runs as gymnasium's %s on the bridge's %s backend (how they differ: run.json's resolution, or --log-level debug)", info.RequestedID, info.ResolvedID, info.Backend)
	log.Debug().Str("env", info.RequestedID).Str("resolved", info.ResolvedID).
		Str("gymnasium", info.GymnasiumVersion).Str("mujoco", info.MujocoVersion).
		Msgf("%s resolves to gymnasium's %s: %s", info.RequestedID, info.ResolvedID, info.ResolutionReason)
}
