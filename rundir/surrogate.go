package rundir

// SurrogateDiag is what a run's surrogate knew about the points it had
// not yet seen, over the iterations of one evaluation window.
type SurrogateDiag struct {
	// Rank is the mean over the window's iterations of the rank
	// correlation between its predictions for an iteration's points, made
	// before they were measured, and their values (NaN: none was made).
	Rank float64
	// Share is the fraction of the window's gradient estimate's energy
	// (Σ over its iterations of Σ_j w_j Δ_j d_j) in the Dim-dimensional
	// subspace the surrogate favoured at the window's start, RandomShare
	// the same for a random subspace of that dimension (about Dim/n); NaN
	// when it favoured none.
	Share, RandomShare float64
	Dim                int
}
