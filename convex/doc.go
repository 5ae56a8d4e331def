// Package convex holds the paper's convex test problems with their exact
// coordinate Lipschitz constants and exact minimizers — ridge regression
// (synthetic data with the paper's normalization, or LIBSVM data) and the
// squared-hinge SVM — and a LIBSVM/svmlight reader whose errors name the
// line.
//
// The data matrix A is sparse (CSC, compressed columns), as LIBSVM data
// is: building it and evaluating f cost O(non-zeros). Each problem
// evaluates f at any point (Func), and through a Cursor that tracks a
// current point and its residuals, at x + α e_i in O(non-zeros of column
// i), which is what makes runs of millions of iterations cheap. Solve
// gives x* and f*: a Cholesky solve for ridge, and for the SVM gonum's
// Newton method finished by the normal equations of its active rows.
//
// Package convex must not import stp or any other package of this module;
// the experiments that combine them live in convex/figures.
package convex
