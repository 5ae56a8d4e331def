package policy

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// direct computes count, mean and M2 of rows directly (two-pass).
func direct(rows [][]float64) (uint64, []float64, []float64) {
	d := len(rows[0])
	mean := make([]float64, d)
	for _, r := range rows {
		for j, v := range r {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(len(rows))
	}
	m2 := make([]float64, d)
	for _, r := range rows {
		for j, v := range r {
			m2[j] += (v - mean[j]) * (v - mean[j])
		}
	}
	return uint64(len(rows)), mean, m2
}

func TestNormalizerMergeMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const dim = 5
	var all [][]float64
	n, err := NewNormalizer(dim)
	if err != nil {
		t.Fatal(err)
	}
	// Episodes of varied lengths and scales, merged one by one.
	for ep := 0; ep < 40; ep++ {
		length := 1 + rng.IntN(200)
		var rows [][]float64
		for i := 0; i < length; i++ {
			r := make([]float64, dim)
			for j := range r {
				r[j] = float64(j+1)*10 + rng.NormFloat64()*float64(ep%7+1)
			}
			rows = append(rows, r)
		}
		all = append(all, rows...)
		c, m, m2 := direct(rows)
		if err := n.Merge(c, m, m2); err != nil {
			t.Fatal(err)
		}
	}
	c, m, m2 := direct(all)
	if n.Count != c {
		t.Fatalf("count %d, want %d", n.Count, c)
	}
	for j := 0; j < dim; j++ {
		if math.Abs(n.Mean[j]-m[j]) > 1e-12*math.Abs(m[j]) {
			t.Errorf("mean[%d] = %v, want %v", j, n.Mean[j], m[j])
		}
		if math.Abs(n.M2[j]-m2[j]) > 1e-9*m2[j] {
			t.Errorf("m2[%d] = %v, want %v", j, n.M2[j], m2[j])
		}
	}
	s := n.Snapshot()
	for j := 0; j < dim; j++ {
		want := math.Sqrt(m2[j] / float64(c-1))
		if math.Abs(s.Std[j]-want) > 1e-9*want {
			t.Errorf("std[%d] = %v, want %v", j, s.Std[j], want)
		}
	}
}

func TestNormalizerSnapshotIsFrozen(t *testing.T) {
	n, _ := NewNormalizer(2)
	s0 := n.Snapshot()
	if s0.Std[0] != 1 || s0.Mean[0] != 0 {
		t.Fatalf("empty normalizer snapshot = %+v, want mean 0 std 1", s0)
	}
	if err := n.Merge(3, []float64{1, 2}, []float64{2, 8}); err != nil {
		t.Fatal(err)
	}
	if s0.Mean[0] != 0 || s0.Std[1] != 1 {
		t.Fatal("snapshot changed after merge")
	}
	if err := n.Merge(1, []float64{1}, []float64{0, 0}); err == nil {
		t.Fatal("merge with wrong dimension: want error")
	}
	if err := n.Merge(1, []float64{math.NaN(), 0}, []float64{0, 0}); err == nil {
		t.Fatal("merge with NaN: want error")
	}
	if n.Count != 3 {
		t.Fatalf("rejected merges changed the count: %d", n.Count)
	}
}

func TestMarshalLoadRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	l, _ := NewLinear(3, 11, false)
	for i := range l.W {
		l.W[i] = rng.NormFloat64() / 3
	}
	n, _ := NewNormalizer(11)
	m := make([]float64, 11)
	m2 := make([]float64, 11)
	for j := range m {
		m[j], m2[j] = rng.NormFloat64(), rng.Float64()*100
	}
	_ = n.Merge(57, m, m2)
	path := filepath.Join(t.TempDir(), "p.json")
	b, err := Marshal(File{EnvID: "Hopper-v5", Policy: l, Normalizer: n})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.W {
		if math.Float64bits(f.Policy.W[i]) != math.Float64bits(l.W[i]) {
			t.Fatalf("W[%d] changed in round trip", i)
		}
	}
	for j := range m {
		if math.Float64bits(f.Normalizer.M2[j]) != math.Float64bits(n.M2[j]) {
			t.Fatalf("M2[%d] changed in round trip", j)
		}
	}
	if err := os.WriteFile(path, []byte(`{"version":1,"policy":{"rows":2,"cols":2,"w":[1]},"normalizer":{"mean":[0,0],"m2":[0,0]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "W has 1 entries") {
		t.Fatalf("load of a bad W: err = %v", err)
	}
}

// bridgePython finds the project's .venv python (numpy is pinned there).
func bridgePython(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STPIS_BRIDGE_PYTHON"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", ".venv", "bin", "python")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no python with numpy at %s: run `make venv`", p)
	}
	return p
}

func TestMarshalARSReadBackByNumpy(t *testing.T) {
	l := &Linear{Rows: 3, Cols: 3, W: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9.5}}
	norm := Frozen{Mean: []float64{0.1, -0.2, 0.3}, Std: []float64{1, 2, 1e-9}}
	path := filepath.Join(t.TempDir(), "lin_policy_plus.npz")
	b, err := MarshalARS(l, norm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The read-back is ARS's own replay code (ars/code/run_policy.py).
	script := `
import sys, warnings
import numpy as np
warnings.simplefilter("ignore")
lin_policy = np.load(sys.argv[1], allow_pickle=True)
lin_policy = list(lin_policy.items())[0][1]
M, mean, std = lin_policy[0], lin_policy[1], lin_policy[2]
assert lin_policy.shape == (3,), lin_policy.shape
assert M.shape == (3, 3) and M.dtype == np.float64, (M.shape, M.dtype)
print(repr(M.tolist()), repr(mean.tolist()), repr(std.tolist()))
`
	out, err := exec.Command(bridgePython(t), "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy could not read the export: %v\n%s", err, out)
	}
	want := "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.5]] [0.1, -0.2, 0.3] [1.0, 2.0, 1e-09]"
	if strings.TrimSpace(string(out)) != want {
		t.Fatalf("numpy read\n%s\nwant\n%s", out, want)
	}
	l.Bias = []float64{0, 1, 0}
	if _, err := MarshalARS(l, norm); err == nil {
		t.Fatal("export with a non-zero bias: want error")
	}
}

// A shape whose Rows×Cols overflows is refused, not matched by an empty W.
func TestValidateRefusesAnOverflowingShape(t *testing.T) {
	l := &Linear{Rows: 1 << 62, Cols: 4}
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("Validate of a %dx%d policy with no weights: %v", l.Rows, l.Cols, err)
	}
	ok := &Linear{Rows: 17, Cols: 376, W: make([]float64, 17*376)}
	if err := ok.Validate(); err != nil {
		t.Fatalf("Humanoid's shape: %v", err)
	}
}
