// Command convex reproduces the paper's convex experiments (Figures 1–3)
// and runs the convex benchmark; the work is done by convex/figures, and
// `trainer convex` is the same command.
package main

import (
	"context"
	"errors"
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
	if err := figures.Main(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "convex:", err)
		os.Exit(1)
	}
}
