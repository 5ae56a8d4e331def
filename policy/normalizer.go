package policy

import (
	"fmt"
	"math"
)

// Normalizer is a running mean and standard deviation of observations,
// merged exactly from per-episode statistics (count, mean, M2 = sum of
// squared deviations) with Chan et al.'s parallel formula.
//
// Before any data its mean is 0 and its std 1, as ARS's MeanStdFilter.
// The variance is M2/(n−1) for n > 1, as ARS's RunningStat.
type Normalizer struct {
	Count uint64    `json:"count"`
	Mean  []float64 `json:"mean"`
	M2    []float64 `json:"m2"`
}

// NewNormalizer returns an empty normalizer for dim features.
func NewNormalizer(dim int) (*Normalizer, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("policy: normalizer dimension must be positive, got %d", dim)
	}
	return &Normalizer{Mean: make([]float64, dim), M2: make([]float64, dim)}, nil
}

// Dim is the number of features.
func (n *Normalizer) Dim() int { return len(n.Mean) }

// Merge folds in the statistics of count observations with the given mean
// and M2. A count of zero is a no-op. Non-finite inputs are rejected and leave
// the normalizer unchanged.
func (n *Normalizer) Merge(count uint64, mean, m2 []float64) error {
	if count == 0 {
		return nil
	}
	if len(mean) != len(n.Mean) || len(m2) != len(n.Mean) {
		return fmt.Errorf("policy: merge: mean %d and m2 %d entries, want %d", len(mean), len(m2), len(n.Mean))
	}
	for j := range mean {
		if math.IsNaN(mean[j]) || math.IsInf(mean[j], 0) || math.IsNaN(m2[j]) || math.IsInf(m2[j], 0) || m2[j] < 0 {
			return fmt.Errorf("policy: merge: feature %d has mean %v, m2 %v", j, mean[j], m2[j])
		}
	}
	na, nb := float64(n.Count), float64(count)
	tot := na + nb
	for j := range n.Mean {
		delta := mean[j] - n.Mean[j]
		n.Mean[j] += delta * nb / tot
		n.M2[j] += m2[j] + delta*delta*na*nb/tot
	}
	n.Count += count
	return nil
}

// Var returns the per-feature variance: M2/(n−1) for n > 1, mean² for n = 1
// (ARS's convention), and 1 for n = 0.
func (n *Normalizer) Var() []float64 {
	v := make([]float64, len(n.Mean))
	for j := range v {
		switch {
		case n.Count > 1:
			v[j] = n.M2[j] / float64(n.Count-1)
		case n.Count == 1:
			v[j] = n.Mean[j] * n.Mean[j]
		default:
			v[j] = 1
		}
	}
	return v
}

// Snapshot returns a frozen copy of the current mean and std, to be used for
// every point of one iteration.
func (n *Normalizer) Snapshot() Frozen {
	f := Frozen{Mean: append([]float64(nil), n.Mean...), Std: n.Var()}
	for j, v := range f.Std {
		f.Std[j] = math.Sqrt(v)
	}
	return f
}

// Clone returns a deep copy.
func (n *Normalizer) Clone() *Normalizer {
	return &Normalizer{Count: n.Count, Mean: append([]float64(nil), n.Mean...), M2: append([]float64(nil), n.M2...)}
}

// Frozen is a fixed normalization: the mean and std the policy divides by.
type Frozen struct {
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
}

// Identity returns the normalization that leaves observations unchanged.
func Identity(dim int) Frozen {
	f := Frozen{Mean: make([]float64, dim), Std: make([]float64, dim)}
	for j := range f.Std {
		f.Std[j] = 1
	}
	return f
}
