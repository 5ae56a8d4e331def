package train

import "github.com/stpis/stpis/rundir"

// Diagnosis is an optimizer's surrogate diagnostic after an iteration
// (nil for one without a surrogate, or before its window is full), for the
// loop to put on the curve point.
func Diagnosis(o Optimizer) *rundir.SurrogateDiag {
	if d, ok := o.(interface{ diagnosis() *rundir.SurrogateDiag }); ok {
		return d.diagnosis()
	}
	return nil
}
