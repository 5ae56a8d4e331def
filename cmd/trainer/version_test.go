package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionNamesTheCommit: `trainer version` names the commit and a
// dirty tree from Go's build information, else from what make build
// passed, and else says how to get one (issue 53: "commit unknown" from
// make build in a git checkout).
func TestVersionNamesTheCommit(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/stpis/stpis", Version: "(devel)"}, GoVersion: "go1.26.8",
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		bi     *debug.BuildInfo
		ok     bool
		commit string
		dirty  bool
		want   string
	}{
		{bi, true, "", false, "commit abc123+dirty go1.26.8"},
		{bi, true, "def456", false, "commit abc123+dirty"}, // Go's stamp wins
		{&debug.BuildInfo{Main: bi.Main, GoVersion: "go1.26.8"}, true, "def456", false, "commit def456 go1.26.8"},
		{&debug.BuildInfo{Main: bi.Main, GoVersion: "go1.26.8"}, true, "def456", true, "commit def456+dirty"},
		{&debug.BuildInfo{Main: bi.Main, GoVersion: "go1.26.8"}, true, "", false, "commit unknown (built without version control information: make build"},
		{nil, false, "", false, "commit unknown"},
	} {
		if got := versionOf(c.bi, c.ok, c.commit, c.dirty); !strings.Contains(got, c.want) || !strings.HasPrefix(got, "trainer github.com/stpis/stpis ") {
			t.Errorf("versionOf(%v, %q, %v) = %q, want %q in it", c.ok, c.commit, c.dirty, got, c.want)
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var build string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "$(GO) build") && strings.Contains(l, "./cmd/...") {
			build = l
		}
	}
	for _, want := range []string{"-buildvcs=auto", "-X main.buildCommit=$(VCS_COMMIT)", "-X main.buildDirty=$(VCS_DIRTY)"} {
		if !strings.Contains(build, want) {
			t.Errorf("make build's line %q lacks %q", build, want)
		}
	}
}
