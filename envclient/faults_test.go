package envclient_test

// Faults injected into real bridges (issue 19): a stopped replica, and a lone
// bridge that is killed and restarted. The runs must finish without
// intervention, with results bit-identical to an undisturbed run.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/envclient/localbridge"
)

// dialReady dials cfg and waits until a replica is ready; the client is
// closed when the test ends.
func dialReady(t *testing.T, ctx context.Context, cfg envclient.Config) *envclient.Client {
	t.Helper()
	c, err := envclient.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func startBridges(t *testing.T, ctx context.Context, opts ...localbridge.Options) []*localbridge.Bridge {
	t.Helper()
	bridges := make([]*localbridge.Bridge, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i := range opts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bridges[i], errs[i] = localbridge.Start(ctx, opts[i])
		}()
	}
	wg.Wait()
	for i, b := range bridges {
		if errs[i] != nil {
			t.Fatalf("bridge %d: %v", i, errs[i])
		}
		t.Cleanup(b.Kill)
	}
	return bridges
}

// TestStoppedReplicaFailsOver stops one of two replicas (SIGSTOP) while it
// holds chunks: each chunk it held is re-sent to the other replica once its
// attempt deadline passes, with a warning, and the batch completes with the
// results of an undisturbed run.
func TestStoppedReplicaFailsOver(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	bridges := startBridges(t, ctx, localbridge.Options{Workers: 1}, localbridge.Options{Workers: 1})
	survivor, victim := bridges[0], bridges[1]
	var log envclient.TestLog
	tr := newTracker(survivor.Addr(), victim.Addr())
	c := dialReady(t, ctx, envclient.Config{
		Target:         survivor.Addr() + "," + victim.Addr(),
		ChunkSize:      2,
		AttemptTimeout: 2 * time.Second,
		Logger:         log.Logger(),
		DialOptions:    []grpc.DialOption{grpc.WithStatsHandler(tr)},
	})
	tr.waitAll(t, ctx, c)
	in := linearSpecs("Hopper-v5", envclient.Kwargs{"terminate_when_unhealthy": false}, 3, 11, 8, 2000, 400)
	ref, err := c.Rollout(ctx, in)
	if err != nil {
		t.Fatalf("reference Rollout: %v", err)
	}
	refStarted, _ := tr.counts()
	if refStarted[victim.Addr()] == 0 {
		t.Fatalf("no chunk reached the victim replica: %v", refStarted)
	}
	tr.mu.Lock()
	for a := range tr.firstOn {
		tr.firstOn[a] = make(chan struct{})
	}
	onVictim := tr.firstOn[victim.Addr()]
	tr.started, tr.failed = map[string]int{}, map[string]int{}
	tr.mu.Unlock()
	go func() {
		select {
		case <-onVictim:
			_ = syscall.Kill(victim.Pid(), syscall.SIGSTOP)
		case <-ctx.Done():
		}
	}()
	start := time.Now()
	got, err := c.Rollout(ctx, in)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Rollout with a replica stopped: %v", err)
	}
	started, failed := tr.counts()
	t.Logf("took %v; attempts %v, failed %v", took.Round(time.Millisecond), started, failed)
	if failed[victim.Addr()] == 0 {
		t.Fatalf("no attempt on the stopped replica failed: failover untested")
	}
	if err := sameBits(ref, got); err != nil {
		t.Errorf("results after failover differ from the reference: %v", err)
	}
	if n := strings.Count(log.String(), "attempt deadline on a replica; re-sending it (failover)"); n < failed[victim.Addr()] {
		t.Errorf("%d failover warnings for %d failed attempts:\n%s", n, failed[victim.Addr()], log.String())
	}
	if !strings.Contains(log.String(), victim.Addr()) {
		t.Errorf("no warning names the stopped replica %s:\n%s", victim.Addr(), log.String())
	}
	_ = syscall.Kill(victim.Pid(), syscall.SIGCONT)
}

// TestLoneBridgeRestartIsWaitedFor kills the only bridge in the middle of a
// batch and starts a new one on the same address: the batch waits for it,
// logging each attempt, and completes with the undisturbed results. With a
// short ReconnectTimeout and no bridge, Rollout gives up with
// ErrBridgeUnavailable.
func TestLoneBridgeRestartIsWaitedFor(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	first := startBridges(t, ctx, localbridge.Options{Workers: 1})[0]
	addr := first.Addr()
	var log envclient.TestLog
	c := dialReady(t, ctx, envclient.Config{Target: addr, ChunkSize: 2, Logger: log.Logger()})
	in := linearSpecs("Hopper-v5", envclient.Kwargs{"terminate_when_unhealthy": false}, 3, 11, 6, 3000, 1000)
	ref, err := c.Rollout(ctx, in)
	if err != nil {
		t.Fatalf("reference Rollout: %v", err)
	}

	restarted := make(chan *localbridge.Bridge, 1)
	go func() {
		time.Sleep(100 * time.Millisecond) // into the batch
		first.Kill()
		time.Sleep(500 * time.Millisecond)
		b, err := localbridge.Start(ctx, localbridge.Options{Workers: 1, Listen: addr})
		if err != nil {
			t.Errorf("restarting the bridge on %s: %v", addr, err)
			close(restarted)
			return
		}
		restarted <- b
	}()
	got, err := c.Rollout(ctx, in)
	second, ok := <-restarted
	if ok {
		t.Cleanup(second.Kill)
	}
	if err != nil {
		t.Fatalf("Rollout across a bridge restart: %v\n%s", err, log.String())
	}
	if err := sameBits(ref, got); err != nil {
		t.Errorf("results across the restart differ from the reference: %v", err)
	}
	if !strings.Contains(log.String(), "re-sending it (failover)") || !strings.Contains(log.String(), "succeeded after failover") {
		t.Errorf("the wait for the bridge was not logged:\n%s", log.String())
	}

	// Now no bridge comes back: a short ReconnectTimeout gives up, clearly.
	second.Kill()
	short, err := envclient.Dial(ctx, envclient.Config{Target: addr, ReconnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close()
	start := time.Now()
	_, err = short.Rollout(ctx, in)
	if !errors.Is(err, envclient.ErrBridgeUnavailable) || !strings.Contains(err.Error(), "no replica answered for") {
		t.Fatalf("err = %v, want ErrBridgeUnavailable saying how long it waited", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("gave up after %v with a 1s ReconnectTimeout", took)
	}
}

// workerPids returns the bridge's worker pids.
func workerPids(t *testing.T, b *localbridge.Bridge) []int {
	t.Helper()
	pids, err := b.WorkerPids()
	if err != nil || len(pids) == 0 {
		t.Fatalf("bridge %d's workers: %v %v", b.Pid(), pids, err)
	}
	return pids
}

// TestRunsSurviveWorkerAndBridgeFaults injects, each into a batch in flight
// on two replicas, the faults that used to end a run: a worker killed and its
// replacement killed before it was ready (defect 1), a worker stopped with
// SIGSTOP (defect 4), and both bridges killed and restarted by their
// supervisor a second later (defect 6). Every batch completes, without
// intervention, with the results of an undisturbed run.
func TestRunsSurviveWorkerAndBridgeFaults(t *testing.T) {
	ctx := ctxFor(t, 4*time.Minute)
	opts := localbridge.Options{Workers: 1, ExtraArgs: []string{"--stall-seconds", "1.5"}}
	bridges := startBridges(t, ctx, opts, opts)
	addrs := []string{bridges[0].Addr(), bridges[1].Addr()}
	var log envclient.TestLog
	tr := newTracker(addrs...)
	c := dialReady(t, ctx, envclient.Config{
		Target: strings.Join(addrs, ","), ChunkSize: 2, AttemptTimeout: 5 * time.Second,
		Logger: log.Logger(), DialOptions: []grpc.DialOption{grpc.WithStatsHandler(tr)},
	})
	tr.waitAll(t, ctx, c)
	in := linearSpecs("Hopper-v5", envclient.Kwargs{"terminate_when_unhealthy": false}, 3, 11, 8, 5000, 400)
	ref, err := c.Rollout(ctx, in)
	if err != nil {
		t.Fatalf("reference Rollout: %v", err)
	}
	kill := func(pid int, sig syscall.Signal) {
		if err := syscall.Kill(pid, sig); err != nil {
			t.Errorf("kill -%d %d: %v", sig, pid, err)
		}
	}
	faults := []struct {
		name   string
		inject func()
	}{
		{"worker killed, then its replacement before it is ready", func() {
			first := workerPids(t, bridges[0])[0]
			kill(first, syscall.SIGKILL)
			time.Sleep(300 * time.Millisecond)
			replacements, _ := bridges[0].WorkerPids()
			for _, p := range replacements {
				kill(p, syscall.SIGKILL)
			}
		}},
		{"worker stopped", func() {
			kill(workerPids(t, bridges[1])[0], syscall.SIGSTOP)
		}},
		{"both bridges killed, restarted a second later", func() {
			for _, b := range bridges {
				b.Kill()
			}
			time.Sleep(time.Second)
			for i := range bridges {
				o := opts
				o.Listen = addrs[i]
				b, err := localbridge.Start(ctx, o)
				if err != nil {
					t.Errorf("restarting bridge %d: %v", i, err)
					return
				}
				bridges[i] = b
				t.Cleanup(b.Kill)
			}
		}},
	}
	survived, lost := 0, 0
	for _, f := range faults {
		done := make(chan error, 1)
		var got []envclient.EpisodeResult
		go func() {
			var err error
			got, err = c.Rollout(ctx, in)
			done <- err
		}()
		time.Sleep(150 * time.Millisecond) // into the batch
		f.inject()
		if err := <-done; err != nil {
			t.Errorf("%s: Rollout failed: %v", f.name, err)
			lost += len(in)
			continue
		}
		if err := sameBits(ref, got); err != nil {
			t.Errorf("%s: results differ from the undisturbed run: %v", f.name, err)
			lost += len(in)
			continue
		}
		survived++
	}
	t.Logf("faults injected %d, survived without intervention %d, episodes lost %d", len(faults), survived, lost)
	if !strings.Contains(log.String(), "re-sending it (failover)") {
		t.Errorf("no failover was logged:\n%s", log.String())
	}
}

// TestChunksFitALowerLimit: a bridge that takes fewer episodes per call
// than the client's chunks (one restarted with a lower
// --max-episodes-per-call) gets them in parts, after the client reads its
// limits again; the results are the same as in one call.
func TestChunksFitALowerLimit(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	wide := startBridges(t, ctx, localbridge.Options{Workers: 1})[0]
	narrow := startBridges(t, ctx, localbridge.Options{Workers: 1, ExtraArgs: []string{"--max-episodes-per-call", "4"}})[0]
	specs := linearSpecs("Hopper-v5", nil, 3, 11, 10, 3, 20)
	want, err := dialReady(t, ctx, envclient.Config{Target: wide.Addr(), ChunkSize: 10}).Rollout(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	c := dialReady(t, ctx, envclient.Config{Target: narrow.Addr(), ChunkSize: 10})
	for round := 0; round < 2; round++ { // the second round sizes its chunks by the limit at once
		got, err := c.Rollout(ctx, specs)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for i := range want {
			if got[i].Return != want[i].Return || got[i].Length != want[i].Length {
				t.Fatalf("round %d, episode %d: %+v, want %+v", round, i, got[i], want[i])
			}
		}
	}
}
