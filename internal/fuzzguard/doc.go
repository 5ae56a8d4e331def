// Package fuzzguard holds what the module's fuzz targets share: Within,
// which turns a hang on bad input into a failing (saved) fuzz input. It
// imports nothing of the module, so any package's tests may use it.
package fuzzguard
