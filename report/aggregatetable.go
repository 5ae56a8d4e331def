package report

import (
	"fmt"
	"strings"
)

// AggregateTable formats Aggregates's figures as Markdown: the
// normalizers, a row per method, and P(X > Y) between peers, followed by
// notes on every column.
func AggregateTable(runs []Run, opts AggregateOptions) (string, error) {
	a, err := Aggregates(runs, opts)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	pct := fmt.Sprintf("%g%% CI", 100*a.Level)
	b.WriteString("| Task | 0 (start evaluation) | 1 | 1 from |\n| --- | --- | --- | --- |\n")
	for _, env := range a.Envs {
		n := a.Normalizers[env]
		label := env
		if d := opts.Default[env]; d != "" {
			label += " (default: " + d + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", label, fmtNum(n.Zero), fmtNum(n.One), n.OneFrom)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "| Method | tasks | runs | IQM final [%s] | IQM AUC [%s] | P(X > ARS) final [%s] | P(X > ARS) AUC [%s] |\n", pct, pct, pct, pct)
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, r := range a.Final {
		auc := a.AUC[i]
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s |\n", r.Method, r.Tasks, r.Runs, r.IQM, auc.IQM, r.OverARS, auc.OverARS)
	}
	if len(a.PeersFinal) > 0 {
		fmt.Fprintf(&b, "\n| X | Y | tasks | P(X > Y) final [%s] | P(X > Y) AUC [%s] |\n| --- | --- | --- | --- | --- |\n", pct, pct)
		for i, p := range a.PeersFinal {
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", p.X, p.Y, p.Tasks, p.P, a.PeersAUC[i].P)
		}
	}
	fmt.Fprintf(&b, `
Normalized score: (score − 0) / (1 − 0) per task, 0 the start policy's evaluation (the median over the
  task's runs of the evaluation at 0 episodes), 1 the task's threshold, or ARS's median final evaluation
  where the task has none (without ARS runs: the median final evaluation of all the task's runs).
Methods: "default" is each task's default (its label in the first table), "ARS" ARS V1-t or V2-t, "paper
  preset" the paper's STP_IS; any other label is a method of its own, on the tasks it ran.
final: the last evaluation; AUC: the mean evaluation over the training episodes run (trapezoid rule).
IQM: interquartile mean of the normalized scores of all the method's runs, every task pooled (rliable's).
P(X > Y): probability of improvement, the mean over the tasks both ran of P(a run of X scores above a run
  of Y) (Mann–Whitney U / (n·m), ties one half); 0.5 is no difference.
[%s]: percentile interval of the stratified bootstrap (each task's runs resampled within the task; X and Y
  independently), %d resamples, seed %d.
`, pct, a.Resamples, a.Seed)
	return b.String(), nil
}
