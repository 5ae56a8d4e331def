package policy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadSaysNotAPolicy: a run's other files (JSON lines, an object
// without a policy's keys) are "not a policy file"; a policy file cut
// short is refused for what it is, not as another kind of file.
func TestLoadSaysNotAPolicy(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"curve.jsonl": "{\"iter\":0}\n{\"iter\":1}\n",
		"one.jsonl":   "{\"iter\":0}\n",
		"run.json":    `{"version":3,"env":"Hopper-v1"}`,
		"null.json":   "null",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); !errors.Is(err, ErrNotPolicy) {
			t.Errorf("%s: %v, want ErrNotPolicy", name, err)
		}
	}
	cut := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(cut, []byte(`{"version":2,"env_id":"Hopper-v1","policy":{"rows":3`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(cut); err == nil || errors.Is(err, ErrNotPolicy) {
		t.Errorf("a policy file cut short: %v", err)
	}
}
