package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/train"
)

// runEval is `trainer eval --policy FILE|RUN --episodes 100`.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("trainer eval", flag.ContinueOnError)
	path := fs.String("policy", "", "a policy file (policy.json, best_policy.json) or a run directory (its best policy)")
	episodes := fs.Int("episodes", 100, "evaluation episodes")
	seed := fs.Uint64("seed", 0, "seed of the evaluation episodes")
	horizon := fs.Int("horizon", 0, "maximum episode length (0: the env's)")
	bridge := fs.String("bridge", "", "bridge address list or dns:/// target; empty starts a local bridge")
	workers := fs.Int("workers", 0, "worker processes of a local bridge (0: one per core)")
	logLevel := fs.String("log-level", "info", "log level")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *path == "" {
		return usageError{errors.New("flag -policy is required")}
	}
	if *episodes < 1 || *episodes > 100000 {
		return usageError{fmt.Errorf("invalid value %d for flag -episodes: want 1..100000", *episodes)}
	}
	if *horizon < 0 {
		return usageError{fmt.Errorf("invalid value %d for flag -horizon: want ≥ 0", *horizon)}
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	file := *path
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		file = filepath.Join(file, bestFile)
		if _, err := os.Stat(file); err != nil {
			file = filepath.Join(*path, policyFile)
		}
	}
	p, err := policy.Load(file)
	if err != nil {
		return err
	}
	client, closeBridge, err := connect(ctx, *bridge, *workers, 60*time.Second, log, stderr)
	if err != nil {
		return err
	}
	defer closeBridge()
	mean, std, err := train.Evaluate(ctx, client, p, *episodes, *seed, *horizon, nil)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{"policy": file, "env": p.EnvID, "episodes": *episodes, "mean": mean, "std": std})
	fmt.Fprintln(stdout, string(b))
	return nil
}
