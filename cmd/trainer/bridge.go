package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/envclient/localbridge"
)

// connect dials the bridge at target, or starts a local one from .venv when
// target is empty. The returned stop func closes the client and stops a
// local bridge.
func connect(ctx context.Context, target string, workers int, timeout time.Duration, log zerolog.Logger, stderr io.Writer) (*envclient.Client, func(), error) {
	var local *localbridge.Bridge
	if target == "" {
		if workers <= 0 {
			workers = runtime.NumCPU()
		}
		var err error
		local, err = localbridge.Start(ctx, localbridge.Options{Workers: workers, Stderr: stderr})
		if err != nil {
			return nil, nil, fmt.Errorf("starting a local bridge (give --bridge to use a running one): %w", err)
		}
		target = local.Addr()
		log.Info().Str("addr", target).Int("workers", workers).Int("pid", local.Pid()).Msg("started a local bridge")
	}
	stopLocal := func() {
		if local != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if err := local.Stop(sctx); err != nil {
				log.Warn().Err(err).Msg("stopping the local bridge")
			}
		}
	}
	c, err := envclient.Dial(ctx, envclient.Config{Target: target, ReadyTimeout: timeout})
	if err != nil {
		stopLocal()
		return nil, nil, fmt.Errorf("bridge %s: %w", target, err)
	}
	if err := c.WaitReady(ctx); err != nil {
		c.Close()
		stopLocal()
		return nil, nil, fmt.Errorf("bridge %s (waited %s): %w", target, timeout, err)
	}
	return c, func() { c.Close(); stopLocal() }, nil
}
