package convex

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const dataDir = "../../shared/data"

func TestReadLIBSVMMalformed(t *testing.T) {
	for _, c := range []struct {
		name, text string
		line       string
	}{
		{"bad label", "+1 1:0.5\nx 1:2\n", "line 2"},
		{"no colon", "+1 1:0.5\n\n-1 3\n", "line 3"},
		{"zero index", "+1 0:0.5\n", "line 1"},
		{"decreasing", "+1 1:1 2:2\n-1 3:1 2:1\n", "line 2"},
		{"bad value", "+1 1:0.5 2:abc\n", "line 1"},
		{"NaN value", "# comment\n+1 1:NaN\n", "line 2"},
	} {
		_, err := ReadLIBSVM(strings.NewReader(c.text))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.line+":") {
			t.Errorf("%s: got %v, want ErrFormat at %s", c.name, err, c.line)
		}
	}
	d, err := ReadLIBSVM(strings.NewReader("2 1:1 3:-0.5 # note\n\n1 2:4\n"))
	if err != nil {
		t.Fatal(err)
	}
	y, _ := d.BinaryLabels()
	cols := d.Columns()
	if d.Rows() != 2 || d.Features != 3 || y[0] != 1 || y[1] != -1 || cols[2][0] != -0.5 || cols[1][1] != 4 {
		t.Errorf("parsed %+v, labels %v, columns %v", d, y, cols)
	}
}

func TestReadFixture(t *testing.T) {
	d, err := ReadLIBSVMFile(filepath.Join("testdata", "heart_head.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Rows() != 5 || d.Features != 13 {
		t.Errorf("fixture: %d rows, %d features", d.Rows(), d.Features)
	}
}

// TestRealFiles checks the shared data by SHA256 and their row and feature
// counts. It skips when ../shared/data is absent.
func TestRealFiles(t *testing.T) {
	sums, err := os.ReadFile(filepath.Join(dataDir, "SHA256SUMS"))
	if err != nil {
		t.Skipf("no shared data: %v", err)
	}
	want := map[string][3]int{"heart_scale": {270, 13, 2}, "australian_scale": {690, 14, 2}, "mushrooms": {8124, 112, 2}}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		b, err := os.ReadFile(filepath.Join(dataDir, name))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		if hex.EncodeToString(h[:]) != sum {
			t.Errorf("%s: SHA256 mismatch", name)
		}
		d, err := ReadLIBSVM(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		y, err := d.BinaryLabels()
		if err != nil {
			t.Fatal(err)
		}
		var pos int
		for _, l := range y {
			if l == 1 {
				pos++
			}
		}
		w := want[name]
		if d.Rows() != w[0] || d.Features != w[1] || pos == 0 || pos == len(y) {
			t.Errorf("%s: %d rows, %d features, %d positive labels", name, d.Rows(), d.Features, pos)
		}
	}
}

func TestSyntheticRidge(t *testing.T) {
	m, n := 50, 20
	p := SyntheticRidge(m, n, 1)
	L := p.Lipschitz()
	if math.Abs(L[0]-2/float64(m)) > 1e-12 || math.Abs(L[5]-(1/float64(m*m*m)+1/float64(m))) > 1e-12 {
		t.Errorf("L_1 = %v, L_6 = %v", L[0], L[5])
	}
	xs, fs, err := p.Solve()
	if err != nil {
		t.Fatal(err)
	}
	// x* is a minimum: f grows along every coordinate, by exactly L_i α²/2
	// for a quadratic with zero gradient.
	for i := range n {
		for _, a := range []float64{1e-3, -1e-3} {
			x := append([]float64(nil), xs...)
			x[i] += a
			if d := p.Func(x) - fs; math.Abs(d-L[i]*a*a/2) > 1e-12 {
				t.Errorf("coordinate %d: f(x*+αe_i) − f* = %v, want %v", i, d, L[i]*a*a/2)
			}
		}
	}
}

// TestCursors: Along/Move agree with Func for both problems.
func TestCursors(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m, n := 40, 7
	cols := make([][]float64, n)
	for i := range cols {
		cols[i] = make([]float64, m)
		for j := range cols[i] {
			cols[i][j] = r.NormFloat64()
		}
	}
	y := make([]float64, m)
	for j := range y {
		y[j] = float64(2*r.IntN(2) - 1)
	}
	ridge, _ := NewRidge(cols, y, 0.1)
	svm, _ := NewSVM(cols, y, 1)
	for _, p := range []Problem{ridge, svm} {
		x := make([]float64, n)
		c := p.NewCursor(x)
		for k := range 200 {
			i, a := r.IntN(n), r.NormFloat64()*0.3
			x2 := append([]float64(nil), c.X()...)
			x2[i] += a
			if got, want := c.Along(i, a), p.Func(x2); math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("%T step %d: Along %v, Func %v", p, k, got, want)
			}
			if k%2 == 0 {
				c.Move(i, a)
			}
		}
		if got, want := c.Value(), p.Func(c.X()); math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("%T: Value %v, Func %v", p, got, want)
		}
	}
	if _, err := NewSVM(cols, make([]float64, m), 1); err == nil {
		t.Error("SVM accepted labels that are not ±1")
	}
}
