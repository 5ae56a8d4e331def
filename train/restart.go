package train

// Restart is the rule by which a run gives up an attempt that is still on
// the first plateau of a task with early termination (a robot that keeps
// falling) and starts afresh within the same budget: once an attempt has
// run After training episodes, its training episodes since After/2 are
// checked, and if they last on average less than Length of the horizon,
// the attempt is replaced by a fresh one (new seed, so a new basis,
// directions and start states; x = 0; an empty normalizer). The episode
// count, the curve, the evaluations and the best policy carry over; a run
// that reached its threshold is never restarted. The zero Restart never
// restarts.
type Restart struct {
	After  int     `json:"after,omitempty"`
	Length float64 `json:"length,omitempty"`
}

// On says whether the rule can restart a run.
func (r Restart) On() bool { return r.After > 0 }
