package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// manifest is the part of a Kubernetes object these tests look at.
type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec map[string]any `yaml:"spec"`
}

func loadManifests(t *testing.T) map[string]manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests under deploy/kubernetes: %v", err)
	}
	out := map[string]manifest{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var m manifest
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[m.Kind+"/"+m.Metadata.Name] = m
		}
	}
	return out
}

func TestKubernetesManifests(t *testing.T) {
	ms := loadManifests(t)
	if _, ok := ms["Deployment/stpis-bridge"]; !ok {
		t.Errorf("no bridge Deployment; have %v", keys(ms))
	}
	svc, ok := ms["Service/stpis-bridge"]
	if !ok {
		t.Fatalf("no bridge Service; have %v", keys(ms))
	}
	if svc.Spec["clusterIP"] != "None" {
		t.Errorf("bridge Service clusterIP = %v, want None (headless, so DNS lists every pod)", svc.Spec["clusterIP"])
	}
	job, ok := ms["Job/stpis-trainer-humanoid"]
	if !ok {
		t.Fatalf("no trainer Job; have %v", keys(ms))
	}
	b, _ := yaml.Marshal(job.Spec)
	if !strings.Contains(string(b), "--bridge=dns:///stpis-bridge:50051") {
		t.Errorf("trainer Job does not point at dns:/// of the bridge Service:\n%s", b)
	}
}

// TestKubernetesPodsRunAsNonRoot: both pods refuse root, and the trainer's
// group owns its runs volume (the image's user is not root).
func TestKubernetesPodsRunAsNonRoot(t *testing.T) {
	ms := loadManifests(t)
	for _, name := range []string{"Deployment/stpis-bridge", "Job/stpis-trainer-humanoid"} {
		m, ok := ms[name]
		if !ok {
			t.Fatalf("no %s; have %v", name, keys(ms))
		}
		tmpl, _ := m.Spec["template"].(map[string]any)
		spec, _ := tmpl["spec"].(map[string]any)
		sc, _ := spec["securityContext"].(map[string]any)
		if sc["runAsNonRoot"] != true {
			t.Errorf("%s: pod securityContext %v, want runAsNonRoot: true", name, sc)
		}
		if name == "Job/stpis-trainer-humanoid" && (sc["runAsUser"] != 65532 || sc["fsGroup"] != 65532) {
			t.Errorf("%s: pod securityContext %v, want runAsUser and fsGroup 65532 (the image's nonroot user)", name, sc)
		}
	}
}

func keys(m map[string]manifest) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

// TestKubernetesNetworkPolicy: only the trainer's pods reach the bridge, on
// its gRPC port; the bridge serves no reflection.
func TestKubernetesNetworkPolicy(t *testing.T) {
	ms := loadManifests(t)
	np, ok := ms["NetworkPolicy/stpis-bridge"]
	if !ok {
		t.Fatalf("no NetworkPolicy for the bridge; have %v", keys(ms))
	}
	b, _ := yaml.Marshal(np.Spec)
	var spec struct {
		PodSelector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"podSelector"`
		PolicyTypes []string `yaml:"policyTypes"`
		Ingress     []struct {
			From []struct {
				PodSelector struct {
					MatchLabels map[string]string `yaml:"matchLabels"`
				} `yaml:"podSelector"`
			} `yaml:"from"`
			Ports []struct {
				Port int `yaml:"port"`
			} `yaml:"ports"`
		} `yaml:"ingress"`
	}
	if err := yaml.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.PodSelector.MatchLabels["app"] != "stpis-bridge" || len(spec.PolicyTypes) != 1 || spec.PolicyTypes[0] != "Ingress" {
		t.Errorf("NetworkPolicy does not select the bridge's ingress: %s", b)
	}
	if len(spec.Ingress) != 1 || len(spec.Ingress[0].From) != 1 ||
		spec.Ingress[0].From[0].PodSelector.MatchLabels["app"] != "stpis-trainer" ||
		len(spec.Ingress[0].Ports) != 1 || spec.Ingress[0].Ports[0].Port != 50051 {
		t.Errorf("NetworkPolicy ingress is not trainer pods on 50051 only: %s", b)
	}
	job, _ := yaml.Marshal(ms["Job/stpis-trainer-humanoid"].Spec)
	if !strings.Contains(string(job), "app: stpis-trainer") {
		t.Errorf("the trainer Job's pods lack the label app: stpis-trainer that the policy admits:\n%s", job)
	}
	dep, _ := yaml.Marshal(ms["Deployment/stpis-bridge"].Spec)
	if !strings.Contains(string(dep), "--no-reflection") {
		t.Errorf("the bridge Deployment serves reflection:\n%s", dep)
	}
}
