package stp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Basis is a set of n directions b_1..b_n in R^n (the columns of a square
// matrix B). Indices are 0-based. Its method set is also that of
// surrogate.Directions (which this package does not import), so a Basis can
// be passed to the surrogate's Lipschitz estimates as it is.
type Basis interface {
	// Dim returns n.
	Dim() int
	// Count returns the number of directions, which must equal Dim().
	Count() int
	// Column writes b_i into dst, which has length Dim(). It must be safe
	// to call from another goroutine than the one that built the basis.
	Column(i int, dst []float64)
}

var (
	_ Basis = Canonical(0)
	_ Basis = Gaussian{}
	_ Basis = (*Matrix)(nil)
	_ Basis = (*Orthogonal)(nil)
)

// Canonical is the canonical basis e_1..e_n of R^n. Canonical(n) is a
// valid Basis; its value is the dimension.
type Canonical int

// Dim returns n.
func (c Canonical) Dim() int { return int(c) }

// Count returns n.
func (c Canonical) Count() int { return int(c) }

// Identity reports that the directions are the columns of the identity
// matrix, so that a consumer (the surrogate's Lipschitz estimates) may skip
// the product with B.
func (Canonical) Identity() bool { return true }

// Column writes e_i into dst.
func (c Canonical) Column(i int, dst []float64) {
	clear(dst)
	dst[i] = 1
}

// Gaussian is the paper's rotated basis: B has i.i.d. N(0,1) entries. Column
// i is regenerated on demand from a PCG seeded with (Seed, i), so the basis
// costs O(n) memory and O(n) time per column instead of O(n²) memory
// (Humanoid: n = 5916 would need 280 MB stored). The same (N, Seed) gives
// the same matrix on every machine.
//
// The paper uses raw N(0,1) columns (norm ≈ √n); Normalize rescales each
// column to unit Euclidean norm, which changes the scale of α and of the
// Lipschitz constants along the columns (L along a raw column is ≈ n times
// larger than along the normalized one).
type Gaussian struct {
	N         int
	Seed      uint64
	Normalize bool
}

// Dim returns n.
func (g Gaussian) Dim() int { return g.N }

// Count returns n.
func (g Gaussian) Count() int { return g.N }

// Column writes b_i into dst.
func (g Gaussian) Column(i int, dst []float64) {
	r := rand.New(rand.NewPCG(g.Seed, uint64(i)^0x9e3779b97f4a7c15))
	var ss float64
	for j := range dst {
		v := r.NormFloat64()
		dst[j] = v
		ss += v * v
	}
	if g.Normalize && ss > 0 {
		s := 1 / math.Sqrt(ss)
		for j := range dst {
			dst[j] *= s
		}
	}
}

// Matrix is a user-given basis, stored as its columns. Build it with
// [NewMatrix] so the shape is checked.
type Matrix struct {
	cols [][]float64
}

// NewMatrix returns the basis whose i-th direction is cols[i]. The matrix
// must be square (len(cols) columns of length len(cols)) with finite,
// non-zero columns. If normalize is true every column is rescaled to unit
// norm. The columns are copied.
func NewMatrix(cols [][]float64, normalize bool) (*Matrix, error) {
	n := len(cols)
	if n == 0 {
		return nil, fmt.Errorf("%w: empty basis", ErrDimension)
	}
	m := &Matrix{cols: make([][]float64, n)}
	for i, c := range cols {
		if len(c) != n {
			return nil, fmt.Errorf("%w: basis column %d has length %d, want %d", ErrDimension, i, len(c), n)
		}
		var ss float64
		for _, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: basis column %d is not finite", ErrSettings, i)
			}
			ss += v * v
		}
		if ss == 0 {
			return nil, fmt.Errorf("%w: basis column %d is zero", ErrSettings, i)
		}
		m.cols[i] = append([]float64(nil), c...)
		if normalize {
			s := 1 / math.Sqrt(ss)
			for j := range m.cols[i] {
				m.cols[i][j] *= s
			}
		}
	}
	return m, nil
}

// Dim returns n.
func (m *Matrix) Dim() int { return len(m.cols) }

// Count returns n.
func (m *Matrix) Count() int { return len(m.cols) }

// Column writes b_i into dst.
func (m *Matrix) Column(i int, dst []float64) { copy(dst, m.cols[i]) }

// OrthogonalBlock is the largest block that an [Orthogonal] basis rotates
// as a whole.
const OrthogonalBlock = 256

// Orthogonal is a random orthogonal basis. The coordinates are shuffled by
// a random permutation and cut into blocks of at most OrthogonalBlock
// (nearly equal sizes), and each block is rotated by a Haar-random
// orthogonal matrix (the Q of a Gaussian matrix's QR, with the signs of R's
// diagonal moved into Q). For n ≤ OrthogonalBlock it is a Haar-random
// rotation of R^n; the blocks keep its memory at O(n · OrthogonalBlock)
// for large policies (Humanoid).
//
// Its columns are orthonormal, so directions drawn uniformly from them
// explore every direction of R^n alike: E[b bᵀ] = I/n, as for ARS's
// Gaussian directions. The columns of a square [Gaussian] basis are not
// orthogonal: B Bᵀ has a condition number of the order of n², and the
// directions near its smallest singular vectors are hardly ever explored.
type Orthogonal struct {
	n      int
	perm   []int       // position → coordinate
	start  []int       // block k holds positions start[k]..start[k+1]-1
	blocks [][]float64 // block k's rotation, row-major
	block  []int       // position → block
}

// NewOrthogonal returns the orthogonal basis of R^n drawn from seed. The
// same (n, seed) gives the same basis on every machine.
func NewOrthogonal(n int, seed uint64) (*Orthogonal, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: orthogonal basis of dimension %d", ErrDimension, n)
	}
	r := rand.New(rand.NewPCG(seed, 0x0a7c0b1a5e5))
	o := &Orthogonal{n: n, perm: r.Perm(n), block: make([]int, n)}
	k := (n + OrthogonalBlock - 1) / OrthogonalBlock
	for b := 0; b <= k; b++ {
		o.start = append(o.start, b*n/k)
	}
	for b := range k {
		m := o.start[b+1] - o.start[b]
		g := mat.NewDense(m, m, nil)
		for i := range m {
			for j := range m {
				g.Set(i, j, r.NormFloat64())
			}
		}
		var qr mat.QR
		qr.Factorize(g)
		var q, rr mat.Dense
		qr.QTo(&q)
		qr.RTo(&rr)
		rot := make([]float64, m*m)
		for i := range m {
			for j := range m {
				v := q.At(i, j)
				if rr.At(j, j) < 0 {
					v = -v
				}
				rot[i*m+j] = v
			}
		}
		o.blocks = append(o.blocks, rot)
		for p := o.start[b]; p < o.start[b+1]; p++ {
			o.block[p] = b
		}
	}
	return o, nil
}

// Dim returns n.
func (o *Orthogonal) Dim() int { return o.n }

// Count returns n.
func (o *Orthogonal) Count() int { return o.n }

// Column writes b_i into dst: column i−s of its block's rotation, on the
// block's coordinates.
func (o *Orthogonal) Column(i int, dst []float64) {
	clear(dst)
	b := o.block[i]
	s, m := o.start[b], o.start[b+1]-o.start[b]
	rot, c := o.blocks[b], i-s
	for r := range m {
		dst[o.perm[s+r]] = rot[r*m+c]
	}
}
