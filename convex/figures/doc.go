// Package figures reproduces the paper's convex experiments (Figures 1–3:
// ridge regression on synthetic and LIBSVM data, squared SVM on LIBSVM
// data) with STP and STP_IS, on the shipped data sets or any LIBSVM file;
// writes PNG plots and a JSON summary; measures the evaluations to
// relative gaps against theory's speedup (Table); and runs the `make
// bench-convex` benchmark. cmd/convex and `trainer convex` only call Main.
//
// Package figures imports stp and convex, never the trainer, the bridge
// client or the surrogate.
package figures
