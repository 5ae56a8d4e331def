// Package stp implements the Stochastic Three Points method (STP) and its
// importance-sampling variant STP_IS (Bibi, Bergou, Sener, Ghanem, Richtárik,
// "A Stochastic Derivative-Free Optimization Method with Importance Sampling",
// AAAI 2020, Algorithm 1 and Theorems 1–4).
//
// One iteration draws a direction index i with probability p_i, picks a step
// α proportional to 1/v_i from a [StepRule], evaluates x+ = x + α b_i and
// x− = x − α b_i and keeps the best of x_k, x+ and x− (smallest value when
// minimizing, largest when maximizing). A NaN value, or the infinity on the
// wrong side (+Inf when minimizing, −Inf when maximizing), is never accepted.
//
// The directions are the columns of a [Basis]: [Canonical], the paper's
// [Gaussian], a user's [Matrix], or [Orthogonal], a random rotation whose
// columns explore every direction alike.
//
// Settings extend the paper's method; each zero value is the paper's
// behaviour:
//
//   - Momentum β > 0 runs SMTP, the heavy-ball variant (Gorbunov, Bibi,
//     Sener, Bergou, Richtárik, "A Stochastic Derivative Free Optimization
//     Method with Momentum", ICLR 2020, Algorithm 1), and with importance
//     sampling SMTP_IS; see [Stepper] for the iteration.
//   - Directions M > 1 evaluates M directions (2M points) per iteration and
//     keeps the best point, or with Top moves along the combination of the
//     Top best directions.
//
// There are two ways to drive the method:
//
//   - [Stepper] is the low-level, batch API: [Stepper.Propose] hands out the
//     points of one iteration (x+, x−, and when needed x_k and the probe
//     x + t b_i) and [Stepper.Tell] takes their values (each already the mean
//     of K measurements). The caller evaluates the batch however it likes,
//     e.g. in one remote call. The stepper state, RNG included, round-trips
//     bit-exactly through [Stepper.MarshalBinary] and [Stepper.UnmarshalBinary].
//   - [Method] implements gonum's optimize.Method, so optimize.Minimize
//     can run STP or STP_IS (picked by Settings.Sampling) on any Go
//     function.
//
// Directions come from a [Directioner] (Settings.Source), as a line search
// method's from gonum's optimize.NextDirectioner: by default an
// [IndexSampler], which draws columns of a [Basis] i.i.d. by p (the paper's
// step 1; an alias table, O(1) per draw, rebuilt only when p changes); a
// [DistinctSampler], M distinct columns (orthonormal directions with an
// [Orthogonal] basis); or a [SubspaceSampler], a guide subspace's directions
// padded with random ones orthonormal to it (LMRS, Guided ES). Each draw
// comes with weights that make Σ_j w_j Δ_j d_j an unbiased gradient
// estimate. The bases: the
// canonical one, a seeded Gaussian matrix whose columns are regenerated on
// demand (no O(n²) storage), or any user-given square matrix.
//
// Package stp imports no other package of this module. It may import only
// the standard library and gonum.
package stp
