package localbridge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	envbridgev1 "github.com/stpis/stpis/proto/envbridge/v1"
)

// onlineCPUs is the count of online cores, which the bridge's limit on
// --workers counts (Python's os.cpu_count()); runtime.NumCPU where
// /sys does not say.
func onlineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		z, err2 := a, error(nil)
		if isRange {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil {
			return runtime.NumCPU()
		}
		n += z - a + 1
	}
	return n
}

// Issue 34, defect 1: a negative count is refused before anything starts;
// a count over the bridge's limit is refused by the bridge, in one line
// that names the flag and the limit.
func TestWorkerCountsAreBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := Start(ctx, Options{Workers: -1}); err == nil || !strings.Contains(err.Error(), "Workers -1") {
		t.Errorf("Workers -1: err = %v", err)
	}
	limit := 4 * onlineCPUs()
	b, err := Start(ctx, Options{Workers: limit + 1})
	if err == nil {
		_ = b.Stop(ctx)
		t.Fatalf("Workers %d, over the limit %d: the bridge started", limit+1, limit)
	}
	if want := fmt.Sprintf("--workers %d exceeds the limit ", limit+1); !strings.Contains(err.Error(), want) {
		t.Fatalf("Workers %d: err = %v, want the bridge's line %q", limit+1, err, want)
	}
}

// cpuTicks is the user+system CPU time of pid, in clock ticks.
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// Issue 34, defect 1: workers die with their bridge in every state. The
// bridge alone is SIGKILLed (not its process group) while one worker runs
// an episode of over ten seconds and the other is idle; neither may
// outlive it by more than a few seconds. (A worker stopped with SIGSTOP is
// the Python tests' case: here, in the bridge's own process group, the
// kernel would hang up the whole orphaned group.)
func TestWorkersDieWithAKilledBridge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := Start(ctx, Options{Workers: 2})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer b.Kill()
	workers, err := b.WorkerPids()
	if err != nil || len(workers) != 2 {
		t.Fatalf("worker pids %v, %v", workers, err)
	}
	conn, err := grpc.NewClient(b.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// 5000 steps × frame_skip 40 of Humanoid: over ten seconds of MuJoCo.
	const rows, cols = 17, 348
	spec := &envbridgev1.EpisodeSpec{EnvId: "Humanoid-v5", Horizon: 5000, Kwargs: map[string]*envbridgev1.KwargValue{
		"terminate_when_unhealthy": {Kind: &envbridgev1.KwargValue_BoolValue{BoolValue: false}},
		"frame_skip":               {Kind: &envbridgev1.KwargValue_IntValue{IntValue: 40}},
		"max_episode_steps":        {Kind: &envbridgev1.KwargValue_IntValue{IntValue: 5000}},
	}, Policy: &envbridgev1.LinearPolicy{Rows: rows, Cols: cols, Weights: make([]float64, rows*cols),
		ObsMean: make([]float64, cols), ObsStd: slices.Repeat([]float64{1}, cols)}}
	go func() {
		_, _ = envbridgev1.NewEnvBridgeServiceClient(conn).Rollout(ctx, &envbridgev1.RolloutRequest{Episodes: []*envbridgev1.EpisodeSpec{spec}})
	}()
	before := map[int]int{workers[0]: cpuTicks(t, workers[0]), workers[1]: cpuTicks(t, workers[1])}
	busy := -1
	for start := time.Now(); busy < 0; {
		if time.Since(start) > 30*time.Second {
			t.Fatal("no worker took the episode")
		}
		time.Sleep(500 * time.Millisecond)
		for _, w := range workers {
			if cpuTicks(t, w)-before[w] >= 20 {
				busy = w
			}
		}
	}
	if err := syscall.Kill(b.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, w := range workers {
		for alive(w) {
			if time.Now().After(deadline) {
				t.Fatalf("worker %d outlived its killed bridge by 5s (workers %v, %d ran the episode)", w, workers, busy)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
