"""Issue 34, defect 1: bounded ``--workers``, and workers that die with their bridge.

``--workers 100000`` spawned workers until the kernel's out-of-memory killer fired,
and workers outlived the bridge at full CPU for minutes. Real bridges and real
MuJoCo episodes: the bridge is SIGKILLed while its workers start, run an episode,
or are stopped, and every worker must be gone within seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from envbridge.v1 import envbridge_pb2_grpc as pbg
from stpis_bridge import lifeline, memory
from stpis_bridge.pool import WorkerPool
from stpis_bridge.rollout import LinearPolicy
from stpis_bridge.server import WORKER_MEMORY_BYTES, ServerConfig, max_workers, parse_config
from stpis_bridge.worker import EpisodeTask
from tests.conftest import hopper_spec, random_w

BRIDGE_PY = Path(__file__).resolve().parents[1]
# How long a worker may outlive its killed bridge.
GONE_S = 5.0


def _cpu_limit() -> int:
    return 4 * (os.cpu_count() or 1)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] != b"Z"


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _workers(bridge: int) -> list[int]:
    """Return the bridge's worker processes: its children that multiprocessing spawned."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{bridge}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{bridge}/task/{tid}/children") as f:
                children = [int(p) for p in f.read().split()]
        except OSError:
            continue
        for pid in children:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"spawn_main" in f.read():
                        out.append(pid)
            except OSError:
                pass
    return out


def _has_mapped(pid: int, library: str) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as f:
            return library in f.read()
    except OSError:
        return False


@pytest.fixture
def reap() -> Iterator[list[int]]:
    """Pids to SIGKILL after the test, so that a failing test leaves nothing behind."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _bridge(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "stpis_bridge", "--listen", "127.0.0.1:0", *args],
        cwd=BRIDGE_PY,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _wait_gone(pids: list[int], what: str) -> None:
    deadline = time.monotonic() + GONE_S
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            left = [p for p in pids if _alive(p)]
            raise AssertionError(f"{what}: workers {left} outlived the bridge by {GONE_S}s")
        time.sleep(0.02)


# --- the bound ---------------------------------------------------------------


def test_workers_above_the_limit_are_refused_in_one_line_before_any_starts():
    too_many = _cpu_limit() + 1
    proc = subprocess.run(
        [sys.executable, "-m", "stpis_bridge", "--listen", "127.0.0.1:0"]
        + ["--workers", str(too_many)],
        cwd=BRIDGE_PY,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "LISTENING" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    limit, _ = max_workers()
    assert f"--workers {too_many} exceeds the limit {limit} (" in lines[0]


@pytest.mark.parametrize("count", ["0", "-1", "100000"])
def test_bad_worker_counts_name_the_flag(count, capsys):
    with pytest.raises(SystemExit):
        parse_config(["--workers", count])
    err = capsys.readouterr().err
    assert "--workers" in err and len(err.strip().splitlines()) == 1, err


def test_the_limit_is_cores_or_memory_whichever_is_less(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 1 << 50)
    assert max_workers() == (_cpu_limit(), f"4 per core on {os.cpu_count()} cores")
    ServerConfig(workers=_cpu_limit()).validate()
    with pytest.raises(ValueError, match=rf"--workers {_cpu_limit() + 1} exceeds the limit"):
        ServerConfig(workers=_cpu_limit() + 1).validate()

    monkeypatch.setattr(memory, "available_memory", lambda: 3 * WORKER_MEMORY_BYTES + 5)
    limit, why = max_workers()
    assert limit == min(3, _cpu_limit())
    if limit == 3:
        assert "of available memory holds at 100 MiB a worker" in why
    with pytest.raises(ValueError, match="available memory"):
        ServerConfig(workers=4).validate()
    # A machine short of memory still runs one worker.
    monkeypatch.setattr(memory, "available_memory", lambda: 0)
    assert max_workers()[0] == 1
    ServerConfig(workers=1).validate()


def test_the_default_is_within_the_limit():
    config, _ = parse_config([])
    assert 1 <= config.workers <= max_workers()[0]


# --- workers die with the bridge --------------------------------------------


def test_the_lifeline_imports_nothing_heavy_and_exits_under_another_parent():
    probe = (
        "import sys; import stpis_bridge.lifeline as l; "
        "print(sorted(m for m in ('numpy', 'gymnasium', 'mujoco', 'grpc') if m in sys.modules)); "
        "l.die_with_parent(1); print('survived')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=BRIDGE_PY, capture_output=True, text=True, timeout=60
    )
    assert proc.stdout == "[]\n", proc
    assert proc.returncode == lifeline.EXIT_ORPHANED, proc


def test_workers_die_with_a_bridge_killed_during_startup(reap):
    # The worker is stopped while it imports gymnasium and MuJoCo (numpy is
    # mapped: it is past the lifeline), so the bridge cannot be ready yet.
    proc = _bridge("--workers", "1")
    reap.append(proc.pid)
    deadline = time.monotonic() + 60
    caught: list[int] = []
    while not caught:
        assert time.monotonic() < deadline, "no worker seen importing numpy"
        assert proc.poll() is None
        for pid in _workers(proc.pid):
            if _has_mapped(pid, "_multiarray_umath"):
                os.kill(pid, signal.SIGSTOP)
                caught.append(pid)
                reap.append(pid)
        time.sleep(0.001)
    proc.kill()
    proc.wait()
    _wait_gone(caught, "killed during startup")
    # Read only now: a worker that outlived the bridge would hold its stdout open.
    assert proc.stdout is not None
    assert "LISTENING" not in proc.stdout.read(), "the bridge was past its startup"


def test_workers_die_with_a_bridge_killed_mid_episode_or_while_stopped(reap):
    proc = _bridge("--workers", "2")
    reap.append(proc.pid)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("LISTENING "), line
    workers = _workers(proc.pid)
    reap.extend(workers)
    assert len(workers) == 2, workers
    # 5000 steps x frame_skip 40 of Humanoid: over ten seconds of MuJoCo.
    spec = hopper_spec(
        horizon=5000,
        w=random_w(3, rows=17, cols=348, scale=0.01),
        kwargs={"terminate_when_unhealthy": False, "frame_skip": 40, "max_episode_steps": 5000},
        env_id="Humanoid-v5",
    )
    with grpc.insecure_channel(line.split()[1]) as ch:
        call = pbg.EnvBridgeServiceStub(ch).Rollout.future(
            pb.RolloutRequest(episodes=[spec]), timeout=120
        )
        before = {p: _cpu_ticks(p) for p in workers}
        deadline = time.monotonic() + 30
        busy: list[int] = []
        while not busy:
            assert time.monotonic() < deadline, "no worker took the episode"
            time.sleep(0.5)
            busy = [p for p in workers if _cpu_ticks(p) - before[p] >= 20]
        idle = [p for p in workers if p not in busy]
        for pid in idle:
            os.kill(pid, signal.SIGSTOP)
        proc.kill()
        proc.wait()
        _wait_gone(workers, "killed mid-episode and while stopped")
        call.cancel()


def test_workers_outlive_the_thread_that_started_the_pool():
    # The parent-death signal follows the thread that started a worker: the
    # pool starts them from a thread of its own, not from its caller's.
    pool = WorkerPool(1)
    starter = threading.Thread(target=pool.start)
    starter.start()
    starter.join(120)
    try:
        pid = pool.worker_pids()[0]
        time.sleep(0.5)
        task = EpisodeTask(
            env_id="Swimmer-v5",
            kwargs=(),
            policy=LinearPolicy(random_w(2, rows=2, cols=8), np.zeros(8), np.ones(8)),
            seed=0,
            horizon=10,
            shift=0.0,
        )
        assert [o.length for o in pool.run([task])] == [10]  # type: ignore[union-attr]
        assert pool.worker_pids() == [pid] and pool.replacements == 0
    finally:
        pool.close()
