// Package figures reproduces the paper's convex experiments (Figures 1–3:
// ridge regression on synthetic and LIBSVM data, squared SVM on LIBSVM
// data) with STP and STP_IS, writes PNG plots and a JSON summary, and runs
// the `make bench-convex` benchmark. cmd/convex (and later `trainer
// convex`) only parse flags and call Run.
//
// Package figures imports stp and convex, never the trainer, the bridge
// client or the surrogate.
package figures
