// Package train runs the paper's RL pipeline: STP or STP_IS (or the ARS
// baseline) over linear policies, with episodes from the env bridge.
//
// A Config is a Problem (the env and how a point is measured), the run's
// Limits, and its Method: a value that holds the method's settings,
// validates them, names them and builds its optimizer (*STPSettings for
// STP and STP_IS, *ARSSettings). Preset fills one completely from the
// preset table, presets.yaml (one entry per preset, task and method;
// docs/design.md says why each value), and Set overrides a setting by the
// name of its flag, refusing one that is not the method's (keys.go is the
// one place where names reach fields). Named names the run once, when it
// is created. The loop drives any method through the Optimizer interface:
// propose a batch of points, take their values.
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
package train
