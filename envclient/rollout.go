package envclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	envbridgev1 "github.com/stpis/stpis/proto/envbridge/v1"
)

// chunk is a half-open range [lo, hi) of a batch.
type chunk struct{ lo, hi int }

// chunkSize returns the number of episodes per Rollout RPC for specs:
// Config.ChunkSize if set, else ceil(n / (2 × replicas)) capped at
// maxAutoChunk; then lowered so that the largest request and response of a
// chunk fit in half of MaxMessageBytes (the other half is headroom for the
// estimate's error).
func (c *Client) chunkSize(specs []EpisodeSpec) (int, error) {
	n := len(specs)
	size := c.cfg.ChunkSize
	if size <= 0 {
		parts := chunksPerReplica * max(c.replicas, 1)
		size = min((n+parts-1)/parts, maxAutoChunk)
	}
	maxEp := 0
	for i := range specs {
		b := max(specBytes(&specs[i]), resultBytes(&specs[i]))
		maxEp = max(maxEp, b)
	}
	budget := c.cfg.MaxMessageBytes / 2
	if maxEp > budget {
		return 0, fmt.Errorf("envclient: one episode needs about %d bytes, over half of MaxMessageBytes (%d)", maxEp, c.cfg.MaxMessageBytes)
	}
	size = min(size, budget/maxEp, n)
	if limit := int(c.maxPerCall.Load()); limit > 0 {
		size = min(size, limit)
	}
	return max(size, 1), nil
}

// relimit reads the bridge's limits again (Describe on spec's env) after a
// RESOURCE_EXHAUSTED, and returns its max episodes per call (0 when it
// cannot say), which later chunks keep to.
func (c *Client) relimit(ctx context.Context, spec EpisodeSpec) int {
	info, err := c.Describe(ctx, spec.EnvID, spec.Kwargs)
	if err != nil || info.Limits.MaxEpisodesPerCall <= 0 {
		return 0
	}
	c.maxPerCall.Store(int64(info.Limits.MaxEpisodesPerCall))
	return info.Limits.MaxEpisodesPerCall
}

// Rollout runs the episodes of specs and returns one result per spec, in
// the order of specs.
//
// The batch is split into chunks (see Config.ChunkSize) and the chunks are
// sent concurrently, at most Config.MaxInFlight at a time over the Client,
// so that every replica works at once. A chunk attempt that fails with
// UNAVAILABLE, or gets no answer within its attempt deadline (see
// Config.AttemptTimeout), is re-sent with backoff, normally to another
// replica, for up to Config.ReconnectTimeout; each failover is logged. Since
// an episode is determined by its spec and seed, the results are the same as
// without the failure, and each chunk's results are stored exactly once. A
// chunk that finds no replica for ReconnectTimeout fails the Rollout with an
// error wrapping ErrBridgeUnavailable.
//
// Any other failure fails the whole Rollout and cancels the chunks still in
// flight. The error wraps the gRPC status (status.Code(err) works) and says
// which episodes the failed chunk held; a SpecError (codes.InvalidArgument)
// reports a spec the client rejected before sending anything. When ctx ends,
// Rollout returns promptly with an error wrapping ctx.Err().
func (c *Client) Rollout(ctx context.Context, specs []EpisodeSpec) ([]EpisodeResult, error) {
	if len(specs) == 0 {
		return []EpisodeResult{}, nil
	}
	reqs := make([]*envbridgev1.EpisodeSpec, len(specs))
	for i := range specs {
		p, err := specToProto(i, &specs[i])
		if err != nil {
			return nil, err
		}
		reqs[i] = p
	}
	size, err := c.chunkSize(specs)
	if err != nil {
		return nil, err
	}
	chunks := make([]chunk, 0, (len(specs)+size-1)/size)
	for lo := 0; lo < len(specs); lo += size {
		chunks = append(chunks, chunk{lo, min(lo+size, len(specs))})
	}

	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	results := make([]EpisodeResult, len(specs))
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
		done     atomic.Int64 // chunks whose results are stored
	)
	fail := func(err error) {
		errOnce.Do(func() {
			firstErr = err
			cancel() // stop the other chunks: their RPCs are cancelled
		})
	}
	start := time.Now()
	for k, ch := range chunks {
		// Take a slot before starting the goroutine, so that chunks start in
		// order and a cancelled Rollout starts no more of them.
		acquired := false
		select {
		case c.inFlight <- struct{}{}:
			acquired = true
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			if acquired {
				<-c.inFlight
			}
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-c.inFlight }()
			if err := c.rolloutChunk(ctx, k, len(chunks), ch, specs, reqs, results); err != nil {
				fail(err)
				return
			}
			done.Add(1)
		}()
	}
	wg.Wait()
	if int(done.Load()) == len(chunks) {
		c.log.Debug().Int("episodes", len(specs)).Int("chunks", len(chunks)).Int("chunk_size", size).
			Dur("took", time.Since(start)).Msg("rollout done")
		return results, nil
	}
	if err := parent.Err(); err != nil {
		// The caller gave up; chunk errors are only its consequences.
		return nil, fmt.Errorf("envclient: rollout of %d episodes: %d of %d chunks done: %w", len(specs), done.Load(), len(chunks), err)
	}
	return nil, firstErr
}

// deadlineSettle bounds how long a chunk that failed with DeadlineExceeded
// waits for its own context's deadline to pass.
const deadlineSettle = 200 * time.Millisecond

// Backoff between the attempts of a chunk: 100ms doubling to 2s, ±20%.
const (
	retryBackoffBase = 100 * time.Millisecond
	retryBackoffMax  = 2 * time.Second
)

// ErrBridgeUnavailable is wrapped by the error of a Rollout whose chunk found
// no replica that answered for Config.ReconnectTimeout.
var ErrBridgeUnavailable = errors.New("envclient: bridge unavailable")

// attemptTimeout is the deadline of one attempt of the chunk specs[ch.lo:ch.hi].
func (c *Client) attemptTimeout(ch chunk, specs []EpisodeSpec) time.Duration {
	if c.cfg.AttemptTimeout > 0 {
		return c.cfg.AttemptTimeout
	}
	steps := 0
	for i := ch.lo; i < ch.hi; i++ {
		if h := specs[i].Horizon; h > 0 {
			steps += h
		} else {
			steps += defaultHorizonSteps
		}
	}
	return DefaultAttemptBase + time.Duration(steps)*DefaultAttemptPerStep
}

// retryable reports whether a failed attempt may succeed on another replica
// or later: UNAVAILABLE (a replica down, restarting, busy, or a worker that
// died), or the attempt's own deadline (a replica stopped or hung).
func retryable(err error, attemptCtx, chunkCtx context.Context) bool {
	switch status.Code(err) {
	case codes.Unavailable:
		return true
	case codes.DeadlineExceeded:
		return attemptCtx.Err() != nil && chunkCtx.Err() == nil
	}
	return false
}

// sendChunk sends the chunk until an attempt succeeds, fails for good, or
// attempts have failed for Config.ReconnectTimeout. Every failed attempt is
// logged at warn level with the replica it ran on.
func (c *Client) sendChunk(ctx context.Context, k, nChunks int, ch chunk, specs []EpisodeSpec,
	reqs []*envbridgev1.EpisodeSpec) (*envbridgev1.RolloutResponse, error) {
	req := &envbridgev1.RolloutRequest{Episodes: reqs[ch.lo:ch.hi]}
	perAttempt := c.attemptTimeout(ch, specs)
	var firstFailure time.Time
	for attempt := 1; ; attempt++ {
		attemptCtx, cancel := context.WithTimeout(ctx, perAttempt)
		var p peer.Peer
		resp, err := c.bridge.Rollout(attemptCtx, req, append(c.callOpts, grpc.Peer(&p))...)
		cancel()
		if err == nil {
			if attempt > 1 {
				c.log.Info().Int("chunk", k).Int("attempt", attempt).Str("replica", peerAddr(&p)).
					Dur("after", time.Since(firstFailure)).Msg("rollout chunk succeeded after failover")
			}
			return resp, nil
		}
		if !retryable(err, attemptCtx, ctx) {
			return nil, err
		}
		if firstFailure.IsZero() {
			firstFailure = time.Now()
		}
		waited := time.Since(firstFailure)
		timedOut := status.Code(err) == codes.DeadlineExceeded
		if !timedOut && waited >= c.cfg.ReconnectTimeout {
			c.log.Error().Err(err).Int("chunk", k).Int("attempts", attempt).Dur("waited", waited).
				Msg("rollout chunk: no replica answered; giving up")
			return nil, fmt.Errorf("%w: rollout chunk %d/%d: no replica answered for %s (%d attempts, ReconnectTimeout %s); last: %w",
				ErrBridgeUnavailable, k+1, nChunks, waited.Round(time.Millisecond), attempt, c.cfg.ReconnectTimeout, err)
		}
		delay := min(retryBackoffBase<<min(attempt-1, 8), retryBackoffMax)
		delay = time.Duration(float64(delay) * (0.8 + 0.4*rand.Float64()))
		what := "failed"
		if timedOut {
			what = fmt.Sprintf("got no answer within its %s attempt deadline", perAttempt.Round(time.Millisecond))
			// A replica that answers late is busy more often than hung:
			// sent again with the same deadline, the chunk would only join
			// its queue again. The next attempt waits twice as long, and
			// the chunk's RolloutTimeout bounds them all.
			perAttempt *= 2
		}
		c.log.Warn().Err(err).Int("chunk", k).Int("lo", ch.lo).Int("hi", ch.hi).Int("attempt", attempt).
			Str("replica", peerAddr(&p)).Str("code", status.Code(err).String()).Dur("waited", waited).
			Dur("retry_in", delay).Msgf("rollout chunk %s on a replica; re-sending it (failover)", what)
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, err
		case <-timer.C:
		}
	}
}

// peerAddr is the address of the replica an attempt ran on, or "none" when
// it found no connection.
func peerAddr(p *peer.Peer) string {
	if p.Addr == nil {
		return "none"
	}
	return p.Addr.String()
}

// rolloutChunk runs chunk k and writes its results into results[ch.lo:ch.hi].
func (c *Client) rolloutChunk(ctx context.Context, k, nChunks int, ch chunk, specs []EpisodeSpec,
	reqs []*envbridgev1.EpisodeSpec, results []EpisodeResult) error {
	rpcCtx, cancel := context.WithTimeout(ctx, c.cfg.RolloutTimeout)
	defer cancel()
	start := time.Now()
	resp, err := c.sendChunk(rpcCtx, k, nChunks, ch, specs, reqs)
	if status.Code(err) == codes.ResourceExhausted && ctx.Err() == nil {
		// A bridge restarted with a lower --max-episodes-per-call: read
		// its limits again and send the chunk in parts that fit them.
		if limit := c.relimit(ctx, specs[ch.lo]); limit > 0 && limit < ch.hi-ch.lo {
			c.log.Warn().Int("chunk", k).Int("episodes", ch.hi-ch.lo).Int("max_episodes_per_call", limit).
				Msg("the bridge takes fewer episodes per call than this chunk holds (restarted with other limits?): sending it in parts")
			for lo := ch.lo; lo < ch.hi; lo += limit {
				part := chunk{lo, min(lo+limit, ch.hi)}
				if err := c.rolloutChunk(ctx, k, nChunks, part, specs, reqs, results); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err != nil {
		if status.Code(err) == codes.DeadlineExceeded {
			// The deadline travels to the bridge, whose copy can expire a
			// moment before ours: let ours catch up, so that a caller's
			// deadline is reported as one.
			settle := time.NewTimer(deadlineSettle)
			select {
			case <-rpcCtx.Done():
			case <-settle.C:
			}
			settle.Stop()
		}
		if ctx.Err() != nil {
			// Cancelled by the caller or by another chunk's failure.
			return fmt.Errorf("envclient: rollout chunk %d/%d (episodes %d..%d): %w", k+1, nChunks, ch.lo, ch.hi-1, context.Cause(ctx))
		}
		c.log.Warn().Err(err).Int("chunk", k).Int("lo", ch.lo).Int("hi", ch.hi).Msg("rollout chunk failed")
		return fmt.Errorf("envclient: rollout chunk %d/%d (batch episodes %d..%d; the bridge's episodes[i] is batch episode %d+i): %w",
			k+1, nChunks, ch.lo, ch.hi-1, ch.lo, err)
	}
	got := resp.GetResults()
	if len(got) != ch.hi-ch.lo {
		return fmt.Errorf("envclient: rollout chunk %d/%d (episodes %d..%d): %w: %d results for %d episodes",
			k+1, nChunks, ch.lo, ch.hi-1, ErrProtocol, len(got), ch.hi-ch.lo)
	}
	for j, r := range got {
		i := ch.lo + j
		res, err := resultFromProto(&specs[i], r)
		if err != nil {
			return fmt.Errorf("envclient: rollout chunk %d/%d: episode %d: %w", k+1, nChunks, i, err)
		}
		results[i] = res
	}
	c.log.Debug().Int("chunk", k).Int("episodes", ch.hi-ch.lo).Dur("took", time.Since(start)).Msg("rollout chunk done")
	return nil
}
