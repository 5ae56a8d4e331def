"""A worker killed mid-episode fails only the call that owned the episode."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

import grpc
import numpy as np
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from envbridge.v1 import envbridge_pb2_grpc as pbg
from stpis_bridge.pool import WorkerCrashedError, WorkerPool
from stpis_bridge.rollout import LinearPolicy
from stpis_bridge.server import ServerConfig, serve
from stpis_bridge.worker import EpisodeTask
from tests.conftest import hopper_spec, random_w

LONG = {"terminate_when_unhealthy": False, "max_episode_steps": 4000}


def _wait_for(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def test_worker_killed_mid_episode_fails_that_call_and_pool_recovers():
    running = serve(ServerConfig(listen="127.0.0.1:0", workers=2))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
            stub = pbg.EnvBridgeServiceStub(ch)
            specs = [hopper_spec(seed=i, horizon=4000, kwargs=LONG) for i in range(4)]
            outcome: dict[str, object] = {}

            def call() -> None:
                try:
                    stub.Rollout(pb.RolloutRequest(episodes=specs), timeout=120)
                    outcome["ok"] = True
                except grpc.RpcError as exc:
                    outcome["error"] = exc

            thread = threading.Thread(target=call)
            thread.start()
            _wait_for(lambda: len(running.pool.busy()) == 2)
            time.sleep(0.2)  # mid-episode
            victim = next(iter(running.pool.busy()))
            os.kill(victim, signal.SIGKILL)
            thread.join(60)
            assert not thread.is_alive()

            err = outcome.get("error")
            assert isinstance(err, grpc.RpcError), outcome
            assert err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.INTERNAL)
            assert f"pid {victim}" in err.details()
            assert "worker" in err.details() and "SIGKILL" in err.details()

            # The pool replaced the worker; the next call succeeds.
            pids = running.worker_pids()
            assert len(pids) == 2
            assert victim not in pids
            resp = stub.Rollout(
                pb.RolloutRequest(episodes=[hopper_spec(seed=i, horizon=10) for i in range(4)]),
                timeout=60,
            )
            assert [r.length for r in resp.results] == [10] * 4
            running.pool.wait_ready(30)
            assert running.pool.replacements == 1
    finally:
        running.stop(2)


def _task(seed: int, horizon: int) -> EpisodeTask:
    return EpisodeTask(
        env_id="Hopper-v5",
        kwargs=tuple(sorted(LONG.items())),
        policy=LinearPolicy(random_w(1), np.zeros(11), np.ones(11)),
        seed=seed,
        horizon=horizon,
        shift=0.0,
    )


def test_other_batches_in_flight_are_unaffected_by_a_crash():
    pool = WorkerPool(2)
    pool.start()
    try:
        a = pool.submit([_task(0, 4000)], tag="A")
        _wait_for(lambda: "A" in pool.busy().values())
        b_tasks = [_task(s, 300) for s in range(1, 5)]
        b = pool.submit(b_tasks, tag="B")
        _wait_for(lambda: sorted(pool.busy().values()) == ["A", "B"])
        victim = next(pid for pid, tag in pool.busy().items() if tag == "A")
        os.kill(victim, signal.SIGKILL)

        with pytest.raises(WorkerCrashedError, match=f"pid {victim}"):
            a.wait(60)
        # B's running task continued and its queued tasks were not lost.
        b_out = b.wait(60)
        assert [o.length for o in b_out] == [300] * 4
        # And they are exactly what an undisturbed run gives.
        again = pool.run(b_tasks, tag="B2")
        assert [o.total_return for o in again] == [o.total_return for o in b_out]
        assert len(pool.worker_pids()) == 2 and victim not in pool.worker_pids()
    finally:
        pool.close()
