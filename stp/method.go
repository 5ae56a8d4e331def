package stp

import (
	"fmt"

	"gonum.org/v1/gonum/optimize"
)

var (
	_ optimize.Method   = (*Method)(nil)
	_ optimize.Statuser = (*Method)(nil)
)

// Method is STP or STP_IS (Algorithm 1) as a gonum optimize.Method:
// optimize.Minimize(problem, x0, settings, &Method{Settings: ...}).
// Settings.Sampling picks the method: Uniform (the zero value) is plain
// STP (p_i = 1/n, v_i = max L_i, or 1 without L); ISSqrt and ISL are
// STP_IS and need Settings.L; Custom takes Settings.P and V. The zero
// Method is plain STP with the Decaying rule (α0 = 1) on the canonical
// basis. Goal must be Minimize (the zero value), since optimize minimizes.
// Each STP iteration is one optimize.MajorIteration. With Settings.Src nil,
// Init resets the random stream, so the same value gives the same result
// when run again.
//
// Errors (bad settings, a step size that cannot be computed) end the run
// with optimize.Failure, and Status returns the error.
type Method struct {
	Settings Settings

	set     Settings
	stepper *Stepper
	err     error
}

// Init implements optimize.Method. Method evaluates one point at a time.
func (m *Method) Init(dim, tasks int) int {
	m.set = m.Settings
	m.stepper = nil
	m.err = nil
	return 1
}

// Uses implements optimize.Method: STP needs only function values.
func (*Method) Uses(has optimize.Available) (optimize.Available, error) {
	return optimize.Available{}, nil
}

// Status implements optimize.Statuser.
func (m *Method) Status() (optimize.Status, error) {
	if m.err != nil {
		return optimize.Failure, m.err
	}
	return optimize.NotTerminated, nil
}

// Run implements optimize.Method: it drives a Stepper through optimize's
// channels.
func (m *Method) Run(operation chan<- optimize.Task, result <-chan optimize.Task, tasks []optimize.Task) {
	task := tasks[0]
	set := m.set
	if task.Op&optimize.FuncEvaluation != 0 {
		f := task.F
		set.F0 = &f
	}
	if set.Goal != Minimize {
		m.err = fmt.Errorf("%w: Goal = %d, want Minimize (optimize minimizes)", ErrSettings, set.Goal)
	}
	var err error
	if m.err == nil {
		m.stepper, err = NewStepper(task.X, set)
		m.err = err
	}
	if m.err != nil {
		task.Op = optimize.MethodDone
		operation <- task
		m.drain(operation, result)
		return
	}
	s := m.stepper
Loop:
	for {
		b, err := s.Propose()
		if err != nil {
			m.err = err
			break
		}
		values := make([]float64, len(b.Points))
		for j, pt := range b.Points {
			copy(task.X, pt)
			task.Op = optimize.FuncEvaluation
			operation <- task
			res := <-result
			if res.Op == optimize.PostIteration {
				break Loop
			}
			values[j] = res.F
		}
		out, err := s.Tell(values)
		if err != nil {
			m.err = err
			break
		}
		if !out.Completed {
			continue
		}
		copy(task.X, s.x)
		task.F = s.f
		task.Op = optimize.MajorIteration
		operation <- task
		if res := <-result; res.Op == optimize.PostIteration {
			break
		}
	}
	if m.err != nil {
		task.Op = optimize.MethodDone
		operation <- task
	}
	m.drain(operation, result)
}

// drain waits for optimize to close result, then closes operation.
func (m *Method) drain(operation chan<- optimize.Task, result <-chan optimize.Task) {
	for range result {
	}
	close(operation)
}
