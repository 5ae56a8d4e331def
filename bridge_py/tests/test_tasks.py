"""The bridge's list of the paper's tasks, and what derives from it.

The list is generated from the Go package tasks (paper_tasks.py, `go generate ./tasks`);
the Go tests of internal/archtest check that it is current and agrees with the table.
"""

from __future__ import annotations

from stpis_bridge import envs, fast


def test_paper_aliases_are_the_task_list():
    want = {envs.paper_id(t): envs.gymnasium_id(t) for t in envs.PAPER_TASKS}
    assert envs.paper_aliases() == want
    assert envs.paper_aliases()["Hopper-v1"] == "Hopper-v5"


def test_every_paper_task_says_how_v1_differs():
    assert sorted(envs._V1_DIFFERENCES) == sorted(envs.PAPER_TASKS)


def test_fast_backend_steps_every_paper_task_and_no_other():
    assert sorted(fast._BY_TASK) == sorted(envs.PAPER_TASKS)
    assert fast.fast_env_ids() == sorted(envs.gymnasium_id(t) for t in envs.PAPER_TASKS)
    for t in envs.PAPER_TASKS:
        assert fast.unsupported_reason(envs.gymnasium_id(t), {}) is None
