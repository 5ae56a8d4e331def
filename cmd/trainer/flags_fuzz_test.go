package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stpis/stpis/internal/fuzzguard"
)

// The fuzz targets of this file feed the train command line and its
// --config file with arbitrary input: a bad one is a usageError (exit 2,
// one line), -h is flag.ErrHelp, and nothing panics or hangs. Each runs its
// seeds in a plain `go test` (this package's TestMain starts a bridge,
// which they do not use); `make fuzz` fuzzes them.

// wantUsage fails unless err is nil, flag.ErrHelp or a usageError.
func wantUsage(t *testing.T, what string, err error) {
	t.Helper()
	var ue usageError
	if err != nil && !errors.Is(err, flag.ErrHelp) && !errors.As(err, &ue) {
		t.Errorf("%s: %v (%T) is not a usageError", what, err, err)
	}
}

var configFileSeeds = []string{
	"env: Hopper-v1\nmethod: stp\nstep: combined\nk: 1\ndirections: 16\ntop: 8\nnoise: 0.03\nrate: 0.02\n",
	"# trainer train --config FILE runs with these settings; flags override them.\nenv: Swimmer-v1\npreset: tuned\nmethod: ars\ndirections: 1  # fixed: ARS runs at its task's published settings\n",
	"env: Hopper-v1\nrestart: 400x0.125\nguard: \"0.5\"\ncommon-seeds: pair\nthreshold: none\n",
	"env: Hopper-v1\nk: 1\nk: 2\n",
	"env: [Hopper-v1]\n",
	"? [a]\n: b\n",
	"- env\n- Hopper-v1\n",
	"env: &a Hopper-v1\nmethod: *a\n",
	"env: !!binary aGk=\n",
	"",
	"---\n---\n",
	"env: Hopper-v1\nmethod: stp_is\nsurrogate-steps: 1e9\nlipschitz: local\n",
	"env: Hopper-v1\nmax-episodes: 9223372036854775808\n",
	"env: \"Hopper-v1\"\nkwarg: x=1\n",
}

// FuzzReadConfigFile: a --config file of any content reads to a list of
// settings or to an error; the settings then configure a run or give a
// usageError.
func FuzzReadConfigFile(f *testing.F) {
	for _, s := range configFileSeeds {
		f.Add([]byte(s))
	}
	path := filepath.Join(f.TempDir(), "config.yaml")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		fuzzguard.Within(t, 10*time.Second, func() {
			settings, err := readConfigFile(path)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "--config") {
					t.Errorf("readConfigFile: %v does not name --config", err)
				}
				return
			}
			seen := map[string]bool{}
			for _, s := range settings {
				if seen[s.name] {
					t.Errorf("%s given twice, read without an error", s.name)
				}
				seen[s.name] = true
			}
			fl, err := parseTrainFlags([]string{"--config", path}, io.Discard)
			if err != nil {
				wantUsage(t, "parseTrainFlags", err)
				return
			}
			c, err := fl.config()
			wantUsage(t, "config", err)
			if err == nil && c.Validate() != nil {
				t.Errorf("config() returned an invalid config: %v", c.Validate())
			}
		})
	})
}

// fuzzArgs splits s into arguments at NUL bytes, and points every --config
// at the fuzzed file (a fuzzed path could name /dev/zero or a FIFO: the
// file's contents are FuzzReadConfigFile's and this target's input).
func fuzzArgs(s, config string) []string {
	if s == "" {
		return nil
	}
	args := strings.Split(s, "\x00")
	for i, a := range args {
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			continue
		}
		if hasValue {
			args[i] = "--config=" + config
		} else if i+1 < len(args) {
			args[i+1] = config
		}
	}
	return args
}

// FuzzTrainFlags: any train command line (arguments split at NUL) parses
// to flags whose config() is a valid, named run, or to a usageError; never
// a panic.
func FuzzTrainFlags(f *testing.F) {
	for _, s := range []string{
		"--env\x00Hopper-v1",
		"--env\x00Hopper-v1\x00--method\x00stp_is\x00--step\x00adaptive\x00--k\x00paper",
		"--env=Swimmer-v1\x00--method=ars\x00--directions\x004",
		"--env\x00Hopper-v1\x00--seed\x001-10\x00--restart\x00300x0.125\x00--threshold\x00none",
		"--env\x00Hopper-v1\x00--seed\x0010-1",
		"--env\x00Hopper-v1\x00--kwarg\x00reset_noise_scale=1e200\x00--kwarg\x00x=y\x00--kwarg\x00=1",
		"--env\x00Hopper-v1\x00--workers\x00-1\x00--bridge-timeout\x00-1s",
		"--env\x00Hopper-v1\x00--resume\x00--force",
		"--env\x00Hopper-v1\x00--noise\x00NaN\x00--rate\x00-Inf",
		"--config\x00x\x00--env\x00Ant-v1\x00--preset\x00paper",
		"-h",
		"--env\x00Hopper-v1\x00extra",
		"--stop-after\x00-1\x00--env\x00x",
		"--env\x00Hopper-v1\x00--log-level\x00loud\x00--common-seeds\x00pair\x00--guard\x000.5",
		"",
	} {
		f.Add(s, []byte(configFileSeeds[0]))
	}
	f.Add("--config\x00x", []byte(configFileSeeds[2]))
	path := filepath.Join(f.TempDir(), "config.yaml")
	f.Fuzz(func(t *testing.T, s string, file []byte) {
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		args := fuzzArgs(s, path)
		fuzzguard.Within(t, 10*time.Second, func() {
			fl, err := parseTrainFlags(args, io.Discard)
			if err != nil {
				wantUsage(t, "parseTrainFlags", err)
				return
			}
			c, err := fl.config()
			if err != nil {
				wantUsage(t, "config", err)
				return
			}
			if err := c.Validate(); err != nil || c.Name == "" || c.Label == "" {
				t.Errorf("config() returned an invalid or unnamed config (%v): %+v", err, c)
			}
			if fl.seeds < 1 || fl.seeds > 1000 {
				t.Errorf("%d seeds accepted", fl.seeds)
			}
		})
	})
}
