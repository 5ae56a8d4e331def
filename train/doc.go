// Package train is a run's configuration and its methods: STP or STP_IS
// (or the ARS baseline) over linear policies. Package train/loop drives a
// run of a Config, with episodes from the env bridge.
//
// A Config is a Problem (the env and how a point is measured), the run's
// Limits, and its Method: a value that holds the method's settings,
// validates them, names them and builds its optimizer (*STPSettings for
// STP and STP_IS, *ARSSettings). Preset fills one completely from the
// preset table, presets.yaml (one entry per preset, task and method;
// docs/design.md says why each value), and Set overrides a setting by the
// name of its flag, refusing one that is not the method's (keys.go is the
// one place where names reach fields). Named names the run once, when it
// is created. ReadRunConfig reads the configuration of a run.json of any
// form. The loop drives any method through the Optimizer interface
// (NewOptimizer): propose a batch of points, take their values.
package train
