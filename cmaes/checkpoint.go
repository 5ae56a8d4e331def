package cmaes

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// state is what a checkpoint holds: the optimizer between generations.
type state struct {
	Settings Settings  `json:"settings"`
	Mean     []float64 `json:"mean"`
	Sigma    float64   `json:"sigma"`
	C        []float64 `json:"c"` // row-major, full
	B        []float64 `json:"b"`
	D        []float64 `json:"d"`
	PC       []float64 `json:"pc"`
	PS       []float64 `json:"ps"`
	Gen      int       `json:"gen"`
	Eigen    int       `json:"eigen"`
	PCG      []byte    `json:"pcg"`
}

// MarshalBinary encodes the state between generations, the PCG stream
// included, so that a restored optimizer continues bit for bit.
func (o *Optimizer) MarshalBinary() ([]byte, error) {
	if o.z != nil {
		return nil, errors.New("cmaes: cannot checkpoint with a pending proposal")
	}
	pcg, err := o.pcg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("cmaes: %w", err)
	}
	n := o.p.n
	c := make([]float64, 0, n*n)
	for i := range n {
		for j := range n {
			c = append(c, o.c.At(i, j))
		}
	}
	return json.Marshal(state{Settings: o.s, Mean: o.mean, Sigma: o.sigma, C: c, B: o.b.RawMatrix().Data,
		D: o.d, PC: o.pc, PS: o.ps, Gen: o.gen, Eigen: o.eigen, PCG: pcg})
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (o *Optimizer) UnmarshalBinary(data []byte) error {
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("cmaes: restore: %w", err)
	}
	n := len(st.Mean)
	if err := st.Settings.check(n); err != nil {
		return fmt.Errorf("cmaes: restore: %w", err)
	}
	if len(st.C) != n*n || len(st.B) != n*n || len(st.D) != n || len(st.PC) != n || len(st.PS) != n {
		return fmt.Errorf("cmaes: restore: the state's sizes do not fit %d parameters", n)
	}
	pcg := &rand.PCG{}
	if err := pcg.UnmarshalBinary(st.PCG); err != nil {
		return fmt.Errorf("cmaes: restore: %w", err)
	}
	*o = Optimizer{s: st.Settings, p: newParams(n, st.Settings.lambda(n)), mean: st.Mean, sigma: st.Sigma,
		c: mat.NewSymDense(n, st.C), b: mat.NewDense(n, n, st.B), d: st.D, pc: st.PC, ps: st.PS,
		gen: st.Gen, eigen: st.Eigen, pcg: pcg, rng: rand.New(pcg)}
	return nil
}
