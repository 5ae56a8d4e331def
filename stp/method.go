package stp

import (
	"gonum.org/v1/gonum/optimize"
)

var (
	_ optimize.Method   = (*STP)(nil)
	_ optimize.Statuser = (*STP)(nil)
	_ optimize.Method   = (*STPIS)(nil)
	_ optimize.Statuser = (*STPIS)(nil)
)

// STP is plain STP (uniform sampling, v_i = max L_i, or 1 without L) as a
// gonum optimize.Method: optimize.Minimize(problem, x0, settings, &STP{...}).
// Settings.Sampling, P and V are ignored; Goal must be Minimize (the zero
// value), since optimize minimizes. Each STP iteration is one
// optimize.MajorIteration. With Settings.Src nil, Init resets the random
// stream, so the same value gives the same result when run again.
//
// Errors (bad settings, a step size that cannot be computed) end the run
// with optimize.Failure, and Status returns the error.
type STP struct {
	Settings Settings

	m methodRunner
}

// Init implements optimize.Method. STP evaluates one point at a time.
func (m *STP) Init(dim, tasks int) int {
	s := m.Settings
	s.Sampling = Uniform
	m.m.init(s)
	return 1
}

// Run implements optimize.Method.
func (m *STP) Run(operation chan<- optimize.Task, result <-chan optimize.Task, tasks []optimize.Task) {
	m.m.run(operation, result, tasks)
}

// Uses implements optimize.Method: STP needs only function values.
func (*STP) Uses(has optimize.Available) (optimize.Available, error) {
	return optimize.Available{}, nil
}

// Status implements optimize.Statuser.
func (m *STP) Status() (optimize.Status, error) { return m.m.status() }

// STPIS is STP_IS (Algorithm 1 with importance sampling) as a gonum
// optimize.Method. Settings.Sampling Uniform (the zero value) is read as
// ISL (p ∝ L_i, v_i = L_i); ISSqrt and Custom are used as given. Settings.L
// is required unless Sampling is Custom. Otherwise as STP.
type STPIS struct {
	Settings Settings

	m methodRunner
}

// Init implements optimize.Method.
func (m *STPIS) Init(dim, tasks int) int {
	s := m.Settings
	if s.Sampling == Uniform {
		s.Sampling = ISL
	}
	m.m.init(s)
	return 1
}

// Run implements optimize.Method.
func (m *STPIS) Run(operation chan<- optimize.Task, result <-chan optimize.Task, tasks []optimize.Task) {
	m.m.run(operation, result, tasks)
}

// Uses implements optimize.Method.
func (*STPIS) Uses(has optimize.Available) (optimize.Available, error) {
	return optimize.Available{}, nil
}

// Status implements optimize.Statuser.
func (m *STPIS) Status() (optimize.Status, error) { return m.m.status() }

// methodRunner drives a Stepper through optimize's channels.
type methodRunner struct {
	set     Settings
	stepper *Stepper
	err     error
}

func (r *methodRunner) init(s Settings) {
	r.set = s
	r.stepper = nil
	r.err = nil
}

func (r *methodRunner) status() (optimize.Status, error) {
	if r.err != nil {
		return optimize.Failure, r.err
	}
	return optimize.NotTerminated, nil
}

func (r *methodRunner) run(operation chan<- optimize.Task, result <-chan optimize.Task, tasks []optimize.Task) {
	task := tasks[0]
	set := r.set
	if task.Op&optimize.FuncEvaluation != 0 {
		f := task.F
		set.F0 = &f
	}
	if set.Goal != Minimize {
		r.err = ErrSettings
	}
	var err error
	if r.err == nil {
		r.stepper, err = NewStepper(task.X, set)
		r.err = err
	}
	if r.err != nil {
		task.Op = optimize.MethodDone
		operation <- task
		r.drain(operation, result)
		return
	}
	s := r.stepper
Loop:
	for {
		b, err := s.Propose()
		if err != nil {
			r.err = err
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
			r.err = err
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
	if r.err != nil {
		task.Op = optimize.MethodDone
		operation <- task
	}
	r.drain(operation, result)
}

// drain waits for optimize to close result, then closes operation.
func (r *methodRunner) drain(operation chan<- optimize.Task, result <-chan optimize.Task) {
	for range result {
	}
	close(operation)
}
