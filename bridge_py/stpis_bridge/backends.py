"""Which backend runs each episode of a call, and how its episodes become pool tasks.

gymnasium is the reference backend: one ``EpisodeTask`` per episode, run by
``rollout.run_episode`` on a gymnasium env. The fast backend (``fast``) serves the
six v5 tasks with the kwargs it honours: the episodes of one (env id, kwargs) are
dealt into one chunk per worker, and each chunk is one
``BatchTask`` that a worker runs in lockstep. A chunk records every observation of
its episodes (for their exact statistics), so it is also cut to stay within
``CHUNK_OBS_BYTES``. An episode's result does not depend on the chunk it lands in,
so the split is free to follow the number of workers and the memory bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from stpis_bridge import fast
from stpis_bridge.rollout import EpisodeOutcome
from stpis_bridge.worker import BatchTask, EpisodeTask, Outcome, Task

# The most memory one chunk's recorded observations may take (horizon × obs dim × 8
# bytes per episode): Humanoid (348 dims) at 1000 steps fits 96 episodes.
CHUNK_OBS_BYTES = 256 * 1024 * 1024


class BackendError(ValueError):
    """An episode needs the fast backend (``--backend=fast``), which cannot run it."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


@dataclasses.dataclass(frozen=True)
class Plan:
    """The pool tasks of one call and, per task, the request indices of its episodes."""

    tasks: list[Task]
    positions: list[list[int]]
    n: int

    def names(self) -> list[str]:
        """Name each task by the request episodes it runs, for error messages."""
        out = []
        for where in self.positions:
            if len(where) == 1:
                out.append(f"episodes[{where[0]}]")
            else:
                shown = ", ".join(str(i) for i in where[:8]) + (", ..." if len(where) > 8 else "")
                out.append(f"episodes[{shown}] ({len(where)} episodes run as one fast chunk)")
        return out

    def unpack(self, outcomes: Sequence[Outcome]) -> list[EpisodeOutcome]:
        """Return one outcome per episode, in request order."""
        out: list[EpisodeOutcome | None] = [None] * self.n
        for where, got in zip(self.positions, outcomes, strict=True):
            items = got if isinstance(got, list) else [got]
            if len(items) != len(where):
                raise RuntimeError(f"a pool task returned {len(items)} outcomes, not {len(where)}")
            for i, o in zip(where, items, strict=True):
                out[i] = o
        if any(o is None for o in out):
            raise RuntimeError("an episode has no outcome")
        return [o for o in out if o is not None]


def plan(tasks: Sequence[EpisodeTask], backend: str, workers: int) -> Plan:
    """Cut the fast backend's episodes into ``workers`` chunks per (env, kwargs), or more.

    More chunks only where one per worker would record more than ``CHUNK_OBS_BYTES``.

    Raises ``BackendError`` (with the episode's index) when ``backend`` is ``fast`` and an
    episode's env or kwargs are beyond it.
    """
    groups: dict[tuple[str, object], list[int]] = {}
    singles: list[int] = []
    for i, t in enumerate(tasks):
        try:
            chosen = fast.choose_backend(backend, t.env_id, dict(t.kwargs))
        except fast.BadBackendError as exc:
            raise BackendError(i, str(exc)) from exc
        if chosen == fast.BACKEND_FAST:
            groups.setdefault((t.env_id, t.kwargs), []).append(i)
        else:
            singles.append(i)

    pool_tasks: list[Task] = []
    positions: list[list[int]] = []
    for members in groups.values():
        per_episode = max(8 * tasks[i].horizon * tasks[i].policy.weights.shape[1] for i in members)
        most = max(1, CHUNK_OBS_BYTES // max(1, per_episode))
        chunks = max(min(workers, len(members)), -(-len(members) // most))
        for c in range(chunks):
            # Dealt round robin: a call's K repeats of one point sit side by side and
            # tend to last alike, so dealing spreads long and short episodes evenly.
            where = members[c::chunks]
            first = tasks[where[0]]
            episodes = tuple(tasks[i] for i in where)
            pool_tasks.append(BatchTask(first.env_id, first.kwargs, episodes))
            positions.append(where)
    for i in singles:
        pool_tasks.append(tasks[i])
        positions.append([i])
    return Plan(tasks=pool_tasks, positions=positions, n=len(tasks))
