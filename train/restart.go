package train

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Restart is the rule by which a run gives up an attempt that is still on
// the first plateau of a task with early termination (a robot that keeps
// falling) and starts afresh within the same budget: once an attempt has
// run After training episodes, its training episodes since After/2 are
// checked, and if they last on average less than Length of the horizon,
// the attempt is replaced by a fresh one (new seed, so a new basis,
// directions and start states; x = 0; an empty normalizer). With Early >
// 0, an earlier check at Early episodes (its episodes since Early/2 must
// last EarlyLength of the horizon) gives up the plainest failures sooner;
// an attempt that passes it still meets the check at After. An attempt is
// a function of its seed alone: its start states are drawn from its own
// iterations, so an attempt given up sooner leaves the next one as it
// would have been, only earlier. The episode count, the curve, the
// evaluations and the best policy carry over; a run that reached its
// threshold is never restarted. The zero Restart never restarts.
type Restart struct {
	After       int     `json:"after,omitempty"`
	Length      float64 `json:"length,omitempty"`
	Early       int     `json:"early,omitempty"`
	EarlyLength float64 `json:"early_length,omitempty"`
}

// On says whether the rule can restart a run.
func (r Restart) On() bool { return r.After > 0 }

// ReturnRestart is the rule by which a run gives up an attempt whose
// training returns stay far below the threshold, on a task whose slow
// attempts show early (HalfCheetah's that fail within the budget climb
// slowest from the start): once an attempt has run After training
// episodes, the mean return (unshifted, as the env gives it) of its
// training episodes since After/2 is checked, and if it is below Fraction
// of the threshold the attempt is replaced by a fresh one, as Restart
// replaces it. It reads training episodes only: evaluations, which the
// budget does not count, never steer a run. The zero ReturnRestart never
// restarts.
type ReturnRestart struct {
	After    int     `json:"after,omitempty"`
	Fraction float64 `json:"fraction,omitempty"`
}

// On says whether the rule can restart a run.
func (r ReturnRestart) On() bool { return r.After > 0 }

// String writes the rule as the restart-return key takes it: 1000x0.3 or
// none.
func (r ReturnRestart) String() string {
	if !r.On() {
		return "none"
	}
	return fmt.Sprintf("%dx%g", r.After, r.Fraction)
}

// ParseReturnRestart reads a return restart rule: AFTERxFRACTION
// (1000x0.3) or none.
func ParseReturnRestart(v string) (ReturnRestart, error) {
	if v == "none" || v == "0" {
		return ReturnRestart{}, nil
	}
	a, f, ok := strings.Cut(v, "x")
	after, err1 := strconv.Atoi(a)
	frac, err2 := strconv.ParseFloat(f, 64)
	if !ok || err1 != nil || err2 != nil || math.IsNaN(frac) {
		return ReturnRestart{}, bad("restart-return", "%q is not AFTERxFRACTION (1000x0.3) or none", v)
	}
	return ReturnRestart{After: after, Fraction: frac}, nil
}

// validate checks the rule against the run's limits: its fraction is of a
// positive threshold.
func (r ReturnRestart) validate(l Limits) error {
	switch {
	case r.After < 0:
		return bad("restart-return", "%d must be ≥ 0 (0: never restart; past max-episodes it never fires)", r.After)
	case !r.On() && r.Fraction != 0:
		return bad("restart-return", "a fraction %v needs its episodes (AFTERxFRACTION)", r.Fraction)
	case !r.On():
		return nil
	case !(r.Fraction > 0 && r.Fraction <= 1):
		return bad("restart-return", "fraction %v is outside (0, 1] (a fraction of the threshold)", r.Fraction)
	case !l.HasThreshold:
		return bad("restart-return", "needs a threshold (its fraction is of the threshold); the run has none")
	case !(l.Threshold > 0):
		return bad("restart-return", "needs a positive threshold (its fraction is of the threshold); the run's is %v", l.Threshold)
	}
	return nil
}
