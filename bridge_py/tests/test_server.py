"""The server process: the ready line, SIGTERM mid-call, health and reflection."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from envbridge.v1 import envbridge_pb2 as pb
from envbridge.v1 import envbridge_pb2_grpc as pbg
from stpis_bridge import healthcheck
from stpis_bridge.server import parse_config, serve
from tests.conftest import hopper_spec

BRIDGE_PY = Path(__file__).resolve().parents[1]
SERVICE = "envbridge.v1.EnvBridgeService"


def test_health_reports_serving(channel):
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", SERVICE):
        resp = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        assert resp.status == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.RpcError) as info:
        health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_healthcheck_module_exit_status(server, capsys):
    assert healthcheck.main(["--addr", f"127.0.0.1:{server.port}"]) == 0
    assert "SERVING" in capsys.readouterr().out
    # Nothing listens on port 1.
    assert healthcheck.main(["--addr", "127.0.0.1:1", "--timeout", "1"]) == 1


def test_reflection_lists_the_service(channel):
    db = ProtoReflectionDescriptorDatabase(channel)
    services = set(db.get_services())
    assert SERVICE in services
    assert "grpc.health.v1.Health" in services
    method_names = {
        m.name
        for m in db.FindFileContainingSymbol(SERVICE).service[0].method  # type: ignore[attr-defined]
    }
    assert method_names == {"Describe", "ListEnvs", "Rollout"}


def test_no_reflection_flag_turns_reflection_off():
    config, _ = parse_config(["--no-reflection", "--listen", "127.0.0.1:0", "--workers", "1"])
    assert not config.reflection
    running = serve(config)
    try:
        with grpc.insecure_channel(running.address) as ch:
            with pytest.raises(grpc.RpcError) as info:
                ProtoReflectionDescriptorDatabase(ch).get_services()
            assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
            health = health_pb2_grpc.HealthStub(ch)
            resp = health.Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert resp.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        running.stop(1)


def test_cli_defaults_and_validation():
    config, level = parse_config([])
    assert config.listen == "127.0.0.1:50051"
    assert config.limits.max_episodes_per_call == 4096
    assert config.limits.max_horizon == 10000
    assert config.limits.max_weights == 1_000_000
    assert config.max_message_bytes == 64 * 1024 * 1024
    assert config.grace_seconds == 10.0
    assert level == "info"
    with pytest.raises(SystemExit):
        parse_config(["--workers", "0"])
    with pytest.raises(SystemExit):
        parse_config(["--listen", "nohost"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grace-seconds", "nan"], "--grace-seconds must be in [0, 3600.0], got nan"),
        (["--grace-seconds", "inf"], "--grace-seconds must be in [0, 3600.0], got inf"),
        (["--tls-cert", "{bad}", "--tls-key", "{bad}"], "not a PEM certificate (chain)"),
        (["--tls-client-ca", "{bad}"], "--tls-client-ca needs --tls-cert"),
        (["--listen", "0.0.0.0:50051"], "in plaintext lets anyone who reaches the port"),
        (["--listen", "[::]:50051"], "in plaintext lets anyone who reaches the port"),
    ],
)
def test_cli_refuses_what_grpc_would_misreport(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """A garbage PEM made gRPC say "Failed to bind to address"; NaN grace passed."""
    bad = tmp_path / "bad.pem"
    bad.write_text("garbage\n")
    with pytest.raises(SystemExit) as exc:
        parse_config([a.replace("{bad}", str(bad)) for a in args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_plaintext_beyond_loopback_when_asked() -> None:
    for listen in ("127.0.0.1:0", "localhost:0", "[::1]:0"):
        assert parse_config(["--listen", listen])[0].listen == listen
    config, _ = parse_config(["--listen", "0.0.0.0:0", "--plaintext-beyond-loopback"])
    assert config.plaintext_beyond_loopback


def test_subprocess_prints_ready_line_and_finishes_in_flight_call_on_sigterm():
    # Enough work that the call is surely still running when the signal lands: 4
    # episodes of 1000 steps once finished (0.1 s on 2 workers) before it did.
    EPISODES = 64
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stpis_bridge",
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "2",
            "--grace-seconds",
            "60",
            "--log-level",
            "debug",
        ],
        cwd=BRIDGE_PY,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log: list[str] = []
    started = threading.Event()

    def read_log() -> None:
        for text in proc.stderr:
            log.append(text)
            if f"Rollout: {EPISODES} episodes started" in text:
                started.set()

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    try:
        line = proc.stdout.readline()
        m = re.fullmatch(r"LISTENING 127\.0\.0\.1:(\d+)\n", line)
        assert m, (line, log)
        port = int(m.group(1))
        assert port > 0

        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = pbg.EnvBridgeServiceStub(ch)
            kwargs = {"terminate_when_unhealthy": False}
            specs = [hopper_spec(seed=i, horizon=1000, kwargs=kwargs) for i in range(EPISODES)]
            future = stub.Rollout.future(pb.RolloutRequest(episodes=specs), timeout=120)
            assert started.wait(60), log
            proc.send_signal(signal.SIGTERM)
            resp = future.result()
            assert [r.length for r in resp.results] == [1000] * EPISODES

        rc = proc.wait(60)
        reader.join(10)
        assert rc == 0, log
        assert proc.stdout.read() == ""  # the ready line is the only stdout output
        text = "".join(log)
        # The call was still in flight when the signal arrived, and it completed.
        assert text.index("received SIGTERM") < text.index(f"Rollout: {EPISODES} episodes done")
        assert "stopped" in text
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_subprocess_stops_when_sigterm_lands_on_another_thread():
    # kill(2) aimed at a thread id other than the main one is still sent to the
    # whole process, but Linux hands it to that thread: this is what happens at
    # random when a supervisor signals the process. The bridge must still stop.
    proc = subprocess.Popen(
        [sys.executable, "-m", "stpis_bridge", "--listen", "127.0.0.1:0", "--workers", "1"],
        cwd=BRIDGE_PY,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("LISTENING "), (line, proc.stderr.read() if proc.poll() else "")
        tids = sorted(int(t) for t in os.listdir(f"/proc/{proc.pid}/task"))
        others = [t for t in tids if t != proc.pid]
        assert others, f"the bridge runs no threads besides main: {tids}"
        os.kill(others[0], signal.SIGTERM)
        rc = proc.wait(20)
        _, err = proc.communicate(timeout=10)
        assert rc == 0, err
        assert "received SIGTERM" in err and "stopped" in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--tls-cert", "/etc/hostname"], "--tls-cert and --tls-key go together"),
        (["--tls-cert", "/no/cert.pem", "--tls-key", "/no/key.pem"], "--tls-cert '/no/cert.pem'"),
        (["--stall-seconds", "0"], "--stall-seconds must be at least 0.1"),
        (["--max-concurrent-calls", "0"], "--max-concurrent-calls must be at least 1"),
        (["--max-abs-shift", "inf"], "--max-abs-shift must be a positive finite number"),
        (["--respawn-attempts", "-1"], "--respawn-attempts must be >= 0"),
    ],
    ids=["tls-half", "tls-missing", "stall", "concurrent", "shift", "respawn"],
)
def test_bad_flags_name_the_flag(argv, needle, capsys):
    with pytest.raises(SystemExit):
        parse_config(argv)
    assert needle in capsys.readouterr().err


def test_version_flag_names_the_bridge_and_its_libraries() -> None:
    import pathlib
    import subprocess
    import sys
    import tomllib

    import stpis_bridge

    root = pathlib.Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-m", "stpis_bridge", "--version"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert stpis_bridge.__version__ == project["version"]
    assert out.startswith(f"stpis_bridge {project['version']} ")
    for lib in ("gymnasium", "mujoco", "grpcio"):
        assert lib in out


def test_limits_beyond_what_describe_can_report_name_the_flag() -> None:
    from stpis_bridge.servicer import Limits

    with pytest.raises(ValueError, match="--max-horizon"):
        Limits(max_horizon=2**32).validate()
