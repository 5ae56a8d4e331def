"""The worker process: receives episode tasks on its pipe and sends back outcomes.

Importing this module imports gymnasium and MuJoCo, so a worker has paid for its
imports before it reports ready.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import signal
from multiprocessing.connection import Connection
from typing import Any

import gymnasium  # noqa: F401  (imported before the worker is ready)
import gymnasium.envs.mujoco  # noqa: F401
import mujoco  # noqa: F401
import numpy as np

from stpis_bridge import envs
from stpis_bridge.rollout import EpisodeOutcome, LinearPolicy, run_episode

# How many (env id, kwargs) instances a worker keeps; the least recently used is closed.
_ENV_CACHE_SIZE = 8

READY = "ready"


@dataclasses.dataclass(frozen=True)
class EpisodeTask:
    """One episode for a worker: a resolved env id, its kwargs, the policy and the seed."""

    env_id: str
    kwargs: tuple[tuple[str, envs.KwargValue], ...]
    policy: LinearPolicy
    seed: int
    horizon: int
    shift: float


class _EnvCache:
    """Env instances keyed by (id, sorted kwargs), least recently used closed first."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._envs: collections.OrderedDict[Any, tuple[Any, np.ndarray, np.ndarray]] = (
            collections.OrderedDict()
        )

    def get(
        self, env_id: str, kwargs: tuple[tuple[str, envs.KwargValue], ...]
    ) -> tuple[Any, np.ndarray, np.ndarray]:
        kw = dict(kwargs)
        key = (env_id, envs.kwargs_key(kw))
        hit = self._envs.get(key)
        if hit is not None:
            self._envs.move_to_end(key)
            return hit
        env = envs.make_env(env_id, kw)
        low, high = envs.action_bounds(env)
        self._envs[key] = (env, low, high)
        while len(self._envs) > self._size:
            _, (old, _, _) = self._envs.popitem(last=False)
            old.close()
        return env, low, high


def run_task(cache: _EnvCache, task: EpisodeTask) -> EpisodeOutcome:
    """Run one task on a cached env."""
    env, low, high = cache.get(task.env_id, task.kwargs)
    return run_episode(
        env,
        task.policy,
        seed=task.seed,
        horizon=task.horizon,
        shift=task.shift,
        action_low=low,
        action_high=high,
    )


def worker_main(conn: Connection, index: int) -> None:
    """Serve tasks from ``conn`` until it sends None or closes.

    Messages in: ``(task_id, EpisodeTask)`` or None. Messages out: ``(READY, pid)``
    once, then ``(task_id, True, EpisodeOutcome)`` or ``(task_id, False, error)``.
    """
    # The server handles Ctrl-C and SIGTERM and shuts workers down through the pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    cache = _EnvCache(_ENV_CACHE_SIZE)
    conn.send((READY, os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        task_id, task = msg
        try:
            outcome = run_task(cache, task)
        except Exception as exc:  # noqa: BLE001  (reported to the caller, worker keeps serving)
            conn.send((task_id, False, f"{type(exc).__name__}: {exc}"))
        else:
            conn.send((task_id, True, outcome))
