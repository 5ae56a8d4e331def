// Package ars implements Augmented Random Search V2-t (Mania, Guy and Recht,
// 2018) as a baseline for STP_IS in the same harness: antithetic Gaussian
// perturbations, the top b of N directions, and a step scaled by the
// standard deviation σ_R of the rewards used.
//
// One iteration proposes 2N points x ± ν δ_j and takes one value for each
// (the mean return of the episodes the caller ran there). The update is
//
//	x ← x + α / (b σ_R) · Σ_{j in top b} (r+_j − r−_j) δ_j,
//
// where the top b directions are those with the largest max(r+_j, r−_j).
// Observation normalization (the "V2" part) is the caller's: the trainer
// freezes it during an iteration and merges the training episodes' statistics
// afterwards.
//
// ars is pure Go and imports no other package of this module.
package ars
