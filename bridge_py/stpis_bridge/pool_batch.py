"""The pool's errors and its batches: the tasks of one call, their outcomes, and a handle.

This module sits beneath the pool (``pool`` imports it, ``pool_procs`` and ``pool_watch``
too) and imports none of them back: a handle cancels through the callable it is given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from stpis_bridge.worker import Outcome, Task


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


class EpisodeBudgetError(PoolError):
    """An episode ran past ``max_episode_seconds``; its worker was replaced."""


class EnvFaultError(PoolError):
    """An env crashed or hung its worker the same way twice in a row: the env's fault.

    The pool refuses tasks of that env (id and kwargs) for a while, so that one bad env
    does not have a shared bridge respawn workers for every retry of every client.
    """


class _Batch:
    """The tasks of one call, their outcomes, and how the call ended."""

    def __init__(
        self, batch_id: int, tag: str, tasks: Sequence[Task], names: Sequence[str] | None
    ) -> None:
        self.batch_id = batch_id
        self.tag = tag
        self.tasks = list(tasks)
        # How errors name task i: the caller's words (the episodes of the request it
        # holds), else "episodes[i]".
        self.names = (
            list(names) if names is not None else [f"episodes[{i}]" for i in range(len(tasks))]
        )
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

    def __init__(self, cancel: Callable[[_Batch], None], batch: _Batch) -> None:
        self._cancel = cancel
        self._batch = batch

    def wait(self, timeout: float | None = None) -> list[Outcome]:
        """Return the outcomes in task order, or raise the batch's ``PoolError``."""
        if not self._batch.done.wait(timeout):
            raise TimeoutError(f"batch {self._batch.batch_id} not done after {timeout}s")
        if self._batch.error is not None:
            raise self._batch.error
        return [r for r in self._batch.results if r is not None]

    def cancel(self) -> None:
        """Drop the tasks not yet started; abort the running ones (their workers are replaced)."""
        self._cancel(self._batch)
