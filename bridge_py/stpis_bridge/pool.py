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
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Sequence
from multiprocessing.context import BaseContext
from typing import Any

from stpis_bridge.worker import READY, Outcome, Task, worker_main

_LOG = logging.getLogger(__name__)

_START_TIMEOUT_S = 120.0
_JOIN_TIMEOUT_S = 5.0


class PoolError(RuntimeError):
    """Base class of the pool's errors."""


class WorkerCrashedError(PoolError):
    """A worker process died while it held a task of the batch."""


class TaskFailedError(PoolError):
    """A task raised inside a worker."""


class PoolClosedError(PoolError):
    """The pool is closed or closing."""


class BatchCancelledError(PoolError):
    """The batch was cancelled by its caller."""


def _context() -> BaseContext:
    return multiprocessing.get_context("spawn")


def _describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "exited (status unknown)"
    if exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


class _Batch:
    """The tasks of one call, their outcomes, and how the call ended."""

    def __init__(self, batch_id: int, tag: str, tasks: Sequence[Task]) -> None:
        self.batch_id = batch_id
        self.tag = tag
        self.tasks = list(tasks)
        self.next_index = 0
        self.results: list[Outcome | None] = [None] * len(self.tasks)
        self.remaining = len(self.tasks)
        self.error: PoolError | None = None
        self.done = threading.Event()

    def finish(self, error: PoolError | None = None) -> None:
        if self.done.is_set():
            return
        self.error = error
        self.done.set()


class BatchHandle:
    """A submitted batch: wait for its outcomes or cancel it."""

    def __init__(self, pool: WorkerPool, batch: _Batch) -> None:
        self._pool = pool
        self._batch = batch

    def wait(self, timeout: float | None = None) -> list[Outcome]:
        """Return the outcomes in task order, or raise the batch's ``PoolError``."""
        if not self._batch.done.wait(timeout):
            raise TimeoutError(f"batch {self._batch.batch_id} not done after {timeout}s")
        if self._batch.error is not None:
            raise self._batch.error
        return [r for r in self._batch.results if r is not None]

    def cancel(self) -> None:
        """Drop the tasks not yet started; running ones finish and are discarded."""
        self._pool._cancel(self._batch)


@dataclasses.dataclass
class _Worker:
    index: int
    process: Any
    conn: multiprocessing.connection.Connection
    ready: bool = False
    dead: bool = False
    current: tuple[_Batch, int] | None = None

    @property
    def pid(self) -> int:
        return int(self.process.pid)


class WorkerPool:
    """N worker processes; ``submit`` a batch of tasks, ``close`` when done."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"pool size must be at least 1, got {size}")
        self._size = size
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
        self._broken: str | None = None
        self.replacements = 0

    @property
    def size(self) -> int:
        """Return the number of worker processes the pool keeps."""
        return self._size

    def start(self) -> None:
        """Start the workers and wait until every one has imported gymnasium and MuJoCo."""
        with self._lock:
            self._workers = [self._spawn(i) for i in range(self._size)]
        self._thread = threading.Thread(target=self._dispatch, name="pool-dispatch", daemon=True)
        self._thread.start()
        self.wait_ready(_START_TIMEOUT_S)
        _LOG.info("worker pool ready: %d workers, pids %s", self._size, self.worker_pids())

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

    def submit(self, tasks: Sequence[Task], tag: str = "") -> BatchHandle:
        """Queue a batch; its tasks interleave with other batches' tasks."""
        batch = _Batch(next(self._ids), tag, tasks)
        if not batch.tasks:
            batch.finish()
            return BatchHandle(self, batch)
        with self._lock:
            if self._closing:
                raise PoolClosedError("the worker pool is shutting down")
            if self._broken is not None:
                raise PoolError(self._broken)
            self._queue.append(batch)
            self._wake()
        return BatchHandle(self, batch)

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
        with self._lock:
            os.close(self._wake_r)
            os.close(self._wake_w)

    # Everything below runs on the dispatcher thread, except _wake, _cancel and _spawn
    # (which the caller runs under the lock).

    def _spawn(self, index: int) -> _Worker:
        parent, child = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(  # type: ignore[attr-defined]
            target=worker_main, args=(child, index), name=f"stpis-worker-{index}", daemon=True
        )
        process.start()
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
            if not w.ready or w.current is not None:
                continue
            picked = self._next_task()
            if picked is None:
                break
            w.current = picked
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
            for w, i, task in sends:
                try:
                    w.conn.send((i, task))
                except OSError:
                    pass  # The worker died; its sentinel fires below.
            by_conn: dict[Any, _Worker] = {w.conn: w for w in workers}
            by_sentinel: dict[Any, _Worker] = {w.process.sentinel: w for w in workers}
            waitables: list[Any] = [self._wake_r, *by_conn, *by_sentinel]
            ready = multiprocessing.connection.wait(waitables)
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

    def _on_message(self, w: _Worker, msg: Any) -> None:
        with self._lock:
            if msg[0] == READY:
                w.ready = True
                self._changed.notify_all()
                return
            task_index, ok, payload = msg
            current = w.current
            w.current = None
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
                        f"episodes[{i}] failed in worker {w.index} (pid {w.pid}): {payload}"
                    )
                )
                return
            batch.results[i] = payload
            batch.remaining -= 1
            if batch.remaining == 0:
                batch.finish()

    def _on_death(self, w: _Worker) -> None:
        w.process.join(1.0)
        how = _describe_exit(w.process.exitcode)
        w.conn.close()
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
                            f"worker {w.index} (pid {w.pid}) {how} while running episodes[{i}] "
                            "of this call; the pool has replaced the worker, retry the call"
                        )
                    )
            if self._closing:
                return
            if not w.ready:
                # It died before importing gymnasium and MuJoCo: respawning would loop.
                self._broken = f"worker {w.index} (pid {w.pid}) {how} before it was ready"
                _LOG.error("%s; the pool is broken", self._broken)
                self._fail_all(PoolError(self._broken))
                self._changed.notify_all()
                return
            _LOG.warning("worker %d (pid %d) %s; replacing it", w.index, w.pid, how)
            try:
                self._workers[w.index] = self._spawn(w.index)
            except Exception as exc:  # noqa: BLE001
                self._broken = f"could not replace worker {w.index}: {exc}"
                _LOG.error("%s; the pool is broken", self._broken)
                self._fail_all(PoolError(self._broken))
                return
            self.replacements += 1

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
