package surrogate

import "golang.org/x/sys/cpu"

// useAVX2 reports whether the assembly kernel may run. Tests may clear it.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func kern8x6AVX2(k int, a, b *float64, ldb int, c *[kernRows * kernCols]float64)

func kern8x6(k int, a, b []float64, ldb int, c *[kernRows * kernCols]float64) {
	if k <= 0 {
		return
	}
	if useAVX2 {
		_ = a[8*k-1]
		_ = b[(kernCols-1)*ldb+k-1]
		kern8x6AVX2(k, &a[0], &b[0], ldb, c)
		return
	}
	kern8x6Go(k, a, b, ldb, c)
}
