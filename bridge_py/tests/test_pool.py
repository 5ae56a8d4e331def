"""The worker pool on its own: fair sharing between concurrent batches, empty batches."""

from __future__ import annotations

import multiprocessing
import threading
import time

import numpy as np

from stpis_bridge.pool import WorkerPool, _close_after_send, _Worker
from stpis_bridge.rollout import LinearPolicy
from stpis_bridge.worker import EpisodeTask
from tests.conftest import random_w


def _task(seed: int, horizon: int) -> EpisodeTask:
    return EpisodeTask(
        env_id="Swimmer-v5",
        kwargs=(),
        policy=LinearPolicy(random_w(2, rows=2, cols=8), np.zeros(8), np.ones(8)),
        seed=seed,
        horizon=horizon,
        shift=0.0,
    )


def test_concurrent_batches_share_one_worker_round_robin():
    pool = WorkerPool(1)
    pool.start()
    try:
        assert pool.run([]) == []
        done: dict[str, float] = {}

        def run(tag: str, n: int) -> None:
            out = pool.run([_task(i, 1000) for i in range(n)], tag=tag)
            assert [o.length for o in out] == [1000] * n
            done[tag] = time.monotonic()

        a = threading.Thread(target=run, args=("A", 8))
        a.start()
        time.sleep(0.05)
        b = threading.Thread(target=run, args=("B", 2))
        b.start()
        a.join(60)
        b.join(60)
        # B was submitted after A's 8 tasks yet finishes first: tasks alternate.
        assert done["B"] < done["A"]
    finally:
        pool.close()


def test_a_dead_workers_connection_closes_only_after_its_sender_is_done():
    # Closing a pipe under a thread still writing a chunk to it frees the
    # descriptor's number for the next worker's pipe, which would then get the
    # rest of the chunk: the close waits for the sender.
    parent, child = multiprocessing.Pipe(duplex=True)
    release = threading.Event()
    sender = threading.Thread(target=release.wait, daemon=True)
    sender.start()
    w = _Worker(index=0, process=None, conn=parent, sender=sender)
    try:
        _close_after_send(w)
        time.sleep(0.2)
        assert not parent.closed
        release.set()
        deadline = time.monotonic() + 5
        while not parent.closed and time.monotonic() < deadline:
            time.sleep(0.01)
        assert parent.closed
    finally:
        release.set()
        child.close()
    idle_parent, idle_child = multiprocessing.Pipe(duplex=True)
    _close_after_send(_Worker(index=1, process=None, conn=idle_parent))
    assert idle_parent.closed
    idle_child.close()
