// Command trainer learns linear policies for MuJoCo robots with the
// derivative-free methods of STP_IS (Bibi et al., AAAI 2020) and beyond,
// talking to the Python env bridge over gRPC.
//
//	trainer --env Hopper-v1                 train (the default subcommand)
//	trainer config --env Hopper-v1          a run's complete settings, as YAML
//	trainer envs [--local | --bridge ADDR]  the tasks; with a bridge, every id it makes
//	trainer eval --policy RUN/best_policy.json --episodes 100
//	trainer plot RUNS... -o curve.png
//	trainer table RUNS...
//	trainer convex [flags]                  the paper's convex experiments
//	trainer version
//
// Run `trainer <subcommand> -h` for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	graceful := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go watchSignals(sigs, graceful, cancel, stopGrace, os.Exit)
	code := run(ctx, graceful, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

// stopGrace is how long a training run may take, after the first SIGINT or
// SIGTERM, to finish its iteration before it is cancelled: within Docker's
// default stop timeout (10 s), so that an iteration waiting on a bridge
// that is down (the client retries for --bridge-timeout) cannot hold the
// stop up. A cancelled iteration is dropped: the run ends on its last
// checkpoint, and --resume repeats that iteration exactly.
const stopGrace = 8 * time.Second

// hardStop is how long the process may take to end by itself after a
// second SIGINT or SIGTERM before it exits (with exitInterrupted) where it
// stands: a command blocked where cancelling cannot reach (a read, a
// computation that does not look at its context) still ends.
const hardStop = time.Second

// watchSignals turns signals into stops: the first closes graceful
// (training finishes its iteration, checkpoints and exits; the other
// subcommands stop at once); a second signal, or grace passing after the
// first, cancels. After a second signal the process ends: exit is called
// with exitInterrupted when it has not ended hardStop later, or at a third
// signal. (A run killed so is as one killed by SIGKILL: --resume goes on
// from its last checkpoint.)
func watchSignals(sigs <-chan os.Signal, graceful chan<- struct{}, cancel context.CancelFunc, grace time.Duration, exit func(int)) {
	<-sigs
	close(graceful)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-sigs:
	case <-t.C:
		cancel()
		<-sigs
	}
	cancel()
	hard := time.NewTimer(hardStop)
	defer hard.Stop()
	select {
	case <-sigs:
	case <-hard.C:
	}
	exit(exitInterrupted)
}

// The exit codes.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130 // stopped by SIGINT or SIGTERM, checkpointed
)

// errInterrupted is returned by a subcommand stopped by a signal.
var errInterrupted = errors.New("interrupted")

// stoppedErr is errInterrupted when a signal closed graceful, else nil (a
// --stop-after stop is a success).
func stoppedErr(graceful <-chan struct{}) error {
	select {
	case <-graceful:
		return errInterrupted
	default:
		return nil
	}
}

// run dispatches a subcommand and returns the exit code. Closing graceful
// asks a training run to stop at the end of its iteration; the other
// subcommands stop at once.
func run(ctx context.Context, graceful <-chan struct{}, args []string, stdout, stderr io.Writer) int {
	sub := "train"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	switch {
	case sub == "train" && isHelp(args):
		fmt.Fprintln(stdout, usageText)
	case sub == "train" && len(args) == 1 && (args[0] == "-version" || args[0] == "--version"):
		sub, args = "version", nil
	}
	if sub != "train" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-graceful:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	var err error
	switch sub {
	case "train":
		err = runTrain(ctx, graceful, args, stdout, stderr)
	case "eval":
		err = runEval(ctx, args, stdout, stderr)
	case "config":
		err = runConfig(args, stdout, stderr)
	case "envs":
		err = runEnvs(ctx, args, stdout, stderr)
	case "render":
		err = runRender(ctx, args, stdout, stderr)
	case "plot":
		err = runPlot(ctx, args, stdout, stderr)
	case "table":
		err = runTable(ctx, args, stdout, stderr)
	case "convex":
		err = runConvex(ctx, args, stdout, stderr)
	case "version":
		if isHelp(args) {
			fmt.Fprintln(stdout, "usage: trainer version   prints the module version, the commit and the Go version; it takes no flags")
			return exitOK
		}
		if len(args) > 0 {
			fmt.Fprintf(stderr, "trainer version: unexpected argument %q: version takes no flags or arguments\n", args[0])
			return exitUsage
		}
		fmt.Fprintln(stdout, version())
		return exitOK
	case "help":
		fmt.Fprintln(stdout, usageText)
		return exitOK
	default:
		fmt.Fprintf(stderr, "trainer: unknown subcommand %q; run 'trainer -h' for the list\n", sub)
		return exitUsage
	}
	var ue usageError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errInterrupted) || ctx.Err() != nil:
		fmt.Fprintf(stderr, "trainer %s: interrupted\n", sub)
		return exitInterrupted
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "trainer %s: %v (run 'trainer %s -h' for the flags)\n", sub, err, sub)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "trainer %s: %v\n", sub, err)
		return exitFailure
	}
}

const usageText = `usage:
  trainer [train] --env Hopper-v1 [flags]   train a linear policy (the default method for the task: trainer config shows it)
  trainer config --env Hopper-v1 [--method M --step S --preset P]   print a run's complete settings as YAML (for --config)
  trainer envs [--local | --bridge ADDR]   the tasks (sizes, threshold, default method); with a bridge, the other gymnasium ids it makes
  trainer eval --policy FILE|RUN --episodes 100
  trainer render --policy FILE|RUN -o out.gif|out.mp4   episodes drawn off-screen (EGL), the camera following the robot
  trainer plot RUNS... -o curve.png        reward curves, mean ± std over seeds (--success: fraction of seeds past the threshold)
  trainer table RUNS... [--paper]           episodes to threshold (Table 2 layout)
  trainer convex [flags]                    the paper's convex experiments (Figures 1-3)
  trainer version                           module version, commit and Go version
Run 'trainer SUBCOMMAND -h' for its flags ('trainer train -h' for training's).
Exit codes: 0 done, 1 failed, 2 bad command line, 130 interrupted (checkpointed; --resume continues).`

// isHelp says whether args is a request for help alone: -h, -help or
// --help.
func isHelp(args []string) bool {
	return len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")
}

// buildCommit and buildDirty are the commit and "true" for a tree with
// changes, set by make build (-ldflags -X) for the builds whose build
// information has no VCS stamp (a git worktree, GOFLAGS=-buildvcs=false).
var buildCommit, buildDirty string

// version is the module version, the VCS commit and the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	return versionOf(bi, ok, buildCommit, buildDirty == "true")
}

// versionOf is version's line from the build information bi (ok: there is
// some): its vcs.revision and vcs.modified, else the commit make build
// passed, else a line saying how to get one.
func versionOf(bi *debug.BuildInfo, ok bool, commit string, dirty bool) string {
	if !ok || bi == nil {
		bi = &debug.BuildInfo{Main: debug.Module{Path: "github.com/stpis/stpis", Version: "(unknown)"}, GoVersion: "(unknown Go)"}
	}
	var revision, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" {
		commit, dirty = revision, modified == "true"
	}
	rev := "commit unknown (built without version control information: make build in a git checkout records it)"
	if commit != "" {
		rev = "commit " + commit
		if dirty {
			rev += "+dirty"
		}
	}
	return fmt.Sprintf("trainer %s %s %s %s", bi.Main.Path, bi.Main.Version, rev, bi.GoVersion)
}
