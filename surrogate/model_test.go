package surrogate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomModel returns a model with random weights, biases and scaling.
func randomModel(t *testing.T, dim, width int, seed uint64) *Model {
	t.Helper()
	m, err := New(dim, Config{Width: width, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 99))
	for i := range m.theta {
		m.theta[i] = r.NormFloat64() * 0.7
	}
	for j := range m.muX {
		m.muX[j] = r.NormFloat64()
		m.sdX[j] = 0.5 + r.Float64()
	}
	m.muY, m.sdY, m.scaled = 3, 2.5, true
	return m
}

func randVec(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

// relErr is |a−b| relative to max(|b|, 1e-3·scale).
func relErr(a, b, scale float64) float64 {
	return math.Abs(a-b) / max(math.Abs(b), 1e-3*scale)
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

func TestDerivativesMatchFiniteDifferences(t *testing.T) {
	const dim, width, eps = 7, 5, 1e-5
	r := rand.New(rand.NewPCG(1, 2))
	for s := range uint64(3) {
		m := randomModel(t, dim, width, s)
		x := randVec(r, dim)
		g := make([]float64, dim)
		hd := make([]float64, dim)
		if err := m.Gradient(x, g); err != nil {
			t.Fatal(err)
		}
		if err := m.HessianDiag(x, hd); err != nil {
			t.Fatal(err)
		}
		xp, xm := slices.Clone(x), slices.Clone(x)
		gp, gm := make([]float64, dim), make([]float64, dim)
		fdG, fdH := make([]float64, dim), make([]float64, dim)
		for j := range dim {
			copy(xp, x)
			copy(xm, x)
			xp[j] += eps
			xm[j] -= eps
			fp, _ := m.Predict(xp)
			fm, _ := m.Predict(xm)
			fdG[j] = (fp - fm) / (2 * eps)
			_ = m.Gradient(xp, gp)
			_ = m.Gradient(xm, gm)
			fdH[j] = (gp[j] - gm[j]) / (2 * eps)
		}
		for j := range dim {
			if e := relErr(g[j], fdG[j], maxAbs(fdG)); e > 1e-5 {
				t.Errorf("seed %d: gradient[%d] = %g, finite difference %g (rel err %g)", s, j, g[j], fdG[j], e)
			}
			if e := relErr(hd[j], fdH[j], maxAbs(fdH)); e > 1e-5 {
				t.Errorf("seed %d: Hessian diag[%d] = %g, finite difference %g (rel err %g)", s, j, hd[j], fdH[j], e)
			}
		}
		// Directional curvature along random directions, against the
		// derivative of the directional derivative, and LipschitzLocal.
		dm := mat.NewDense(dim, dim, nil)
		for i := range dim {
			for j := range dim {
				dm.Set(i, j, r.NormFloat64())
			}
		}
		local, err := m.LipschitzLocal(x, FromMatrix(dm))
		if err != nil {
			t.Fatal(err)
		}
		global, err := m.LipschitzGlobal(FromMatrix(dm))
		if err != nil {
			t.Fatal(err)
		}
		for i := range dim {
			d := mat.Col(nil, i, dm)
			c, err := m.Curvature(x, d)
			if err != nil {
				t.Fatal(err)
			}
			for j := range dim {
				xp[j] = x[j] + eps*d[j]
				xm[j] = x[j] - eps*d[j]
			}
			_ = m.Gradient(xp, gp)
			_ = m.Gradient(xm, gm)
			fd := 0.0
			for j := range dim {
				fd += (gp[j] - gm[j]) * d[j]
			}
			fd /= 2 * eps
			if e := relErr(c, fd, math.Abs(fd)); e > 1e-5 {
				t.Errorf("seed %d: curvature along d_%d = %g, finite difference %g (rel err %g)", s, i, c, fd, e)
			}
			if e := relErr(local[i], math.Abs(c), 1); e > 1e-10 {
				t.Errorf("seed %d: LipschitzLocal[%d] = %g, |curvature| = %g", s, i, local[i], math.Abs(c))
			}
			if global[i] < local[i]*(1-1e-12) {
				t.Errorf("seed %d: global bound %g below local curvature %g", s, global[i], local[i])
			}
		}
	}
}

func TestAdamStepByHand(t *testing.T) {
	m, err := New(1, Config{Width: 1, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Add([]float64{1}, 0.5)
	_ = m.Add([]float64{-2}, 1)
	// Parameters θ = (W1, b1, w2, b2), identity scaling.
	copy(m.theta, []float64{0.5, 0.1, -0.3, 0.2})
	copy(m.mom1, []float64{0.01, -0.02, 0.03, 0.04})
	copy(m.mom2, []float64{1e-4, 2e-4, 3e-4, 4e-4})
	m.step = 1

	// Forward and backward by hand.
	t1, t2 := math.Tanh(0.5*1+0.1), math.Tanh(0.5*-2+0.1)
	r1 := 0.2 - 0.3*t1 - 0.5
	r2 := 0.2 - 0.3*t2 - 1
	wantLoss := (r1*r1 + r2*r2) / 2
	// d loss / d out_b = 2 r_b / 2 = r_b.
	gW1 := r1*-0.3*(1-t1*t1)*1 + r2*-0.3*(1-t2*t2)*-2
	gb1 := r1*-0.3*(1-t1*t1) + r2*-0.3*(1-t2*t2)
	gw2 := r1*t1 + r2*t2
	gb2 := r1 + r2
	g := []float64{gW1, gb1, gw2, gb2}
	want := make([]float64, 4)
	th := []float64{0.5, 0.1, -0.3, 0.2}
	m1 := []float64{0.01, -0.02, 0.03, 0.04}
	m2 := []float64{1e-4, 2e-4, 3e-4, 4e-4}
	for i := range 4 {
		a := 0.9*m1[i] + 0.1*g[i]
		v := 0.999*m2[i] + 0.001*g[i]*g[i]
		mhat := a / (1 - 0.9*0.9)
		vhat := v / (1 - 0.999*0.999)
		want[i] = th[i] - 1e-3*mhat/(math.Sqrt(vhat)+1e-8)
	}

	loss := m.gradient([]int{0, 1})
	m.adam()
	if math.Abs(loss-wantLoss) > 1e-15 {
		t.Errorf("loss = %.17g, want %.17g", loss, wantLoss)
	}
	for i := range 4 {
		if math.Abs(m.grad[i]-g[i]) > 1e-15 {
			t.Errorf("gradient[%d] = %.17g, want %.17g", i, m.grad[i], g[i])
		}
		if math.Abs(m.theta[i]-want[i]) > 1e-15 {
			t.Errorf("θ[%d] after one step = %.17g, want %.17g", i, m.theta[i], want[i])
		}
	}
	if m.Steps() != 2 {
		t.Errorf("step count = %d, want 2", m.Steps())
	}
}

// spearman returns Spearman's rank correlation of a and b (no ties).
func spearman(a, b []float64) float64 {
	rank := func(v []float64) []float64 {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(i, j int) int {
			switch {
			case v[i] < v[j]:
				return -1
			case v[i] > v[j]:
				return 1
			}
			return 0
		})
		r := make([]float64, len(v))
		for k, i := range idx {
			r[i] = float64(k)
		}
		return r
	}
	ra, rb := rank(a), rank(b)
	n := float64(len(a))
	s := 0.0
	for i := range ra {
		d := ra[i] - rb[i]
		s += d * d
	}
	return 1 - 6*s/(n*(n*n-1))
}

func TestFitQuadraticAndRankLipschitz(t *testing.T) {
	const n, nTrain, nTest = 10, 2000, 500
	c := make([]float64, n) // spread over 100×, shuffled
	r := rand.New(rand.NewPCG(5, 6))
	for i, p := range r.Perm(n) {
		c[i] = math.Pow(100, float64(p)/float64(n-1))
	}
	f := func(x []float64) float64 {
		s := 0.0
		for i, v := range x {
			s += c[i] * v * v
		}
		return s
	}
	m, err := New(n, Config{Seed: 3, LearningRate: 3e-3})
	if err != nil {
		t.Fatal(err)
	}
	for range nTrain {
		x := randVec(r, n)
		if err := m.Add(x, f(x)+0.1*r.NormFloat64()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Train(20000); err != nil {
		t.Fatal(err)
	}
	// R² on held-out points.
	ys, ps := make([]float64, nTest), make([]float64, nTest)
	for i := range nTest {
		x := randVec(r, n)
		ys[i] = f(x)
		ps[i], _ = m.Predict(x)
	}
	mean := 0.0
	for _, y := range ys {
		mean += y / nTest
	}
	ssr, sst := 0.0, 0.0
	for i := range ys {
		ssr += (ys[i] - ps[i]) * (ys[i] - ps[i])
		sst += (ys[i] - mean) * (ys[i] - mean)
	}
	r2 := 1 - ssr/sst
	t.Logf("held-out R² = %.4f", r2)
	if r2 < 0.9 {
		t.Errorf("held-out R² = %.4f, want ≥ 0.9", r2)
	}

	x0 := make([]float64, n) // local estimates at the centre of the data
	bases := map[string]*mat.Dense{"canonical": nil, "rotated": mat.NewDense(n, n, nil)}
	for i := range n {
		for j := range n {
			bases["rotated"].Set(i, j, r.NormFloat64())
		}
	}
	for name, b := range bases {
		dirs := identityBasis(n)
		truth := make([]float64, n) // d_iᵀ diag(2c) d_i
		if b != nil {
			dirs = FromMatrix(b)
			for i := range n {
				for j := range n {
					truth[i] += 2 * c[j] * b.At(j, i) * b.At(j, i)
				}
			}
		} else {
			for i := range n {
				truth[i] = 2 * c[i]
			}
		}
		g, l, err := m.Lipschitz(x0, dirs)
		if err != nil {
			t.Fatal(err)
		}
		sg, sl := spearman(g, truth), spearman(l, truth)
		t.Logf("%s basis: Spearman global %.3f, local %.3f", name, sg, sl)
		if sg < 0.8 {
			t.Errorf("%s basis: Spearman(global L, truth) = %.3f, want ≥ 0.8", name, sg)
		}
		if sl < 0.8 {
			t.Errorf("%s basis: Spearman(local L, truth) = %.3f, want ≥ 0.8", name, sl)
		}
	}
}
