// Package convex holds the paper's convex test problems with their exact
// coordinate Lipschitz constants — ridge regression (synthetic data with
// the paper's normalization, or LIBSVM data) and the squared-hinge SVM —
// and a LIBSVM/svmlight reader.
//
// Each problem evaluates f at any point (Func), and through a Cursor that
// tracks a current point and its residuals, at x + α e_i in O(m), which is
// what makes 15000-iteration runs with n = 1000 cheap.
//
// Package convex must not import stp or any other package of this module;
// the experiments that combine them live in convex/figures.
package convex
