"""A pool of worker processes that run episode tasks, one task per worker at a time.

Each worker has its own pipe, so the pool always knows which task each worker
holds. One dispatcher thread owns every pipe: it hands the next task to each idle
worker, taking tasks from the submitted batches in round-robin order so that
concurrent calls share the workers fairly, collects the outcomes, and replaces a
worker that dies. A dead worker fails only the batch whose task it held.

Workers are started with the "spawn" method (fork + exec of a fresh interpreter):
forking the gRPC server process itself after gRPC has started threads is unsafe.
A worker imports gymnasium and MuJoCo (about 0.5 s) before it reports ready, so
no call is charged for imports; a replacement joins the pool when it is ready.
(A forkserver would start replacements faster, but it dies on a SIGTERM sent to
the process group and takes its children with it.)

Every worker dies with the bridge, whatever it is doing (``lifeline``): it asks
the kernel for SIGKILL when the thread that started it ends, so one thread of the
pool, alive until ``close``, starts them all.

A replacement that dies before it is ready is respawned after a backoff that
doubles; after ``respawn_attempts`` such deaths in a row the pool is broken: it
fails every call, and the server exits so that its supervisor restarts it.
``serving`` is false once the pool is broken, and while no worker is ready and
replacements keep dying before they are ready.

A watchdog on the dispatcher thread kills (and replaces) a worker whose episode
ran longer than ``max_episode_seconds`` (the call fails with
``EpisodeBudgetError``) or whose CPU time has not moved for ``stall_seconds``
(stopped or hung: ``WorkerCrashedError``, a retry will do). A cancelled call's
running episodes are aborted the same way: their workers are killed and replaced.

An env (id and kwargs) whose tasks crash or hang their worker the same way twice in a
row is at fault, not the pool: that call fails with ``EnvFaultError``, naming the env,
and so does every call of that env for ``env_fault_hold_seconds``, at once, without a
worker. A task of the env that succeeds clears its count.

The modules beneath this one (``pool_batch``, ``pool_procs``, ``pool_watch``) never
import it back.
"""

from __future__ import annotations

import collections
import itertools
import logging
import multiprocessing.connection
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from stpis_bridge.lifeline import worker_entry
from stpis_bridge.pool_batch import (
    BatchCancelledError,
    BatchHandle,
    EnvFaultError,
    EpisodeBudgetError,
    PoolClosedError,
    PoolError,
    TaskFailedError,
    WorkerCrashedError,
    _Batch,
)
from stpis_bridge.pool_procs import (
    _close_after_send,
    _context,
    _cpu_seconds,
    _episodes,
    _send,
    _Spawner,
    _Worker,
)
from stpis_bridge.pool_watch import _CANCELLED, DEFAULT_ENV_FAULT_HOLD_S, _env_key, _Supervision
from stpis_bridge.worker import READY, BatchTask, Outcome, Task

_LOG = logging.getLogger(__name__)

_START_TIMEOUT_S = 120.0
_JOIN_TIMEOUT_S = 5.0
DEFAULT_MAX_EPISODE_SECONDS = 300.0
DEFAULT_STALL_SECONDS = 10.0
DEFAULT_RESPAWN_ATTEMPTS = 5
# How often the dispatcher wakes to run the watchdog while a worker is busy.
_WATCH_PERIOD_S = 0.25


class WorkerPool(_Supervision):
    """N worker processes; ``submit`` a batch of tasks, ``close`` when done."""

    def __init__(
        self,
        size: int,
        *,
        max_episode_seconds: float = DEFAULT_MAX_EPISODE_SECONDS,
        stall_seconds: float = DEFAULT_STALL_SECONDS,
        respawn_attempts: int = DEFAULT_RESPAWN_ATTEMPTS,
        env_fault_hold_seconds: float = DEFAULT_ENV_FAULT_HOLD_S,
        on_serving: Callable[[bool], None] | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"pool size must be at least 1, got {size}")
        self._size = size
        self._max_episode_s = max_episode_seconds
        self._stall_s = stall_seconds
        self._respawn_attempts = respawn_attempts
        self._env_fault_hold_s = env_fault_hold_seconds
        # Env key -> (how its last task's worker died, how many times in a row);
        # -> (until when its tasks are refused, why).
        self._strikes: dict[Any, tuple[str, int]] = {}
        self._barred: dict[Any, tuple[float, str]] = {}
        self._on_serving = on_serving
        self._serving: bool | None = None
        # Worker index -> deaths before ready in a row; -> when to respawn it.
        self._failures: dict[int, int] = {}
        self._respawn_at: dict[int, float] = {}
        self._ctx = _context()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._workers: list[_Worker] = []
        self._queue: collections.deque[_Batch] = collections.deque()
        self._ids = itertools.count()
        self._closing = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)  # a full pipe already means "wake up"
        self._thread: threading.Thread | None = None
        self._spawner: _Spawner | None = None
        self._broken: str | None = None
        self.replacements = 0

    @property
    def size(self) -> int:
        """Return the number of worker processes the pool keeps."""
        return self._size

    @property
    def broken(self) -> str | None:
        """Return why the pool gave up on its workers, or None while it has not."""
        with self._lock:
            return self._broken

    @property
    def serving(self) -> bool:
        """Return whether the pool can run tasks now or soon.

        False once it is broken or closing, and while no worker is ready and a
        replacement died before it was ready (it is respawning after a backoff).
        A routine replacement (of a ready worker that died) keeps it serving: the
        queued tasks run once the replacement is ready, in about a second.
        """
        with self._lock:
            return self._serving_locked()

    def _serving_locked(self) -> bool:
        if self._broken is not None or self._closing:
            return False
        if any(w.ready and not w.dead and not w.killed_for for w in self._workers):
            return True
        return not self._failures

    def _publish(self) -> None:
        """Tell ``on_serving`` when ``serving`` changed; not under the lock."""
        with self._lock:
            serving = self._serving_locked()
            if serving == self._serving:
                return
            first = self._serving is None
            self._serving = serving
        if first and not serving:
            return  # Still starting: the server is not serving yet either.
        if serving:
            _LOG.info("worker pool serving")
        elif self._closing:
            _LOG.info("worker pool not serving: closing")
        else:
            _LOG.warning(
                "worker pool not serving: %s",
                self._broken or "no worker is ready and replacements die before they are ready",
            )
        if self._on_serving is not None:
            self._on_serving(serving)

    def start(self) -> None:
        """Start the workers and wait until every one has imported gymnasium and MuJoCo."""
        self._spawner = _Spawner()
        with self._lock:
            self._workers = [self._spawn(i) for i in range(self._size)]
        self._thread = threading.Thread(target=self._dispatch, name="pool-dispatch", daemon=True)
        self._thread.start()
        self.wait_ready(_START_TIMEOUT_S)
        _LOG.info("worker pool ready: %d workers, pids %s", self._size, self.worker_pids())
        self._publish()

    def wait_ready(self, timeout: float) -> None:
        """Wait until every worker (replacements included) is ready to take tasks."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not all(w.ready for w in self._workers):
                if self._broken is not None:
                    raise PoolError(self._broken)
                left = deadline - time.monotonic()
                if left <= 0 or self._closing:
                    raise PoolError(f"workers not ready after {timeout:.0f}s")
                self._changed.wait(left)

    def worker_pids(self) -> list[int]:
        """Return the pids of the current workers, by worker index."""
        with self._lock:
            return [w.pid for w in self._workers]

    def busy(self) -> dict[int, str]:
        """Return pid -> tag of the batch whose task that worker holds, for busy workers."""
        with self._lock:
            return {w.pid: w.current[0].tag for w in self._workers if w.current is not None}

    def pending_tasks(self) -> int:
        """Return how many submitted tasks no worker has started yet."""
        with self._lock:
            return sum(len(b.tasks) - b.next_index for b in self._queue if not b.done.is_set())

    def submit(
        self, tasks: Sequence[Task], tag: str = "", names: Sequence[str] | None = None
    ) -> BatchHandle:
        """Queue a batch; its tasks interleave with other batches' tasks.

        ``names[i]`` is how errors name task i (default ``episodes[i]``).
        """
        if names is not None and len(names) != len(tasks):
            raise ValueError(f"{len(names)} names for {len(tasks)} tasks")
        batch = _Batch(next(self._ids), tag, tasks, names)
        if not batch.tasks:
            batch.finish()
            return BatchHandle(self._cancel, batch)
        with self._lock:
            if self._closing:
                raise PoolClosedError("the worker pool is shutting down")
            if self._broken is not None:
                raise PoolError(self._broken)
            self._refuse_barred(batch.tasks)
            self._queue.append(batch)
            self._wake()
        return BatchHandle(self._cancel, batch)

    def run(self, tasks: Sequence[Task], tag: str = "") -> list[Outcome]:
        """Submit a batch and wait for its outcomes."""
        return self.submit(tasks, tag).wait()

    def close(self, timeout: float = _JOIN_TIMEOUT_S) -> None:
        """Fail queued batches, stop the workers (killing stragglers) and the dispatcher."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            self._wake()
        if self._thread is not None:
            self._thread.join(timeout + _JOIN_TIMEOUT_S)
        with self._lock:
            workers = list(self._workers)
        for w in workers:
            try:
                w.conn.send(None)
            except OSError:
                pass
        deadline = time.monotonic() + timeout
        for w in workers:
            w.process.join(max(0.0, deadline - time.monotonic()))
            if w.process.is_alive():
                _LOG.warning("worker %d (pid %d) did not stop; killing it", w.index, w.pid)
                w.process.kill()
                w.process.join(_JOIN_TIMEOUT_S)
            w.conn.close()
        if self._spawner is not None:
            self._spawner.stop(_JOIN_TIMEOUT_S)
        with self._lock:
            os.close(self._wake_r)
            os.close(self._wake_w)

    # Everything below runs on the dispatcher thread, except _wake, _cancel and _spawn
    # (which the caller runs under the lock).

    def _spawn(self, index: int) -> _Worker:
        assert self._spawner is not None, "start() first"
        return self._spawner.call(lambda: self._start_worker(index))

    def _start_worker(self, index: int) -> _Worker:
        """Start worker ``index``; runs on the spawner thread."""
        parent, child = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(  # type: ignore[attr-defined]
            target=worker_entry,
            args=(child, index, os.getpid()),
            name=f"stpis-worker-{index}",
            daemon=True,
        )
        try:
            process.start()
        except BaseException:
            parent.close()
            raise
        finally:
            child.close()
        return _Worker(index=index, process=process, conn=parent)

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def _cancel(self, batch: _Batch) -> None:
        with self._lock:
            if batch.done.is_set():
                return
            try:
                self._queue.remove(batch)
            except ValueError:
                pass
            batch.finish(BatchCancelledError(f"batch {batch.batch_id} cancelled"))
            for w in self._workers:
                if w.current is not None and w.current[0] is batch and not w.dead:
                    w.current = None
                    self._kill(w, _CANCELLED)

    def _next_task(self) -> tuple[_Batch, int] | None:
        while self._queue:
            batch = self._queue[0]
            if batch.done.is_set() or batch.next_index >= len(batch.tasks):
                self._queue.popleft()
                continue
            i = batch.next_index
            batch.next_index += 1
            if batch.next_index >= len(batch.tasks):
                self._queue.popleft()
            else:
                self._queue.rotate(-1)
            return batch, i
        return None

    def _assign(self) -> list[tuple[_Worker, int, Task]]:
        sends = []
        for w in self._workers:
            if not w.ready or w.dead or w.killed_for or w.current is not None:
                continue
            picked = self._next_task()
            if picked is None:
                break
            w.current = picked
            w.started = time.monotonic()
            # A fast chunk runs its episodes one after another: its budget is
            # one episode's for each of them.
            w.budget = self._max_episode_s * _episodes(picked[0].tasks[picked[1]])
            w.cpu, w.cpu_moved = _cpu_seconds(w.pid), w.started
            batch, i = picked
            sends.append((w, i, batch.tasks[i]))
        return sends

    def _dispatch(self) -> None:
        try:
            self._dispatch_loop()
        except Exception:
            _LOG.exception("pool dispatcher failed")
            with self._lock:
                self._closing = True
                self._fail_all(PoolError("the worker pool's dispatcher failed; see server log"))
                self._changed.notify_all()

    def _dispatch_loop(self) -> None:
        while True:
            with self._lock:
                if self._closing:
                    self._fail_all(PoolClosedError("the worker pool is shutting down"))
                    return
                sends = self._assign()
                workers = [w for w in self._workers if not w.dead]
                busy = any(w.current is not None for w in workers)
                timeout = _WATCH_PERIOD_S if busy else None
                if self._respawn_at:
                    due = min(self._respawn_at.values()) - time.monotonic()
                    timeout = max(0.0, min(due, timeout if timeout is not None else due))
            for w, i, task in sends:
                if isinstance(task, BatchTask):
                    # A chunk can outgrow the pipe's buffer: sent from a thread of
                    # its own, so that a stopped worker cannot block the watchdog.
                    w.sender = threading.Thread(target=_send, args=(w.conn, (i, task)), daemon=True)
                    w.sender.start()
                else:
                    _send(w.conn, (i, task))
            by_conn: dict[Any, _Worker] = {w.conn: w for w in workers}
            by_sentinel: dict[Any, _Worker] = {w.process.sentinel: w for w in workers}
            waitables: list[Any] = [self._wake_r, *by_conn, *by_sentinel]
            ready = multiprocessing.connection.wait(waitables, timeout)
            if self._wake_r in ready:
                os.read(self._wake_r, 4096)
            dead: list[_Worker] = []
            for obj in ready:
                sender = by_conn.get(obj)
                if sender is None:
                    continue
                try:
                    msg = sender.conn.recv()
                except (EOFError, OSError):
                    dead.append(sender)
                    continue
                self._on_message(sender, msg)
            for obj in ready:
                gone = by_sentinel.get(obj)
                if gone is not None and gone not in dead:
                    dead.append(gone)
            for w in dead:
                self._on_death(w)
            with self._lock:
                self._watch()
                self._respawn_due()
            self._publish()

    def _on_message(self, w: _Worker, msg: Any) -> None:
        with self._lock:
            if msg[0] == READY:
                w.ready = True
                self._failures.pop(w.index, None)
                self._changed.notify_all()
                return
            task_index, ok, payload = msg
            current = w.current
            w.current = None
            if w.killed_for:
                return  # Sent just before the pool killed it; its call has ended.
            if current is None or current[1] != task_index:
                _LOG.error("worker %d sent an unexpected result for task %s", w.index, task_index)
                return
            batch, i = current
            if batch.done.is_set():
                return  # Failed or cancelled meanwhile; drop the outcome.
            if not ok:
                self._drop(batch)
                batch.finish(
                    TaskFailedError(
                        f"{batch.names[i]} failed in worker {w.index} (pid {w.pid}): {payload}"
                    )
                )
                return
            self._strikes.pop(_env_key(batch.tasks[i]), None)
            batch.results[i] = payload
            batch.remaining -= 1
            if batch.remaining == 0:
                batch.finish()


__all__ = [
    "DEFAULT_ENV_FAULT_HOLD_S",
    "DEFAULT_MAX_EPISODE_SECONDS",
    "DEFAULT_RESPAWN_ATTEMPTS",
    "DEFAULT_STALL_SECONDS",
    "BatchCancelledError",
    "BatchHandle",
    "EnvFaultError",
    "EpisodeBudgetError",
    "PoolClosedError",
    "PoolError",
    "TaskFailedError",
    "WorkerCrashedError",
    "WorkerPool",
    "_Worker",
    "_close_after_send",
]
