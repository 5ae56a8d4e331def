package rundir

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvDirIsSafe: a run's directory names its env without ':' (which
// breaks PATH-style lists, scp and Windows) or '/', and a paper or
// gymnasium id as it is.
func TestEnvDirIsSafe(t *testing.T) {
	for env, want := range map[string]string{
		"Hopper-v1":               "Hopper-v1",
		"Hopper-v5":               "Hopper-v5",
		"user_envs:PointMass-v0":  "user_envs_PointMass-v0",
		"mypkg.envs:PointMass-v0": "mypkg.envs_PointMass-v0",
		"ns/Cart Pole-v0":         "ns_Cart_Pole-v0",
		"..":                      "unknown",
		"":                        "unknown",
	} {
		if got := EnvDir(env); got != want {
			t.Errorf("EnvDir(%q) = %q, want %q", env, got, want)
		}
	}
	p := Path("runs", "user_envs:PointMass-v0", "stp-combined", 1)
	if strings.Contains(p, ":") || p != filepath.Join("runs", "user_envs_PointMass-v0", "stp-combined", "seed1") {
		t.Errorf("Path: %s", p)
	}
	if l := LegacyPath("runs", "user_envs:PointMass-v0", "stp-combined", 1); l != filepath.Join("runs", "user_envs:PointMass-v0", "stp-combined", "seed1") {
		t.Errorf("LegacyPath: %s", l)
	}
}
