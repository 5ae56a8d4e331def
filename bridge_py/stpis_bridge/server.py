"""Server startup (pool, gRPC, health, reflection), the ready line and signals.

Its configuration is ``config``, its command line ``cli``, its admission limit
``admission`` and its worker limit ``memory``.

The ready contract: once the port is bound and every worker is ready, ``main``
prints exactly one line ``LISTENING <host>:<port>`` to stdout and flushes it.
Logging goes to stderr.

Health follows the pool: NOT_SERVING while no worker is ready (respawning), and
``main`` exits with status 1 once the pool is broken, so that a supervisor
restarts the bridge. Health is answered within milliseconds under any load: the
bridge's other calls may hold at most ``--max-concurrent-calls`` of the handler
threads, and calls beyond that fail at once with UNAVAILABLE.
"""

from __future__ import annotations

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
from stpis_bridge.admission import _RESERVED_RPC_THREADS, _AdmissionInterceptor
from stpis_bridge.cli import parse_config
from stpis_bridge.config import ServerConfig
from stpis_bridge.health_servicer import HealthServicer
from stpis_bridge.memory import WORKER_MEMORY_BYTES, available_memory, max_workers
from stpis_bridge.pool import WorkerPool
from stpis_bridge.servicer import SERVICE_NAME, EnvBridgeServicer

_LOG = logging.getLogger(__name__)

_NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
_MIN_PING_INTERVAL_MS = 5000
# How often the main thread wakes to run signal handlers (see main).
_SIGNAL_POLL_S = 0.2


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
    health_servicer = HealthServicer()

    def on_serving(serving: bool) -> None:
        status = health_pb2.HealthCheckResponse.SERVING if serving else _NOT_SERVING
        for service in ("", SERVICE_NAME):
            health_servicer.set(service, status)

    pool = WorkerPool(
        config.workers,
        max_episode_seconds=config.max_episode_seconds,
        stall_seconds=config.stall_seconds,
        respawn_attempts=config.respawn_attempts,
        on_serving=on_serving,
    )
    pool.start()
    try:
        options = [
            ("grpc.max_receive_message_length", config.max_message_bytes),
            ("grpc.max_send_message_length", config.max_message_bytes),
            ("grpc.so_reuseport", 0),
            # Let clients ping every 5 s (the default minimum is 5 min), so that a
            # client's keepalive finds a stopped bridge in seconds.
            ("grpc.http2.min_recv_ping_interval_without_data_ms", _MIN_PING_INTERVAL_MS),
            ("grpc.http2.min_ping_interval_without_data_ms", _MIN_PING_INTERVAL_MS),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_ping_strikes", 0),
        ]
        threads = config.max_concurrent_calls + _RESERVED_RPC_THREADS
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rpc"),
            interceptors=[_AdmissionInterceptor(config.max_concurrent_calls)],
            options=options,
        )
        envbridge_pb2_grpc.add_EnvBridgeServiceServicer_to_server(
            EnvBridgeServicer(pool, config.limits, config.backend, config.env_modules), server
        )
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        if config.reflection:
            names = (
                SERVICE_NAME,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            )
            reflection.enable_server_reflection(names, server)
        if config.tls_cert:
            with open(config.tls_key, "rb") as k, open(config.tls_cert, "rb") as c:
                pair = (k.read(), c.read())
            client_ca = None
            if config.tls_client_ca:
                with open(config.tls_client_ca, "rb") as f:
                    client_ca = f.read()
            creds = grpc.ssl_server_credentials(
                [pair], root_certificates=client_ca, require_client_auth=client_ca is not None
            )
            port = server.add_secure_port(config.listen, creds)
        else:
            port = server.add_insecure_port(config.listen)
        if port == 0:
            raise OSError(f"could not bind {config.listen}")
        server.start()
        on_serving(pool.serving)
    except BaseException:
        pool.close()
        raise
    host = _split_host(config.listen)
    _LOG.info(
        "serving %s on %s:%d (%s) with %d workers (pids %s), backend %s",
        SERVICE_NAME,
        host,
        port,
        ("mutual TLS" if config.tls_client_ca else "TLS") if config.tls_cert else "plaintext",
        config.workers,
        pool.worker_pids(),
        config.backend,
    )
    return RunningServer(config, server, pool, health_servicer, host, port)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until SIGTERM or SIGINT; return the exit status."""
    config, level = parse_config(sys.argv[1:] if argv is None else argv)
    parent = os.getppid()
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
    # It also watches the pool, and the parent process when asked to.
    while not received:
        time.sleep(_SIGNAL_POLL_S)
        broken = running.pool.broken
        if broken is not None:
            _LOG.error("exiting: %s", broken)
            running.stop(0)
            return 1
        if config.exit_with_parent and os.getppid() != parent:
            _LOG.warning("exiting: parent process %d died (--exit-with-parent)", parent)
            running.stop(0)
            return 1
    running.stop()
    return 0


__all__ = [
    "WORKER_MEMORY_BYTES",
    "RunningServer",
    "ServerConfig",
    "available_memory",
    "envbridge_pb2",
    "main",
    "max_workers",
    "parse_config",
    "serve",
]
