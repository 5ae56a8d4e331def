package main

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/train"
)

// maxJobs bounds --jobs: runs at a time on one bridge.
const maxJobs = 64

// trainSeeds trains f.seeds runs from cfg's seed on, f.jobs at a time, all
// on one bridge. Each run's result depends on its seed only, so runs
// trained side by side are bit-identical to runs trained one at a time.
// With jobs > 1 the progress is one JSON log line per event, each naming
// its run (no bar), and the writes of the runs are serialized. After an
// error or a stop no further run starts; the runs under way finish their
// own way (an error, or a stop at the end of an iteration, checkpointed).
func trainSeeds(ctx context.Context, graceful <-chan struct{}, f *trainFlags, cfg train.Config, info envclient.EnvInfo,
	client *envclient.Client, log zerolog.Logger, stdout, stderr io.Writer) error {
	jobs := min(max(f.jobs, 1), f.seeds)
	if jobs > 1 {
		term := isTerminal(stderr)
		stdout, stderr = &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
		var w io.Writer = stderr
		if term {
			w = zerolog.ConsoleWriter{Out: stderr, TimeFormat: time.TimeOnly}
		}
		log = log.Output(w)
	}
	var (
		mu       sync.Mutex
		firstErr error
		halted   bool
		wg       sync.WaitGroup
	)
	slots := make(chan struct{}, jobs)
	for s := 0; s < f.seeds; s++ {
		slots <- struct{}{}
		mu.Lock()
		done := halted
		mu.Unlock()
		if done || stoppedErr(graceful) != nil {
			<-slots
			break
		}
		c := cfg
		c.Problem.Seed = cfg.Problem.Seed + uint64(s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			stopped, err := trainOne(ctx, graceful, f, c, info, client, log, stdout, stderr)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			halted = halted || err != nil || stopped
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return stoppedErr(graceful)
}

// lockedWriter serializes the writes of runs trained side by side, so
// that their lines do not interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
