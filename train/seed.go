package train

// DeriveSeed derives an independent 64-bit seed from a seed and a stream
// number (SplitMix64's finalizer): every random draw of a run, its
// optimizer's and its episodes', comes from its one seed this way.
func DeriveSeed(seed, stream uint64) uint64 {
	z := seed ^ (stream * 0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// mix is DeriveSeed under the name the method files use.
var mix = DeriveSeed
