// Package cmaes is the covariance matrix adaptation evolution strategy
// (CMA-ES), the (μ/μ_w, λ)-CMA-ES of Hansen's tutorial ("The CMA Evolution
// Strategy: A Tutorial", 2016): weighted recombination of the best half,
// cumulative step-size adaptation (CSA), and rank-one and rank-μ updates
// of the full covariance, whose eigendecomposition (gonum's mat.EigenSym)
// is refreshed lazily, as the tutorial's C.2 does. It is the peer that
// learns its search's basis: the covariance's eigenvectors follow the
// problem, where the paper's basis B stays random.
//
// It is an ask-and-tell optimizer that maximizes: Propose returns a
// generation of λ points, Tell takes their values (NaN is the worst) and
// updates the distribution; X is the distribution's mean, the point a
// trainer evaluates. Its whole state, the PCG stream included, is a
// checkpoint: a restored optimizer continues bit for bit.
//
// gonum's optimize.CmaEsChol was the first choice and was measured and
// dropped: it samples N(m, AAᵀ) without σ, so its step-size adaptation
// never reaches the samples (docs/experiments.md).
//
// cmaes imports no other package of this module.
package cmaes
