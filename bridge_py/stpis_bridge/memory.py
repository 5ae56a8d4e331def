"""How many worker processes this machine holds: cores, and memory under the cgroup's limit."""

from __future__ import annotations

import os

# --workers is bounded by this many workers a core (os.cpu_count(), which gives
# the default) and by the available memory at WORKER_MEMORY_BYTES a worker: a
# worker holds about 70 MiB resident once it has imported gymnasium and MuJoCo
# (half of it shared libraries), more with the fast backend's batches.
WORKERS_PER_CORE = 4
WORKER_MEMORY_BYTES = 100 << 20


def _read_int(path: str) -> int | None:
    """Return the integer in the file at ``path``, or None (missing, or "max")."""
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def available_memory() -> int | None:
    """Return the bytes this process may still allocate, or None where unknown.

    The least of the kernel's MemAvailable and the room left under the memory
    limit of this process's cgroup (v2 or v1): a container sees the host's
    /proc/meminfo.
    """
    found: list[int] = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    for limit_file, usage_file in (
        ("memory.max", "memory.current"),
        ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes"),
    ):
        limit = _read_int(f"/sys/fs/cgroup/{limit_file}")
        usage = _read_int(f"/sys/fs/cgroup/{usage_file}")
        # cgroup v1 says "no limit" with a huge number, v2 with "max" (None).
        if limit is not None and usage is not None and limit < 1 << 60:
            found.append(max(0, limit - usage))
    return min(found) if found else None


def max_workers() -> tuple[int, str]:
    """Return the most worker processes ``--workers`` may ask for here, and why.

    ``WORKERS_PER_CORE`` per core, and no more than the available memory holds at
    ``WORKER_MEMORY_BYTES`` a worker (at least 1).
    """
    cores = os.cpu_count() or 1
    limit = WORKERS_PER_CORE * cores
    why = f"{WORKERS_PER_CORE} per core on {cores} cores"
    memory = available_memory()
    if memory is not None and memory // WORKER_MEMORY_BYTES < limit:
        limit = max(1, memory // WORKER_MEMORY_BYTES)
        why = (
            f"what {memory / 2**30:.2f} GiB of available memory holds at "
            f"{WORKER_MEMORY_BYTES >> 20} MiB a worker"
        )
    return limit, why
