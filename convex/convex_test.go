package convex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// dataDir holds the shipped LIBSVM files (package convex/data).
const dataDir = "data"

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
		{"huge index", "+1 1:1\n-1 2:1 99999999999:1\n", "line 2"},
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
	a := d.Matrix()
	r2, v2 := a.Col(2)
	r1, v1 := a.Col(1)
	if d.Rows() != 2 || d.Features != 3 || y[0] != 1 || y[1] != -1 || a.NNZ() != 3 ||
		len(r2) != 1 || r2[0] != 0 || v2[0] != -0.5 || len(r1) != 1 || r1[0] != 1 || v1[0] != 4 {
		t.Errorf("parsed %+v, labels %v, matrix %+v", d, y, a)
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

// TestRealFiles checks the shipped data by SHA256 and their row and
// feature counts.
func TestRealFiles(t *testing.T) {
	sums, err := os.ReadFile(filepath.Join(dataDir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
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
	xs, fs, err := p.Solve(context.Background())
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
			if r.IntN(3) == 0 { // sparse: a third of the entries are non-zero
				cols[i][j] = r.NormFloat64()
			}
		}
	}
	y := make([]float64, m)
	for j := range y {
		y[j] = float64(2*r.IntN(2) - 1)
	}
	a, err := NewCSC(m, cols)
	if err != nil {
		t.Fatal(err)
	}
	ridge, _ := NewRidge(a, y, 0.1)
	svm, _ := NewSVM(a, y, 1)
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
	if _, err := NewSVM(a, make([]float64, m), 1); err == nil {
		t.Error("SVM accepted labels that are not ±1")
	}
}

// randomProblem returns an m×n matrix with about half its entries non-zero,
// as CSC and dense, and ±1 labels.
func randomProblem(m, n int, seed uint64) (*CSC, *mat.Dense, []float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	cols := make([][]float64, n)
	dense := mat.NewDense(m, n, nil)
	for i := range cols {
		cols[i] = make([]float64, m)
		for j := range cols[i] {
			if r.IntN(2) == 0 {
				cols[i][j] = r.NormFloat64()
				dense.Set(j, i, cols[i][j])
			}
		}
	}
	y := make([]float64, m)
	for j := range y {
		y[j] = float64(2*r.IntN(2) - 1)
	}
	a, _ := NewCSC(m, cols)
	return a, dense, y
}

// TestCSC checks the sparse products against gonum's dense ones.
func TestCSC(t *testing.T) {
	a, d, y := randomProblem(30, 6, 7)
	x := []float64{0.5, -1, 0, 2, 0.25, -0.75}
	var ax, aty mat.VecDense
	ax.MulVec(d, mat.NewVecDense(6, x))
	aty.MulVec(d.T(), mat.NewVecDense(30, y))
	if !floats.EqualApprox(a.MulVec(x), ax.RawVector().Data, 1e-12) || !floats.EqualApprox(a.MulTransVec(y), aty.RawVector().Data, 1e-12) {
		t.Errorf("A x or Aᵀ y differs from the dense product")
	}
	w := make([]float64, 30)
	for j := range w {
		w[j] = float64(j % 3)
	}
	var dw, g mat.Dense
	dw.Apply(func(r, _ int, v float64) float64 { return v * w[r] }, d)
	g.Mul(d.T(), &dw)
	if got := a.Gram(w); !floats.EqualApprox(got, g.RawMatrix().Data, 1e-12) {
		t.Errorf("AᵀWA = %v, want %v", got, g.RawMatrix().Data)
	}
	if _, err := NewCSC(3, [][]float64{{1, 2}}); err == nil || !strings.Contains(err.Error(), "column 0") {
		t.Errorf("short column: %v", err)
	}
	if _, err := NewCSC(2, [][]float64{{1, 2}, {0, math.NaN()}}); err == nil || !strings.Contains(err.Error(), "column 1 row 1") {
		t.Errorf("NaN entry: %v", err)
	}
}

// TestGrad compares both gradients with central differences.
func TestGrad(t *testing.T) {
	a, _, y := randomProblem(40, 5, 9)
	ridge, _ := NewRidge(a, y, 0.1)
	svm, _ := NewSVM(a, y, 0.5)
	x := []float64{0.3, -0.2, 0.1, 0.4, -0.5}
	for _, p := range []Problem{ridge, svm} {
		g := p.Grad(x)
		for i := range x {
			const h = 1e-6
			xp := append([]float64(nil), x...)
			xm := append([]float64(nil), x...)
			xp[i] += h
			xm[i] -= h
			if fd := (p.Func(xp) - p.Func(xm)) / (2 * h); math.Abs(fd-g[i]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%T: ∂f/∂x_%d = %v, central difference %v", p, i, g[i], fd)
			}
		}
	}
}

// TestSVMSolveBruteForce: on a small problem, f* is the smallest f over
// the minimizers of all 2^m active-set quadratics (the true active set is
// one of them, and every other gives some point, so a value ≥ f*). Solve
// must find that value and a point with a zero gradient.
func TestSVMSolveBruteForce(t *testing.T) {
	const m, n = 10, 3
	for seed := range uint64(4) {
		a, d, y := randomProblem(m, n, seed)
		p, _ := NewSVM(a, y, 0.3)
		best := math.Inf(1)
		for mask := range 1 << m {
			var h, b mat.Dense
			as := mat.NewDense(m, n, nil)
			ys := mat.NewDense(m, 1, nil)
			for j := range m {
				if mask>>j&1 == 1 {
					as.SetRow(j, mat.Row(nil, j, d))
					ys.Set(j, 0, y[j])
				}
			}
			h.Mul(as.T(), as)
			for i := range n {
				h.Set(i, i, h.At(i, i)+0.3)
			}
			b.Mul(as.T(), ys)
			var x mat.Dense
			if err := x.Solve(&h, &b); err != nil {
				t.Fatal(err)
			}
			best = math.Min(best, p.Func(mat.Col(nil, 0, &x)))
		}
		xs, fs, err := p.Solve(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(fs-best) > 1e-12*best || fs != p.Func(xs) {
			t.Errorf("seed %d: Solve f* = %v, brute force %v", seed, fs, best)
		}
		if g := floats.Norm(p.Grad(xs), math.Inf(1)); g > 1e-12 {
			t.Errorf("seed %d: ‖∇f(x*)‖∞ = %v", seed, g)
		}
	}
}

// TestSVMSolveReal: on heart_scale the gradient at x* vanishes relative to
// the gradient at 0, and no coordinate step lowers f.
func TestSVMSolveReal(t *testing.T) {
	d, err := ReadLIBSVMFile(filepath.Join(dataDir, "heart_scale"))
	if err != nil {
		t.Fatal(err)
	}
	y, _ := d.BinaryLabels()
	p, err := NewSVM(d.Matrix(), y, 1)
	if err != nil {
		t.Fatal(err)
	}
	xs, fs, err := p.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	g0 := floats.Norm(p.Grad(make([]float64, p.Dim())), math.Inf(1))
	if g := floats.Norm(p.Grad(xs), math.Inf(1)); g > 1e-12*g0 {
		t.Errorf("‖∇f(x*)‖∞ = %v (at 0: %v)", g, g0)
	}
	c := p.NewCursor(xs)
	for i := range p.Dim() {
		for _, s := range []float64{1e-4, -1e-4} {
			if v := c.Along(i, s); v < fs {
				t.Errorf("f(x* %+g e_%d) = %v < f* = %v", s, i, v, fs)
			}
		}
	}
	if _, _, err := p.Solve(canceled()); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled Solve: %v", err)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// a9aLike returns a 50000-row LIBSVM data set with 123 binary features, 14
// non-zeros a row, like a9a.
func a9aLike(b *testing.B) *Dataset {
	const m, n, perRow = 50000, 123, 14
	r := rand.New(rand.NewPCG(1, 2))
	var text strings.Builder
	for range m {
		text.WriteString([]string{"+1", "-1"}[r.IntN(2)])
		idx := r.Perm(n)[:perRow]
		slices.Sort(idx)
		for _, j := range idx {
			fmt.Fprintf(&text, " %d:1", j+1)
		}
		text.WriteByte('\n')
	}
	d, err := ReadLIBSVM(strings.NewReader(text.String()))
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkBuild builds the sparse matrix and both problems of a9aLike.
func BenchmarkBuild(b *testing.B) {
	d := a9aLike(b)
	y, _ := d.BinaryLabels()
	for b.Loop() {
		a := d.Matrix()
		if _, err := NewRidge(a, y, 1); err != nil {
			b.Fatal(err)
		}
		if _, err := NewSVM(a, y, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIteration is one STP iteration's work on a9aLike: three values
// along a coordinate and a move.
func BenchmarkIteration(b *testing.B) {
	d := a9aLike(b)
	const m, n = 50000, 123
	y, _ := d.BinaryLabels()
	a := d.Matrix()
	ridge, _ := NewRidge(a, y, 1/float64(m))
	svm, _ := NewSVM(a, y, 1)
	for _, p := range []Problem{ridge, svm} {
		b.Run(fmt.Sprintf("%T", p)[8:], func(b *testing.B) {
			c := p.NewCursor(make([]float64, n))
			for k := 0; b.Loop(); k++ {
				i := k % n
				c.Along(i, 1e-8)
				c.Along(i, 1e-3)
				c.Along(i, -1e-3)
				c.Move(i, 1e-3)
			}
		})
	}
}
