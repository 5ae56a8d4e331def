package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train/loop"
)

// shippedRun is the main matrix's Hopper default, seed 1, whose best policy
// is committed (the README's example of evaluating a trained policy).
const shippedRun = "results/rl/runs/Hopper-v1/stp-combined-guided/seed1"

// TestShippedPolicyReplays: the best policy committed with the main
// matrix's Hopper run of seed 1 is in git (a fresh clone has it), and
// `trainer eval --policy <run>` on it, with the seed and episode count of
// the evaluation that made it the best, replays that evaluation: the mean
// return is the run's best_eval.
func TestShippedPolicyReplays(t *testing.T) {
	root := filepath.Join("..", "..")
	best := filepath.Join(shippedRun, rundir.BestFile)
	out, err := exec.Command("git", "-C", root, "ls-files", "--error-unmatch", best).CombinedOutput()
	if err != nil {
		t.Fatalf("%s is not committed: %v\n%s", best, err, out)
	}
	dir := filepath.Join(root, shippedRun)
	meta, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The first evaluation at the run's best (a later equal one does not
	// replace the best point).
	bestIter, bestEval := -1, math.Inf(-1)
	for _, p := range curve(t, dir) {
		if v, ok := p["eval_mean"].(float64); ok && v > bestEval {
			bestEval, bestIter = v, int(p["iter"].(float64))
		}
	}
	if bestIter < 0 {
		t.Fatal("no evaluation in the committed curve")
	}
	var result struct {
		BestEval float64 `json:"best_eval"`
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &result); err != nil {
		t.Fatal(err)
	}
	if result.BestEval != bestEval {
		t.Fatalf("result.json's best_eval %v, the curve's best %v", result.BestEval, bestEval)
	}
	var cfg struct {
		Config struct {
			Limits struct {
				EvalEpisodes int `json:"eval_episodes"`
			} `json:"limits"`
		} `json:"config"`
	}
	if b, err = os.ReadFile(filepath.Join(dir, rundir.MetaFile)); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	episodes := cfg.Config.Limits.EvalEpisodes
	if episodes < 1 {
		t.Fatalf("run.json's config has no eval_episodes: %s", b)
	}
	seed := loop.RunEvalSeed(meta.Seed, bestIter)
	code, stdout, stderr := trainer(t, "eval", "--policy", dir, "--episodes", strconv.Itoa(episodes),
		"--seed", strconv.FormatUint(seed, 10), "--bridge", bridgeAddr, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var got struct {
		Policy string  `json:"policy"`
		Mean   float64 `json:"mean"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &got); err != nil {
		t.Fatalf("eval's output %q: %v", stdout, err)
	}
	if filepath.Base(got.Policy) != rundir.BestFile {
		t.Errorf("evaluated %s, want the run's %s", got.Policy, rundir.BestFile)
	}
	// The same episodes on the same policy: equal to the last bits that
	// MuJoCo's arithmetic may differ in across processors.
	if math.Abs(got.Mean-bestEval) > 1e-6*math.Abs(bestEval) {
		t.Errorf("eval's mean %v, the run's best evaluation %v (iteration %d)", got.Mean, bestEval, bestIter)
	}
}
