// Package tasks is the one table of facts about the paper's control tasks:
// the paper's K, our training budgets, the paper's reward thresholds and
// Table 2, ARS's published settings and shift, and how a paper env name
// (Hopper-v1) maps onto today's gymnasium id (Hopper-v5).
//
// Everything else reads these facts from here; the bridge resolves names
// and reports facts about an env, but carries no paper figures: its list of
// the tasks (bridge_py/stpis_bridge/paper_tasks.py) is generated from this
// table by `go generate ./tasks`, and internal/archtest holds it current.
package tasks
