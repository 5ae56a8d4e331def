// Package report turns the trainer's run directories into the paper's
// figures: the reward-against-episodes plot of Figure 4 and the
// episodes-to-threshold table of Table 2 of "A Stochastic Derivative-Free
// Optimization Method with Importance Sampling" (AAAI 2020).
//
// A run directory holds run.json (the run's settings: env, method, step
// rule, label, seed, threshold), curve.jsonl (one zerolog JSON line per
// iteration, with eval_mean/eval_std on the iterations where the policy was
// evaluated) and, once the run finished, result.json. Load finds run
// directories recursively and parses them; a truncated last curve line (a run
// killed mid-write) is skipped. Plot draws, for each (env, label) group, the
// mean over seeds with a ±1 std band on a common grid of episodes, one PNG
// per env. Table renders the Markdown episodes-to-threshold table, optionally
// beside the paper's published numbers. SummaryTable gives one row per task
// and method with the statistics of survival.go: the Kaplan–Meier median of
// the episodes to the threshold (a seed that never reached it is censored at
// the episodes it ran) with a seeded bootstrap interval, and the log-rank
// test against the task's ARS row. SuccessPlotFiles draws the fraction of
// seeds that had reached the threshold against training episodes.
//
// The package reads run directories and never writes into them; the only
// files it writes are the PNG plots. Of this module it imports rundir (the
// formats of a run directory's files) and tasks (the thresholds, the
// paper's Table 2 and its order of tasks), and never the trainer, the
// optimizers or the bridge client, so it can be used on run directories
// copied off the training machines.
package report
