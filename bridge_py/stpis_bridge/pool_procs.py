"""The pool's worker processes: the spawner thread, each worker's slot, and sending it tasks."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import threading
from collections.abc import Callable
from multiprocessing.context import BaseContext
from typing import Any, TypeVar

from stpis_bridge.pool_batch import PoolClosedError, _Batch
from stpis_bridge.worker import BatchTask, Task

_R = TypeVar("_R")


def _cpu_seconds(pid: int) -> float | None:
    """Return the CPU time (user + system) of ``pid`` from /proc, or None off Linux."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # Fields after the command name, which is in parentheses and may hold spaces.
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError):
        return None


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


class _Spawner:
    """The one thread that starts a pool's workers, whichever thread asks.

    A worker's parent-death signal follows the thread that started it, not the
    process (``lifeline``): started from a caller's thread, a worker would be
    killed when that thread ends. This thread lives until the pool is closed.
    """

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[
            tuple[Callable[[], Any], concurrent.futures.Future[Any]] | None
        ] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(target=self._serve, name="pool-spawn", daemon=True)
        self._thread.start()

    def call(self, fn: Callable[[], _R]) -> _R:
        """Run ``fn`` on the spawner thread and return its result or raise its error."""
        if threading.current_thread() is self._thread:
            return fn()
        done: concurrent.futures.Future[_R] = concurrent.futures.Future()
        with self._lock:
            if self._stopped:
                raise PoolClosedError("the worker pool is shutting down")
            self._requests.put((fn, done))
        return done.result()

    def stop(self, timeout: float) -> None:
        """Run what was asked so far, then end the thread."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._requests.put(None)
        self._thread.join(timeout)

    def _serve(self) -> None:
        while True:
            request = self._requests.get()
            if request is None:
                return
            fn, done = request
            try:
                done.set_result(fn())
            except BaseException as exc:  # noqa: BLE001  (handed to the caller)
                done.set_exception(exc)


@dataclasses.dataclass
class _Worker:
    index: int
    process: Any
    conn: multiprocessing.connection.Connection
    ready: bool = False
    dead: bool = False
    current: tuple[_Batch, int] | None = None
    # When the current task was sent; the worker's CPU time, and when it last moved.
    started: float = 0.0
    # The wall time the current task may take (--max-episode-seconds per episode).
    budget: float = 0.0
    cpu: float | None = None
    cpu_moved: float = 0.0
    # Why the pool killed this worker, if it did.
    killed_for: str = ""
    # The thread sending it a chunk, if any: its connection is closed only
    # after that thread is done, or a new worker's pipe could take the
    # closed descriptor's number and receive the rest of the chunk.
    sender: threading.Thread | None = None

    @property
    def pid(self) -> int:
        return int(self.process.pid)


def _episodes(task: Task) -> int:
    """Return how many episodes a task runs."""
    return len(task.episodes) if isinstance(task, BatchTask) else 1


def _close_after_send(w: _Worker) -> None:
    """Close a dead worker's connection once no thread is writing to it."""
    sender = w.sender
    if sender is None or not sender.is_alive():
        w.conn.close()
        return

    def close() -> None:
        # The worker is dead, so the write fails at once (EPIPE).
        sender.join()
        w.conn.close()

    threading.Thread(target=close, daemon=True).start()


def _send(conn: multiprocessing.connection.Connection, msg: tuple[int, Task]) -> None:
    try:
        conn.send(msg)
    except (OSError, ValueError, TypeError):
        # The worker died (its sentinel fires in the dispatcher).
        pass
