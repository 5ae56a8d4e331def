package loop

// RunEvalSeed is the seed of the evaluation a run of seed runSeed ran after
// iteration iter (iteration 0: the start policy's): `trainer eval --seed
// RunEvalSeed(seed, iter) --episodes <the run's eval-episodes>` on the
// policy evaluated there (a run's best_policy.json, at its best
// evaluation) replays that evaluation's episodes.
func RunEvalSeed(runSeed uint64, iter int) uint64 {
	return mix(mix(runSeed, evalStream), uint64(iter))
}
