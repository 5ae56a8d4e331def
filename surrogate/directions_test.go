package surrogate

import "testing"

// identityDirs is the canonical basis as a user type: with its Identity
// method the Lipschitz methods take the fast path (as for stp.Canonical).
type identityDirs int

func identityBasis(n int) Directions { return identityDirs(n) }

func (c identityDirs) Dim() int     { return int(c) }
func (c identityDirs) Count() int   { return int(c) }
func (identityDirs) Identity() bool { return true }
func (identityDirs) Column(j int, dst []float64) {
	clear(dst)
	dst[j] = 1
}

// funcDirs gives count directions in R^dim, the j-th written by f.
type funcDirs struct {
	dim, count int
	f          func(int, []float64)
}

func fromFunc(dim, count int, f func(j int, dst []float64)) Directions {
	return funcDirs{dim, count, f}
}

func (d funcDirs) Dim() int                    { return d.dim }
func (d funcDirs) Count() int                  { return d.count }
func (d funcDirs) Column(j int, dst []float64) { d.f(j, dst) }

func TestIdentityRecognized(t *testing.T) {
	if !isIdentity(identityBasis(3)) {
		t.Error("directions with Identity() true: not taken for the canonical basis")
	}
	if isIdentity(fromFunc(3, 3, identityDirs(3).Column)) {
		t.Error("directions without Identity taken for the canonical basis")
	}
}
