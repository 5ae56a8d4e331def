package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/policy"
	"github.com/stpis/stpis/rundir"
	"github.com/stpis/stpis/train/loop"
)

// runEval is `trainer eval --policy FILE|RUN --episodes 100`. It prints one
// line: a sentence on a terminal, one JSON object off it.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var bf bridgeFlags
	fs := newFlagSet("trainer eval")
	bf.register(fs)
	path := fs.String("policy", "", "a policy file (policy.json, best_policy.json) or a run directory (its best policy)")
	episodes := fs.Int("episodes", 100, "evaluation episodes")
	seed := fs.Uint64("seed", 0, "seed of the evaluation episodes")
	horizon := fs.Int("horizon", 0, "maximum episode length (0: the env's)")
	perEpisode := fs.Bool("per-episode", false, "also print one JSON line per episode, before the summary: its index, reset seed, return, length and whether it terminated or was truncated")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	switch {
	case *path == "":
		return usageError{errors.New("flag --policy is required")}
	case *episodes < 1 || *episodes > 100000:
		return usageError{fmt.Errorf("invalid value %d for flag --episodes: want 1..100000", *episodes)}
	case *horizon < 0:
		return usageError{fmt.Errorf("invalid value %d for flag --horizon: want ≥ 0", *horizon)}
	}
	if err := bf.check(); err != nil {
		return usageError{err}
	}
	log, err := newLogger(stderr, bf.logLevel)
	if err != nil {
		return err
	}
	file, p, err := policyFile(*path)
	if err != nil {
		return err
	}
	bf.envModules = envModule(p.EnvID)
	client, closeBridge, err := connect(ctx, bf, log)
	if err != nil {
		return err
	}
	defer closeBridge()
	info, err := describe(ctx, client, p.EnvID, nil)
	var ue usageError
	if errors.As(err, &ue) {
		// The env comes from the file: an env the bridge does not know is
		// a bad file (exit 1), not a bad command line.
		return fmt.Errorf("%s names an env the bridge cannot make: %w", file, ue.err)
	}
	if err != nil {
		return err
	}
	if err := info.Check(-1, &envclient.EpisodeSpec{Rows: p.Policy.Rows, Cols: p.Policy.Cols, Horizon: *horizon}); err != nil {
		var se *envclient.SpecError
		if errors.As(err, &se) && se.Field == "Horizon" {
			// --horizon beyond the env's episodes: a bad command line.
			return usageError{fmt.Errorf("invalid value %d for flag -horizon: %s", *horizon, se.Reason)}
		}
		// The file does not fit the env it names: a bad file, not a bad
		// command line.
		return fmt.Errorf("%s does not fit the env it was trained on, %s: %w", file, info.ResolvedID, err)
	}
	res, err := loop.EvaluateEpisodes(ctx, client, p, *episodes, *seed, *horizon, nil)
	if err != nil {
		return err
	}
	if *perEpisode {
		if err := writeEpisodes(stdout, res, *seed); err != nil {
			return err
		}
	}
	mean, std := loop.ReturnStats(res)
	r := evalResult{Policy: file, Env: p.EnvID, Resolved: info.ResolvedID, Episodes: *episodes, Seed: *seed, Mean: mean, Std: std}
	return r.write(stdout, isTerminal(stdout))
}

// episodeLine is one line of `trainer eval --per-episode`.
type episodeLine struct {
	Episode    int     `json:"episode"`
	Seed       uint64  `json:"seed"`
	Return     float64 `json:"return"`
	Length     int     `json:"length"`
	Terminated bool    `json:"terminated"`
	Truncated  bool    `json:"truncated"`
}

// writeEpisodes prints one JSON object per episode (JSON lines).
func writeEpisodes(w io.Writer, res []envclient.EpisodeResult, seed uint64) error {
	for j, e := range res {
		b, err := json.Marshal(episodeLine{Episode: j, Seed: loop.EvalEpisodeSeed(seed, j), Return: e.Return, Length: e.Length, Terminated: e.Terminated, Truncated: e.Truncated})
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return fmt.Errorf("eval: write episode %d: %w", j, err)
		}
	}
	return nil
}

// evalResult is what `trainer eval` reports.
type evalResult struct {
	Policy   string
	Env      string // as the policy file records it (Hopper-v1)
	Resolved string // the gymnasium id the bridge made (Hopper-v5)
	Episodes int
	Seed     uint64
	Mean     float64
	Std      float64
}

// write prints one line: a sentence on a terminal, else one JSON object with
// the keys env, episodes, mean, policy and std, for scripts.
func (r evalResult) write(w io.Writer, terminal bool) error {
	var line string
	if terminal {
		env := r.Env
		if r.Resolved != "" && r.Resolved != r.Env {
			env += " (gymnasium " + r.Resolved + ")"
		}
		line = fmt.Sprintf("%s: mean return %.1f ± %.1f (std) over %d episodes (seed %d) on %s", r.Policy, r.Mean, r.Std, r.Episodes, r.Seed, env)
	} else {
		b, err := json.Marshal(map[string]any{"policy": r.Policy, "env": r.Env, "episodes": r.Episodes, "mean": r.Mean, "std": r.Std})
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		line = string(b)
	}
	if _, err := fmt.Fprintln(w, line); err != nil {
		return fmt.Errorf("eval: write the result: %w", err)
	}
	return nil
}

// policyFile resolves eval's and render's --policy: a file, or a run directory's
// best policy (its last one before any best), read once to check it. A
// path that is not there is a usage error.
func policyFile(path string) (string, policy.File, error) {
	file := path
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		file = filepath.Join(file, rundir.BestFile)
		if _, err := os.Stat(file); err != nil {
			file = filepath.Join(path, rundir.PolicyFile)
		}
	}
	if _, err := os.Stat(file); err != nil {
		return "", policy.File{}, usageError{fmt.Errorf("flag --policy: %w", err)}
	}
	// A file that is there but does not load is a bad file, not a bad
	// command line: exit 1.
	p, err := policy.Load(file)
	if errors.Is(err, policy.ErrNotPolicy) {
		give := "a run directory"
		if dir := filepath.Dir(file); rundir.Exists(dir) {
			give = "the run directory " + dir
		}
		return file, p, fmt.Errorf("flag --policy: %s is not a policy file: give %s, or its %s or %s", file, give, rundir.PolicyFile, rundir.BestFile)
	}
	if err != nil {
		return file, p, err
	}
	return file, p, ofRun(file, p)
}

// ofRun refuses a policy file in a run directory (beside a run.json) that
// another run wrote: a run of this version names itself in its policies.
func ofRun(file string, p policy.File) error {
	dir := filepath.Dir(file)
	if !rundir.Exists(dir) {
		return nil
	}
	meta, err := rundir.ReadMeta(dir)
	if err != nil {
		return err
	}
	if p.RunID != meta.RunID || (meta.Version != 0 && p.Seed != meta.Seed) {
		return fmt.Errorf("%s: field run_id: run %q, seed %d, but %s is run %q, seed %d: a policy of another run",
			file, p.RunID, p.Seed, filepath.Join(dir, rundir.MetaFile), meta.RunID, meta.Seed)
	}
	return nil
}
