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
// stdout. With --only table it prints the Markdown table to stdout.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convex", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.StringVar(&cfg.Out, "out", "out/convex", "output directory for PNG plots and JSON")
	fs.StringVar(&cfg.Data, "data-dir", "../shared/data", "directory with the shipped LIBSVM files (heart_scale, australian_scale, mushrooms)")
	fs.StringVar(&cfg.DataFile, "data", "", "a LIBSVM file to run Figures 2-3 (or the table) on instead of the shipped data sets")
	fs.StringVar(&cfg.Problem, "problem", "", "ridge (Figure 2) or svm (Figure 3); default both")
	fs.Float64Var(&cfg.Lambda, "lambda", 0, "λ of the LIBSVM problems (default 1/m for ridge, 1 for svm)")
	fs.IntVar(&cfg.Runs, "runs", 10, "runs per method and case")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "base seed")
	fs.StringVar(&cfg.Only, "only", "", "figure1, figure2, figure3, table or bench (default: all figures; with --data, figures 2 and 3)")
	fs.Float64Var(&cfg.T, "t", 0, "finite-difference probe t (default: ProbeT's rounding-optimal t; the benchmark: the paper's 1e-4)")
	fs.Int64Var(&cfg.MaxEvals, "max-evals", 3e7, "evaluations per run at most, for --only table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.Log = stderr
	if err := cfg.check(); err != nil {
		return err
	}
	if cfg.Only == "bench" {
		res, err := Bench(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, res.JSONLine())
		return nil
	}
	if cfg.Only == "table" {
		rows, err := Table(ctx, cfg)
		if err != nil {
			return err
		}
		WriteTable(stdout, rows, cfg.MaxEvals)
		return nil
	}
	_, err := Run(ctx, cfg)
	return err
}
