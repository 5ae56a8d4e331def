package envclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	envbridgev1 "github.com/stpis/stpis/proto/envbridge/v1"
)

// fakeBridge is an in-memory EnvBridgeService. Its rollout hook decides
// what each call returns; by default every episode's Return is its seed.
type fakeBridge struct {
	envbridgev1.UnimplementedEnvBridgeServiceServer
	name  string
	calls atomic.Int64 // Rollout calls
	lists atomic.Int64 // ListEnvs calls
	// rollout, when set, handles a call; n is the 1-based call number on
	// this replica.
	rollout func(ctx context.Context, n int64, req *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error)
}

var _ envbridgev1.EnvBridgeServiceServer = (*fakeBridge)(nil)

// echo answers with Return = seed and Length = horizon for every episode.
func echo(req *envbridgev1.RolloutRequest) *envbridgev1.RolloutResponse {
	resp := &envbridgev1.RolloutResponse{}
	for _, ep := range req.GetEpisodes() {
		cols := ep.GetPolicy().GetCols()
		resp.Results = append(resp.Results, &envbridgev1.EpisodeResult{
			TotalReturn:   float64(ep.GetSeed()),
			ShiftedReturn: float64(ep.GetSeed()) - ep.GetShift()*float64(ep.GetHorizon()),
			Length:        ep.GetHorizon(),
			Truncated:     true,
			ObsStats: &envbridgev1.ObsStats{
				Count: uint64(ep.GetHorizon()),
				Mean:  make([]float64, cols),
				M2:    make([]float64, cols),
			},
		})
	}
	return resp
}

func (f *fakeBridge) Rollout(ctx context.Context, req *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
	n := f.calls.Add(1)
	if f.rollout != nil {
		return f.rollout(ctx, n, req)
	}
	return echo(req), nil
}

func (f *fakeBridge) Describe(_ context.Context, req *envbridgev1.DescribeRequest) (*envbridgev1.DescribeResponse, error) {
	if req.GetEnvId() != "Hopper-v1" {
		return nil, status.Errorf(codes.NotFound, "unknown env %q", req.GetEnvId())
	}
	return &envbridgev1.DescribeResponse{
		RequestedId: "Hopper-v1", ResolvedId: "Hopper-v5", ResolutionReason: "paper alias",
		ObservationDim: 11, ActionDim: 3, ActionLow: []float64{-1, -1, -1}, ActionHigh: []float64{1, 1, 1},
		MaxEpisodeSteps: 1000, FrameSkip: 4, Dt: 0.008,
		Limits: &envbridgev1.BridgeLimits{MaxEpisodesPerCall: 4096, MaxAbsShift: 1e6, ObsStdFloor: 1e-7},
	}, nil
}

func (f *fakeBridge) ListEnvs(context.Context, *envbridgev1.ListEnvsRequest) (*envbridgev1.ListEnvsResponse, error) {
	f.lists.Add(1)
	return &envbridgev1.ListEnvsResponse{EnvIds: []string{"Hopper-v5"}, Aliases: map[string]string{"Hopper-v1": "Hopper-v5"}}, nil
}

// startFakes serves each fake on its own bufconn listener, named
// "<name>:1", and returns a client whose Target lists all of them.
func startFakes(t *testing.T, cfg Config, fakes ...*fakeBridge) *Client {
	t.Helper()
	lis := map[string]*bufconn.Listener{}
	var addrs []string
	for _, f := range fakes {
		l := bufconn.Listen(1 << 20)
		srv := grpc.NewServer()
		envbridgev1.RegisterEnvBridgeServiceServer(srv, f)
		healthpb.RegisterHealthServer(srv, health.NewServer())
		go func() { _ = srv.Serve(l) }()
		t.Cleanup(srv.Stop)
		addr := f.name + ":1"
		lis[addr] = l
		addrs = append(addrs, addr)
	}
	cfg.Target = strings.Join(addrs, ",")
	cfg.DialOptions = append(cfg.DialOptions, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		l, ok := lis[addr]
		if !ok {
			return nil, fmt.Errorf("no fake at %q", addr)
		}
		return l.DialContext(ctx)
	}))
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// waitAllReady calls ListEnvs until every fake has answered one, so that
// round_robin has all replicas in its picker.
func waitAllReady(t *testing.T, c *Client, fakes ...*fakeBridge) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		all := true
		for _, f := range fakes {
			all = all && f.lists.Load() > 0
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every fake replica became ready")
		}
		if _, err := c.ListEnvs(testCtx(t)); err != nil {
			t.Fatalf("ListEnvs: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// specs returns n valid 3×4 specs with seeds 100, 101, ...
func specs(n int) []EpisodeSpec {
	out := make([]EpisodeSpec, n)
	for i := range out {
		out[i] = EpisodeSpec{
			EnvID: "Hopper-v5", Kwargs: Kwargs{"terminate_when_unhealthy": false},
			Rows: 3, Cols: 4, W: make([]float64, 12),
			ObsMean: make([]float64, 4), ObsStd: []float64{1, 1, 1, 1},
			Seed: uint64(100 + i), Horizon: 10 + i, Shift: 1,
		}
	}
	return out
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRolloutRetriesUnavailable(t *testing.T) {
	f := &fakeBridge{name: "a", rollout: func(_ context.Context, n int64, req *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		if n <= 2 {
			return nil, status.Error(codes.Unavailable, "worker pool restarting")
		}
		return echo(req), nil
	}}
	c := startFakes(t, Config{ChunkSize: 100}, f)
	got, err := c.Rollout(testCtx(t), specs(5))
	if err != nil {
		t.Fatalf("Rollout: %v", err)
	}
	if n := f.calls.Load(); n != 3 {
		t.Errorf("server saw %d calls, want 3 (2 UNAVAILABLE + 1 retry that succeeds)", n)
	}
	for i, r := range got {
		if r.Return != float64(100+i) {
			t.Errorf("result %d: Return %v, want %v", i, r.Return, 100+i)
		}
	}
}

func TestRolloutUnavailableGivesUpAfterReconnectTimeout(t *testing.T) {
	f := &fakeBridge{name: "a", rollout: func(context.Context, int64, *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		return nil, status.Error(codes.Unavailable, "down")
	}}
	log := &TestLog{}
	c := startFakes(t, Config{ChunkSize: 100, ReconnectTimeout: 700 * time.Millisecond, Logger: log.Logger()}, f)
	_, err := c.Rollout(testCtx(t), specs(2))
	if status.Code(err) != codes.Unavailable || !errors.Is(err, ErrBridgeUnavailable) {
		t.Fatalf("err = %v, want code Unavailable wrapping ErrBridgeUnavailable", err)
	}
	if !strings.Contains(err.Error(), "no replica answered for") || !strings.Contains(err.Error(), "ReconnectTimeout 700ms") {
		t.Errorf("error %q does not say how long it waited", err)
	}
	// 0.1 + 0.2 + 0.4 s of backoff (±20%) fit in 0.7 s: 4 or 5 attempts.
	if n := f.calls.Load(); n < 4 || n > 5 {
		t.Errorf("server saw %d calls, want 4 or 5 within ReconnectTimeout", n)
	}
	if got := strings.Count(log.String(), "re-sending it (failover)"); int64(got) != f.calls.Load()-1 {
		t.Errorf("%d failover warnings for %d attempts:\n%s", got, f.calls.Load(), log.String())
	}
}

// TestRolloutStuckReplicaFailsOver: a replica that never answers costs one
// attempt deadline, not the keepalive, and the chunk is re-sent elsewhere.
func TestRolloutStuckReplicaFailsOver(t *testing.T) {
	stuck := &fakeBridge{name: "stuck", rollout: func(ctx context.Context, _ int64, _ *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}}
	good := &fakeBridge{name: "good"}
	log := &TestLog{}
	c := startFakes(t, Config{ChunkSize: 2, AttemptTimeout: 300 * time.Millisecond, Logger: log.Logger()}, stuck, good)
	waitAllReady(t, c, stuck, good)
	rolloutEcho(t, c, 8)
	if stuck.calls.Load() == 0 {
		t.Fatal("the stuck replica got no chunk: failover untested")
	}
	// One warning per attempt the stuck replica held (bufconn peers have no address).
	if n := strings.Count(log.String(), "attempt deadline on a replica; re-sending it (failover)"); int64(n) != stuck.calls.Load() {
		t.Errorf("%d failover warnings for %d attempts on the stuck replica:\n%s", n, stuck.calls.Load(), log.String())
	}
}

// TestRolloutWaitsForABusyReplica: a lone replica that answers after
// 500ms, past a 200ms attempt deadline, is given 400ms, then 800ms, and
// answers the third attempt, though a ReconnectTimeout of 300ms has passed
// (it bounds UNAVAILABLE failures only).
func TestRolloutWaitsForABusyReplica(t *testing.T) {
	busy := &fakeBridge{name: "busy", rollout: func(ctx context.Context, _ int64, req *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		select {
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-time.After(500 * time.Millisecond):
			return echo(req), nil
		}
	}}
	log := &TestLog{}
	c := startFakes(t, Config{ChunkSize: 100, AttemptTimeout: 200 * time.Millisecond, ReconnectTimeout: 300 * time.Millisecond, Logger: log.Logger()}, busy)
	waitAllReady(t, c, busy)
	rolloutEcho(t, c, 4)
	if n := busy.calls.Load(); n != 3 {
		t.Errorf("%d attempts, want 3 (deadlines 200ms, 400ms, 800ms)", n)
	}
	for _, d := range []string{"200ms attempt deadline", "400ms attempt deadline"} {
		if !strings.Contains(log.String(), d) {
			t.Errorf("no warning for the %s:\n%s", d, log.String())
		}
	}
}

func TestRolloutFailsOverToHealthyReplica(t *testing.T) {
	bad := &fakeBridge{name: "bad", rollout: func(context.Context, int64, *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		return nil, status.Error(codes.Unavailable, "dying")
	}}
	good := &fakeBridge{name: "good"}
	c := startFakes(t, Config{ChunkSize: 2}, bad, good)
	waitAllReady(t, c, bad, good)
	rolloutEcho(t, c, 16)
	if bad.calls.Load() == 0 {
		t.Errorf("the failing replica got no call: round_robin did not spread the chunks")
	}
	if good.calls.Load() != 8 {
		t.Errorf("good replica served %d chunks, want all 8", good.calls.Load())
	}
}

func TestRolloutInvalidArgumentNotRetried(t *testing.T) {
	f := &fakeBridge{name: "a", rollout: func(context.Context, int64, *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		return nil, status.Error(codes.InvalidArgument, "episodes[1].policy.rows: 3 != action dim 2")
	}}
	c := startFakes(t, Config{ChunkSize: 100}, f)
	_, err := c.Rollout(testCtx(t), specs(3))
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("err = %v, want code InvalidArgument", err)
	}
	if !strings.Contains(err.Error(), "episodes[1].policy.rows") {
		t.Errorf("error %q lost the field the server named", err)
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("server saw %d calls, want 1 (INVALID_ARGUMENT must not be retried)", n)
	}
}

func TestRolloutNotFoundFailsWholeBatch(t *testing.T) {
	f := &fakeBridge{name: "a", rollout: func(_ context.Context, n int64, req *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		if req.GetEpisodes()[0].GetSeed() == 104 {
			return nil, status.Error(codes.NotFound, "unknown env")
		}
		return echo(req), nil
	}}
	c := startFakes(t, Config{ChunkSize: 2}, f)
	got, err := c.Rollout(testCtx(t), specs(8))
	if status.Code(err) != codes.NotFound || got != nil {
		t.Fatalf("got %d results, err = %v; want nil and code NotFound", len(got), err)
	}
	var st interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &st) {
		t.Errorf("errors.As cannot find the status in %v", err)
	}
	if !strings.Contains(err.Error(), "episodes 4..5") {
		t.Errorf("error %q does not say which episodes failed", err)
	}
}

func TestRolloutDeadlineExceeded(t *testing.T) {
	f := &fakeBridge{name: "a", rollout: func(ctx context.Context, _ int64, _ *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}}
	c := startFakes(t, Config{RolloutTimeout: 200 * time.Millisecond}, f)
	start := time.Now()
	_, err := c.Rollout(testCtx(t), specs(4))
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("err = %v, want code DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Rollout took %v with a 200ms deadline", d)
	}
	if n := f.calls.Load(); n != 2 {
		t.Errorf("server saw %d calls, want one per chunk (2), no retry of DEADLINE_EXCEEDED", n)
	}
}

func TestRolloutCancelStopsPromptly(t *testing.T) {
	var started, cancelled atomic.Int64
	f := &fakeBridge{name: "a", rollout: func(ctx context.Context, _ int64, _ *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		started.Add(1)
		select {
		case <-ctx.Done():
			cancelled.Add(1)
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-time.After(30 * time.Second):
			return nil, status.Error(codes.Internal, "not cancelled")
		}
	}}
	b := &fakeBridge{name: "b", rollout: f.rollout}
	c := startFakes(t, Config{}, f, b)
	waitAllReady(t, c, f, b)
	ctx, cancel := context.WithCancel(testCtx(t))
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Rollout(ctx, specs(8))
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if took > 2*time.Second {
		t.Errorf("Rollout returned %v after start, %v after cancel", took, took-300*time.Millisecond)
	}
	// Every handler that started must see its context cancelled.
	deadline := time.Now().Add(5 * time.Second)
	for cancelled.Load() < started.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if started.Load() != 4 || cancelled.Load() != started.Load() {
		t.Errorf("%d chunk RPCs started, %d cancelled; want 4 and 4", started.Load(), cancelled.Load())
	}
}

func TestRolloutReassemblesChunksInOrder(t *testing.T) {
	// Later chunks answer first, so completion order is the reverse of
	// request order.
	slow := func(_ context.Context, _ int64, req *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		seed := req.GetEpisodes()[0].GetSeed()
		time.Sleep(time.Duration(120-seed) * 5 * time.Millisecond)
		return echo(req), nil
	}
	a := &fakeBridge{name: "a", rollout: slow}
	b := &fakeBridge{name: "b", rollout: slow}
	c := startFakes(t, Config{ChunkSize: 3, MaxInFlight: 16}, a, b)
	waitAllReady(t, c, a, b)
	in := specs(20)
	got, err := c.Rollout(testCtx(t), in)
	if err != nil {
		t.Fatalf("Rollout: %v", err)
	}
	if len(got) != len(in) {
		t.Fatalf("%d results for %d specs", len(got), len(in))
	}
	for i, r := range got {
		if r.Return != float64(in[i].Seed) || r.Length != in[i].Horizon || r.ShiftedReturn != float64(in[i].Seed)-float64(in[i].Horizon) {
			t.Errorf("result %d = %+v, does not belong to spec %d (seed %d)", i, r, i, in[i].Seed)
		}
		if len(r.ObsMean) != 4 || r.ObsCount != uint64(in[i].Horizon) {
			t.Errorf("result %d: obs stats %d features, count %d", i, len(r.ObsMean), r.ObsCount)
		}
	}
	if a.calls.Load()+b.calls.Load() != 7 {
		t.Errorf("%d + %d chunk calls, want 7 chunks of ≤3", a.calls.Load(), b.calls.Load())
	}
	if a.calls.Load() == 0 || b.calls.Load() == 0 {
		t.Errorf("chunks not spread: a got %d, b got %d", a.calls.Load(), b.calls.Load())
	}
}

func TestRolloutResultCountMismatch(t *testing.T) {
	f := &fakeBridge{name: "a", rollout: func(_ context.Context, _ int64, req *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		resp := echo(req)
		resp.Results = resp.Results[1:]
		return resp, nil
	}}
	c := startFakes(t, Config{}, f)
	got, err := c.Rollout(testCtx(t), specs(4))
	if !errors.Is(err, ErrProtocol) || got != nil {
		t.Fatalf("got %d results, err = %v; want ErrProtocol", len(got), err)
	}
	if !strings.Contains(err.Error(), "1 results for 2 episodes") {
		t.Errorf("error %q does not give the counts", err)
	}
}

func TestRolloutBadObsStats(t *testing.T) {
	f := &fakeBridge{name: "a", rollout: func(_ context.Context, _ int64, req *envbridgev1.RolloutRequest) (*envbridgev1.RolloutResponse, error) {
		resp := echo(req)
		resp.Results[0].ObsStats.M2 = nil
		return resp, nil
	}}
	c := startFakes(t, Config{}, f)
	if _, err := c.Rollout(testCtx(t), specs(2)); !errors.Is(err, ErrProtocol) {
		t.Fatalf("err = %v, want ErrProtocol", err)
	}
}

func TestRolloutClientSideValidation(t *testing.T) {
	f := &fakeBridge{name: "a"}
	c := startFakes(t, Config{}, f)
	cases := []struct {
		name   string
		mutate func(*EpisodeSpec)
		field  string
	}{
		{"empty env", func(s *EpisodeSpec) { s.EnvID = "" }, "EnvID"},
		{"short W", func(s *EpisodeSpec) { s.W = s.W[:11] }, "W"},
		{"NaN in W", func(s *EpisodeSpec) { s.W[7] = math.NaN() }, "W[7]"},
		{"Inf in mean", func(s *EpisodeSpec) { s.ObsMean[2] = math.Inf(1) }, "ObsMean[2]"},
		{"std length", func(s *EpisodeSpec) { s.ObsStd = s.ObsStd[:3] }, "ObsStd"},
		{"negative std", func(s *EpisodeSpec) { s.ObsStd[1] = -1 }, "ObsStd[1]"},
		{"bias length", func(s *EpisodeSpec) { s.Bias = []float64{1} }, "Bias"},
		{"zero rows", func(s *EpisodeSpec) { s.Rows = 0 }, "Rows"},
		{"negative horizon", func(s *EpisodeSpec) { s.Horizon = -1 }, "Horizon"},
		{"NaN shift", func(s *EpisodeSpec) { s.Shift = math.NaN() }, "Shift"},
		{"kwarg type", func(s *EpisodeSpec) { s.Kwargs = Kwargs{"ok": 1, "frame_skip": uint8(4)} }, `Kwargs["frame_skip"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := specs(6)
			tc.mutate(&in[4])
			_, err := c.Rollout(testCtx(t), in)
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SpecError", err)
			}
			if se.Index != 4 || se.Field != tc.field {
				t.Errorf("SpecError names episode %d field %q, want 4 and %q (%v)", se.Index, se.Field, tc.field, err)
			}
			if status.Code(err) != codes.InvalidArgument {
				t.Errorf("status.Code = %v, want InvalidArgument", status.Code(err))
			}
		})
	}
	if n := f.calls.Load(); n != 0 {
		t.Errorf("invalid batches reached the server %d times", n)
	}
}

func TestRolloutEmptyBatch(t *testing.T) {
	c := startFakes(t, Config{}, &fakeBridge{name: "a"})
	got, err := c.Rollout(testCtx(t), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("Rollout(nil) = %v, %v", got, err)
	}
}

func TestDescribeAndListEnvs(t *testing.T) {
	c := startFakes(t, Config{}, &fakeBridge{name: "a"})
	info, err := c.Describe(testCtx(t), "Hopper-v1", Kwargs{"terminate_when_unhealthy": false})
	if err != nil {
		t.Fatal(err)
	}
	if info.ResolvedID != "Hopper-v5" || info.ObsDim != 11 || info.ActDim != 3 || info.Limits.MaxEpisodesPerCall != 4096 || info.Limits.ObsStdFloor != 1e-7 || len(info.ActionLow) != 3 {
		t.Errorf("Describe = %+v", info)
	}
	_, err = c.Describe(testCtx(t), "Nope-v0", nil)
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `describe "Nope-v0"`) {
		t.Errorf("Describe(Nope-v0) err = %v, want wrapped NotFound", err)
	}
	if _, err := c.Describe(testCtx(t), "Hopper-v1", Kwargs{"x": []int{1}}); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `Kwargs["x"]`) {
		t.Errorf("Describe with a slice kwarg: err = %v", err)
	}
	list, err := c.ListEnvs(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(list.EnvIDs) != 1 || list.Aliases["Hopper-v1"] != "Hopper-v5" {
		t.Errorf("ListEnvs = %+v", list)
	}
	if err := c.Health(testCtx(t)); err != nil {
		t.Errorf("Health: %v", err)
	}
}

func TestWaitReadyUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	c, err := Dial(context.Background(), Config{Target: addr, ReadyTimeout: 700 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	err = c.WaitReady(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "bridge unreachable: "+addr) {
		t.Fatalf("WaitReady err = %v, want it to start with %q", err, "bridge unreachable: "+addr)
	}
	if d := time.Since(start); d < 600*time.Millisecond || d > 3*time.Second {
		t.Errorf("WaitReady gave up after %v, want about the 700ms ReadyTimeout", d)
	}
}

func TestParseTarget(t *testing.T) {
	for _, bad := range []string{"", "  ", "host", "a:1,,b:2", "a:1,b"} {
		if _, err := Dial(context.Background(), Config{Target: bad}); err == nil {
			t.Errorf("Dial(%q) succeeded, want an error", bad)
		}
	}
	c, err := Dial(context.Background(), Config{Target: "127.0.0.1:1, 127.0.0.1:2,127.0.0.1:3"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Replicas() != 3 {
		t.Errorf("Replicas = %d, want 3", c.Replicas())
	}
	d, err := Dial(context.Background(), Config{Target: "dns:///localhost:50051"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Replicas() < 1 {
		t.Errorf("dns Replicas = %d", d.Replicas())
	}
}

func TestChunkSize(t *testing.T) {
	c := &Client{cfg: Config{}.withDefaults(), replicas: 3}
	for _, tc := range []struct{ n, want int }{{1, 1}, {6, 1}, {7, 2}, {64, 11}, {600, 100}} {
		got, err := c.chunkSize(specs(tc.n))
		if err != nil || got != tc.want {
			t.Errorf("n=%d: chunk size %d, %v; want ceil(n/6) = %d", tc.n, got, err, tc.want)
		}
	}
	// A small message limit lowers the chunk size: a 3×4 spec is about 240
	// bytes, so 4 KiB / 2 fits 8 of them.
	c.cfg.MaxMessageBytes = 4096
	if got, _ := c.chunkSize(specs(600)); got*specBytes(&specs(1)[0]) > 2048 || got < 1 {
		t.Errorf("chunk size %d does not respect a 4 KiB message limit", got)
	}
	big := specs(1)
	big[0].Cols = 1000
	if _, err := c.chunkSize(big); err == nil {
		t.Errorf("an episode larger than the message limit was accepted")
	}
	c.cfg.ChunkSize = 5
	c.cfg.MaxMessageBytes = DefaultMaxMessageBytes
	if got, _ := c.chunkSize(specs(12)); got != 5 {
		t.Errorf("explicit ChunkSize 5 gave %d", got)
	}
}

func TestConcurrentRollouts(t *testing.T) {
	c := startFakes(t, Config{ChunkSize: 2, MaxInFlight: 3}, &fakeBridge{name: "a"}, &fakeBridge{name: "b"})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := specs(9)
			for i := range in {
				in[i].Seed += uint64(1000 * g)
			}
			got, err := c.Rollout(testCtx(t), in)
			if err != nil {
				errs <- err
				return
			}
			for i := range got {
				if got[i].Return != float64(in[i].Seed) {
					errs <- fmt.Errorf("goroutine %d result %d: %v", g, i, got[i].Return)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// rolloutEcho runs specs(n) on fakes that echo and checks every result.
func rolloutEcho(t *testing.T, c *Client, n int) {
	t.Helper()
	got, err := c.Rollout(testCtx(t), specs(n))
	if err != nil {
		t.Fatalf("Rollout: %v", err)
	}
	for i, r := range got {
		if r.Return != float64(100+i) {
			t.Errorf("result %d: Return %v, want %v", i, r.Return, 100+i)
		}
	}
}

func TestAttemptTimeoutDerivedFromChunkSize(t *testing.T) {
	c := &Client{cfg: Config{}.withDefaults()}
	in := specs(4) // horizons 10..13
	in[3].Horizon = 0
	got := c.attemptTimeout(chunk{0, 4}, in)
	want := DefaultAttemptBase + (10+11+12+defaultHorizonSteps)*DefaultAttemptPerStep
	if got != want {
		t.Errorf("attemptTimeout = %v, want %v", got, want)
	}
	if got := c.attemptTimeout(chunk{1, 2}, in); got != DefaultAttemptBase+11*DefaultAttemptPerStep {
		t.Errorf("attemptTimeout of one episode = %v", got)
	}
	c.cfg.AttemptTimeout = 3 * time.Second
	if got := c.attemptTimeout(chunk{0, 4}, in); got != 3*time.Second {
		t.Errorf("attemptTimeout with Config.AttemptTimeout 3s = %v", got)
	}
}

func TestEnvInfoCheck(t *testing.T) {
	hopper := EnvInfo{ResolvedID: "Hopper-v5", ObsDim: 11, ActDim: 3, MaxEpisodeSteps: 1000}
	ok := EpisodeSpec{Rows: 3, Cols: 11, Horizon: 1000}
	if err := hopper.Check(-1, &ok); err != nil {
		t.Errorf("a fitting spec: %v", err)
	}
	ok.Horizon = 0
	if err := hopper.Check(-1, &ok); err != nil {
		t.Errorf("horizon 0 (the env's limit): %v", err)
	}
	for _, c := range []struct {
		spec EpisodeSpec
		want string
	}{
		{EpisodeSpec{Rows: 2, Cols: 11}, "episode 4: invalid Rows: 2, but Hopper-v5 has a 3-dim action"},
		{EpisodeSpec{Rows: 3, Cols: 17}, "episode 4: invalid Cols: 17, but Hopper-v5 has a 11-dim observation"},
		{EpisodeSpec{Rows: 3, Cols: 11, Horizon: 5000}, "episode 4: invalid Horizon: 5000 exceeds the 1000 steps Hopper-v5 allows"},
	} {
		err := hopper.Check(4, &c.spec)
		var se *SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) || status.Code(err) != codes.InvalidArgument {
			t.Errorf("Check(%+v) = %v, want a SpecError containing %q", c.spec, err, c.want)
		}
	}
}

func TestErrorsCutLongUserValues(t *testing.T) {
	key := strings.Repeat("k", 100_000)
	_, err := kwargsToProto(Kwargs{key: []int{1}})
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "(100000 bytes)") {
		t.Errorf("a 100 kB kwarg name gave a %d-byte error: %.300s", len(fmt.Sprint(err)), err)
	}
}
