package surrogate

import (
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestGradientPCAMatchesDenseEigen: the components read off the Gram
// matrix are the eigenvectors and eigenvalues of C = Σ γ^age h hᵀ built
// densely, over the newest Window running sums of Width estimates; the
// trace is C's.
func TestGradientPCAMatchesDenseEigen(t *testing.T) {
	const n = 12
	g := &GradientPCA{Width: 3, Gamma: 0.8, Window: 7}
	rnd := rand.New(rand.NewPCG(1, 2))
	var all [][]float64
	for range 20 {
		est := make([]float64, n)
		for i := range est {
			est[i] = rnd.NormFloat64() * float64(i+1)
		}
		all = append(all, est)
		if err := g.Add(est); err != nil {
			t.Fatal(err)
		}
	}
	c := mat.NewSymDense(n, nil)
	var trace float64
	for s := len(all) - g.Window; s < len(all); s++ {
		h := make([]float64, n)
		for _, e := range all[max(0, s-g.Width+1) : s+1] {
			for i, v := range e {
				h[i] += v
			}
		}
		w := math.Pow(g.Gamma, float64(len(all)-1-s))
		for a := range n {
			trace += w * h[a] * h[a]
			for b := a; b < n; b++ {
				c.SetSym(a, b, c.At(a, b)+w*h[a]*h[b])
			}
		}
	}
	vecs, lambda, tr, err := g.Components()
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != g.Window || math.Abs(tr-trace) > 1e-9*trace {
		t.Fatalf("%d components, trace %v; want %d, %v", len(vecs), tr, g.Window, trace)
	}
	var eig mat.EigenSym
	if !eig.Factorize(c, false) {
		t.Fatal("dense eigendecomposition failed")
	}
	want := eig.Values(nil)
	sort.Sort(sort.Reverse(sort.Float64Slice(want)))
	for i, l := range lambda {
		if math.Abs(l-want[i]) > 1e-9*want[0] {
			t.Fatalf("eigenvalue %d: %v, want %v", i, l, want[i])
		}
		// C v = λ v, and v has unit norm.
		cv := mat.NewVecDense(n, nil)
		cv.MulVec(c, mat.NewVecDense(n, vecs[i]))
		var res, nv float64
		for a := range n {
			res += math.Pow(cv.AtVec(a)-l*vecs[i][a], 2)
			nv += vecs[i][a] * vecs[i][a]
		}
		if math.Sqrt(res) > 1e-8*want[0] || math.Abs(nv-1) > 1e-9 {
			t.Fatalf("component %d: |Cv − λv| = %v, |v|² = %v", i, math.Sqrt(res), nv)
		}
	}
	if !slices.IsSortedFunc(lambda, func(a, b float64) int { return cmp.Compare(b, a) }) {
		t.Fatalf("eigenvalues not in descending order: %v", lambda)
	}
}

// TestGradientPCAStateAndRefusals: before any estimate there are no
// components; a NaN estimate, one of another length, or a bad setting is
// refused and leaves the state as it was; the JSON state resumes to the
// same components bit for bit.
func TestGradientPCAStateAndRefusals(t *testing.T) {
	g := NewGradientPCA()
	if v, l, tr, err := g.Components(); err != nil || v != nil || l != nil || tr != 0 {
		t.Fatalf("empty: %v %v %v %v", v, l, tr, err)
	}
	for i := range 8 {
		if err := g.Add([]float64{float64(i), 1, -2, 0.5}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := json.Marshal(g)
	if err := g.Add([]float64{1, math.NaN(), 0, 0}); !errors.Is(err, ErrNonFiniteTarget) {
		t.Fatalf("NaN estimate: %v", err)
	}
	if err := g.Add([]float64{1, 2}); !errors.Is(err, ErrDim) {
		t.Fatalf("short estimate: %v", err)
	}
	if after, _ := json.Marshal(g); string(after) != string(before) {
		t.Fatal("a refused estimate changed the state")
	}
	if err := (&GradientPCA{Width: 0, Gamma: 0.9, Window: 5}).Add([]float64{1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("width 0: %v", err)
	}
	var r GradientPCA
	if err := json.Unmarshal(before, &r); err != nil {
		t.Fatal(err)
	}
	for _, h := range []*GradientPCA{g, &r} {
		if err := h.Add([]float64{3, -1, 2, 2}); err != nil {
			t.Fatal(err)
		}
	}
	v1, l1, _, _ := g.Components()
	v2, l2, _, _ := r.Components()
	if !slices.Equal(l1, l2) || !slices.Equal(v1[0], v2[0]) {
		t.Fatalf("resumed components differ: %v / %v", l1, l2)
	}
	if len(g.Recent) != g.Width || g.Count != 9 {
		t.Fatalf("recent %d, count %d; want %d, 9", len(g.Recent), g.Count, g.Width)
	}
}

// TestGradientPCAOrthonormalWhenIllConditioned: overlapping running sums
// of estimates whose scales span eight orders of magnitude (a Gram
// matrix near singular, as in a run of Hopper's 33 weights) still give
// orthonormal components to 1e-9.
func TestGradientPCAOrthonormalWhenIllConditioned(t *testing.T) {
	const n = 33
	g := NewGradientPCA()
	rnd := rand.New(rand.NewPCG(7, 7))
	for range 80 {
		est := make([]float64, n)
		for i := range est {
			est[i] = rnd.NormFloat64() * math.Pow(10, -float64(i)/4)
		}
		if err := g.Add(est); err != nil {
			t.Fatal(err)
		}
	}
	vecs, lambda, _, err := g.Components()
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) < 10 || len(vecs) != len(lambda) {
		t.Fatalf("%d components, %d eigenvalues", len(vecs), len(lambda))
	}
	for a := range vecs {
		for b := range a + 1 {
			var dot float64
			for i := range n {
				dot += vecs[a][i] * vecs[b][i]
			}
			want := 0.0
			if a == b {
				want = 1
			}
			if math.Abs(dot-want) > 1e-9 {
				t.Fatalf("components %d and %d (λ %g, %g): dot %v, want %v", a, b, lambda[a], lambda[b], dot, want)
			}
		}
	}
}
