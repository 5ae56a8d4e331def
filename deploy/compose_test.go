package deploy

import (
	"context"
	"os"
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
