// Package rundir owns a training run's directory: its layout, the formats
// of its files, and the steps of its life (create, resume, append a curve
// point, checkpoint, finish).
//
// A run directory holds
//
//	run.json              Meta: what was run (written once, at creation)
//	curve.jsonl           one Point per line: the reward curve
//	checkpoint.json       the run's state between iterations, checksummed
//	policy.json           the current policy (at the last checkpoint)
//	best_policy.json      the best-evaluated policy, with its normalizer
//	result.json           Result, written when the run ends
//	lin_policy_plus.npz   the final policy in ARS's layout
//	best_lin_policy_plus.npz  the best policy in ARS's layout
//	.lock                 while a trainer has the run open: its pid, under its flock
//	tb/                   TensorBoard event files (written by the trainer's recorder)
//
// One trainer at a time has a run open: Create and Open take an exclusive
// flock on .lock, without waiting, and Close lets go of it. A second Create
// or Open, --force included, fails naming the holder's pid and touches
// nothing; the kernel drops the lock of a process that dies.
//
// Every file but curve.jsonl is written atomically (a temporary file, then
// a rename). curve.jsonl is appended to; a checkpoint records its length, and
// a resumed run cuts off the lines written after it, which the run repeats.
//
// The trainer writes run directories and the report reads them; both use
// this package, so each format is defined once. rundir knows nothing of the
// optimizer: the run's state is an opaque blob.
package rundir
