package train

import (
	"math"
	"strconv"
)

// Guard is the rule by which a run does not end below where it started:
// when the evaluation that ends the run falls below the initial
// evaluation e0 by more than Drop·|e0|, x_k and the normalizer go back to
// the best evaluated point (the one best_policy.json holds), which is then
// evaluated afresh (on the last iteration's evaluation seeds, which it
// has not seen), so that the run's final evaluation is of the point it
// ends on. It acts at the end only: backing off at every evaluation
// stopped the dips a run goes through while it learns
// (docs/experiments.md). The zero Guard never backs off.
type Guard struct {
	On   bool    `json:"on,omitempty"`
	Drop float64 `json:"drop,omitempty"`
}

// String writes the rule as the guard setting takes it: 0.5, or none.
func (g Guard) String() string {
	if !g.On {
		return "none"
	}
	return strconv.FormatFloat(g.Drop, 'g', -1, 64)
}

// ParseGuard reads a guard: a fraction of |e0| (0.5), or none.
func ParseGuard(v string) (Guard, error) {
	if v == "none" {
		return Guard{}, nil
	}
	d, err := strconv.ParseFloat(v, 64)
	if err != nil || !(d >= 0 && d <= 10) {
		return Guard{}, bad("guard", "%q is not none or a fraction of the initial evaluation in [0, 10]", v)
	}
	return Guard{On: true, Drop: d}, nil
}

// level is the evaluation under which the guard backs off.
func (g Guard) level(e0 float64) float64 { return e0 - g.Drop*math.Abs(e0) }

// GuardLevel is the evaluation under which the guard backs off, for an
// initial evaluation e0.
func (g Guard) GuardLevel(e0 float64) float64 { return g.level(e0) }
