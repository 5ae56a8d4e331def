"""Faults injected into a real bridge (issue 19): each is survived without intervention.

Workers and bridges are killed (SIGKILL), stopped (SIGSTOP) and flooded; the
bridge must recover by itself, say so through gRPC health, or exit for its
supervisor to restart it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from envbridge.v1 import envbridge_pb2 as pb
from envbridge.v1 import envbridge_pb2_grpc as pbg
from stpis_bridge import healthcheck
from stpis_bridge.server import RunningServer
from stpis_bridge.servicer import Limits
from tests.conftest import hopper_spec, random_w, start_server

BRIDGE_PY = Path(__file__).resolve().parents[1]
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
LONG_HOPPER = {"terminate_when_unhealthy": False, "max_episode_steps": 5000}


def _wait_for(cond: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout}s")
        time.sleep(0.005)


def _health(port: int, timeout: float = 1.0) -> int:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        resp = health_pb2_grpc.HealthStub(ch).Check(
            health_pb2.HealthCheckRequest(), timeout=timeout
        )
    return int(resp.status)


def _humanoid_spec() -> pb.EpisodeSpec:
    # 5000 steps x frame_skip 40 = 200,000 MuJoCo steps of Humanoid: over ten seconds
    # on either backend (the time limit is raised to the horizon).
    return hopper_spec(
        horizon=5000,
        w=random_w(3, rows=17, cols=348, scale=0.01),
        kwargs={"terminate_when_unhealthy": False, "frame_skip": 40, "max_episode_steps": 5000},
        env_id="Humanoid-v5",
    )


@pytest.fixture(scope="module")
def watched() -> Iterator[RunningServer]:
    """A 2-worker server with a short episode budget and stall timeout."""
    running = start_server(
        limits=Limits(max_weights=10_000), max_episode_seconds=4.0, stall_seconds=1.5
    )
    yield running
    running.stop(2)


def _stub(running: RunningServer) -> tuple[grpc.Channel, pbg.EnvBridgeServiceStub]:
    ch = grpc.insecure_channel(running.address)
    return ch, pbg.EnvBridgeServiceStub(ch)


def _ok(stub: pbg.EnvBridgeServiceStub) -> None:
    resp = stub.Rollout(pb.RolloutRequest(episodes=[hopper_spec(horizon=5)] * 2), timeout=60)
    assert [r.length for r in resp.results] == [5, 5]


# Defect 1: a replacement killed before it is ready; the pool respawns it with a
# backoff, reports NOT_SERVING meanwhile, and recovers.
def test_replacement_killed_before_ready_is_respawned_and_health_follows():
    running = start_server(workers=1)
    try:
        assert _health(running.port) == SERVING
        first = running.worker_pids()[0]
        os.kill(first, signal.SIGKILL)
        _wait_for(lambda: running.worker_pids()[0] != first, 10, "a replacement")
        second = running.worker_pids()[0]
        os.kill(second, signal.SIGKILL)  # within ms of its start: before it is ready
        _wait_for(lambda: _health(running.port) == NOT_SERVING, 5, "NOT_SERVING")
        assert not healthcheck.check(running.address)[0]
        _wait_for(lambda: _health(running.port) == SERVING, 30, "SERVING again")
        assert running.pool.broken is None
        assert second not in running.worker_pids()
        with grpc.insecure_channel(running.address) as ch:
            _ok(pbg.EnvBridgeServiceStub(ch))
    finally:
        running.stop(2)


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rfind(b")") + 2 :].split()[1]) == pid:
            out.append(int(entry))
    return out


def _start_bridge(*args: str) -> tuple[subprocess.Popen[str], int, list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "stpis_bridge", "--listen", "127.0.0.1:0", *args],
        cwd=BRIDGE_PY,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stderr = proc.stderr
    log: list[str] = []
    threading.Thread(target=lambda: log.extend(stderr), daemon=True).start()
    line = proc.stdout.readline()
    m = re.fullmatch(r"LISTENING 127\.0\.0\.1:(\d+)\n", line)
    assert m, (line, log)
    return proc, int(m.group(1)), log


# Defect 1: past the respawn cap the bridge exits non-zero for its supervisor.
def test_bridge_exits_nonzero_when_workers_keep_dying_before_ready():
    proc, port, log = _start_bridge("--workers", "1", "--respawn-attempts", "1")
    stop = threading.Event()

    def killer() -> None:  # kills every worker the bridge starts, as soon as it appears
        while not stop.is_set():
            for pid in _children(proc.pid):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if b"spawn_main" in f.read():
                            os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.002)

    thread = threading.Thread(target=killer, daemon=True)
    try:
        assert _health(port) == SERVING
        thread.start()
        seen: set[int] = set()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            health = health_pb2_grpc.HealthStub(ch)
            while proc.poll() is None:
                try:
                    seen.add(health.Check(health_pb2.HealthCheckRequest(), timeout=1).status)
                except grpc.RpcError:
                    pass
                time.sleep(0.02)
        assert proc.wait(30) == 1, log
        assert NOT_SERVING in seen, seen
        text = "".join(log)
        assert "before it was ready, 2 times in a row" in text, text
        assert "the worker pool is broken" in text and "exiting:" in text
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# Defect 1: a pool error reaches the client as UNAVAILABLE (retryable), not INTERNAL.
def test_broken_pool_fails_calls_with_unavailable():
    running = start_server(workers=1, respawn_attempts=0)
    try:
        ch, stub = _stub(running)
        with ch:
            pid = running.worker_pids()[0]
            os.kill(pid, signal.SIGKILL)
            _wait_for(lambda: running.worker_pids()[0] != pid, 10, "a replacement")
            os.kill(running.worker_pids()[0], signal.SIGKILL)
            _wait_for(lambda: running.pool.broken is not None, 10, "broken")
            with pytest.raises(grpc.RpcError) as info:
                stub.Rollout(pb.RolloutRequest(episodes=[hopper_spec(horizon=3)]), timeout=10)
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE, info.value.details()
            assert "broken" in info.value.details()
    finally:
        running.stop(1)


# Defect 2: a cancelled or expired call's running episodes are aborted.
def test_deadline_aborts_the_calls_running_episodes(watched):
    ch, stub = _stub(watched)
    with ch:
        before = set(watched.worker_pids())
        with pytest.raises(grpc.RpcError) as info:
            stub.Rollout(pb.RolloutRequest(episodes=[_humanoid_spec()] * 2), timeout=0.5)
        assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        # Both workers ran the call's episodes (seconds each): they are replaced at once.
        _wait_for(lambda: not before & set(watched.worker_pids()), 1.0, "replaced workers")
        _ok(stub)


# Defect 2: an episode past --max-episode-seconds is aborted with a clear error.
def test_episode_over_its_wall_budget_is_aborted(watched):
    ch, stub = _stub(watched)
    with ch:
        with pytest.raises(grpc.RpcError) as info:
            stub.Rollout(pb.RolloutRequest(episodes=[_humanoid_spec()]), timeout=60)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "episodes[0] ran for more than --max-episode-seconds=4" in info.value.details()
        _ok(stub)


# A fast chunk runs its episodes one after another: its wall budget is one
# episode's per episode, so a chunk of short episodes is not aborted as overlong.
def test_a_fast_chunk_gets_one_episode_budget_per_episode():
    running = start_server(workers=1, max_episode_seconds=1.0, stall_seconds=1.5)
    try:
        ch, stub = _stub(running)
        with ch:
            # Eight Hopper episodes of 1000 steps at frame_skip 12 (about 0.3 s each
            # here) run as one chunk of about 2.4 s: over one episode's 1 s, within 8 s.
            kwargs = {"terminate_when_unhealthy": False, "frame_skip": 12}
            specs = [hopper_spec(seed=s, horizon=1000, kwargs=kwargs) for s in range(8)]
            got = stub.Rollout(pb.RolloutRequest(episodes=specs), timeout=60).results
            assert [r.length for r in got] == [1000] * 8
    finally:
        running.stop(2)


# A chunk larger than the pipe's buffer, sent to a stopped worker, must not
# block the pool: the worker is found stalled and the call fails retryably,
# naming the request's episodes the chunk held.
def test_a_large_chunk_sent_to_a_stopped_worker_does_not_hang_the_pool():
    running = start_server(workers=1, stall_seconds=1.5)
    try:
        ch, stub = _stub(running)
        with ch:
            (victim,) = running.worker_pids()
            os.kill(victim, signal.SIGSTOP)
            specs = [hopper_spec(seed=s, horizon=5) for s in range(400)]
            start = time.monotonic()
            with pytest.raises(grpc.RpcError) as info:
                stub.Rollout(pb.RolloutRequest(episodes=specs), timeout=30)
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "made no progress" in info.value.details()
            assert "episodes[0, 1, 2" in info.value.details()
            assert "400 episodes run as one fast chunk" in info.value.details()
            assert time.monotonic() - start < 15
            _ok(stub)
    finally:
        running.stop(2)


# Defect 4: a stopped worker is replaced in seconds and its call fails retryably.
def test_stopped_worker_is_replaced_and_its_call_is_unavailable(watched):
    ch, stub = _stub(watched)
    with ch:
        future = stub.Rollout.future(
            pb.RolloutRequest(episodes=[hopper_spec(horizon=5000, kwargs=LONG_HOPPER)]),
            timeout=60,
        )
        _wait_for(lambda: len(watched.pool.busy()) == 1, 10, "a busy worker")
        victim = next(iter(watched.pool.busy()))
        os.kill(victim, signal.SIGSTOP)
        with pytest.raises(grpc.RpcError) as info:
            future.result(timeout=30)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        assert f"pid {victim}) made no progress" in info.value.details()
        _wait_for(lambda: victim not in watched.worker_pids(), 1.0, "a replacement")
        _ok(stub)


# Defect 13: health answers at once while every worker and handler thread is busy.
def test_health_answers_under_a_flood_of_rollouts():
    running = start_server(workers=1, max_concurrent_calls=24)
    try:
        ch, stub = _stub(running)
        with ch:
            spec = hopper_spec(horizon=5000, kwargs=LONG_HOPPER)
            calls = [
                stub.Rollout.future(pb.RolloutRequest(episodes=[spec]), timeout=120)
                for _ in range(24)
            ]
            _wait_for(lambda: running.pool.pending_tasks() >= 20, 10, "queued calls")
            for _ in range(5):
                assert _health(running.port, timeout=1.0) == SERVING
            # One call over --max-concurrent-calls is turned away at once.
            with pytest.raises(grpc.RpcError) as info:
                stub.Rollout(pb.RolloutRequest(episodes=[spec]), timeout=5)
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "--max-concurrent-calls=24" in info.value.details()
            for call in calls:
                call.cancel()
    finally:
        running.stop(1)


_PARENT = """
import subprocess, sys
proc = subprocess.Popen(
    [sys.executable, "-m", "stpis_bridge", "--listen", "127.0.0.1:0", "--workers", "1",
     "--exit-with-parent"],
    stdout=subprocess.PIPE, text=True,
)
print(proc.pid, proc.stdout.readline(), flush=True)
proc.stdout.close()
sys.stdin.read()
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] != b"Z"


# Defect 3: a bridge started with --exit-with-parent does not outlive its parent.
def test_bridge_and_workers_exit_when_the_parent_is_killed():
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT],
        cwd=BRIDGE_PY,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    started: list[int] = []
    try:
        pid_text, ready = parent.stdout.readline().split(" ", 1)
        bridge = int(pid_text)
        started.append(bridge)
        assert ready.startswith("LISTENING"), ready
        workers = _children(bridge)
        started.extend(workers)
        assert workers
        parent.kill()  # SIGKILL: the parent gets no chance to stop its child
        parent.wait()
        _wait_for(lambda: not any(_alive(p) for p in [bridge, *workers]), 10, "bridge gone")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for pid in started:  # a bridge that did not exit must not outlive the test
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
