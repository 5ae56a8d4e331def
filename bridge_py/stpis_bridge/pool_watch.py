"""The pool's watchdog and its handling of dead workers: kill, replace, respawn, break.

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

_LOG = logging.getLogger("stpis_bridge.pool")

_RESPAWN_BACKOFF_S = 0.5
_RESPAWN_BACKOFF_MAX_S = 8.0
_CANCELLED = "its call was cancelled"


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
                self._abort(
                    w,
                    "it made no progress",
                    WorkerCrashedError(
                        f"worker {w.index} (pid {w.pid}) made no progress for "
                        f"{now - w.cpu_moved:.1f}s (stopped or hung) while running "
                        f"{batch.names[i]} of this call; the pool has replaced the worker, "
                        "retry the call"
                    ),
                )

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
                if not batch.done.is_set():
                    self._drop(batch)
                    batch.finish(
                        WorkerCrashedError(
                            f"worker {w.index} (pid {w.pid}) {how} while running {batch.names[i]} "
                            "of this call; the pool has replaced the worker, retry the call"
                        )
                    )
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
