package figures

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// ErrUsage marks the errors of Main that are a bad command line (a
// missing or unreadable data file is not).
var ErrUsage = errors.New("bad command line")

// usageError is an error in the command line: errors.Is(err, ErrUsage).
type usageError struct{ err error }

func (u usageError) Error() string        { return u.err.Error() }
func (u usageError) Unwrap() error        { return u.err }
func (u usageError) Is(target error) bool { return target == ErrUsage }

// Register adds the convex experiments' flags to fs and returns the
// Config they fill.
func Register(fs *flag.FlagSet) *Config {
	var cfg Config
	fs.StringVar(&cfg.Out, "out", "out/convex", "output directory for PNG plots and JSON")
	fs.StringVar(&cfg.Data, "data-dir", "", "directory with heart_scale, australian_scale and mushrooms (default: the copies shipped in convex/data, embedded in the binary)")
	fs.StringVar(&cfg.DataFile, "data", "", "a LIBSVM file to run Figures 2-3 (or the table) on instead of the shipped data sets (make data downloads a9a, ijcnn1 and w8a into convex/data/extra/)")
	fs.StringVar(&cfg.Problem, "problem", "", "ridge (Figure 2) or svm (Figure 3); default both")
	fs.Float64Var(&cfg.Lambda, "lambda", 0, "λ of the LIBSVM problems (default 1/m for ridge, 1 for svm)")
	fs.IntVar(&cfg.Runs, "runs", 10, "runs per method and case")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "base seed")
	fs.StringVar(&cfg.Only, "only", "", "figure1, figure2, figure3, table or bench (default: all figures; with --data, figures 2 and 3)")
	fs.Float64Var(&cfg.T, "t", 0, "finite-difference probe t (default: ProbeT's rounding-optimal t; the benchmark: the paper's 1e-4)")
	fs.Int64Var(&cfg.MaxEvals, "max-evals", 3e7, "evaluations per run at most, for --only table")
	return &cfg
}

// Main is the command line of the convex experiments, for `cmd/convex`:
// it parses args into Register's flags and calls Execute.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convex", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg := Register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout) // help is asked for: it goes where a pager reads
			fs.Usage()
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return Execute(ctx, *cfg, stdout, stderr)
}

// Execute runs what cfg selects, the figures (or the benchmark with Only
// "bench", whose JSON line goes to stdout; or the table, printed as
// Markdown to stdout), logging a line per case to stderr.
func Execute(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	cfg.Log = stderr
	if err := cfg.check(); err != nil {
		return usageError{err}
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
