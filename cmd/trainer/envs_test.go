package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/tasks"
	"github.com/stpis/stpis/train"
)

// TestEnvsListsTheTasks: `trainer envs` lists every task of the table
// without a bridge (its paper name, gymnasium id, sizes, threshold and the
// default's method); with --bridge it adds the other ids the bridge makes;
// flags that size or wait for a bridge are refused without one.
func TestEnvsListsTheTasks(t *testing.T) {
	code, stdout, stderr := trainer(t, "envs")
	if code != 0 || stderr != "" {
		t.Fatalf("envs: exit %d\n%s", code, stderr)
	}
	for _, task := range tasks.All() {
		c, err := train.Preset(train.PresetTuned, "", "", tasks.PaperEnv(task.Name))
		if err != nil {
			t.Fatal(err)
		}
		var row string
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(l, tasks.PaperEnv(task.Name)+" ") {
				row = l
			}
		}
		thr := "none"
		if task.HasThreshold {
			thr = strconv.FormatFloat(task.Threshold, 'g', -1, 64)
		}
		f := strings.Fields(row)
		if len(f) < 6 || f[1] != tasks.GymnasiumEnv(task.Name) || f[2] != strconv.Itoa(task.ObsDim) || f[3] != strconv.Itoa(task.ActDim) || f[4] != thr ||
			strings.Join(f[5:], " ") != c.Named().Label {
			t.Errorf("%s: row %q", task.Name, row)
		}
	}
	if strings.Contains(stdout, "Pusher-v5") {
		t.Errorf("without a bridge envs listed the bridge's ids:\n%s", stdout)
	}
	code, stdout, stderr = trainer(t, "envs", "--bridge", bridgeAddr, "--log-level", "warn")
	if code != 0 || !strings.Contains(stdout, "Pusher-v5") || !strings.Contains(stdout, "Hopper-v1") || strings.Contains(stdout, "Hopper-v5,") {
		t.Errorf("envs --bridge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"envs", "--workers", "2"}, {"envs", "--bridge-timeout", "5s"}, {"envs", "--local", "--bridge", bridgeAddr}, {"envs", "x"}} {
		if code, _, stderr := trainer(t, args...); code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, want 2 and one line:\n%s", args, code, stderr)
		}
	}
}

// TestTaskSizesAreTheBridges: the task table's observation and action
// sizes, which `trainer envs` shows without a bridge, are those of the
// gymnasium env the bridge makes for each task.
func TestTaskSizesAreTheBridges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := envclient.Dial(ctx, envclient.Config{Target: bridgeAddr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, task := range tasks.All() {
		info, err := c.Describe(ctx, tasks.GymnasiumEnv(task.Name), nil)
		if err != nil {
			t.Fatal(err)
		}
		if info.ObsDim != task.ObsDim || info.ActDim != task.ActDim {
			t.Errorf("%s: the table says obs %d act %d, the bridge %d and %d", task.Name, task.ObsDim, task.ActDim, info.ObsDim, info.ActDim)
		}
	}
}

// TestUnknownEnvPointsToEnvs: the bridge's unknown-env error names the
// command that lists the envs, not the gRPC method.
func TestUnknownEnvPointsToEnvs(t *testing.T) {
	code, _, stderr := trainer(t, "--env", "Pushr-v5", "--bridge", bridgeAddr, "--out", t.TempDir(), "--log-level", "error")
	if code != exitUsage || strings.Contains(stderr, "ListEnvs") || !strings.Contains(stderr, "trainer envs") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
}
