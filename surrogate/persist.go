package surrogate

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math/rand/v2"
)

// formatVersion is the version of the MarshalBinary format.
const formatVersion = 1

// savedModel is the gob-encoded form of a Model.
type savedModel struct {
	Version           int
	Dim, Width        int
	Cfg               Config
	Theta, Mom1, Mom2 []float64
	Step              uint64
	Scaled            bool
	MuX, SdX          []float64
	MuY, SdY          float64
	Xs, Ys            []float64
	Seen              uint64
	Dropped           int
	ResPCG, BatchPCG  []byte
}

// MarshalBinary encodes the model: configuration, weights, scaling, Adam
// moments and step count, history, counters and generator states. A model
// decoded with UnmarshalBinary continues bit-identically.
func (m *Model) MarshalBinary() ([]byte, error) {
	rs, err := m.resPCG.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("surrogate: encode reservoir generator: %w", err)
	}
	bs, err := m.batchPCG.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("surrogate: encode batch generator: %w", err)
	}
	s := savedModel{
		Version: formatVersion, Dim: m.dim, Width: m.width, Cfg: m.cfg,
		Theta: m.theta, Mom1: m.mom1, Mom2: m.mom2, Step: m.step,
		Scaled: m.scaled, MuX: m.muX, SdX: m.sdX, MuY: m.muY, SdY: m.sdY,
		Xs: m.xs, Ys: m.ys, Seen: m.seen, Dropped: m.dropped,
		ResPCG: rs, BatchPCG: bs,
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
		return nil, fmt.Errorf("surrogate: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary replaces m with a model encoded by MarshalBinary. On error
// m is unchanged.
func (m *Model) UnmarshalBinary(data []byte) error {
	var s savedModel
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return fmt.Errorf("%w: %w", ErrDecode, err)
	}
	if s.Version != formatVersion {
		return fmt.Errorf("%w: format version %d, want %d", ErrDecode, s.Version, formatVersion)
	}
	if s.Dim <= 0 || s.Width <= 0 {
		return fmt.Errorf("%w: dim %d, width %d", ErrDecode, s.Dim, s.Width)
	}
	cfg, err := s.Cfg.resolve(s.Dim)
	if err != nil || cfg.Width != s.Width {
		return fmt.Errorf("%w: bad config", ErrDecode)
	}
	np := s.Width*s.Dim + 2*s.Width + 1
	n := len(s.Ys)
	switch {
	case len(s.Theta) != np || len(s.Mom1) != np || len(s.Mom2) != np:
		return fmt.Errorf("%w: %d parameters, want %d", ErrDecode, len(s.Theta), np)
	case len(s.MuX) != s.Dim || len(s.SdX) != s.Dim:
		return fmt.Errorf("%w: scaling length", ErrDecode)
	case len(s.Xs) != n*s.Dim || n > cfg.HistoryCap || uint64(n) > s.Seen && n > 0:
		return fmt.Errorf("%w: history of %d points", ErrDecode, n)
	}
	rp, bp := new(rand.PCG), new(rand.PCG)
	if err := rp.UnmarshalBinary(s.ResPCG); err != nil {
		return fmt.Errorf("%w: reservoir generator: %w", ErrDecode, err)
	}
	if err := bp.UnmarshalBinary(s.BatchPCG); err != nil {
		return fmt.Errorf("%w: batch generator: %w", ErrDecode, err)
	}
	*m = Model{
		dim: s.Dim, width: s.Width, cfg: cfg,
		theta: s.Theta, mom1: s.Mom1, mom2: s.Mom2, grad: make([]float64, np), step: s.Step,
		scaled: s.Scaled, muX: s.MuX, sdX: s.SdX, muY: s.MuY, sdY: s.SdY,
		xs: s.Xs, ys: s.Ys, seen: s.Seen, dropped: s.Dropped,
		resPCG: rp, batchPCG: bp, resRng: rand.New(rp), batchRng: rand.New(bp),
	}
	if m.xs == nil {
		m.xs = []float64{}
	}
	return nil
}
