package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
	"github.com/stpis/stpis/train/loop"
)

// checkpointEvery is the number of iterations between checkpoints (a run
// also checkpoints at its start, at its end and when it stops).
const checkpointEvery = 10

// checkFree refuses, before a bridge starts, to start runs over runs
// already in the output directory (without --resume or --force), and any
// run that another trainer has open.
func (f *trainFlags) checkFree(cfg train.Config) error {
	for s := 0; s < f.seeds; s++ {
		path := runPath(f.out, cfg, cfg.Problem.Seed+uint64(s))
		// A run another trainer has open fails now (exit 1), not after a
		// bridge has started.
		if err := rundir.InUse(path); err != nil {
			return err
		}
		if !f.resume && !f.force && rundir.Exists(path) {
			return occupied(fmt.Errorf("%s %w", path, rundir.ErrOccupied))
		}
	}
	return nil
}

// runPath is the directory of cfg's run of seed under out: rundir.Path,
// or where a build before safe env names put it, if that run is there
// (runs/user_envs:PointMass-v0/...), so that it still resumes.
func runPath(out string, cfg train.Config, seed uint64) string {
	path := rundir.Path(out, cfg.Problem.Env, cfg.Name, seed)
	if legacy := rundir.LegacyPath(out, cfg.Problem.Env, cfg.Name, seed); legacy != path && !rundir.Exists(path) && rundir.Exists(legacy) {
		return legacy
	}
	return path
}

// occupied turns rundir's ErrOccupied into a usage error with the way out.
func occupied(err error) error {
	return usageError{fmt.Errorf("%w: pass --resume to continue it or --force to replace it", err)}
}

// trainOne trains one seed. It returns stopped = true when asked to stop
// before the run was done.
func trainOne(ctx context.Context, graceful <-chan struct{}, f *trainFlags, cfg train.Config, info envclient.EnvInfo,
	client *envclient.Client, log zerolog.Logger, stdout, stderr io.Writer) (stopped bool, err error) {
	path := runPath(f.out, cfg, cfg.Problem.Seed)
	log = log.With().Str("run", path).Logger()
	dir, r, err := open(f, cfg, info, path, log, stdout)
	if err != nil || dir == nil {
		return false, err
	}
	defer dir.Close()
	rec := newRecorder(dir, r.Config(), log, stderr)
	stopped, err = r.Train(ctx, client, rec, loop.Options{CheckpointEvery: checkpointEvery, StopAfter: f.stopAfter, Stop: graceful})
	rec.progress.end()
	if err != nil {
		if !stopped && dir.Discard() == nil {
			// A run this invocation created and that never reached its
			// first checkpoint never started: nothing of it is left, so
			// the same command can run it again.
			return false, fmt.Errorf("%w; the run never started, and %s is removed", err, path)
		}
		if stopped || errors.Is(err, envclient.ErrBridgeUnavailable) {
			return stopped, fmt.Errorf("%w; the last checkpoint in %s is kept, and --resume continues from it", err, path)
		}
		return false, err
	}
	if stopped {
		log.Info().Int("episodes", r.Progress().Episodes).Msg("stopped and checkpointed; --resume continues the run")
		return true, nil
	}
	npz, best, err := r.Exports()
	if err != nil {
		return false, err
	}
	res, err := dir.Finish(r.Result(), npz, best)
	if err != nil {
		return false, err
	}
	summarize(log, stdout, r.Config(), res, path)
	return false, nil
}

// open starts the run in path, or resumes it with --resume. It returns a
// nil Dir when a finished run is left as it is.
func open(f *trainFlags, cfg train.Config, info envclient.EnvInfo, path string, log zerolog.Logger, stdout io.Writer) (*rundir.Dir, *loop.Run, error) {
	if !f.resume || !rundir.Exists(path) {
		return create(cfg, info, path, f.force)
	}
	// run.json is checked before anything runs, and every other file
	// against it: a damaged file or one of another run is refused now, not
	// after the compute is spent.
	meta, err := rundir.ReadMeta(path)
	if err != nil {
		return nil, nil, damaged(err)
	}
	// A finished run is left as it is unless --max-episodes raises its
	// budget; it needs no checkpoint for that (committed results have none).
	finished, err := rundir.ReadResult(path, meta)
	if err != nil {
		return nil, nil, damaged(err)
	}
	if finished != nil && !f.set["max-episodes"] {
		return nil, nil, leave(finished, log, stdout, "nothing to resume")
	}
	dir, state, err := rundir.Open(path)
	switch {
	case errors.Is(err, rundir.ErrNoCheckpoint) && finished != nil:
		return nil, nil, leave(finished, log, stdout, "it has no checkpoint to extend")
	case errors.Is(err, rundir.ErrNoCheckpoint):
		log.Info().Msg("the run stopped before its first checkpoint; starting it again")
		return create(cfg, info, path, true)
	case err != nil:
		return nil, nil, damaged(err)
	}
	r, err := loop.Restore(state)
	if err == nil {
		err = checkpointOfRun(meta, r.Config())
	}
	if err != nil {
		dir.Close()
		return nil, nil, damaged(fmt.Errorf("resume %s: %w", path, err))
	}
	warnIfChanged(log, cfg, info, r)
	why, err := resume(f, cfg.Limits.MaxEpisodes, dir, r, finished != nil, log)
	if err != nil || why != "" {
		dir.Close()
		if err == nil {
			err = leave(finished, log, stdout, why)
		}
		return nil, nil, err
	}
	return dir, r, nil
}

// damaged adds the way out to an error that wraps rundir.ErrDamaged.
func damaged(err error) error {
	if errors.Is(err, rundir.ErrDamaged) {
		return fmt.Errorf("%w; restore the file, or start the run again with --force", err)
	}
	return err
}

// checkpointOfRun refuses a checkpoint whose run is not the one run.json describes
// (a checkpoint copied in from another run): env, method, variant and seed
// must agree.
func checkpointOfRun(meta rundir.Meta, cfg train.Config) error {
	bad := func(field, was, is string) error {
		return fmt.Errorf("%w: %s is a run of %s %s, but its %s is of %s %s: a checkpoint of another run",
			rundir.ErrDamaged, rundir.MetaFile, field, was, rundir.CheckpointFile, field, is)
	}
	switch {
	case cfg.Problem.Env != meta.Env:
		return bad("env", meta.Env, cfg.Problem.Env)
	case cfg.MethodName() != meta.Method:
		return bad("method", meta.Method, cfg.MethodName())
	case meta.Variant != "" && cfg.Name != meta.Variant:
		return bad("variant", meta.Variant, cfg.Name)
	case cfg.Problem.Seed != meta.Seed:
		return bad("seed", fmt.Sprint(meta.Seed), fmt.Sprint(cfg.Problem.Seed))
	}
	return nil
}

// warnIfChanged says when a resumed run's configuration or env differs
// from what the command line and the bridge give now: the run goes on with
// its own (only --max-episodes can raise its budget).
func warnIfChanged(log zerolog.Logger, cfg train.Config, info envclient.EnvInfo, r *loop.Run) {
	was := r.Config()
	cfg.Limits.MaxEpisodes = was.Limits.MaxEpisodes
	a, _ := json.Marshal(was)
	b, _ := json.Marshal(cfg)
	if string(a) != string(b) {
		log.Warn().RawJSON("checkpoint", a).RawJSON("flags", b).Msg("the flags differ from the resumed run's configuration; the run goes on with its own")
	}
	if got := r.Info(); got.ResolvedID != info.ResolvedID || got.ObsDim != info.ObsDim || got.ActDim != info.ActDim {
		log.Warn().Str("checkpoint", got.ResolvedID).Str("bridge", info.ResolvedID).Msg("the bridge describes the env differently from when the run started")
	}
}

// create starts a fresh run in path.
func create(cfg train.Config, info envclient.EnvInfo, path string, force bool) (*rundir.Dir, *loop.Run, error) {
	r, err := loop.New(cfg, info)
	if err != nil {
		return nil, nil, usageError{err}
	}
	cb, _ := json.Marshal(cfg)
	ib, _ := json.Marshal(info)
	meta := rundir.Meta{Schema: train.ConfigSchema, Env: cfg.Problem.Env, ResolvedEnv: info.ResolvedID, Resolution: info.ResolutionReason, Backend: info.Backend,
		Method: cfg.MethodName(), Step: string(cfg.Step()), Label: cfg.Label, Variant: cfg.Name, Seed: cfg.Problem.Seed, K: cfg.Problem.K,
		Threshold: cfg.Limits.Threshold, HasThreshold: cfg.Limits.HasThreshold, Config: cb, Info: ib, Args: os.Args}
	meta.Created = time.Now().UTC()
	dir, err := rundir.Create(path, meta, force)
	if errors.Is(err, rundir.ErrOccupied) {
		return nil, nil, occupied(err)
	}
	return dir, r, err
}

// resume applies --max-episodes to a resumed run: a larger budget extends
// it (a finished one too). A finished run whose budget is not raised is
// left as it is: why says so.
func resume(f *trainFlags, maxEpisodes int, dir *rundir.Dir, r *loop.Run, finished bool, log zerolog.Logger) (why string, err error) {
	budget := r.Config().Limits.MaxEpisodes
	switch {
	case f.set["max-episodes"] && maxEpisodes > budget:
		if err := r.Extend(maxEpisodes); err != nil {
			if finished {
				return err.Error(), nil
			}
			return "", usageError{err}
		}
		log.Info().Int("from", budget).Int("to", maxEpisodes).Msg("budget raised; the run goes on from its last checkpoint")
		return "", dir.Reopen()
	case f.set["max-episodes"] && maxEpisodes < budget:
		log.Warn().Int("checkpoint", budget).Int("flag", maxEpisodes).Msg("--max-episodes is below the resumed run's budget; keeping the run's")
	}
	if finished {
		return "its budget is not raised", nil
	}
	log.Info().Int("iter", r.Progress().Iter).Int("episodes", r.Progress().Episodes).Msg("resuming")
	return "", nil
}

// leave prints a finished run's result and says why it is left as it is.
func leave(res *rundir.Result, log zerolog.Logger, stdout io.Writer, why string) error {
	log.Info().Msg("already finished; " + why)
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return nil
}
