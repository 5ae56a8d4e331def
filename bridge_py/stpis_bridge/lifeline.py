"""What a worker process runs first: it ties its life to the bridge's, then imports.

A worker must not outlive the bridge that started it, in any state: importing
gymnasium and MuJoCo at startup, deep in an episode, or stopped (SIGSTOP). Its
pipe tells it only when it next reads from it, so on Linux the worker asks the
kernel for SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``), then checks
that the parent is still the bridge (it may have died before the request). Both
happen before the heavy imports: this module imports only the standard library.
Elsewhere a thread polls the parent pid instead (a stopped worker then dies only
once it is continued).

The kernel's parent is the *thread* that started the worker, not the process: the
pool starts every worker from one thread that lives until the pool is closed.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection

# prctl(2) option: the signal this process gets when its parent dies.
_PR_SET_PDEATHSIG = 1
# The exit status of a worker whose bridge died before it was tied to it.
EXIT_ORPHANED = 3
# How often the fallback thread (off Linux) checks the parent pid.
_POLL_S = 0.5


def die_with_parent(parent: int) -> None:
    """Get SIGKILL when the parent dies; exit at once if ``parent`` is no longer it.

    ``parent`` is the pid of the bridge, read before this process was started.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"prctl(PR_SET_PDEATHSIG): {os.strerror(errno)}")
    else:
        threading.Thread(target=_watch, args=(parent,), name="lifeline", daemon=True).start()
    # The parent may have died between fork and prctl: then the request above
    # came too late, and this process was handed to another parent.
    if os.getppid() != parent:
        os._exit(EXIT_ORPHANED)


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_POLL_S)
    os._exit(EXIT_ORPHANED)


def worker_entry(conn: Connection, index: int, parent: int) -> None:
    """Tie this process to the bridge ``parent``, then serve as worker ``index``."""
    die_with_parent(parent)
    # Imports gymnasium and MuJoCo: the longest part of a worker's start.
    from stpis_bridge.worker import worker_main

    worker_main(conn, index)
