// Package surrogate fits a small neural network f̂ to the points an
// optimizer has evaluated and reads estimates of the coordinate-wise
// Lipschitz constants of the gradient (the L_i of STP_IS) off f̂.
//
// It implements the appendix "Estimating the Lipschitz Smoothness Constant"
// of Bibi et al., "A Stochastic Derivative-Free Optimization Method with
// Importance Sampling" (AAAI 2020): f̂ is a multi-layer perceptron with one
// tanh hidden layer and a scalar output,
//
//	f̂(x) = μ_y + σ_y · ( w2 · tanh(W1 z + b1) + b2 ),   z = (x − μ_x) / σ_x,
//
// trained with Adam (learning rate 1e-3) on minibatches of 32 points drawn
// uniformly from the history of evaluated points.
//
// # Width
//
// [WidthFor] maps the policy size n to the paper's hidden widths:
// n < 64 → 16 (Swimmer n=16, Hopper n=33), n < 2000 → 64 (HalfCheetah
// n=102, Ant-v5 n=840), otherwise 256 (Humanoid-v5 n=5916).
//
// # History and memory bound
//
// [Model.Add] appends (x, f(x)) to a history of at most Config.HistoryCap
// points. Once full, the history is a uniform reservoir sample (Vitter's
// algorithm R, seeded) of every finite point ever added, so it holds at most
// HistoryCap·(dim+1) float64 values. The default cap is
// max(1024, ⌊128 MiB / (8·(dim+1))⌋), at most 1<<20 points: 128 MiB or less
// except when the 1024-point minimum wins (dim > 16383).
// With Config.Window > 0 the history is instead a ring of the newest
// HistoryCap points, and Train draws its minibatches from the newest Window
// of them: a surrogate of the region the optimizer is in now.
// Non-finite targets are dropped and counted ([Model.Dropped]); non-finite x
// is an error.
//
// # Scaling
//
// Inputs and targets are standardized. At the start of every
// [Model.Train] call the scaling is recomputed from the current history:
// μ_x, μ_y are the means, σ_y the standard deviation (1 if it is 0) and,
// with the default [PerCoordinate] scaling, σ_x,j the standard deviation of
// coordinate j floored at 1e-3 × the root mean square of all coordinates'
// standard deviations (all 1 if every coordinate is constant). With
// [Isotropic] scaling every σ_x,j is that root mean square, which keeps the
// geometry of the search space. When the scaling changes, the weights are
// re-expressed so that f̂ is unchanged in the original units (W1 columns times
// σ'/σ, b1 shifted, w2 and b2 rescaled), and the network keeps learning in
// standardized units; the Adam moments are kept as they are. The first
// refresh replaces the identity scaling without re-expressing the random
// initial weights. Predictions, derivatives and Lipschitz estimates are always
// in the original units.
//
// # Lipschitz estimates
//
// Along a direction d (in original units), with u = W1 diag(1/σ_x) d and
// t = tanh(W1 z + b1):
//
//	global: L(d) = σ_y · max|tanh''| · Σ_h |w2_h| u_h²,   max|tanh''| = 4/(3√3)
//	local:  L(d) = | dᵀ ∇²f̂(x) d | = σ_y · | Σ_h w2_h · (−2 t_h (1 − t_h²)) · u_h² |
//
// The global value bounds the second derivative of f̂ along d everywhere; the
// local one is the curvature at x. Both are computed for all directions in one
// pass of W1·D ([Model.Lipschitz]). The canonical basis (directions with an
// Identity method, such as stp.Canonical) takes a fast path with no product. Other bases are read column by column through
// [Directions] in blocks, so D is never materialized: the pass holds
// (GOMAXPROCS+2) blocks of 48 columns plus a packed copy of W1, i.e. about
// 8·dim·(48·(GOMAXPROCS+2) + width) bytes (≈ 21 MiB at Humanoid size on 2
// cores). On amd64 with AVX2 and FMA the product uses an assembly kernel
// (an 8×6 register-blocked multiply-add over chunks of 512 coordinates);
// elsewhere a pure Go one. Training uses the same kernel for Z·W1ᵀ and
// dHᵀ·Z, and the Adam update is split over GOMAXPROCS goroutines.
//
// Every returned L_i is floored at Config.Floor (default 1e-6) × max_i L_i so
// that none is 0; if every L_i is 0 (or the maximum is not finite) all are set
// to Config.AbsFloor (default 1e-12). Turning L into sampling probabilities p
// and step parameters v is the optimizer's job.
//
// # Determinism and checkpoints
//
// Initialization, the reservoir and the minibatches use separate seeded PCG
// generators (math/rand/v2). [Model.MarshalBinary] saves the weights, scaling,
// Adam state, history, counters and generator states, so that a loaded model
// continues bit-identically. Every sum has a fixed order, so results do not
// depend on GOMAXPROCS; they do depend on the kernel, because the assembly
// kernel's fused multiply-adds round differently from the portable one, so a
// bit-exact resume needs a machine of the same kind (amd64 with AVX2+FMA, or
// not).
//
// # What it knows
//
// [Spearman] and [Share] are the two numbers of the surrogate diagnostic
// that a run records at each evaluation: how well predictions made before
// points were measured rank them, and how much of the gradient lies in a
// subspace. Screened by them (bench/surrogate_screen.py), the MLP of the
// returns knows about as much as chance where the search goes next, and
// [GradientSum], a linear model fitted to the antithetic differences (the
// sum of the run's gradient estimates), several times more: it is what
// guides Hopper's default (docs/design.md, "The surrogate").
//
// This package imports no other package of this module.
package surrogate
