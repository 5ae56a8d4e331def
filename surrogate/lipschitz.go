package surrogate

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Block sizes of the W1·D pass: blockCols columns of D are generated per
// block; the product runs over chunks of chunkK coordinates.
const (
	blockCols = 8 * kernCols
	chunkK    = 512
)

// maxTanh2 is max_x |tanh”(x)| = 4/(3√3), reached at tanh(x) = ±1/√3.
var maxTanh2 = 4 / (3 * math.Sqrt(3))

// ErrNonFiniteL reports a Lipschitz estimate that is NaN or infinite, e.g.
// from a direction with non-finite entries.
var ErrNonFiniteL = errors.New("surrogate: non-finite Lipschitz estimate")

// LipschitzGlobal returns, for each direction d_i, the global bound
// σ_y · max|tanh”| · Σ_h |w2_h| (W1 diag(1/σ_x) d_i)_h², an upper bound on the
// second derivative of f̂ along d_i anywhere, floored as documented in the
// package documentation.
func (m *Model) LipschitzGlobal(dirs Directions) ([]float64, error) {
	g, _, err := m.Lipschitz(nil, dirs)
	return g, err
}

// LipschitzLocal returns, for each direction d_i, the local curvature
// |d_iᵀ ∇²f̂(x) d_i|, floored as documented in the package documentation.
func (m *Model) LipschitzLocal(x []float64, dirs Directions) ([]float64, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: x is nil", ErrDim)
	}
	_, l, err := m.Lipschitz(x, dirs)
	return l, err
}

// Lipschitz returns the global and, when x is not nil, the local estimates
// along every direction in one pass over W1·D (see LipschitzGlobal and
// LipschitzLocal). With x nil, local is nil.
func (m *Model) Lipschitz(x []float64, dirs Directions) (global, local []float64, err error) {
	if dirs == nil || dirs.Dim() != m.dim {
		dd := -1
		if dirs != nil {
			dd = dirs.Dim()
		}
		return nil, nil, fmt.Errorf("%w: directions of dimension %d, want %d", ErrDim, dd, m.dim)
	}
	if x != nil {
		if err := m.checkX(x); err != nil {
			return nil, nil, err
		}
	}
	count := dirs.Count()
	if count < 0 {
		return nil, nil, fmt.Errorf("%w: %d directions", ErrDim, count)
	}
	_, _, w2, _ := m.params(m.theta)
	a := make([]float64, m.width) // global coefficients, ≥ 0
	for h, v := range w2 {
		a[h] = m.sdY * maxTanh2 * math.Abs(v)
	}
	var c []float64 // local coefficients, signed
	if x != nil {
		c = make([]float64, m.width)
		m.curvCoef(x, c)
		local = make([]float64, count)
	}
	global = make([]float64, count)
	if isIdentity(dirs) {
		m.canonicalPass(a, c, global, local)
	} else if err := m.blockPass(dirs, a, c, global, local); err != nil {
		return nil, nil, err
	}
	if err := m.floor(global); err != nil {
		return nil, nil, err
	}
	if local != nil {
		if err := m.floor(local); err != nil {
			return nil, nil, err
		}
	}
	return global, local, nil
}

// floor applies the relative and absolute floors in place.
func (m *Model) floor(l []float64) error {
	mx := 0.0
	for i, v := range l {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: L[%d] = %v", ErrNonFiniteL, i, v)
		}
		mx = max(mx, v)
	}
	f := m.cfg.Floor * mx
	if mx == 0 {
		f = m.cfg.AbsFloor
	}
	for i, v := range l {
		l[i] = max(v, f)
	}
	return nil
}

// canonicalPass handles D = I: (W1 diag(1/σ) e_j)_h = W1[h,j]/σ_j.
func (m *Model) canonicalPass(a, c, global, local []float64) {
	w1, _, _, _ := m.params(m.theta)
	d := m.dim
	for h := range m.width {
		row := w1[h*d : (h+1)*d]
		ah := a[h]
		for j, w := range row {
			global[j] += ah * w * w
		}
		if local != nil {
			ch := c[h]
			for j, w := range row {
				local[j] += ch * w * w
			}
		}
	}
	for j := range global {
		s := 1 / (m.sdX[j] * m.sdX[j])
		global[j] *= s
		if local != nil {
			local[j] = math.Abs(local[j] * s)
		}
	}
}

// blockPass computes W1 diag(1/σ) D in blocks of blockCols columns generated
// by one producer goroutine and consumed by GOMAXPROCS workers, reducing each
// column to its weighted sums of squares at once.
func (m *Model) blockPass(dirs Directions, a, c, global, local []float64) error {
	d, count := m.dim, dirs.Count()
	if count == 0 {
		return nil
	}
	// Pack W1 diag(1/σ) in panels of kernRows rows, k-major, zero-padded.
	np := (m.width + kernRows - 1) / kernRows
	w1, _, _, _ := m.params(m.theta)
	packed := make([]float64, np*kernRows*d)
	for h := range m.width {
		p, r := h/kernRows, h%kernRows
		dst := packed[p*kernRows*d:]
		row := w1[h*d : (h+1)*d]
		for k, w := range row {
			dst[k*kernRows+r] = w / m.sdX[k]
		}
	}
	ap := make([]float64, np*kernRows)
	copy(ap, a)
	var cp []float64
	if local != nil {
		cp = make([]float64, np*kernRows)
		copy(cp, c)
	}

	nb := (count + blockCols - 1) / blockCols
	nw := max(1, min(runtime.GOMAXPROCS(0), nb))
	type job struct {
		blk int
		buf []float64
	}
	free := make(chan []float64, nw+2)
	for range nw + 2 {
		free <- make([]float64, blockCols*d)
	}
	full := make(chan job, nw+2)
	done := make(chan struct{})
	var perr error
	go func() {
		defer close(full)
		defer func() {
			if r := recover(); r != nil {
				perr = fmt.Errorf("surrogate: Directions.Column panicked: %v", r)
			}
		}()
		for blk := range nb {
			var buf []float64
			select {
			case buf = <-free:
			case <-done:
				return
			}
			j0 := blk * blockCols
			nc := min(blockCols, count-j0)
			for cc := range nc {
				dirs.Column(j0+cc, buf[cc*d:(cc+1)*d])
			}
			clear(buf[nc*d:])
			full <- job{blk, buf}
		}
	}()
	var wg sync.WaitGroup
	for range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ng := blockCols / kernCols
			tiles := make([][kernRows * kernCols]float64, np*ng)
			for jb := range full {
				clear(tiles)
				for k0 := 0; k0 < d; k0 += chunkK {
					kk := min(chunkK, d-k0)
					for p := range np {
						pa := packed[p*kernRows*d+k0*kernRows:]
						for g := range ng {
							kern8x6(kk, pa, jb.buf[g*kernCols*d+k0:], d, &tiles[p*ng+g])
						}
					}
				}
				j0 := jb.blk * blockCols
				nc := min(blockCols, count-j0)
				for cc := range nc {
					g, col := cc/kernCols, cc%kernCols
					sg, sl := 0.0, 0.0
					for p := range np {
						t := tiles[p*ng+g][col*kernRows : (col+1)*kernRows]
						for r, v := range t {
							sg += ap[p*kernRows+r] * v * v
							if cp != nil {
								sl += cp[p*kernRows+r] * v * v
							}
						}
					}
					global[j0+cc] = sg
					if local != nil {
						local[j0+cc] = math.Abs(sl)
					}
				}
				free <- jb.buf
			}
		}()
	}
	wg.Wait()
	close(done)
	return perr
}
