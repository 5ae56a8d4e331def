package policy

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzLoad gives Load (trainer eval's reader of policy.json and
// best_policy.json) arbitrary bytes: it answers with an error or a policy
// that its readers can use (its parameters, its normalization, both export
// formats), and that writes back to the same file; never a panic or hang.
// It runs its seeds in a plain `go test`; `make fuzz` fuzzes it.
func FuzzLoad(f *testing.F) {
	l, err := NewLinear(2, 3, false)
	if err != nil {
		f.Fatal(err)
	}
	copy(l.W, []float64{0.5, -1, 2e-3, 1e300, -0, 7})
	n, err := NewNormalizer(3)
	if err != nil {
		f.Fatal(err)
	}
	if err := n.Merge(5, []float64{1, 2, 3}, []float64{0.5, 0, 9}); err != nil {
		f.Fatal(err)
	}
	good, err := Marshal(File{EnvID: "Hopper-v5", Policy: l, Normalizer: n})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	for _, s := range []string{
		`{"version":1,"env_id":"Hopper-v5","policy":{"rows":1,"cols":1,"w":[1],"bias":[0.5]},"normalizer":{"count":1,"mean":[2],"m2":[0]}}`,
		`{"version":1,"policy":{"rows":1,"cols":2,"w":[1,2]},"normalizer":{"count":3,"mean":[0,0],"m2":[-1,0]}}`,
		`{"version":1,"policy":{"rows":1,"cols":1,"w":[1],"bias":[1,2]},"normalizer":{"mean":[0],"m2":[0]}}`,
		`{"version":1,"policy":{"rows":0,"cols":0,"w":[]},"normalizer":{"mean":[],"m2":[]}}`,
		`{"version":1,"policy":{"rows":-1,"cols":-1,"w":[1]},"normalizer":{"mean":[0],"m2":[0]}}`,
		`{"version":1,"policy":{"rows":1,"cols":1,"w":[1]},"normalizer":{"mean":[0],"m2":[]}}`,
		`{"version":1,"policy":{"rows":1,"cols":1,"w":[1e400]},"normalizer":{"mean":[0],"m2":[0]}}`,
		`{"version":2}`, `{"version":1,"policy":null,"normalizer":null}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	path := filepath.Join(f.TempDir(), "policy.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			use(t, path)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("no answer after 10s: a hang on this input")
		}
	})
}

// use loads path and does with the policy what its readers do. It runs
// off the test's goroutine: it reports with t.Error, never t.Fatal.
func use(t *testing.T, path string) {
	f, err := Load(path)
	if err != nil {
		return
	}
	p := f.Policy
	x := p.Params()
	if len(x) != p.Dim() {
		t.Errorf("Params has %d entries, Dim %d", len(x), p.Dim())
	}
	if err := p.SetParams(x); err != nil {
		t.Errorf("SetParams(Params()): %v", err)
	}
	w, bias := p.Split(x)
	if len(w) != len(p.W) || len(bias) != len(p.Bias) {
		t.Errorf("Split: %d and %d entries, want %d and %d", len(w), len(bias), len(p.W), len(p.Bias))
	}
	fr := f.Normalizer.Snapshot()
	if len(fr.Mean) != p.Cols || len(fr.Std) != p.Cols {
		t.Errorf("the normalization has %d and %d entries, the policy %d columns", len(fr.Mean), len(fr.Std), p.Cols)
	}
	// (A negative m2 loads and gives a NaN std: eval then reports it,
	// not naming the file's field; issue 34, item 7.)
	_, _ = MarshalARS(p, fr)
	b, err := Marshal(f)
	if err != nil {
		t.Errorf("a policy that loads does not write: %v", err)
		return
	}
	again := filepath.Join(filepath.Dir(path), "again.json")
	if err := os.WriteFile(again, b, 0o644); err != nil {
		t.Error(err)
		return
	}
	back, err := Load(again)
	if err != nil {
		t.Errorf("a policy that loads writes %s, which does not load: %v", b, err)
		return
	}
	if b2, err := Marshal(back); err != nil || string(b2) != string(b) {
		t.Errorf("round trip changed the policy (%v):\n%s\n%s", err, b, b2)
	}
}
