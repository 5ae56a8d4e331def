// Command bridgebench measures episodes per second through the MuJoCo bridge
// from the Go client: a fixed random linear policy (W ~ N(0, 0.1²), seeded;
// mean 0, std 1), one warm-up batch, then one timed Rollout. It prints one
// JSON line {"env","backend","workers","episodes","eps","steps_per_s"}, the shape
// as bench/inprocess_bridge.py, for bench/bridge.sh.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/envclient/localbridge"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bridgebench:", err)
		os.Exit(1)
	}
}

// kwargs collects repeated --kwarg NAME=VALUE flags.
type kwargs envclient.Kwargs

func (k kwargs) String() string { return fmt.Sprint(map[string]any(k)) }

// Set parses VALUE as a bool (true/false), an int, a float, or a string, as
// bench/inprocess_bridge.py does.
func (k kwargs) Set(s string) error {
	name, raw, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	switch low := strings.ToLower(raw); {
	case low == "true" || low == "false":
		k[name] = low == "true"
	default:
		if i, err := strconv.ParseInt(raw, 10, 64); err == nil {
			k[name] = i
		} else if f, err := strconv.ParseFloat(raw, 64); err == nil {
			k[name] = f
		} else {
			k[name] = raw
		}
	}
	return nil
}

type result struct {
	Env       string  `json:"env"`
	Backend   string  `json:"backend"`
	Workers   int     `json:"workers"`
	Episodes  int     `json:"episodes"`
	EPS       float64 `json:"eps"`
	StepsPerS float64 `json:"steps_per_s"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bridgebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		bridge   = fs.String("bridge", "", "bridge address(es); empty starts a local bridge")
		env      = fs.String("env", "Hopper-v5", "env id")
		workers  = fs.Int("workers", 2, "worker processes of the local bridge")
		episodes = fs.Int("episodes", 64, "episodes in the timed batch")
		horizon  = fs.Int("horizon", 1000, "steps per episode")
		warmup   = fs.Int("warmup", 2, "episodes in the warm-up batch (horizon 10)")
		seed     = fs.Uint64("seed", 0, "seed of W and of the episodes")
		backend  = fs.String("backend", "", "--backend of the local bridge (auto, gymnasium, fast); empty: its default")
		kw       = kwargs{}
	)
	fs.Var(kw, "kwarg", "NAME=VALUE for gymnasium.make (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *episodes < 1 || *horizon < 1 || *warmup < 0 {
		return errors.New("--episodes and --horizon must be positive, --warmup not negative")
	}

	target := *bridge
	if target == "" {
		opts := localbridge.Options{Workers: *workers, Stderr: io.Discard}
		if *backend != "" {
			opts.ExtraArgs = []string{"--backend", *backend}
		}
		b, err := localbridge.Start(ctx, opts)
		if err != nil {
			return err
		}
		defer func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := b.Stop(stopCtx); err != nil {
				fmt.Fprintln(stderr, "bridgebench: stopping the bridge:", err)
			}
		}()
		target = b.Addr()
	}
	c, err := envclient.Dial(ctx, envclient.Config{Target: target})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		return err
	}
	info, err := c.Describe(ctx, *env, envclient.Kwargs(kw))
	if err != nil {
		return err
	}
	if *backend != "" && *backend != "auto" && info.Backend != *backend {
		return fmt.Errorf("the bridge serves %s on backend %q, not %q", *env, info.Backend, *backend)
	}

	rng := rand.New(rand.NewPCG(*seed, 0x5eed))
	w := make([]float64, info.ActDim*info.ObsDim)
	for i := range w {
		w[i] = 0.1 * rng.NormFloat64()
	}
	std := make([]float64, info.ObsDim)
	for i := range std {
		std[i] = 1
	}
	specs := func(n, h int) []envclient.EpisodeSpec {
		out := make([]envclient.EpisodeSpec, n)
		for i := range out {
			out[i] = envclient.EpisodeSpec{
				EnvID: info.ResolvedID, Kwargs: envclient.Kwargs(kw),
				Rows: info.ActDim, Cols: info.ObsDim, W: w,
				ObsMean: make([]float64, info.ObsDim), ObsStd: std,
				Seed: *seed + uint64(i), Horizon: h,
			}
		}
		return out
	}
	if *warmup > 0 {
		if _, err := c.Rollout(ctx, specs(*warmup, 10)); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	batch := specs(*episodes, *horizon)
	start := time.Now()
	res, err := c.Rollout(ctx, batch)
	elapsed := time.Since(start).Seconds()
	if err != nil {
		return err
	}
	steps := 0
	for _, r := range res {
		steps += r.Length
	}
	return json.NewEncoder(stdout).Encode(result{
		Env: *env, Backend: info.Backend, Workers: *workers, Episodes: *episodes,
		EPS: float64(*episodes) / elapsed, StepsPerS: float64(steps) / elapsed,
	})
}
