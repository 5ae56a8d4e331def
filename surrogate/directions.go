package surrogate

import "gonum.org/v1/gonum/mat"

// Directions is a set of Count directions d_0..d_{Count−1} in R^Dim, the
// columns of a Dim×Count matrix D, given implicitly so that D need not be
// stored. Column writes d_j into dst (length Dim). The Lipschitz methods
// call Column sequentially, each j once, in increasing order, from one
// goroutine that may not be the caller's. The bases of package stp
// (stp.Canonical, stp.Gaussian, stp.Matrix) are Directions as they are;
// directions that also have a method Identity() bool returning true are
// taken to be the canonical basis (a fast path with no product).
type Directions interface {
	Dim() int
	Count() int
	Column(j int, dst []float64)
}

// identity is implemented by directions that are the canonical basis
// e_1..e_n (stp.Canonical is one): when Identity returns true and Count
// equals Dim, the Lipschitz methods skip the product W1·D.
type identity interface {
	Identity() bool
}

func isIdentity(d Directions) bool {
	id, ok := d.(identity)
	return ok && id.Identity() && d.Count() == d.Dim()
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
