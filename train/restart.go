package train

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
