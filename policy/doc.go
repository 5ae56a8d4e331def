// Package policy holds the linear policy that the trainer optimizes and the
// ARS-style observation normalizer that feeds it.
//
// The action formula is the one the bridge applies (see
// proto/envbridge/v1/envbridge.proto):
//
//	a = clip(W · z + b, low, high),  z_j = (obs_j − mean_j) / std_j,
//
// where a feature whose std is below the bridge's floor (Describe reports it)
// is zeroed; the bridge applies the formula. The normalizer keeps a
// running mean and sum of squared deviations of the raw observations and
// merges the per-episode statistics returned by the bridge exactly, with
// Chan et al.'s parallel formula, as ARS does. The trainer freezes it for one
// iteration (Snapshot), so that every point evaluated in an iteration sees the
// same normalization, and merges only training episodes.
//
// Policies export to ARS's lin_policy_plus.npz layout so that ARS's tools can
// replay them.
//
// policy is pure Go and imports no other package of this module.
package policy
