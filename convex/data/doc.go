// Package data holds the paper's three small LIBSVM data sets, heart_scale,
// australian_scale and mushrooms (under 1 MB together), embedded, so that
// the convex experiments run on a fresh clone and from a `go install`ed
// binary. SHA256SUMS pins them; README.md says where they come from.
// `make data` downloads the larger sets (a9a, ijcnn1, w8a) into extra/,
// which is not embedded.
package data

import "embed"

// FS holds the shipped files and their SHA256SUMS.
//
//go:embed heart_scale australian_scale mushrooms SHA256SUMS
var FS embed.FS

// Shipped are the names of the shipped data sets, in the paper's order.
var Shipped = []string{"heart_scale", "australian_scale", "mushrooms"}
