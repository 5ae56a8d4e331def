package main

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/envclient/localbridge"
)

// maxBridgeRestarts bounds how often a trainer starts its local bridge
// again after it died: a bridge that keeps dying (out of memory at start,
// a broken venv) is not worth a fourth try.
const maxBridgeRestarts = 3

// supervisor keeps a trainer's local bridge up: when it dies (killed by the
// kernel, say), it starts it again with the same flags on the same
// address, so that the client, which re-sends its chunks for as long as
// --bridge-timeout, reconnects and the run goes on bit for bit.
type supervisor struct {
	opts localbridge.Options
	log  zerolog.Logger

	mu       sync.Mutex
	bridge   *localbridge.Bridge
	stopping bool
	restarts int
	done     chan struct{}
}

// supervise starts watching b, started with opts.
func supervise(b *localbridge.Bridge, opts localbridge.Options, log zerolog.Logger) *supervisor {
	opts.Listen = b.Addr()
	s := &supervisor{opts: opts, log: log, bridge: b, done: make(chan struct{})}
	go s.watch()
	return s
}

func (s *supervisor) watch() {
	defer close(s.done)
	for {
		s.mu.Lock()
		b := s.bridge
		s.mu.Unlock()
		<-b.Exited()
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			return
		}
		if s.restarts == maxBridgeRestarts {
			s.mu.Unlock()
			s.log.Error().Int("restarts", s.restarts).Msg("the local bridge died again; not restarting it: the run fails when --bridge-timeout passes (--resume continues it)")
			return
		}
		s.restarts++
		n := s.restarts
		s.mu.Unlock()
		s.log.Warn().Int("pid", b.Pid()).Int("restart", n).Int("of", maxBridgeRestarts).Str("stderr_tail", lastLine(b.StderrTail())).
			Msg("the local bridge died; starting it again on the same address (the run goes on where it was)")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		nb, err := localbridge.Start(ctx, s.opts)
		cancel()
		if err != nil {
			s.log.Error().Err(err).Msg("could not start the local bridge again: the run fails when --bridge-timeout passes (--resume continues it)")
			return
		}
		s.mu.Lock()
		s.bridge = nb
		stop := s.stopping
		s.mu.Unlock()
		if stop {
			_ = nb.Stop(context.Background())
			return
		}
		s.log.Info().Int("pid", nb.Pid()).Str("addr", nb.Addr()).Msg("the local bridge is back")
	}
}

// stop stops the bridge for good (no restart after it).
func (s *supervisor) stop(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	b := s.bridge
	s.mu.Unlock()
	err := b.Stop(ctx)
	<-s.done
	return err
}
