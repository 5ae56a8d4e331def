package convex

import (
	"fmt"
	"math"
)

// CSC is an m×n sparse matrix in compressed sparse column form: the
// non-zeros of column j are Val[ColPtr[j]:ColPtr[j+1]], in the rows
// RowIdx[ColPtr[j]:ColPtr[j+1]] (increasing). gonum/mat has no general
// sparse type; this one holds what the coordinate methods need, a column's
// non-zeros, so that f along a coordinate costs O(non-zeros of the column).
type CSC struct {
	M, N   int
	ColPtr []int
	RowIdx []int
	Val    []float64
}

// NewCSC builds an m×len(cols) CSC matrix from dense columns (each of
// length m), keeping the non-zero entries. A column of the wrong length or
// a NaN or infinite entry is an error naming the column and row.
func NewCSC(m int, cols [][]float64) (*CSC, error) {
	a := &CSC{M: m, N: len(cols), ColPtr: make([]int, 1, len(cols)+1)}
	for j, c := range cols {
		if len(c) != m {
			return nil, fmt.Errorf("convex: column %d has %d rows, want %d", j, len(c), m)
		}
		for r, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("convex: column %d row %d is %v, want finite", j, r, v)
			}
			if v != 0 {
				a.RowIdx = append(a.RowIdx, r)
				a.Val = append(a.Val, v)
			}
		}
		a.ColPtr = append(a.ColPtr, len(a.Val))
	}
	return a, nil
}

// Col returns the rows and values of column j's non-zeros (not copies).
func (a *CSC) Col(j int) (rows []int, vals []float64) {
	lo, hi := a.ColPtr[j], a.ColPtr[j+1]
	return a.RowIdx[lo:hi], a.Val[lo:hi]
}

// NNZ returns the number of stored non-zeros.
func (a *CSC) NNZ() int { return len(a.Val) }

// ColNorm2 returns ‖A(:,j)‖².
func (a *CSC) ColNorm2(j int) float64 {
	_, v := a.Col(j)
	return dot(v, v)
}

// MulVec returns A x (length M).
func (a *CSC) MulVec(x []float64) []float64 {
	out := make([]float64, a.M)
	for j, xj := range x {
		if xj == 0 {
			continue
		}
		rows, vals := a.Col(j)
		for k, r := range rows {
			out[r] += xj * vals[k]
		}
	}
	return out
}

// ColDot returns A(:,j)ᵀ v for a dense v of length M.
func (a *CSC) ColDot(j int, v []float64) (s float64) {
	rows, vals := a.Col(j)
	for k, r := range rows {
		s += vals[k] * v[r]
	}
	return s
}

// MulTransVec returns Aᵀ v (length N) for a dense v of length M.
func (a *CSC) MulTransVec(v []float64) []float64 {
	out := make([]float64, a.N)
	for j := range out {
		out[j] = a.ColDot(j, v)
	}
	return out
}

// Gram returns the n×n matrix Σ_r w_r a_r a_rᵀ (AᵀWA with W = diag(w)) in
// row-major order; w == nil means W = I. It costs O(n · nnz) time and
// O(n² + m) memory.
func (a *CSC) Gram(w []float64) []float64 {
	g := make([]float64, a.N*a.N)
	dense := make([]float64, a.M)
	for i := range a.N {
		rows, vals := a.Col(i)
		for k, r := range rows {
			dense[r] = vals[k]
			if w != nil {
				dense[r] *= w[r]
			}
		}
		for j := i; j < a.N; j++ {
			s := a.ColDot(j, dense)
			g[i*a.N+j], g[j*a.N+i] = s, s
		}
		for _, r := range rows {
			dense[r] = 0
		}
	}
	return g
}
