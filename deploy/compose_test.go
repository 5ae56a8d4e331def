package deploy

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// loadCompose loads ../docker-compose.yml with the compose-spec loader, the
// one docker compose itself uses, with full validation.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root),
		cli.WithEnv([]string{}),
		cli.WithInterpolation(true),
		cli.WithConsistency(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(ctx)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return p
}

func TestComposeServices(t *testing.T) {
	p := loadCompose(t)
	if p.Name != "stpis" {
		t.Errorf("project name %q, want stpis", p.Name)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range p.Services {
			if !yield(n) {
				return
			}
		}
	})
	if !slices.Equal(names, []string{"bridge", "trainer"}) {
		t.Fatalf("services %v, want [bridge trainer]", names)
	}
}

func TestComposeBridgeScalesAndIsHealthChecked(t *testing.T) {
	p := loadCompose(t)
	b := p.Services["bridge"]
	if b.Build == nil || b.Build.Dockerfile != "Dockerfile" || !strings.HasSuffix(b.Build.Context, "bridge_py") {
		t.Errorf("bridge build = %+v, want bridge_py/Dockerfile", b.Build)
	}
	if _, err := os.Stat(filepath.Join(b.Build.Context, b.Build.Dockerfile)); err != nil {
		t.Errorf("bridge Dockerfile: %v", err)
	}
	// --scale bridge=N needs no fixed container name and no host port.
	if b.ContainerName != "" {
		t.Errorf("bridge has container_name %q: it could not scale", b.ContainerName)
	}
	if len(b.Ports) != 0 {
		t.Errorf("bridge publishes host ports %v: replicas would collide", b.Ports)
	}
	hc := b.HealthCheck
	if hc == nil || len(hc.Test) < 2 || hc.Test[0] != "CMD" {
		t.Fatalf("bridge health check = %+v, want a CMD test", hc)
	}
	if !slices.Contains(hc.Test, "stpis_bridge.healthcheck") {
		t.Errorf("bridge health check %v does not use the gRPC health probe", hc.Test)
	}
	if hc.Interval == nil || hc.Retries == nil || *hc.Retries < 3 {
		t.Errorf("bridge health check interval/retries unset: %+v", hc)
	}
	cmd := strings.Join(b.Command, " ")
	if !strings.Contains(cmd, "--listen 0.0.0.0:50051") {
		t.Errorf("bridge command %q must listen on all interfaces inside its container", cmd)
	}
	if !strings.Contains(cmd, "--workers 2") {
		t.Errorf("bridge command %q: BRIDGE_WORKERS default not interpolated to 2", cmd)
	}
	if !strings.Contains(cmd, "--no-reflection") {
		t.Errorf("bridge command %q serves reflection", cmd)
	}
	if _, err := os.Stat(filepath.Join(b.Build.Context, "stpis_bridge", "healthcheck.py")); err != nil {
		t.Errorf("the health check module the compose file calls is missing: %v", err)
	}
}

func TestComposeTrainerWaitsForHealthyBridgeAndWritesRuns(t *testing.T) {
	p := loadCompose(t)
	tr := p.Services["trainer"]
	dep, ok := tr.DependsOn["bridge"]
	if !ok || dep.Condition != types.ServiceConditionHealthy {
		t.Fatalf("trainer depends_on = %+v, want bridge: service_healthy", tr.DependsOn)
	}
	if tr.Build == nil || tr.Build.Dockerfile != "cmd/trainer/Dockerfile" {
		t.Errorf("trainer build = %+v, want cmd/trainer/Dockerfile", tr.Build)
	}
	df, err := os.ReadFile(filepath.Join(tr.Build.Context, tr.Build.Dockerfile))
	if err != nil {
		t.Fatal(err)
	}
	stages := 0
	for _, line := range strings.Split(string(df), "\n") {
		if strings.HasPrefix(line, "FROM ") {
			stages++
		}
	}
	if stages < 2 {
		t.Errorf("trainer Dockerfile is not multi-stage:\n%s", df)
	}
	if tr.Restart != "on-failure:5" {
		t.Errorf("trainer restart = %q, want on-failure:5 (it resumes with --resume)", tr.Restart)
	}
	args := strings.Join(tr.Command, " ")
	for _, want := range []string{"--env=Hopper-v1", "--bridge=dns:///bridge:50051", "--out=/runs", "--resume"} {
		if !strings.Contains(args, want) {
			t.Errorf("trainer command %q lacks %q", args, want)
		}
	}
	var runs *types.ServiceVolumeConfig
	for i, v := range tr.Volumes {
		if v.Target == "/runs" {
			runs = &tr.Volumes[i]
		}
	}
	if runs == nil {
		t.Fatalf("trainer volumes %+v: nothing mounted at /runs", tr.Volumes)
	}
	if runs.Type != types.VolumeTypeBind || !strings.HasSuffix(runs.Source, "runs") {
		t.Errorf("runs volume = %+v, want a bind of ./runs", runs)
	}
}

// TestComposeNetworkIsInternal: the plaintext bridge is reachable only from
// the trainer, over a network with no port published and no route out.
func TestComposeNetworkIsInternal(t *testing.T) {
	p := loadCompose(t)
	for _, name := range []string{"bridge", "trainer"} {
		s := p.Services[name]
		if len(s.Ports) != 0 {
			t.Errorf("%s publishes ports %v", name, s.Ports)
		}
		if _, ok := s.Networks["stpis"]; !ok || len(s.Networks) != 1 {
			t.Errorf("%s networks = %v, want only stpis", name, s.Networks)
		}
	}
	n, ok := p.Networks["stpis"]
	if !ok || !n.Internal {
		t.Errorf("network stpis = %+v, want internal: true", n)
	}
}

// finalUser returns the user of a Dockerfile's final stage: the last USER
// instruction after the last FROM ("" when there is none, that is root).
func finalUser(t *testing.T, dockerfile string) string {
	t.Helper()
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case strings.EqualFold(f[0], "FROM"):
			user = ""
		case strings.EqualFold(f[0], "USER") && len(f) > 1:
			user = f[1]
		}
	}
	return user
}

// isRoot says whether a USER or compose user value (name or uid, with an
// optional group) is root.
func isRoot(user string) bool {
	u, _, _ := strings.Cut(user, ":")
	return u == "" || u == "root" || strings.TrimLeft(u, "0") == ""
}

// TestImagesRunAsNonRoot: both images end on a USER that is not root, and
// compose does not set root back.
func TestImagesRunAsNonRoot(t *testing.T) {
	p := loadCompose(t)
	for _, name := range []string{"bridge", "trainer"} {
		s := p.Services[name]
		if s.Build == nil {
			t.Fatalf("%s has no build", name)
		}
		df := filepath.Join(s.Build.Context, s.Build.Dockerfile)
		if u := finalUser(t, df); isRoot(u) {
			t.Errorf("%s: the final stage runs as %q: want a USER that is not root", df, u)
		}
		if s.User != "" && isRoot(s.User) {
			t.Errorf("compose runs %s as user %q", name, s.User)
		}
	}
	// The trainer runs as the host user (STPIS_UID:STPIS_GID), so the run
	// files in ./runs are the host user's.
	if u := p.Services["trainer"].User; u != "1000:1000" {
		t.Errorf("trainer user = %q, want STPIS_UID:STPIS_GID interpolated to 1000:1000 by default", u)
	}
	for _, u := range []string{"", "root", "0", "00:1000", "root:root", "0:0"} {
		if !isRoot(u) {
			t.Errorf("isRoot(%q) = false", u)
		}
	}
	for _, u := range []string{"65532:65532", "10001", "bridge", "1000:0"} {
		if isRoot(u) {
			t.Errorf("isRoot(%q) = true", u)
		}
	}
}

// TestComposeEndsWithTheTrainer: the bridge does not restart after a clean
// stop, so `docker compose up --exit-code-from trainer` (which the compose
// file and the README document) ends when training ends.
func TestComposeEndsWithTheTrainer(t *testing.T) {
	p := loadCompose(t)
	if r := p.Services["bridge"].Restart; r == types.RestartPolicyUnlessStopped || r == types.RestartPolicyAlways {
		t.Errorf("bridge restart = %q: compose would keep it up after training", r)
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	compose, err := os.ReadFile(filepath.Join("..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"docker compose up --exit-code-from trainer",
		"docker compose run --rm --no-deps trainer plot /runs/",
		"docker compose run --rm trainer eval --bridge dns:///bridge:50051 --policy /runs/",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not say %q", want)
		}
		if !strings.Contains(string(compose), want) {
			t.Errorf("docker-compose.yml's header does not say %q", want)
		}
	}
}

// dockerignored says whether .dockerignore's patterns exclude path (slash
// separated, relative to the build context). It follows Docker's rules for
// what the file uses: a leading / is dropped, a pattern matches a path or
// any of its parent directories, a leading **/ matches any depth, and a
// later !pattern re-includes.
func dockerignored(patterns []string, file string) bool {
	parts := strings.Split(file, "/")
	excluded := false
	for _, pat := range patterns {
		neg := strings.HasPrefix(pat, "!")
		pat = strings.Trim(strings.TrimPrefix(pat, "!"), "/")
		anyDepth := strings.HasPrefix(pat, "**/")
		pat = strings.TrimPrefix(pat, "**/")
		n := strings.Count(pat, "/") + 1
		for start := 0; start+n <= len(parts); start++ {
			if start > 0 && !anyDepth {
				break
			}
			if ok, _ := path.Match(pat, strings.Join(parts[start:start+n], "/")); ok {
				excluded = !neg
				break
			}
		}
	}
	return excluded
}

// TestDockerignore: the trainer's build context (the repository root) leaves
// out the venv, builds, runs, results, git and caches, and keeps every Go
// source the build needs.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", ".dockerignore"))
	if err != nil {
		t.Fatalf("no .dockerignore at the repository root: %v", err)
	}
	var patterns []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	for _, file := range []string{
		".venv/bin/python", ".venv", "bin/trainer", "runs/Hopper-v1/stp-combined-guided/seed1/run.json",
		"results/rl/Hopper.png", ".git/HEAD", "bridge_py/stpis_bridge/__pycache__/envs.cpython-311.pyc",
		".pytest_cache/v/cache", "bridge_py/.ruff_cache/x", "bridge_py/.mypy_cache/x", "out/convex/x.png",
	} {
		if !dockerignored(patterns, file) {
			t.Errorf(".dockerignore keeps %s in the build context", file)
		}
	}
	kept := []string{"go.mod", "go.sum", "train/presets.yaml", "cmd/trainer/Dockerfile"}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && slices.Contains([]string{".git", ".venv", "runs", "results", "bin", "out"}, rel) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(rel, ".go") {
			kept = append(kept, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range kept {
		if dockerignored(patterns, file) {
			t.Errorf(".dockerignore leaves %s out of the build context: the trainer's build needs it", file)
		}
	}
	// The matcher itself, on the rules above.
	for _, c := range []struct {
		pats []string
		file string
		want bool
	}{
		{[]string{"bin"}, "bin/x", true},
		{[]string{"bin"}, "cmd/bin/x", false},
		{[]string{"**/__pycache__"}, "a/b/__pycache__/c.pyc", true},
		{[]string{"/runs/"}, "runs/a", true},
		{[]string{"runs", "!runs/keep"}, "runs/keep/x", false},
		{[]string{"*.md"}, "README.md", true},
		{[]string{"*.md"}, "docs/a.md", false},
	} {
		if got := dockerignored(c.pats, c.file); got != c.want {
			t.Errorf("dockerignored(%v, %s) = %v, want %v", c.pats, c.file, got, c.want)
		}
	}
}
