package surrogate

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Train refreshes the scaling from the history (RefreshScaling), then takes
// steps Adam steps, each on a minibatch of BatchSize points drawn uniformly
// with replacement from the history (from its Window newest points, with a
// Window). It returns the mean over the steps of the minibatch mean squared
// error, in standardized target units (NaN when steps is 0). It returns
// ErrEmpty on an empty history.
func (m *Model) Train(steps int) (float64, error) {
	if steps < 0 {
		return 0, fmt.Errorf("%w: steps = %d", ErrConfig, steps)
	}
	if err := m.RefreshScaling(); err != nil {
		return 0, err
	}
	if steps == 0 {
		return math.NaN(), nil
	}
	bs := m.cfg.BatchSize
	if cap(m.idx) < bs {
		m.idx = make([]int, bs)
	}
	idx := m.idx[:bs]
	n := len(m.ys)
	windowed := m.cfg.Window > 0 && n > m.cfg.Window
	total := 0.0
	for range steps {
		for i := range idx {
			if windowed {
				idx[i] = m.slot(m.cfg.Window - 1 - m.batchRng.IntN(m.cfg.Window))
			} else {
				idx[i] = m.batchRng.IntN(n)
			}
		}
		total += m.gradient(idx)
		m.adam()
	}
	return total / float64(steps), nil
}

// trainScratch holds the buffers of one minibatch gradient.
type trainScratch struct {
	zp   []float64 // batch panels: zp[p*d*8 + k*8 + r] = Z[8p+r, k]
	zq   []float64 // coordinate panels: zq[q*bp*8 + b*8 + r] = Z[b, 8q+r]
	hh   []float64 // hidden activations, bs×w
	dht  []float64 // dH transposed and padded, wp6×bp
	w1p  []float64 // last, partial group of W1 rows, padded to 6 rows
	tile [][kernRows * kernCols]float64
}

// parallel runs f(0..n-1) split into contiguous ranges over GOMAXPROCS
// goroutines; f(lo, hi) handles [lo, hi).
func parallel(n int, f func(lo, hi int)) {
	nw := min(runtime.GOMAXPROCS(0), n)
	if nw <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := range nw {
		lo, hi := i*n/nw, (i+1)*n/nw
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

// gradient fills m.grad with the gradient of the minibatch mean squared error
// (standardized units) over the history rows idx and returns that error.
// Both products, H = Z W1ᵀ and ∇W1 = dHᵀ Z, run on the W1·D micro-kernel;
// every sum has a fixed order, so the result does not depend on GOMAXPROCS.
func (m *Model) gradient(idx []int) float64 {
	d, w, bs := m.dim, m.width, len(idx)
	nbp := (bs + kernRows - 1) / kernRows // batch panels
	bp := nbp * kernRows                  // padded batch
	nq := (d + kernRows - 1) / kernRows   // coordinate panels
	ng := (w + kernCols - 1) / kernCols   // groups of hidden units
	s := &m.scr
	grow := func(p *[]float64, n int) []float64 {
		if cap(*p) < n {
			*p = make([]float64, n)
		}
		*p = (*p)[:n]
		clear(*p)
		return *p
	}
	zp := grow(&s.zp, nbp*d*kernRows)
	zq := grow(&s.zq, nq*bp*kernRows)
	hh := grow(&s.hh, bs*w)
	dht := grow(&s.dht, ng*kernCols*bp)
	w1p := grow(&s.w1p, kernCols*d)
	if len(s.tile) < max(ng*nbp, ng*nq) {
		s.tile = make([][kernRows * kernCols]float64, max(ng*nbp, ng*nq))
	}

	// Standardize the minibatch into both packed layouts.
	for b, i := range idx {
		row := m.xs[i*d : (i+1)*d]
		p, r := b/kernRows, b%kernRows
		zpp := zp[p*d*kernRows:]
		for k, v := range row {
			zv := (v - m.muX[k]) / m.sdX[k]
			zpp[k*kernRows+r] = zv
			zq[(k/kernRows)*bp*kernRows+b*kernRows+k%kernRows] = zv
		}
	}
	w1, b1, w2, b2 := m.params(m.theta)
	gw1, gb1, gw2, gb2 := m.params(m.grad)

	// H = Z W1ᵀ: tile (g, p) holds H[8p+r, 6g+col].
	if full := w / kernCols; full < ng {
		copy(w1p, w1[full*kernCols*d:])
	}
	tiles := s.tile[:ng*nbp]
	clear(tiles)
	parallel(ng, func(lo, hi int) {
		for k0 := 0; k0 < d; k0 += chunkK {
			kk := min(chunkK, d-k0)
			for g := lo; g < hi; g++ {
				wb := w1[min(g*kernCols*d, len(w1)):]
				if (g+1)*kernCols > w {
					wb = w1p
				}
				for p := range nbp {
					kern8x6(kk, zp[p*d*kernRows+k0*kernRows:], wb[k0:], d, &tiles[g*nbp+p])
				}
			}
		}
	})
	for g := range ng {
		for p := range nbp {
			t := &tiles[g*nbp+p]
			for col := range kernCols {
				h := g*kernCols + col
				if h >= w {
					break
				}
				for r := range kernRows {
					if b := p*kernRows + r; b < bs {
						hh[b*w+h] = t[col*kernRows+r]
					}
				}
			}
		}
	}

	clear(gb1)
	clear(gw2)
	*gb2 = 0
	loss := 0.0
	scale := 2 / float64(bs)
	for b, i := range idx {
		hr := hh[b*w : (b+1)*w]
		out := *b2
		for h := range hr {
			t := math.Tanh(hr[h] + b1[h])
			hr[h] = t
			out += w2[h] * t
		}
		r := out - (m.ys[i]-m.muY)/m.sdY
		loss += r * r
		gr := scale * r
		*gb2 += gr
		for h, t := range hr {
			gw2[h] += gr * t
			dv := gr * w2[h] * (1 - t*t)
			dht[h*bp+b] = dv
			gb1[h] += dv
		}
	}

	// ∇W1 = dHᵀ Z: tile (g, q) holds ∇W1[6g+col, 8q+r].
	tiles = s.tile[:ng*nq]
	clear(tiles)
	parallel(nq, func(lo, hi int) {
		for q := lo; q < hi; q++ {
			for g := range ng {
				t := &tiles[g*nq+q]
				kern8x6(bp, zq[q*bp*kernRows:], dht[g*kernCols*bp:], bp, t)
				for col := range kernCols {
					h := g*kernCols + col
					if h >= w {
						break
					}
					dst := gw1[h*d : (h+1)*d]
					for r := range kernRows {
						if k := q*kernRows + r; k < d {
							dst[k] = t[col*kernRows+r]
						}
					}
				}
			}
		}
	})
	return loss / float64(bs)
}

// adam applies one Adam update with the gradient in m.grad, elementwise and
// split over GOMAXPROCS goroutines.
func (m *Model) adam() {
	m.step++
	c := m.cfg
	b1, b2 := c.Beta1, c.Beta2
	bc1 := 1 - math.Pow(b1, float64(m.step))
	bc2 := 1 - math.Pow(b2, float64(m.step))
	// θ −= lr·m̂/(√v̂ + ε) with m̂ = m/bc1, v̂ = v/bc2, written with one
	// division and one square root per parameter.
	step, ibc2, eps := c.LearningRate/bc1, 1/bc2, c.Epsilon
	n := len(m.theta)
	const chunk = 1 << 14
	parallel((n+chunk-1)/chunk, func(lo, hi int) {
		lo, hi = lo*chunk, min(hi*chunk, n)
		th, m1, m2, g := m.theta[lo:hi], m.mom1[lo:hi], m.mom2[lo:hi], m.grad[lo:hi]
		for i := range th {
			gi := g[i]
			a := b1*m1[i] + (1-b1)*gi
			v := b2*m2[i] + (1-b2)*gi*gi
			m1[i], m2[i] = a, v
			th[i] -= step * a / (math.Sqrt(v*ibc2) + eps)
		}
	})
}
