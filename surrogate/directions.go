package surrogate

import "gonum.org/v1/gonum/mat"

// Directions is a set of Count directions d_0..d_{Count−1} in R^Dim, the
// columns of a Dim×Count matrix D, given implicitly so that D need not be
// stored. Column writes d_j into dst (length Dim). The Lipschitz methods
// call Column sequentially, each j once, in increasing order, from one
// goroutine that may not be the caller's.
type Directions interface {
	Dim() int
	Count() int
	Column(j int, dst []float64)
}

// Canonical returns the canonical basis e_1..e_n of R^n. The Lipschitz
// methods recognize it and skip the product W1·D.
func Canonical(n int) Directions { return canonical(n) }

type canonical int

func (c canonical) Dim() int   { return int(c) }
func (c canonical) Count() int { return int(c) }
func (c canonical) Column(j int, dst []float64) {
	for i := range dst {
		dst[i] = 0
	}
	dst[j] = 1
}

// FromMatrix returns the columns of a as directions.
func FromMatrix(a mat.Matrix) Directions { return matrixDirs{a} }

type matrixDirs struct{ a mat.Matrix }

func (d matrixDirs) Dim() int   { r, _ := d.a.Dims(); return r }
func (d matrixDirs) Count() int { _, c := d.a.Dims(); return c }
func (d matrixDirs) Column(j int, dst []float64) {
	if cv, ok := d.a.(mat.ColViewer); ok {
		v := cv.ColView(j)
		for i := range dst {
			dst[i] = v.AtVec(i)
		}
		return
	}
	mat.Col(dst, j, d.a)
}

// FromFunc returns count directions in R^dim whose j-th one is written into
// dst by column(j, dst). column is called as described for Directions; use
// it to generate a basis from a seed instead of storing it.
func FromFunc(dim, count int, column func(j int, dst []float64)) Directions {
	return funcDirs{dim, count, column}
}

type funcDirs struct {
	dim, count int
	f          func(int, []float64)
}

func (d funcDirs) Dim() int                    { return d.dim }
func (d funcDirs) Count() int                  { return d.count }
func (d funcDirs) Column(j int, dst []float64) { d.f(j, dst) }
