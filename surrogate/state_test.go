package surrogate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestSaveLoadResumesBitExactly(t *testing.T) {
	for _, window := range []int{0, 12} {
		t.Run(fmt.Sprintf("window=%d", window), func(t *testing.T) { saveLoadResumes(t, window) })
	}
}

// saveLoadResumes checks that a model with the given Window, saved past its
// HistoryCap and loaded, continues bit for bit.
func saveLoadResumes(t *testing.T, window int) {
	const dim = 6
	r := rand.New(rand.NewPCG(8, 9))
	pts := make([][]float64, 80)
	for i := range pts {
		pts[i] = randVec(r, dim)
	}
	y := func(x []float64) float64 { return x[0]*x[1] + math.Sin(x[2]) }
	m, err := New(dim, Config{Seed: 11, HistoryCap: 30, Window: window})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range pts[:50] {
		_ = m.Add(x, y(x))
	}
	_ = m.Add(pts[0], math.NaN())
	if _, err := m.Train(20); err != nil {
		t.Fatal(err)
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var m2 Model
	if err := m2.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	cont := func(m *Model) {
		for _, x := range pts[50:] {
			_ = m.Add(x, y(x))
		}
		if _, err := m.Train(25); err != nil {
			t.Fatal(err)
		}
	}
	cont(m)
	cont(&m2)
	bitEq := func(name string, a, b []float64) {
		if len(a) != len(b) {
			t.Fatalf("%s: lengths %d and %d", name, len(a), len(b))
		}
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("%s[%d]: %v without round trip, %v with", name, i, a[i], b[i])
			}
		}
	}
	bitEq("theta", m.theta, m2.theta)
	bitEq("mom1", m.mom1, m2.mom1)
	bitEq("mom2", m.mom2, m2.mom2)
	bitEq("history x", m.xs, m2.xs)
	bitEq("history y", m.ys, m2.ys)
	if m.Steps() != m2.Steps() || m.Dropped() != 1 || m2.Dropped() != 1 || m.Seen() != m2.Seen() {
		t.Errorf("counters differ: steps %d/%d dropped %d/%d seen %d/%d",
			m.Steps(), m2.Steps(), m.Dropped(), m2.Dropped(), m.Seen(), m2.Seen())
	}
	b1, _ := m.MarshalBinary()
	b2, _ := m2.MarshalBinary()
	if !slices.Equal(b1, b2) {
		t.Error("encodings differ after identical continuations")
	}
	if err := m2.UnmarshalBinary(blob[:len(blob)/2]); !errors.Is(err, ErrDecode) {
		t.Errorf("truncated blob: err = %v, want ErrDecode", err)
	}
}

func TestBadInputErrors(t *testing.T) {
	if _, err := New(0, Config{}); !errors.Is(err, ErrConfig) {
		t.Errorf("New(0): err = %v, want ErrConfig", err)
	}
	if _, err := New(3, Config{Beta1: 1}); !errors.Is(err, ErrConfig) {
		t.Errorf("Beta1 = 1: err = %v, want ErrConfig", err)
	}
	m, err := New(3, Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Train(5); !errors.Is(err, ErrEmpty) {
		t.Errorf("Train on empty history: err = %v, want ErrEmpty", err)
	}
	if err := m.RefreshScaling(); !errors.Is(err, ErrEmpty) {
		t.Errorf("RefreshScaling on empty history: err = %v, want ErrEmpty", err)
	}
	if err := m.Add([]float64{1, 2}, 1); !errors.Is(err, ErrDim) {
		t.Errorf("Add of short x: err = %v, want ErrDim", err)
	}
	if err := m.Add([]float64{1, math.NaN(), 2}, 1); !errors.Is(err, ErrNonFiniteX) {
		t.Errorf("Add of NaN x: err = %v, want ErrNonFiniteX", err)
	}
	if err := m.Add([]float64{1, math.Inf(1), 2}, 1); !errors.Is(err, ErrNonFiniteX) {
		t.Errorf("Add of Inf x: err = %v, want ErrNonFiniteX", err)
	}
	for _, y := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := m.Add([]float64{1, 2, 3}, y); !errors.Is(err, ErrNonFiniteTarget) {
			t.Errorf("Add with y = %v: err = %v, want ErrNonFiniteTarget", y, err)
		}
	}
	if m.Len() != 0 || m.Dropped() != 3 {
		t.Errorf("after bad adds: Len %d, Dropped %d; want 0, 3", m.Len(), m.Dropped())
	}
	if _, err := m.Train(1); !errors.Is(err, ErrEmpty) {
		t.Errorf("Train with only dropped points: err = %v, want ErrEmpty", err)
	}
	// NaN targets are not trained on: the loss stays finite and the history
	// holds only the finite points.
	for i := range 5 {
		_ = m.Add([]float64{float64(i), 1, 2}, float64(i))
		_ = m.Add([]float64{float64(i), 1, 2}, math.NaN())
	}
	if m.Len() != 5 || m.Dropped() != 8 {
		t.Errorf("Len %d, Dropped %d; want 5, 8", m.Len(), m.Dropped())
	}
	loss, err := m.Train(3)
	if err != nil || math.IsNaN(loss) || math.IsInf(loss, 0) {
		t.Errorf("Train after NaN targets: loss %v, err %v", loss, err)
	}
	for _, v := range m.theta {
		if math.IsNaN(v) {
			t.Fatal("NaN parameter after training")
		}
	}
	if _, err := m.Predict([]float64{1}); !errors.Is(err, ErrDim) {
		t.Errorf("Predict of short x: err = %v, want ErrDim", err)
	}
	if _, err := m.Predict([]float64{1, math.NaN(), 0}); !errors.Is(err, ErrNonFiniteX) {
		t.Errorf("Predict of NaN x: err = %v, want ErrNonFiniteX", err)
	}
	if err := m.Gradient([]float64{1, 2, 3}, make([]float64, 2)); !errors.Is(err, ErrDim) {
		t.Errorf("Gradient with short dst: err = %v, want ErrDim", err)
	}
	if err := m.HessianDiag([]float64{1, 2}, make([]float64, 3)); !errors.Is(err, ErrDim) {
		t.Errorf("HessianDiag with short x: err = %v, want ErrDim", err)
	}
	if _, err := m.LipschitzGlobal(identityBasis(4)); !errors.Is(err, ErrDim) {
		t.Errorf("LipschitzGlobal with 4-dim directions: err = %v, want ErrDim", err)
	}
	if _, err := m.LipschitzGlobal(nil); !errors.Is(err, ErrDim) {
		t.Errorf("LipschitzGlobal(nil): err = %v, want ErrDim", err)
	}
	if _, err := m.LipschitzLocal([]float64{1, 2}, identityBasis(3)); !errors.Is(err, ErrDim) {
		t.Errorf("LipschitzLocal with short x: err = %v, want ErrDim", err)
	}
	nanDirs := fromFunc(3, 2, func(j int, dst []float64) { dst[0], dst[1], dst[2] = math.NaN(), 0, 0 })
	if _, err := m.LipschitzGlobal(nanDirs); !errors.Is(err, ErrNonFiniteL) {
		t.Errorf("NaN direction: err = %v, want ErrNonFiniteL", err)
	}
	panicky := fromFunc(3, 3, func(int, []float64) { panic("boom") })
	if _, err := m.LipschitzGlobal(panicky); err == nil {
		t.Error("panicking Column: no error")
	}
	if err := new(Model).UnmarshalBinary([]byte("not a model")); !errors.Is(err, ErrDecode) {
		t.Errorf("garbage blob: err = %v, want ErrDecode", err)
	}
}

func TestReservoirBoundAndDeterminism(t *testing.T) {
	run := func() *Model {
		m, _ := New(2, Config{HistoryCap: 50, Seed: 4})
		for i := range 5000 {
			_ = m.Add([]float64{float64(i), 0}, float64(i))
		}
		return m
	}
	m := run()
	if m.Len() != 50 || m.Seen() != 5000 || len(m.xs) != 100 {
		t.Fatalf("Len %d Seen %d len(xs) %d; want 50, 5000, 100", m.Len(), m.Seen(), len(m.xs))
	}
	// A uniform sample of 0..4999 has mean ≈ 2500 (sd of the mean ≈ 204).
	mean := 0.0
	late := 0
	for i := range m.Len() {
		_, y := m.History(i)
		mean += y / 50
		if y >= 50 {
			late++
		}
	}
	if math.Abs(mean-2500) > 800 || late < 40 {
		t.Errorf("reservoir not uniform: mean %v, %d of 50 points beyond the first 50", mean, late)
	}
	if !slices.Equal(m.ys, run().ys) {
		t.Error("same seed, different reservoir")
	}
}

func TestWindow(t *testing.T) {
	// A full windowed history keeps the newest HistoryCap points.
	m, err := New(2, Config{HistoryCap: 10, Window: 4, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		_ = m.Add([]float64{float64(i), 0}, float64(i))
	}
	kept := slices.Clone(m.ys)
	slices.Sort(kept)
	if want := []float64{15, 16, 17, 18, 19, 20, 21, 22, 23, 24}; !slices.Equal(kept, want) {
		t.Errorf("windowed history holds %v, want the newest ten %v", kept, want)
	}

	// 400 old points say f = 0 on [0, 1] and the 40 newest say f = 1 there:
	// trained on its window only, f̂ follows the newest points; trained on
	// all of them, it stays near the mean 40/440.
	fit := func(window int) float64 {
		m, err := New(1, Config{Window: window, Seed: 9, LearningRate: 1e-2})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 4))
		for i := range 440 {
			y := 0.0
			if i >= 400 {
				y = 1
			}
			_ = m.Add([]float64{r.Float64()}, y)
		}
		if _, err := m.Train(1500); err != nil {
			t.Fatal(err)
		}
		f, err := m.Predict([]float64{0.5})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if f := fit(40); f < 0.8 {
		t.Errorf("window 40: f̂(0.5) = %.3f, want ≥ 0.8 (the newest points' 1)", f)
	}
	if f := fit(0); f > 0.3 {
		t.Errorf("no window: f̂(0.5) = %.3f, want ≤ 0.3 (near the mean of all points, 0.09)", f)
	}

	// Without a HistoryCap the history grows to hold a window larger than
	// the default cap.
	w := DefaultHistoryCap(2) + 1
	if big, err := New(2, Config{Window: w}); err != nil {
		t.Errorf("Window %d without a cap: %v", w, err)
	} else if got := big.Config().HistoryCap; got != w {
		t.Errorf("Window %d without a cap: HistoryCap %d, want %d", w, got, w)
	}
	for _, w := range []int{-1, 11} {
		if _, err := New(2, Config{HistoryCap: 10, Window: w}); !errors.Is(err, ErrConfig) {
			t.Errorf("Window %d with HistoryCap 10: err = %v, want ErrConfig", w, err)
		}
	}
}

func TestRescalingPreservesFunction(t *testing.T) {
	m, _ := New(4, Config{Seed: 2})
	r := rand.New(rand.NewPCG(1, 1))
	for range 20 {
		_ = m.Add(randVec(r, 4), r.NormFloat64())
	}
	if _, err := m.Train(10); err != nil {
		t.Fatal(err)
	}
	probe := randVec(r, 4)
	before, _ := m.Predict(probe)
	gb := make([]float64, 4)
	_ = m.Gradient(probe, gb)
	for range 20 { // shifted and stretched data changes the scaling
		x := randVec(r, 4)
		for j := range x {
			x[j] = 5 + 3*float64(j+1)*x[j]
		}
		_ = m.Add(x, 100+10*r.NormFloat64())
	}
	mu0 := slices.Clone(m.muX)
	if err := m.RefreshScaling(); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(mu0, m.muX) {
		t.Fatal("scaling did not change")
	}
	after, _ := m.Predict(probe)
	ga := make([]float64, 4)
	_ = m.Gradient(probe, ga)
	if math.Abs(after-before) > 1e-10*max(1, math.Abs(before)) {
		t.Errorf("f̂(probe) = %v before rescaling, %v after", before, after)
	}
	for j := range ga {
		if math.Abs(ga[j]-gb[j]) > 1e-10*max(1, maxAbs(gb)) {
			t.Errorf("gradient[%d] = %v before rescaling, %v after", j, gb[j], ga[j])
		}
	}
}

// TestDirectionPaths checks the canonical fast path, the block path with the
// assembly kernel and the block path with the portable kernel against a
// direct computation, with sizes that are not multiples of the blocks.
func TestDirectionPaths(t *testing.T) {
	const dim, width, count = 1100, 13, 53
	m := randomModel(t, dim, width, 3)
	r := rand.New(rand.NewPCG(3, 4))
	x := randVec(r, dim)
	dm := mat.NewDense(dim, count, nil)
	for i := range dim {
		for j := range count {
			dm.Set(i, j, r.NormFloat64())
		}
	}
	direct := make([]float64, count)
	for j := range count {
		c, _ := m.Curvature(x, mat.Col(nil, j, dm))
		direct[j] = math.Abs(c)
	}
	check := func(name string, got, want []float64) {
		t.Helper()
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-10*maxAbs(want) {
				t.Errorf("%s: L[%d] = %v, want %v", name, j, got[j], want[j])
			}
		}
	}
	g1, l1, err := m.Lipschitz(x, FromMatrix(dm))
	if err != nil {
		t.Fatal(err)
	}
	check("block local", l1, direct)
	saved := useAVX2
	useAVX2 = false
	g2, l2, err := m.Lipschitz(x, FromMatrix(dm))
	useAVX2 = saved
	if err != nil {
		t.Fatal(err)
	}
	check("portable kernel global", g2, g1)
	check("portable kernel local", l2, l1)

	gc, lc, err := m.Lipschitz(x, identityBasis(dim))
	if err != nil {
		t.Fatal(err)
	}
	id := fromFunc(dim, dim, func(j int, dst []float64) { clear(dst); dst[j] = 1 })
	gi, li, err := m.Lipschitz(x, id)
	if err != nil {
		t.Fatal(err)
	}
	check("canonical vs identity, global", gc, gi)
	check("canonical vs identity, local", lc, li)
	hd := make([]float64, dim)
	_ = m.HessianDiag(x, hd)
	for j := range hd {
		hd[j] = math.Abs(hd[j])
	}
	floor := 1e-6 * maxAbs(hd)
	for j := range hd {
		hd[j] = max(hd[j], floor)
	}
	check("canonical local vs |Hessian diagonal|", lc, hd)
}

func TestFloor(t *testing.T) {
	m, _ := New(3, Config{})
	_, _, w2, _ := m.params(m.theta)
	clear(w2)
	g, err := m.LipschitzGlobal(identityBasis(3))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range g {
		if v != DefaultAbsFloor {
			t.Errorf("w2 = 0: L[%d] = %v, want the absolute floor %v", i, v, DefaultAbsFloor)
		}
	}
	w2[0] = 1
	w1, _, _, _ := m.params(m.theta)
	clear(w1)
	w1[0], w1[1] = 1, 1e-5 // L ∝ W1[0,j]²: 1, 1e-10, 0
	g, _ = m.LipschitzGlobal(identityBasis(3))
	if g[1] != g[0]*DefaultFloor || g[2] != g[0]*DefaultFloor || g[0] != maxTanh2 {
		t.Errorf("L = %v, want [%v, %v, %v]", g, maxTanh2, maxTanh2*DefaultFloor, maxTanh2*DefaultFloor)
	}
}

func TestWidthFor(t *testing.T) {
	for _, c := range []struct{ n, w int }{{16, 16}, {33, 16}, {102, 64}, {840, 64}, {5916, 256}} {
		if got := WidthFor(c.n); got != c.w {
			t.Errorf("WidthFor(%d) = %d, want %d", c.n, got, c.w)
		}
	}
}
