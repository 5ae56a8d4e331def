//go:build !amd64

package surrogate

// useAVX2 is always false off amd64; tests may set it.
var useAVX2 = false

func kern8x6(k int, a, b []float64, ldb int, c *[kernRows * kernCols]float64) {
	if k <= 0 {
		return
	}
	kern8x6Go(k, a, b, ldb, c)
}
