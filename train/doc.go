// Package train runs the paper's RL pipeline: STP or STP_IS (or the ARS V2-t
// baseline) over linear policies, with episodes from the env bridge.
//
// One iteration (see ARCHITECTURE.md):
//  1. freeze the observation normalizer;
//  2. the optimizer proposes its points (x+, x−, and x_k when re-measured;
//     ARS: x ± ν δ_j);
//  3. each point runs K training episodes, all in one logical Rollout, with
//     seeds derived from the run seed and the episode counter;
//  4. the optimizer keeps the best mean (shifted) return; every episode is
//     counted; the episodes' observation statistics are merged into the
//     normalizer; the surrogate gets the (point, mean) pairs;
//  5. every R iterations the surrogate takes its Adam steps and its
//     Lipschitz estimates along the basis set p and v;
//  6. every E iterations the current policy is evaluated on separate seeds;
//     evaluation episodes are counted apart and never touch the normalizer.
//
// A Run's whole state — the point, counters, optimizer with its RNG, the
// surrogate with its Adam state and history, the normalizer, best policy —
// marshals between iterations, so a resumed run continues bit-exactly.
//
// train imports envclient (for the episode types), policy, stp, surrogate
// and ars; it knows nothing of flags, files or logging formats, which are
// cmd/trainer's.
package train
