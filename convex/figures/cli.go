package figures

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// Main is the command line of the convex experiments, shared by
// `cmd/convex` and `trainer convex`: it parses args, runs the figures (or
// the benchmark with -only bench) and writes the benchmark's JSON line to
// stdout.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convex", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.StringVar(&cfg.Out, "out", "out/convex", "output directory for PNG plots and JSON")
	fs.StringVar(&cfg.Data, "data", "../shared/data", "directory with the LIBSVM files")
	fs.IntVar(&cfg.Runs, "runs", 10, "runs per method and case")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "base seed")
	fs.StringVar(&cfg.Only, "only", "", "figure1, figure2, figure3 or bench (default: all figures)")
	fs.Float64Var(&cfg.T, "t", 1e-4, "finite-difference probe t")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.Log = stderr
	if cfg.Only == "bench" {
		res, err := Bench(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, res.JSONLine())
		return nil
	}
	_, err := Run(ctx, cfg)
	return err
}
