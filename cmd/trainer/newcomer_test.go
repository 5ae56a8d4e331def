package main

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/report"
	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train"
)

// TestConvexDataShipped: `trainer convex` reads the LIBSVM files shipped
// in the repository from any directory (they are embedded), and a
// --data-dir without them fails with exit 1 (not 2, a bad command line),
// naming the flag.
func TestConvexDataShipped(t *testing.T) {
	out := t.TempDir()
	t.Chdir(t.TempDir()) // no ../shared, no repository around
	code, _, stderr := trainer(t, "convex", "--only", "figure2", "--problem", "ridge", "--runs", "1", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, name := range []string{"heart_scale", "australian_scale", "mushrooms"} {
		if !strings.Contains(stderr, "ridge_"+name) {
			t.Errorf("no progress line for %s:\n%s", name, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "summary_figure2.json")); err != nil {
		t.Error(err)
	}
	code, _, stderr = trainer(t, "convex", "--data-dir", t.TempDir(), "--out", out)
	if code != exitUsage || !strings.Contains(stderr, "--data-dir") { // a missing file: 2 (issue 52)
		t.Errorf("a --data-dir without the files: exit %d, %s", code, stderr)
	}
}

// TestHelpOnStdout: -h of the command and of every subcommand goes to
// stdout (so `trainer -h | less` shows it), lists each flag as --flag, and
// shows no placeholder leaked from a flag's help.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"train", "-h"}, {"config", "-h"}, {"eval", "-h"},
		{"render", "-h"}, {"plot", "-h"}, {"table", "-h"}, {"convex", "-h"}, {"envs", "-h"}} {
		code, stdout, stderr := trainer(t, args...)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage") {
			t.Errorf("%v: exit %d, stdout %.80q, stderr %.200q", args, code, stdout, stderr)
		}
		for _, bad := range []string{"Usage of", "\n  -o", "\n  -e", "--config trainer config"} {
			if strings.Contains(stdout, bad) {
				t.Errorf("%v: the usage holds %q:\n%s", args, bad, stdout)
			}
		}
	}
}

// TestDidYouMean: a misspelt flag or task is one error line that names the
// one meant, and a misspelt task is refused before a bridge starts (no
// --bridge here, and no log line before the error).
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--env", "Hopper-v1", "--max-episode", "40"}, "unknown flag --max-episode: did you mean --max-episodes?"},
		{[]string{"--env", "Hoper-v1", "--max-episodes", "40"}, `"Hoper-v1" is not a task the trainer knows: did you mean Hopper-v1?`},
		{[]string{"--env", "halfcheetah-v5"}, "did you mean HalfCheetah-v5?"},
		{[]string{"--env", "hopper"}, `"hopper" is not a task the trainer knows: did you mean Hopper-v1?`},
		{[]string{"--env", "Hopper"}, "did you mean Hopper-v1?"},
		{[]string{"eval", "--polcy", "x"}, "did you mean --policy?"},
		{[]string{"plot", "runs", "--sucess"}, "did you mean --success?"},
		{[]string{"--env", "Hopper-v1", "--seed", "x"}, "for flag --seed"},
	} {
		start := time.Now()
		code, _, stderr := trainer(t, c.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%v: exit %d, want 2 and one line with %q:\n%s", c.args, code, c.want, stderr)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("%v: took %v: was a bridge started?", c.args, d)
		}
	}
}

// TestConfigWarnsUnknownTask: `trainer config` of an env the task table
// does not know prints the fallback settings with a warning on stderr,
// naming the task it is a near miss of; a known task gets no warning.
func TestConfigWarnsUnknownTask(t *testing.T) {
	code, stdout, stderr := trainer(t, "config", "--env", "Hoper-v1")
	if code != 0 || !strings.Contains(stdout, "env: Hoper-v1") || !strings.Contains(stderr, "fallback settings") || !strings.Contains(stderr, "did you mean Hopper-v1?") {
		t.Errorf("config --env Hoper-v1: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := trainer(t, "config", "--env", "Hopper-v1"); code != 0 || stderr != "" {
		t.Errorf("config --env Hopper-v1: exit %d, %q", code, stderr)
	}
	if code, _, stderr := trainer(t, "config", "--env", "Hopper"); code != 0 || !strings.Contains(stderr, "did you mean Hopper-v1?") {
		t.Errorf("config --env Hopper: exit %d, %q", code, stderr)
	}
}

// TestSeedsInParallel: --seed 1-2 --jobs 2 trains both seeds at once on one
// bridge, and each run is bit-identical to its seed trained alone.
func TestSeedsInParallel(t *testing.T) {
	common := []string{"--env", "Swimmer-v1", "--max-episodes", "48", "--horizon", "150", "--eval-episodes", "2",
		"--config", evalEvery(t, 2), "--bridge", bridgeAddr, "--log-level", "warn"}
	par, one := t.TempDir(), t.TempDir()
	if code, stdout, stderr := trainer(t, append(common, "--seed", "1-2", "--jobs", "2", "--out", par)...); code != 0 || strings.Count(stdout, "\n") != 2 {
		t.Fatalf("--jobs 2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, seed := range []string{"1", "2"} {
		if code, _, stderr := trainer(t, append(common, "--seed", seed, "--out", one)...); code != 0 {
			t.Fatalf("seed %s alone: exit %d\n%s", seed, code, stderr)
		}
		dirs, _ := filepath.Glob(filepath.Join(par, "Swimmer-v1", "*", "seed"+seed))
		if len(dirs) != 1 {
			t.Fatalf("seed %s: run directories %v", seed, dirs)
		}
		rel, _ := filepath.Rel(par, dirs[0])
		if n := sameRun(t, dirs[0], filepath.Join(one, rel)); n < 3 {
			t.Errorf("seed %s: %d curve lines", seed, n)
		}
	}
	if code, _, stderr := trainer(t, append(common, "--jobs", "0", "--out", t.TempDir())...); code != exitUsage || !strings.Contains(stderr, "--jobs") {
		t.Errorf("--jobs 0: exit %d, %s", code, stderr)
	}
}

// TestUserEnvModule trains a user's own Box env end to end, as
// `PYTHONPATH=DIR trainer --env module:EnvId --max-episodes 48` does: the
// trainer's local bridge is allowed the module (--env-module), imports it,
// and trains PointMass-v0 of bridge_py/tests/user_envs.py on the fallback
// settings. PYTHONPATH is relative, as a user would give it. A running
// bridge not started with --env-module refuses the id in one line that says
// how to allow it, and a discrete action space is refused in one line.
func TestUserEnvModule(t *testing.T) {
	t.Setenv("PYTHONPATH", filepath.Join("..", "..", "bridge_py", "tests"))
	out := t.TempDir()
	code, stdout, stderr := trainer(t, "--env", "user_envs:PointMass-v0", "--max-episodes", "48", "--workers", "2", "--out", out, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	dir := filepath.Join(out, "user_envs_PointMass-v0", "stp-combined", "seed1")
	res := readResult(t, dir)
	if res.Episodes != 48 || !strings.Contains(stdout, `"episodes":48`) || res.BestEval >= 0 {
		t.Errorf("result %+v\n%s", res, stdout)
	}
	if meta, err := rundir.ReadMeta(dir); err != nil || meta.Env != "user_envs:PointMass-v0" {
		t.Errorf("run.json's env: %+v, %v", meta.Env, err)
	}
	_ = filepath.WalkDir(out, func(path string, _ os.DirEntry, _ error) error {
		if strings.Contains(path, ":") {
			t.Errorf("a run's path holds ':': %s", path)
		}
		return nil
	})
	// A run a build before safe names wrote, in runs/user_envs:PointMass-v0/,
	// still resumes where it is.
	legacy := filepath.Join(out, "user_envs:PointMass-v0", "stp-combined", "seed1")
	if err := os.MkdirAll(filepath.Dir(legacy), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, legacy); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = trainer(t, "--env", "user_envs:PointMass-v0", "--max-episodes", "96", "--workers", "2", "--out", out, "--resume", "--log-level", "warn")
	if res := readResult(t, legacy); code != 0 || res.Episodes != 96 {
		t.Errorf("resume of a run at its old path: exit %d, %d episodes\n%s", code, res.Episodes, stderr)
	}
	if rundir.Exists(dir) {
		t.Errorf("the resume started a new run at %s beside the old one", dir)
	}
	code, _, stderr = trainer(t, "--env", "user_envs:PointMass-v0", "--bridge", bridgeAddr, "--out", t.TempDir())
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != exitUsage || len(lines) != 1 || !strings.Contains(stderr, "--env-module user_envs") {
		t.Errorf("a bridge without --env-module: exit %d\n%s", code, stderr)
	}
	code, _, stderr = trainer(t, "--env", "user_envs:Coin-v0", "--workers", "1", "--out", t.TempDir(), "--log-level", "error")
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code == 0 || len(lines) != 1 || !strings.Contains(stderr, "Discrete(2) is not a flat Box") {
		t.Errorf("a discrete action space: exit %d\n%s", code, stderr)
	}
}

// TestEvalPerEpisode: --per-episode prints one JSON line per episode
// (index, reset seed, return, length, end flags) before the summary, whose
// mean and std are those of the episodes' returns; the episodes are those
// of a plain eval with the same seed.
func TestEvalPerEpisode(t *testing.T) {
	run := t.TempDir()
	l, err := policy.NewLinear(2, 8, false)
	if err != nil {
		t.Fatal(err)
	}
	l.W[0], l.W[5] = 0.3, -0.2
	n, _ := policy.NewNormalizer(8)
	b, err := policy.Marshal(policy.File{EnvID: "Swimmer-v1", Policy: l, Normalizer: n})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, rundir.BestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"eval", "--policy", run, "--episodes", "3", "--horizon", "30", "--seed", "7", "--bridge", bridgeAddr, "--log-level", "warn"}
	code, stdout, stderr := trainer(t, append(args, "--per-episode")...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 4 {
		t.Fatalf("exit %d, %d lines\n%s\n%s", code, len(lines), stdout, stderr)
	}
	var sum, sumSq float64
	seeds := map[uint64]bool{}
	for i, line := range lines[:3] {
		var e episodeLine
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Episode != i || e.Length != 30 || !e.Truncated || e.Return == 0 {
			t.Errorf("episode line %d: %q (%v)", i, line, err)
		}
		seeds[e.Seed] = true
		sum += e.Return
		sumSq += e.Return * e.Return
	}
	var summary struct{ Mean, Std float64 }
	if err := json.Unmarshal([]byte(lines[3]), &summary); err != nil || len(seeds) != 3 {
		t.Fatalf("summary %q: %v; seeds %v", lines[3], err, seeds)
	}
	mean := sum / 3
	if math.Abs(summary.Mean-mean) > 1e-9 || math.Abs(summary.Std-math.Sqrt(math.Max(sumSq/3-mean*mean, 0))) > 1e-9 {
		t.Errorf("summary %+v, episodes' mean %v", summary, mean)
	}
	if _, plain, _ := trainer(t, args...); strings.TrimSpace(plain) != lines[3] {
		t.Errorf("a plain eval printed %q, want %q", plain, lines[3])
	}
}

// TestHintsNameThePathRun: the end-of-run hint names the trainer as it was
// run (bin/trainer), not a bare "trainer" that may not be on PATH; the
// guard's line gives the evaluation it acted on and the level, not a
// sentence that reads as false.
func TestHintsNameThePathRun(t *testing.T) {
	var log strings.Builder
	summarize(zerolog.New(&log), io.Discard, train.Config{Label: "STP"}, rundir.Result{}, "runs/x/seed1")
	if !strings.Contains(log.String(), "plot it with: "+os.Args[0]+" plot runs/x/seed1 -o runs/x/seed1/curve.png") ||
		!strings.Contains(log.String(), "eval --policy runs/x/seed1") {
		t.Errorf("summary: %s", log.String())
	}
	msg := guardMessage(train.Guard{On: true}, rundir.Point{GuardEval: 120.5, EvalMean: 164.5, BackedOff: true}, 141.5, true)
	for _, want := range []string{"final evaluation, 120.5", "below the initial evaluation 141.5", "afresh gives 164.5"} {
		if !strings.Contains(msg, want) {
			t.Errorf("guard message %q lacks %q", msg, want)
		}
	}
	if msg := guardMessage(train.Guard{On: true, Drop: 0.5}, rundir.Point{GuardEval: 60, EvalMean: 130}, 141.5, true); !strings.Contains(msg, "below 70.8, the initial evaluation 141.5 less 0.5 of its size") {
		t.Errorf("guard message %q", msg)
	}
}

// TestETATowardTheThreshold: the ETA is to the budget; a run that stops
// at its threshold also gets an ETA to it when its best evaluation's
// recent climb reaches it within the budget, "not at this rate" when the
// climb reaches it only past the budget or is flat (issue 53: 146 of 3120
// gave "~4s to the threshold", capped by the budget), and "at the next
// evaluation" when the climb says it is already due (not "~0s").
func TestETATowardTheThreshold(t *testing.T) {
	evals := []evalAt{{0, 50}, {100, 100}, {300, 150}, {500, 200}}
	// The window's climb: 150 over 500 episodes, 0.3 an episode; 100 to
	// go from 200 at episode 500: episode 833, 313 from now (520) at 10 a
	// second.
	e := estimateETA(evals, 520, 4000, 10, 300, true)
	if e.outlook != outlookETA || e.threshold != 31*time.Second || e.budget != 348*time.Second ||
		e.thresholdText() != "threshold ~31s" || e.budgetText() != "ETA 5m48s" {
		t.Errorf("climbing: %+v %q", e, e.thresholdText())
	}
	// The same climb with a budget of 600 episodes: past the budget.
	if e := estimateETA(evals, 520, 600, 10, 300, true); e.outlook != outlookNotAtRate || e.thresholdText() != "threshold: not at this rate" || e.budget != 8*time.Second {
		t.Errorf("past the budget: %+v %q", e, e.thresholdText())
	}
	// 146 of 3120 after a climb of 96 over 400 episodes: 12000 episodes away.
	if e := estimateETA([]evalAt{{0, 50}, {400, 146}}, 420, 4000, 10, 3120, true); e.outlook != outlookNotAtRate {
		t.Errorf("146 of 3120: %+v", e)
	}
	// Due at episode 833 by the climb, now at 900 with no evaluation since.
	if e := estimateETA(evals, 900, 4000, 10, 300, true); e.outlook != outlookNextEval || e.thresholdValue() != "at the next evaluation" {
		t.Errorf("already due: %+v", e)
	}
	if e := estimateETA([]evalAt{{0, 50}, {100, 50}}, 120, 4000, 10, 300, true); e.outlook != outlookNotAtRate {
		t.Errorf("flat: %+v", e)
	}
	for _, e := range []etaEstimate{
		estimateETA(evals, 520, 4000, 10, 300, false),                        // --continue-after-threshold
		estimateETA([]evalAt{{0, 50}}, 120, 4000, 10, 300, true),             // one evaluation
		estimateETA([]evalAt{{0, 50}, {100, 400}}, 120, 4000, 10, 300, true), // reached
	} {
		if e.outlook != outlookNone || !e.hasBudget || e.thresholdText() != "" {
			t.Errorf("%+v %q", e, e.thresholdText())
		}
	}
	if e := estimateETA(evals, 520, 4000, 0, 300, true); e.budgetText() != "ETA ?" || e.thresholdText() != "" {
		t.Errorf("no speed: %q", e.budgetText())
	}
}

// TestReadmeSaysPerEnvFiles: the README's plot --success example says
// that runs of several envs give a file per env (the -o name with -<env>
// inserted), which is what plot writes; its examples write into runs/, not
// the repository root.
func TestReadmeSaysPerEnvFiles(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "bin/trainer plot --success") {
			line = l
		}
		if strings.HasPrefix(l, "bin/trainer ") && regexp.MustCompile(`-o [a-z]+\.(gif|mp4|png)`).MatchString(l) {
			t.Errorf("a README example writes into the repository root: %s", l)
		}
	}
	if !strings.Contains(line, "-o runs/success.png") || !strings.Contains(line, "runs/success-<env>.png") {
		t.Errorf("README's plot --success line: %q", line)
	}
	if got := report.EnvFileName("success.png", "Hopper-v1"); got != "success-Hopper-v1.png" {
		t.Errorf("plot writes %s", got)
	}
}
