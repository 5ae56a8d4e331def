"""Server configuration, startup (pool, gRPC, health, reflection), the ready line and signals.

The ready contract: once the port is bound and every worker is ready, ``main``
prints exactly one line ``LISTENING <host>:<port>`` to stdout and flushes it.
Logging goes to stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import faulthandler
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from concurrent import futures
from types import FrameType

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from envbridge.v1 import envbridge_pb2, envbridge_pb2_grpc
from stpis_bridge import fast
from stpis_bridge.pool import WorkerPool
from stpis_bridge.servicer import (
    DEFAULT_MAX_EPISODES_PER_CALL,
    DEFAULT_MAX_HORIZON,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_WEIGHTS,
    SERVICE_NAME,
    EnvBridgeServicer,
    Limits,
)

_LOG = logging.getLogger(__name__)

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_GRACE_SECONDS = 10.0
_LOG_LEVELS = ("debug", "info", "warning", "error")
# gRPC handler threads: each Rollout call blocks one while the pool runs its episodes.
_MIN_RPC_THREADS = 16
# The --backend default, so that a whole test suite can run on one backend.
_BACKEND_ENV = "STPIS_BRIDGE_BACKEND"
# How often the main thread wakes to run signal handlers (see main).
_SIGNAL_POLL_S = 0.2


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """Everything ``serve`` needs; the defaults are the CLI's."""

    listen: str = DEFAULT_LISTEN
    workers: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)
    limits: Limits = dataclasses.field(default_factory=Limits)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    grace_seconds: float = DEFAULT_GRACE_SECONDS
    # auto: the fast backend wherever it honours the env and kwargs, else gymnasium.
    backend: str = fast.BACKEND_AUTO

    def validate(self) -> None:
        """Raise ValueError naming the flag of the first bad setting."""
        host, sep, port = self.listen.rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise ValueError(f"--listen must be HOST:PORT, got {self.listen!r}")
        if self.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {self.workers}")
        if self.max_message_bytes < 1024:
            raise ValueError(
                f"--max-message-bytes must be at least 1024, got {self.max_message_bytes}"
            )
        if self.grace_seconds < 0:
            raise ValueError(f"--grace-seconds must be >= 0, got {self.grace_seconds}")
        if self.backend not in fast.BACKENDS:
            raise ValueError(
                f"--backend must be one of {', '.join(fast.BACKENDS)}, got {self.backend!r}"
            )
        self.limits.validate()


class RunningServer:
    """A started server: its port, its pool, and ``stop``."""

    def __init__(
        self,
        config: ServerConfig,
        server: grpc.Server,
        pool: WorkerPool,
        health_servicer: health.HealthServicer,
        host: str,
        port: int,
    ) -> None:
        self.config = config
        self.server = server
        self.pool = pool
        self.health = health_servicer
        self.host = host
        self.port = port
        self._stopped = False
        self._stop_lock = threading.Lock()

    @property
    def address(self) -> str:
        """Return ``host:port`` as bound."""
        return f"{self.host}:{self.port}"

    def worker_pids(self) -> list[int]:
        """Return the pids of the pool's worker processes."""
        return self.pool.worker_pids()

    def stop(self, grace: float | None = None) -> None:
        """Refuse new calls, let in-flight ones finish within ``grace`` s, stop the pool."""
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        grace = self.config.grace_seconds if grace is None else grace
        _LOG.info("stopping: grace %.1fs for in-flight calls", grace)
        self.health.enter_graceful_shutdown()
        self.server.stop(grace).wait()
        self.pool.close()
        _LOG.info("stopped")


def _split_host(listen: str) -> str:
    # IPv6 hosts keep their brackets, so that host:port stays unambiguous.
    return listen.rpartition(":")[0]


def serve(config: ServerConfig) -> RunningServer:
    """Start the pool, then the gRPC server with health and reflection; return it running."""
    config.validate()
    pool = WorkerPool(config.workers)
    pool.start()
    try:
        options = [
            ("grpc.max_receive_message_length", config.max_message_bytes),
            ("grpc.max_send_message_length", config.max_message_bytes),
            ("grpc.so_reuseport", 0),
        ]
        threads = max(_MIN_RPC_THREADS, 4 * config.workers)
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rpc"),
            options=options,
        )
        envbridge_pb2_grpc.add_EnvBridgeServiceServicer_to_server(
            EnvBridgeServicer(pool, config.limits, config.backend), server
        )
        health_servicer = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        names = (
            SERVICE_NAME,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        )
        reflection.enable_server_reflection(names, server)
        port = server.add_insecure_port(config.listen)
        if port == 0:
            raise OSError(f"could not bind {config.listen}")
        server.start()
        for service in ("", SERVICE_NAME):
            health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    except BaseException:
        pool.close()
        raise
    host = _split_host(config.listen)
    _LOG.info(
        "serving %s on %s:%d with %d workers (pids %s), backend %s",
        SERVICE_NAME,
        host,
        port,
        config.workers,
        pool.worker_pids(),
        config.backend,
    )
    return RunningServer(config, server, pool, health_servicer, host, port)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m stpis_bridge",
        description="gRPC bridge that runs gymnasium MuJoCo episodes under linear policies. "
        "Prints 'LISTENING host:port' on stdout once ready.",
    )
    p.add_argument("--listen", default=DEFAULT_LISTEN, help="HOST:PORT; port 0 picks a free one")
    p.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="worker processes (default: cores)"
    )
    p.add_argument("--max-episodes-per-call", type=int, default=DEFAULT_MAX_EPISODES_PER_CALL)
    p.add_argument("--max-horizon", type=int, default=DEFAULT_MAX_HORIZON)
    p.add_argument(
        "--max-weights", type=int, default=DEFAULT_MAX_WEIGHTS, help="max W entries per policy"
    )
    p.add_argument("--max-message-bytes", type=int, default=DEFAULT_MAX_MESSAGE_BYTES)
    p.add_argument(
        "--grace-seconds",
        type=float,
        default=DEFAULT_GRACE_SECONDS,
        help="on SIGTERM/SIGINT, how long in-flight calls may run on",
    )
    p.add_argument(
        "--backend",
        default=os.environ.get(_BACKEND_ENV, fast.BACKEND_AUTO),
        choices=fast.BACKENDS,
        help="fast: batched lockstep stepping of the v5 tasks (an error where it cannot serve "
        "an env or kwarg); gymnasium: one gymnasium env per episode; auto: fast wherever it "
        f"can, else gymnasium (default: ${_BACKEND_ENV}, else auto)",
    )
    p.add_argument("--log-level", default="info", choices=_LOG_LEVELS)
    return p


def parse_config(argv: Sequence[str]) -> tuple[ServerConfig, str]:
    """Parse the CLI into a validated ``ServerConfig`` and the log level."""
    parser = _parser()
    args = parser.parse_args(argv)
    config = ServerConfig(
        listen=args.listen,
        workers=args.workers,
        limits=Limits(
            max_episodes_per_call=args.max_episodes_per_call,
            max_horizon=args.max_horizon,
            max_weights=args.max_weights,
        ),
        max_message_bytes=args.max_message_bytes,
        grace_seconds=args.grace_seconds,
        backend=args.backend,
    )
    try:
        config.validate()
    except ValueError as exc:
        parser.error(str(exc))
    return config, args.log_level


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until SIGTERM or SIGINT; return the exit status."""
    config, level = parse_config(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        # CPython runs this on the main thread between two bytecodes, which may
        # be inside a lock the main thread holds (a threading.Event's, say): so
        # it takes no non-reentrant lock (logging's are reentrant).
        _LOG.info("received %s", signal.Signals(signum).name)
        received.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # `kill -USR1 <pid>` prints every thread's Python stack to stderr (in C, so
    # it works even when the interpreter is stuck): for a bridge that hangs.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        running = serve(config)
    except Exception as exc:
        _LOG.error("could not start: %s", exc)
        return 1
    sys.stdout.write(f"LISTENING {running.address}\n")
    sys.stdout.flush()
    # The kernel may deliver SIGTERM to any thread (a gRPC or pool thread, say).
    # CPython then runs the handler only once the main thread executes bytecode
    # again, so the main thread must not block for long: it polls.
    while not received:
        time.sleep(_SIGNAL_POLL_S)
    running.stop()
    return 0


__all__ = ["RunningServer", "ServerConfig", "envbridge_pb2", "main", "parse_config", "serve"]
