// Package loop drives a training run of a train.Config: the iterations,
// their episodes through a Roller (the env bridge), the evaluations, the
// restart and guard rules, and the run's checkpointed state.
//
// One iteration:
//  1. freeze the observation normalizer;
//  2. the optimizer proposes its points (x+, x−, x_k; ARS: x ± ν δ_j);
//  3. each point runs K training episodes, all in one logical Rollout, with
//     seeds derived from the run seed and the episode counter (or shared
//     by the points of an iteration, or by each ± pair: CommonSeeds);
//  4. the optimizer takes the mean (shifted) returns; every episode is
//     counted; the episodes' observation statistics are merged into the
//     normalizer; STP_IS's surrogate learns the (point, mean) pairs, and its
//     Lipschitz estimates along the basis set p and v;
//  5. every EvalEvery iterations (or, with EvalSpacing, after each
//     iteration that crosses a multiple of EvalSpacing episodes), and after
//     the last iteration, the current policy is evaluated on seeds of its
//     own (derived from the iteration); evaluation episodes are counted
//     apart and never touch the normalizer.
//
// Run.Train drives a run to its end and reports to a Recorder (a curve point
// per iteration, checkpoints), in the formats of package rundir. A Run's
// whole state marshals between iterations, so a resumed run continues
// bit-exactly.
package loop
