"""The worker process: receives episode tasks on its pipe and sends back outcomes.

Importing this module imports gymnasium and MuJoCo, so a worker has paid for its
imports before it reports ready.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

import gymnasium  # noqa: F401  (imported before the worker is ready)
import gymnasium.envs.mujoco  # noqa: F401
import mujoco  # noqa: F401
import numpy as np

from stpis_bridge import envs, fast
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


@dataclasses.dataclass(frozen=True)
class BatchTask:
    """Episodes of one (env id, kwargs) for the fast backend, run in lockstep in one worker."""

    env_id: str
    kwargs: tuple[tuple[str, envs.KwargValue], ...]
    episodes: tuple[EpisodeTask, ...]


# What the pool carries: a task and what a worker sends back for it.
Task = EpisodeTask | BatchTask
Outcome = EpisodeOutcome | list[EpisodeOutcome]

_T = TypeVar("_T")


class _Cache(Generic[_T]):
    """Values made per (id, sorted kwargs), the least recently used closed first."""

    def __init__(
        self,
        size: int,
        make: Callable[[str, envs.Kwargs], _T],
        close: Callable[[_T], None],
    ) -> None:
        self._size = size
        self._make = make
        self._close = close
        self._items: collections.OrderedDict[Any, _T] = collections.OrderedDict()

    def get(self, env_id: str, kwargs: tuple[tuple[str, envs.KwargValue], ...]) -> _T:
        kw = dict(kwargs)
        key = (env_id, envs.kwargs_key(kw))
        hit = self._items.get(key)
        if hit is not None:
            self._items.move_to_end(key)
            return hit
        value = self._make(env_id, kw)
        self._items[key] = value
        while len(self._items) > self._size:
            _, old = self._items.popitem(last=False)
            self._close(old)
        return value


def _make_env(env_id: str, kwargs: envs.Kwargs) -> tuple[Any, np.ndarray, np.ndarray]:
    env = envs.make_env(env_id, kwargs)
    low, high = envs.action_bounds(env)
    return env, low, high


class _EnvCache(_Cache[tuple[Any, np.ndarray, np.ndarray]]):
    """Gymnasium env instances and their action bounds."""

    def __init__(self, size: int) -> None:
        super().__init__(size, _make_env, lambda item: item[0].close())


class _FastCache(_Cache[fast.FastEnv]):
    """The fast backend's per-(id, kwargs) state."""

    def __init__(self, size: int) -> None:
        super().__init__(size, fast.FastEnv, fast.FastEnv.close)


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


def run_batch(cache: _FastCache, task: BatchTask) -> list[EpisodeOutcome]:
    """Run a batch of episodes in lockstep on the fast backend."""
    env = cache.get(task.env_id, task.kwargs)
    eps = task.episodes
    return env.run(
        [e.policy for e in eps],
        [e.seed for e in eps],
        [e.horizon for e in eps],
        [e.shift for e in eps],
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
    fast_cache = _FastCache(_ENV_CACHE_SIZE)
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
            outcome: Outcome = (
                run_batch(fast_cache, task)
                if isinstance(task, BatchTask)
                else run_task(cache, task)
            )
        except Exception as exc:  # noqa: BLE001  (reported to the caller, worker keeps serving)
            conn.send((task_id, False, f"{type(exc).__name__}: {exc}"))
        else:
            conn.send((task_id, True, outcome))
