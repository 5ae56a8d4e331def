"""The pool's watchdog and its handling of dead workers: kill, replace, respawn, break.

It also keeps count of the envs whose tasks crash or hang their worker: the same way
twice in a row is the env's fault (``EnvFaultError``), and the env is refused for a while.

``_Supervision`` is a part of ``WorkerPool`` (its base class); its methods run on the
dispatcher thread under the pool's lock, except ``_on_death``, which takes it.
"""

from __future__ import annotations

import collections
import logging
import os
import signal
import threading
import time

from stpis_bridge.pool_batch import (
    EnvFaultError,
    EpisodeBudgetError,
    PoolError,
    WorkerCrashedError,
    _Batch,
)
from stpis_bridge.pool_procs import (
    _close_after_send,
    _cpu_seconds,
    _describe_exit,
    _Worker,
)
from stpis_bridge.worker import Task

_LOG = logging.getLogger("stpis_bridge.pool")

_RESPAWN_BACKOFF_S = 0.5
_RESPAWN_BACKOFF_MAX_S = 8.0
_CANCELLED = "its call was cancelled"
# How often in a row an env's tasks may crash or hang their worker the same way before
# that is the env's fault; for how long its tasks are refused then.
_ENV_FAULT_STRIKES = 2
DEFAULT_ENV_FAULT_HOLD_S = 300.0
_HUNG = "hung (its worker made no progress)"

EnvKey = tuple[str, tuple[tuple[str, object], ...]]


def _env_key(task: Task) -> EnvKey:
    """Return what an env fault is counted against: the task's env id and kwargs."""
    return (task.env_id, tuple(task.kwargs))


def _env_name(key: EnvKey) -> str:
    env_id, kwargs = key
    if not kwargs:
        return env_id
    return f"{env_id} (kwargs {', '.join(f'{k}={v!r}' for k, v in kwargs)})"


class _Supervision:
    """The watchdog and the replacement of dead workers, on ``WorkerPool``'s state."""

    _max_episode_s: float
    _stall_s: float
    _respawn_attempts: int
    _failures: dict[int, int]
    _respawn_at: dict[int, float]
    _lock: threading.Lock
    _changed: threading.Condition
    _workers: list[_Worker]
    _queue: collections.deque[_Batch]
    _closing: bool
    _broken: str | None
    _env_fault_hold_s: float
    _strikes: dict[EnvKey, tuple[str, int]]
    _barred: dict[EnvKey, tuple[float, str]]
    replacements: int

    def _spawn(self, index: int) -> _Worker:
        raise NotImplementedError

    def _kill(self, w: _Worker, why: str) -> None:
        """SIGKILL a worker (it may be stopped or deep in MuJoCo); it is replaced on death."""
        w.killed_for = why
        try:
            os.kill(w.pid, signal.SIGKILL)
        except OSError:
            pass  # Already gone; its sentinel fires anyway.

    def _watch(self) -> None:
        """Kill workers whose episode ran too long or whose CPU time stands still."""
        now = time.monotonic()
        for w in self._workers:
            if w.current is None or w.dead or w.killed_for:
                continue
            batch, i = w.current
            if now - w.started > w.budget:
                self._abort(
                    w,
                    "its episode ran too long",
                    EpisodeBudgetError(
                        f"{batch.names[i]} ran for more than --max-episode-seconds="
                        f"{self._max_episode_s:g} an episode; it was aborted and its worker "
                        "replaced"
                    ),
                )
                continue
            cpu = _cpu_seconds(w.pid)
            if cpu is None:
                continue
            if cpu != w.cpu:
                w.cpu, w.cpu_moved = cpu, now
            elif now - w.cpu_moved > self._stall_s:
                crashed = WorkerCrashedError(
                    f"worker {w.index} (pid {w.pid}) made no progress for "
                    f"{now - w.cpu_moved:.1f}s (stopped or hung) while running "
                    f"{batch.names[i]} of this call; the pool has replaced the worker, "
                    "retry the call"
                )
                self._abort(w, "it made no progress", self._strike(batch, i, _HUNG, crashed))

    def _abort(self, w: _Worker, why: str, error: PoolError) -> None:
        """Kill a busy worker and fail the batch whose task it held with ``error``."""
        assert w.current is not None
        batch = w.current[0]
        w.current = None
        self._kill(w, why)
        if not batch.done.is_set():
            self._drop(batch)
            batch.finish(error)

    def _respawn_due(self) -> None:
        now = time.monotonic()
        for index, when in list(self._respawn_at.items()):
            if when > now or self._closing or self._broken is not None:
                continue
            del self._respawn_at[index]
            self._replace(index)

    def _replace(self, index: int) -> None:
        """Spawn a worker in slot ``index``; the pool is broken if that fails."""
        try:
            self._workers[index] = self._spawn(index)
        except Exception as exc:  # noqa: BLE001
            self._break(f"could not replace worker {index}: {exc}")
            return
        self.replacements += 1

    def _break(self, why: str) -> None:
        self._broken = f"{why}; the worker pool is broken"
        _LOG.error("%s", self._broken)
        self._fail_all(PoolError(self._broken))
        self._changed.notify_all()

    def _on_death(self, w: _Worker) -> None:
        w.process.join(1.0)
        how = _describe_exit(w.process.exitcode)
        _close_after_send(w)
        w.dead = True
        with self._lock:
            if self._workers[w.index] is not w:
                return
            if w.current is not None:
                batch, i = w.current
                w.current = None
                crashed = WorkerCrashedError(
                    f"worker {w.index} (pid {w.pid}) {how} while running {batch.names[i]} "
                    "of this call; the pool has replaced the worker, retry the call"
                )
                error: PoolError = crashed
                if not w.killed_for and not _killed_from_outside(w.process.exitcode):
                    error = self._strike(batch, i, how, crashed)
                if not batch.done.is_set():
                    self._drop(batch)
                    batch.finish(error)
            if self._closing or self._broken is not None:
                return
            if w.killed_for:
                # A cancelled call is routine; a stalled or overlong episode is not.
                level = logging.INFO if w.killed_for == _CANCELLED else logging.WARNING
                _LOG.log(
                    level,
                    "worker %d (pid %d) killed: %s; replacing it",
                    w.index,
                    w.pid,
                    w.killed_for,
                )
                self._replace(w.index)
                return
            if w.ready:
                _LOG.warning("worker %d (pid %d) %s; replacing it", w.index, w.pid, how)
                self._replace(w.index)
                return
            # It died before it was ready: respawn after a backoff, up to a cap.
            failures = self._failures.get(w.index, 0) + 1
            self._failures[w.index] = failures
            what = f"worker {w.index} (pid {w.pid}) {how} before it was ready"
            if failures > self._respawn_attempts:
                self._break(f"{what}, {failures} times in a row")
                return
            delay = min(_RESPAWN_BACKOFF_S * 2 ** (failures - 1), _RESPAWN_BACKOFF_MAX_S)
            _LOG.warning(
                "%s (%d of %d); respawning it in %.1fs",
                what,
                failures,
                self._respawn_attempts,
                delay,
            )
            self._respawn_at[w.index] = time.monotonic() + delay

    def _strike(self, batch: _Batch, i: int, how: str, crashed: PoolError) -> PoolError:
        """Count a worker lost to task ``i`` of ``batch``; return the batch's error.

        The second loss in a row of the same env, the same way, is the env's fault: the
        env is refused for ``env_fault_hold_seconds`` and the error says so, by id.
        """
        key = _env_key(batch.tasks[i])
        last, n = self._strikes.get(key, ("", 0))
        n = n + 1 if last == how else 1
        if n < _ENV_FAULT_STRIKES:
            self._strikes[key] = (how, n)
            return crashed
        self._strikes.pop(key, None)
        message = (
            f"env {_env_name(key)} {how} {n} times in a row in the bridge's workers "
            f"(last while running {batch.names[i]}): the env's fault, not the bridge's; "
            f"this bridge refuses it for {self._env_fault_hold_s:g}s"
        )
        # The env's fault, not the bridge's: a warning to the bridge's operator.
        _LOG.warning("%s", message)
        self._barred[key] = (time.monotonic() + self._env_fault_hold_s, message)
        return EnvFaultError(message)

    def _refuse_barred(self, tasks: list[Task]) -> None:
        """Raise ``EnvFaultError`` if a task's env is refused (under the lock)."""
        if not self._barred:
            return
        now = time.monotonic()
        for key, (until, _) in list(self._barred.items()):
            if until <= now:
                del self._barred[key]
        for task in tasks:
            barred = self._barred.get(_env_key(task))
            if barred is not None:
                raise EnvFaultError(barred[1])

    def _drop(self, batch: _Batch) -> None:
        try:
            self._queue.remove(batch)
        except ValueError:
            pass

    def _fail_all(self, error: PoolError) -> None:
        for batch in list(self._queue):
            batch.finish(error)
        self._queue.clear()
        for w in self._workers:
            if w.current is not None and not w.dead:
                w.current[0].finish(error)
                w.current = None


# Signals that end a worker from outside (an operator, a supervisor, the OOM
# killer): not the env's doing, so they never count towards its fault.
_OUTSIDE_SIGNALS = frozenset(
    int(s) for s in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
)


def _killed_from_outside(exitcode: int | None) -> bool:
    """Whether a worker's exit code says a signal from outside ended it."""
    return exitcode is not None and -exitcode in _OUTSIDE_SIGNALS
