package surrogate

// Micro-kernel for W1·D: with a panel of 8 rows of W1 packed k-major
// (a[kk*8+r]) and 6 columns of D (column c at b[c*ldb:]), it adds
// Σ_kk a[kk*8+r]·b[c*ldb+kk] to c[c*8+r] for kk < k.
const (
	kernRows = 8
	kernCols = 6
)

// kern8x6Go is the portable kernel.
func kern8x6Go(k int, a, b []float64, ldb int, c *[kernRows * kernCols]float64) {
	a = a[:8*k]
	for col := range kernCols {
		bc := b[col*ldb : col*ldb+k]
		var s0, s1, s2, s3, s4, s5, s6, s7 float64
		for kk, v := range bc {
			ar := a[kk*8 : kk*8+8]
			s0 += ar[0] * v
			s1 += ar[1] * v
			s2 += ar[2] * v
			s3 += ar[3] * v
			s4 += ar[4] * v
			s5 += ar[5] * v
			s6 += ar[6] * v
			s7 += ar[7] * v
		}
		t := c[col*8 : col*8+8]
		t[0] += s0
		t[1] += s1
		t[2] += s2
		t[3] += s3
		t[4] += s4
		t[5] += s5
		t[6] += s6
		t[7] += s7
	}
}
