// Command convex reproduces the paper's convex experiments (Figures 1–3)
// and runs the convex benchmark; the work is done by convex/figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/stpis/stpis/convex/figures"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "convex:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("convex", flag.ContinueOnError)
	var cfg figures.Config
	fs.StringVar(&cfg.Out, "out", "out/convex", "output directory for PNG plots and JSON")
	fs.StringVar(&cfg.Data, "data", "../shared/data", "directory with the LIBSVM files")
	fs.IntVar(&cfg.Runs, "runs", 10, "runs per method and case")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "base seed")
	fs.StringVar(&cfg.Only, "only", "", "figure1, figure2, figure3 or bench (default: all figures)")
	fs.Float64Var(&cfg.T, "t", 1e-4, "finite-difference probe t")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Log = os.Stderr
	if cfg.Only == "bench" {
		res, err := figures.Bench(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Println(res.JSONLine())
		return nil
	}
	_, err := figures.Run(ctx, cfg)
	return err
}
