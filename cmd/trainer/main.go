// Command trainer learns linear policies for MuJoCo robots with STP_IS
// (Bibi et al., AAAI 2020), talking to the Python env bridge over gRPC.
//
//	trainer --env Hopper-v1                 train (the default subcommand)
//	trainer eval --policy RUN/best_policy.json --episodes 100
//	trainer plot RUNS... -o curve.png
//	trainer table RUNS...
//	trainer convex [flags]                  the paper's convex experiments
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
	"syscall"
)

func main() {
	// The first SIGINT or SIGTERM asks for a graceful stop: training
	// finishes its iteration, checkpoints and exits. The second cancels.
	ctx, cancel := context.WithCancel(context.Background())
	graceful := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		close(graceful)
		<-sigs
		cancel()
	}()
	code := run(ctx, graceful, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

// run dispatches a subcommand and returns the exit code: 0 success, 1
// failure, 2 usage error. Closing graceful asks a training run to stop at
// the end of its iteration; the other subcommands stop at once.
func run(ctx context.Context, graceful <-chan struct{}, args []string, stdout, stderr io.Writer) int {
	sub := "train"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	var err error
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
	switch sub {
	case "train":
		err = runTrain(ctx, graceful, args, stdout, stderr)
	case "eval":
		err = runEval(ctx, args, stdout, stderr)
	case "plot":
		err = runPlot(ctx, args, stdout, stderr)
	case "table":
		err = runTable(ctx, args, stdout, stderr)
	case "convex":
		err = runConvex(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprintln(stderr, usageText)
		return 0
	default:
		fmt.Fprintf(stderr, "trainer: unknown subcommand %q\n\n%s\n", sub, usageText)
		return 2
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "trainer %s: %v\n", sub, err)
		return 2
	default:
		fmt.Fprintf(stderr, "trainer %s: %v\n", sub, err)
		return 1
	}
}

const usageText = `usage:
  trainer [train] --env Hopper-v1 [flags]   train a linear policy with STP_IS (default)
  trainer eval --policy FILE|RUN --episodes 100
  trainer plot RUNS... -o curve.png        reward curves, mean ± std over seeds
  trainer table RUNS... [--paper]           episodes to threshold (Table 2 layout)
  trainer convex [flags]                    the paper's convex experiments (Figures 1-3)
Run 'trainer SUBCOMMAND -h' for its flags.`

// usageError marks errors in the command line (exit code 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// parseFlags parses args into fs, turning errors into usage errors that name
// the bad flag (the flag package's message does), with the usage printed.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}
