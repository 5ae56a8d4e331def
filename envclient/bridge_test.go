package envclient_test

// End-to-end tests against the real Python bridge, started with
// localbridge. They fail (never skip) when the venv is missing.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/envclient/localbridge"
)

var shared struct {
	once   sync.Once
	bridge *localbridge.Bridge
	client *envclient.Client
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.client != nil {
		_ = shared.client.Close()
	}
	if shared.bridge != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := shared.bridge.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the shared bridge: %v\n", err)
			code = max(code, 1)
		}
		cancel()
	}
	os.Exit(code)
}

// sharedClient starts one 2-worker bridge for the tests of this file.
func sharedClient(t *testing.T) *envclient.Client {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.bridge, shared.err = localbridge.Start(ctx, localbridge.Options{Workers: 2})
		if shared.err != nil {
			return
		}
		shared.client, shared.err = envclient.Dial(ctx, envclient.Config{Target: shared.bridge.Addr()})
		if shared.err == nil {
			shared.err = shared.client.WaitReady(ctx)
		}
	})
	if shared.err != nil {
		t.Fatalf("shared bridge: %v", shared.err)
	}
	return shared.client
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// linearSpecs returns n specs for env with random W ~ N(0, 0.1²) from seed,
// mean 0, std 1, and episode seeds seed0, seed0+1, ...
func linearSpecs(env string, kw envclient.Kwargs, rows, cols, n int, seed0 uint64, horizon int) []envclient.EpisodeSpec {
	rng := rand.New(rand.NewPCG(seed0, 42))
	out := make([]envclient.EpisodeSpec, n)
	for i := range out {
		w := make([]float64, rows*cols)
		for j := range w {
			w[j] = 0.1 * rng.NormFloat64()
		}
		std := make([]float64, cols)
		for j := range std {
			std[j] = 1
		}
		out[i] = envclient.EpisodeSpec{
			EnvID: env, Kwargs: kw, Rows: rows, Cols: cols, W: w,
			ObsMean: make([]float64, cols), ObsStd: std,
			Seed: seed0 + uint64(i), Horizon: horizon, Shift: 1,
		}
	}
	return out
}

// sameBits reports the first difference between two result lists, compared
// bit for bit.
func sameBits(a, b []envclient.EpisodeResult) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d results vs %d", len(a), len(b))
	}
	eqf := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	eqs := func(x, y []float64) bool { return slices.EqualFunc(x, y, eqf) }
	for i := range a {
		x, y := a[i], b[i]
		if !eqf(x.Return, y.Return) || !eqf(x.ShiftedReturn, y.ShiftedReturn) || x.Length != y.Length ||
			x.Terminated != y.Terminated || x.Truncated != y.Truncated || x.ObsCount != y.ObsCount ||
			!eqs(x.ObsMean, y.ObsMean) || !eqs(x.ObsM2, y.ObsM2) || x.NonFinite != y.NonFinite {
			return fmt.Errorf("result %d differs:\n%+v\n%+v", i, x, y)
		}
	}
	return nil
}

func TestBridgeDescribeAndList(t *testing.T) {
	c := sharedClient(t)
	ctx := ctxFor(t, time.Minute)
	info, err := c.Describe(ctx, "Hopper-v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.RequestedID != "Hopper-v1" || info.ResolvedID != "Hopper-v5" || info.ResolutionReason == "" {
		t.Errorf("Hopper-v1 resolved to %q (%q)", info.ResolvedID, info.ResolutionReason)
	}
	if info.ObsDim != 11 || info.ActDim != 3 || len(info.ActionLow) != 3 || len(info.ActionHigh) != 3 {
		t.Errorf("Hopper dims: obs %d act %d bounds %v %v", info.ObsDim, info.ActDim, info.ActionLow, info.ActionHigh)
	}
	if info.MaxEpisodeSteps != 1000 || info.Dt <= 0 || info.GymnasiumVersion == "" || info.MujocoVersion == "" {
		t.Errorf("Describe(Hopper-v1) = %+v", info)
	}
	// The bridge's default backend (auto) serves Hopper-v5 fast; a kwarg the
	// fast backend does not serve (Hopper-v4) is left to gymnasium.
	if info.Backend != "fast" && os.Getenv("STPIS_BRIDGE_BACKEND") == "" {
		t.Errorf("Describe(Hopper-v1).Backend = %q, want fast", info.Backend)
	}
	wide, err := c.Describe(ctx, "Hopper-v4", nil)
	if err != nil {
		t.Fatal(err)
	}
	if wide.Backend != "gymnasium" {
		t.Errorf("Describe(Hopper-v4).Backend = %q, want gymnasium", wide.Backend)
	}
	list, err := c.ListEnvs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"Hopper-v5", "Swimmer-v5", "Humanoid-v5"} {
		if !slices.Contains(list.EnvIDs, id) {
			t.Errorf("ListEnvs lacks %s: %v", id, list.EnvIDs)
		}
	}
	if list.Aliases["Hopper-v1"] != "Hopper-v5" {
		t.Errorf("alias Hopper-v1 -> %q", list.Aliases["Hopper-v1"])
	}
	if err := c.Health(ctx); err != nil {
		t.Errorf("Health: %v", err)
	}
}

func TestBridgeRolloutDeterministic(t *testing.T) {
	c := sharedClient(t)
	ctx := ctxFor(t, 2*time.Minute)
	swimmer, err := c.Describe(ctx, "Swimmer-v5", nil)
	if err != nil {
		t.Fatal(err)
	}
	hop := envclient.Kwargs{"terminate_when_unhealthy": false}
	in := append(
		linearSpecs("Swimmer-v5", nil, swimmer.ActDim, swimmer.ObsDim, 5, 7, 60),
		linearSpecs("Hopper-v1", hop, 3, 11, 5, 70, 80)...)
	first, err := c.Rollout(ctx, in)
	if err != nil {
		t.Fatalf("Rollout: %v", err)
	}
	for i, r := range first {
		if r.Length != in[i].Horizon || !r.Truncated || r.Terminated || r.NonFinite {
			t.Errorf("episode %d: length %d of horizon %d, truncated %v terminated %v", i, r.Length, in[i].Horizon, r.Truncated, r.Terminated)
		}
		if r.ObsCount != uint64(r.Length) || len(r.ObsMean) != in[i].Cols || len(r.ObsM2) != in[i].Cols {
			t.Errorf("episode %d: obs stats count %d, %d/%d features", i, r.ObsCount, len(r.ObsMean), len(r.ObsM2))
		}
		if d := r.ShiftedReturn - (r.Return - float64(r.Length)); math.Abs(d) > 1e-9*math.Max(1, math.Abs(r.Return)) {
			t.Errorf("episode %d: shifted return %v != %v - %d", i, r.ShiftedReturn, r.Return, r.Length)
		}
	}
	if first[0].Return == first[1].Return {
		t.Errorf("two different policies and seeds gave the same return %v", first[0].Return)
	}
	second, err := c.Rollout(ctx, in)
	if err != nil {
		t.Fatalf("second Rollout: %v", err)
	}
	if err := sameBits(first, second); err != nil {
		t.Errorf("the same specs gave different results: %v", err)
	}
	// Reversed order: each episode depends on its spec only.
	rev := slices.Clone(in)
	slices.Reverse(rev)
	third, err := c.Rollout(ctx, rev)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(third)
	if err := sameBits(first, third); err != nil {
		t.Errorf("results depend on batch order: %v", err)
	}
}

func TestBridgeErrors(t *testing.T) {
	c := sharedClient(t)
	ctx := ctxFor(t, time.Minute)

	// Only the bridge knows Hopper's action dim is 3, not 2.
	bad := linearSpecs("Hopper-v5", nil, 2, 11, 3, 1, 10)
	_, err := c.Rollout(ctx, bad)
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("2-row policy for Hopper: err = %v, want InvalidArgument from the bridge", err)
	}
	var se *envclient.SpecError
	if errors.As(err, &se) {
		t.Errorf("the action-dim mismatch was caught on the client, so the bridge's check is untested")
	}

	// Caught on the client, same code.
	nan := linearSpecs("Hopper-v5", nil, 3, 11, 3, 1, 10)
	nan[2].W[5] = math.NaN()
	_, err = c.Rollout(ctx, nan)
	if status.Code(err) != codes.InvalidArgument || !errors.As(err, &se) || se.Field != "W[5]" || se.Index != 2 {
		t.Errorf("NaN weight: err = %v", err)
	}

	_, err = c.Rollout(ctx, linearSpecs("NoSuchEnv-v0", nil, 3, 11, 2, 1, 10))
	if status.Code(err) != codes.NotFound {
		t.Errorf("unknown env Rollout: err = %v, want NotFound", err)
	}
	_, err = c.Describe(ctx, "NoSuchEnv-v0", nil)
	if status.Code(err) != codes.NotFound {
		t.Errorf("unknown env Describe: err = %v, want NotFound", err)
	}
}

// attemptTracker is a client stats handler that records every RPC attempt
// (retries included) with the replica it went to and how it ended.
type attemptTracker struct {
	mu      sync.Mutex
	started map[string]int // Rollout attempts per replica address
	failed  map[string]int // Rollout attempts that ended with an error
	firstOn map[string]chan struct{}
	seen    map[string]bool // replicas that got any RPC
}

type attempt struct{ addr, method string }

type attemptKey struct{}

var _ stats.Handler = (*attemptTracker)(nil)

func newTracker(addrs ...string) *attemptTracker {
	tr := &attemptTracker{started: map[string]int{}, failed: map[string]int{}, firstOn: map[string]chan struct{}{}, seen: map[string]bool{}}
	for _, a := range addrs {
		tr.firstOn[a] = make(chan struct{})
	}
	return tr
}

func (tr *attemptTracker) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, attemptKey{}, &attempt{method: info.FullMethodName})
}

func (tr *attemptTracker) HandleRPC(ctx context.Context, s stats.RPCStats) {
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	if a == nil {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if h, ok := s.(*stats.OutHeader); ok && h.RemoteAddr != nil {
		tr.seen[h.RemoteAddr.String()] = true
	}
	if !strings.HasSuffix(a.method, "/Rollout") {
		return
	}
	switch s := s.(type) {
	case *stats.OutHeader:
		if s.RemoteAddr == nil {
			return
		}
		a.addr = s.RemoteAddr.String()
		tr.started[a.addr]++
		if ch, ok := tr.firstOn[a.addr]; ok && tr.started[a.addr] == 1 {
			close(ch)
		}
	case *stats.End:
		if s.Error != nil {
			tr.failed[a.addr]++
		}
	}
}

func (tr *attemptTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

func (tr *attemptTracker) HandleConn(context.Context, stats.ConnStats) {}

// waitAll calls ListEnvs until calls have reached every replica the
// tracker knows: WaitReady needs one replica, and round_robin uses only the
// ones that are connected.
func (tr *attemptTracker) waitAll(t *testing.T, ctx context.Context, c *envclient.Client) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err := c.ListEnvs(ctx); err != nil {
			t.Fatal(err)
		}
		tr.mu.Lock()
		all := true
		for a := range tr.firstOn {
			all = all && tr.seen[a]
		}
		tr.mu.Unlock()
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls reached only %v", tr.seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (tr *attemptTracker) counts() (started, failed map[string]int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return maps(tr.started), maps(tr.failed)
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestTwoReplicasFailover runs a batch over two 1-worker bridges, kills one
// while it runs its chunks, and checks that the batch still completes with
// results bit-identical to a run without the kill.
func TestTwoReplicasFailover(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	bridges := make([]*localbridge.Bridge, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range bridges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bridges[i], errs[i] = localbridge.Start(ctx, localbridge.Options{Workers: 1})
		}()
	}
	wg.Wait()
	for i, b := range bridges {
		if errs[i] != nil {
			t.Fatalf("bridge %d: %v", i, errs[i])
		}
		t.Cleanup(func() { _ = b.Stop(context.Background()) })
	}
	survivor, victim := bridges[0], bridges[1]

	tr := newTracker(survivor.Addr(), victim.Addr())
	c := dialReady(t, ctx, envclient.Config{
		Target:      survivor.Addr() + "," + victim.Addr(),
		DialOptions: []grpc.DialOption{grpc.WithStatsHandler(tr)},
	})
	tr.waitAll(t, ctx, c)

	kw := envclient.Kwargs{"terminate_when_unhealthy": false}
	in := linearSpecs("Hopper-v5", kw, 3, 11, 12, 1000, 700)

	// Reference run, both replicas alive. It also warms both up.
	ref, err := c.Rollout(ctx, in)
	if err != nil {
		t.Fatalf("reference Rollout: %v", err)
	}
	refStarted, _ := tr.counts()
	if refStarted[survivor.Addr()] == 0 || refStarted[victim.Addr()] == 0 {
		t.Fatalf("the batch was not split over both replicas: %v", refStarted)
	}

	// Same batch; kill the victim once its first chunk of this run started.
	tr.mu.Lock()
	tr.started, tr.failed = map[string]int{}, map[string]int{}
	for a := range tr.firstOn {
		tr.firstOn[a] = make(chan struct{})
	}
	onVictim := tr.firstOn[victim.Addr()]
	tr.mu.Unlock()
	killed := make(chan time.Time, 1)
	go func() {
		select {
		case <-onVictim:
			time.Sleep(100 * time.Millisecond) // let the bridge start stepping
			victim.Kill()
			killed <- time.Now()
		case <-ctx.Done():
		}
	}()
	start := time.Now()
	got, err := c.Rollout(ctx, in)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Rollout with a replica killed: %v", err)
	}
	var killedAt time.Time
	select {
	case killedAt = <-killed:
	case <-time.After(10 * time.Second):
		t.Fatal("the victim replica never got a chunk, so it was not killed")
	}
	started, failed := tr.counts()
	t.Logf("kill at %v into a %v batch; attempts per replica %v, failed %v", killedAt.Sub(start).Round(time.Millisecond), took.Round(time.Millisecond), started, failed)
	if failed[victim.Addr()] == 0 {
		t.Errorf("no attempt on the killed replica failed: the kill came after its chunks, failover untested")
	}
	if failed[survivor.Addr()] != 0 {
		t.Errorf("%d attempts failed on the surviving replica", failed[survivor.Addr()])
	}
	if started[survivor.Addr()] <= refStarted[survivor.Addr()] {
		t.Errorf("the survivor ran %d chunk attempts, no more than without the kill (%d): nothing was re-sent to it",
			started[survivor.Addr()], refStarted[survivor.Addr()])
	}
	if err := sameBits(ref, got); err != nil {
		t.Errorf("results after failover differ from the reference: %v", err)
	}
	for i, r := range got {
		if r.Length != in[i].Horizon {
			t.Errorf("episode %d: length %d, want %d", i, r.Length, in[i].Horizon)
		}
	}
}

func TestBridgeDNSTarget(t *testing.T) {
	sharedClient(t) // starts the shared bridge
	ctx := ctxFor(t, time.Minute)
	_, port, err := net.SplitHostPort(shared.bridge.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c, err := envclient.Dial(ctx, envclient.Config{Target: "dns:///127.0.0.1:" + port})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Replicas() != 1 {
		t.Errorf("Replicas() = %d for one address", c.Replicas())
	}
	got, err := c.Rollout(ctx, linearSpecs("Hopper-v5", nil, 3, 11, 3, 5, 20))
	if err != nil || len(got) != 3 {
		t.Fatalf("Rollout over dns:///: %d results, %v", len(got), err)
	}
}

func TestBridgeCancel(t *testing.T) {
	c := sharedClient(t)
	kw := envclient.Kwargs{"terminate_when_unhealthy": false}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Rollout(ctx, linearSpecs("Hopper-v5", kw, 3, 11, 16, 50, 1000))
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if took > 2*time.Second {
		t.Errorf("Rollout returned %v after a 400ms deadline", took)
	}
	// The bridge is still usable right after.
	got, err := c.Rollout(ctxFor(t, 30*time.Second), linearSpecs("Hopper-v5", kw, 3, 11, 2, 60, 10))
	if err != nil || len(got) != 2 {
		t.Fatalf("Rollout after a cancelled one: %d results, %v", len(got), err)
	}
}
