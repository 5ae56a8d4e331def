"""Server configuration, startup (pool, gRPC, health, reflection), the ready line and signals.

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

import argparse
import dataclasses
import faulthandler
import ipaddress
import logging
import os
import platform
import signal
import ssl
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from types import FrameType
from typing import Any, NoReturn

import grpc
import gymnasium
import mujoco
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

import stpis_bridge
from envbridge.v1 import envbridge_pb2, envbridge_pb2_grpc
from stpis_bridge import fast
from stpis_bridge.envs import clip
from stpis_bridge.pool import (
    DEFAULT_MAX_EPISODE_SECONDS,
    DEFAULT_RESPAWN_ATTEMPTS,
    DEFAULT_STALL_SECONDS,
    WorkerPool,
)
from stpis_bridge.servicer import (
    DEFAULT_MAX_ABS_SHIFT,
    DEFAULT_MAX_EPISODES_PER_CALL,
    DEFAULT_MAX_HORIZON,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_SIM_STEPS,
    DEFAULT_MAX_STEPS_IN_FLIGHT,
    DEFAULT_MAX_WEIGHTS,
    SERVICE_NAME,
    EnvBridgeServicer,
    Limits,
)

_LOG = logging.getLogger(__name__)

DEFAULT_LISTEN = "127.0.0.1:50051"
_NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
_MIN_PING_INTERVAL_MS = 5000
DEFAULT_GRACE_SECONDS = 10.0
_LOG_LEVELS = ("debug", "info", "warning", "error")
# Calls other than health that may run at once: each Rollout call blocks a
# handler thread while the pool runs its episodes.
DEFAULT_MAX_CONCURRENT_CALLS = 64
# Handler threads kept free of those calls, for health checks and reflection.
_RESERVED_RPC_THREADS = 8
# Methods that never wait on the pool, and so skip the admission limit.
_UNLIMITED_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.")
# The --backend default, so that a whole test suite can run on one backend.
_BACKEND_ENV = "STPIS_BRIDGE_BACKEND"
# How often the main thread wakes to run signal handlers (see main).
_SIGNAL_POLL_S = 0.2
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


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """Everything ``serve`` needs; the defaults are the CLI's."""

    listen: str = DEFAULT_LISTEN
    workers: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)
    limits: Limits = dataclasses.field(default_factory=Limits)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    grace_seconds: float = DEFAULT_GRACE_SECONDS
    max_concurrent_calls: int = DEFAULT_MAX_CONCURRENT_CALLS
    max_episode_seconds: float = DEFAULT_MAX_EPISODE_SECONDS
    stall_seconds: float = DEFAULT_STALL_SECONDS
    respawn_attempts: int = DEFAULT_RESPAWN_ATTEMPTS
    reflection: bool = True
    # main() stops the bridge when its parent process dies.
    exit_with_parent: bool = False
    # PEM files of the server's certificate (chain) and key: TLS when both are set.
    tls_cert: str = ""
    tls_key: str = ""
    # PEM file of the CAs that sign client certificates: when set (with TLS), the
    # bridge requires and verifies one from every client (mutual TLS).
    tls_client_ca: str = ""
    # Plaintext on an address beyond loopback only when asked: a network that only
    # the trainer reaches (compose's internal network, Kubernetes' NetworkPolicy).
    plaintext_beyond_loopback: bool = False
    # auto: the fast backend wherever it honours the env and kwargs, else gymnasium.
    backend: str = fast.BACKEND_AUTO

    def validate(self) -> None:
        """Raise ValueError naming the flag of the first bad setting."""
        host, sep, port = self.listen.rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise ValueError(f"--listen must be HOST:PORT, got {self.listen!r}")
        if self.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {self.workers}")
        limit, why = max_workers()
        if self.workers > limit:
            raise ValueError(
                f"--workers {self.workers} exceeds the limit {limit} ({why}): "
                "ask for fewer worker processes"
            )
        if self.max_message_bytes < 1024:
            raise ValueError(
                f"--max-message-bytes must be at least 1024, got {self.max_message_bytes}"
            )
        if not 0 <= self.grace_seconds <= MAX_GRACE_SECONDS:
            raise ValueError(
                f"--grace-seconds must be in [0, {MAX_GRACE_SECONDS}], got {self.grace_seconds}"
            )
        if self.max_concurrent_calls < 1:
            raise ValueError(
                f"--max-concurrent-calls must be at least 1, got {self.max_concurrent_calls}"
            )
        for flag, value in (
            ("--max-episode-seconds", self.max_episode_seconds),
            ("--stall-seconds", self.stall_seconds),
        ):
            if not 0.1 <= value < float("inf"):
                raise ValueError(f"{flag} must be at least 0.1 and finite, got {value}")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("--tls-cert and --tls-key go together: give both or neither")
        if not self.tls_cert and not self.plaintext_beyond_loopback and not _is_loopback(host):
            raise ValueError(
                f"--listen {self.listen} in plaintext lets anyone who reaches the port run "
                "episodes on this machine: serve TLS (--tls-cert, --tls-key, and "
                "--tls-client-ca to admit only your trainers), listen on 127.0.0.1, or pass "
                "--plaintext-beyond-loopback on a network only the trainer reaches"
            )
        if self.tls_client_ca and not self.tls_cert:
            raise ValueError("--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)")
        for flag, path in (
            ("--tls-cert", self.tls_cert),
            ("--tls-key", self.tls_key),
            ("--tls-client-ca", self.tls_client_ca),
        ):
            if path and not os.access(path, os.R_OK):
                raise ValueError(f"{flag} {path!r}: not a readable file")
        check_tls_files(self.tls_cert, self.tls_key, self.tls_client_ca)
        if self.respawn_attempts < 0:
            raise ValueError(f"--respawn-attempts must be >= 0, got {self.respawn_attempts}")
        if self.backend not in fast.BACKENDS:
            raise ValueError(
                f"--backend must be one of {', '.join(fast.BACKENDS)}, got {self.backend!r}"
            )
        self.limits.validate()


def _is_loopback(host: str) -> bool:
    """Say whether a --listen host is a loopback address (or localhost)."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


MAX_GRACE_SECONDS = 3600.0
"""The longest --grace-seconds: an hour for in-flight calls to finish."""


def check_tls_files(cert: str, key: str, client_ca: str) -> None:
    """Raise ValueError naming the flag whose PEM file does not load.

    gRPC itself says only "Failed to bind to address" for a bad certificate or key;
    Python's ssl module parses the same PEM and says what is wrong.
    """
    if cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            ctx.load_cert_chain(cert, key)
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(
                f"--tls-cert {cert!r} and --tls-key {key!r}: not a PEM certificate (chain) and "
                f"its private key: {exc}"
            ) from exc
    if client_ca:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            ctx.load_verify_locations(cafile=client_ca)
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(
                f"--tls-client-ca {client_ca!r}: not a PEM file of CA certificates: {exc}"
            ) from exc


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


class _Undecodable:
    """A request whose bytes are not the method's message: the parser's complaint."""

    def __init__(self, error: str) -> None:
        self.error = error


def _tolerant(parse: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    # gRPC answers a request that fails to parse with INTERNAL; this lets the
    # handler answer INVALID_ARGUMENT instead.
    def tolerant(data: bytes) -> Any:
        try:
            return parse(data)
        except Exception as exc:  # noqa: BLE001  (DecodeError, or a str that is not UTF-8)
            return _Undecodable(f"{type(exc).__name__}: {exc}")

    return tolerant


class _AdmissionInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]
    """Fails calls beyond ``limit`` at once with UNAVAILABLE, except health and reflection.

    The server's thread pool has ``limit`` + ``_RESERVED_RPC_THREADS`` threads, so a
    health check always finds a free one, however many Rollout calls wait on the pool.
    A request that is not a valid message gets INVALID_ARGUMENT (gRPC says INTERNAL).
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._slots = threading.BoundedSemaphore(limit)

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Any],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or handler.unary_unary is None or method.startswith(_UNLIMITED_PREFIXES):
            return handler
        inner = handler.unary_unary

        def admitted(request: Any, context: grpc.ServicerContext) -> Any:
            if isinstance(request, _Undecodable):
                context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"request: not a valid message for {method}: {clip(request.error)}",
                )
            if not self._slots.acquire(blocking=False):
                context.abort(
                    grpc.StatusCode.UNAVAILABLE,
                    f"bridge busy: {self._limit} calls in progress "
                    f"(--max-concurrent-calls={self._limit}); retry later",
                )
            try:
                return inner(request, context)
            finally:
                self._slots.release()

        return grpc.unary_unary_rpc_method_handler(
            admitted,
            request_deserializer=_tolerant(handler.request_deserializer),
            response_serializer=handler.response_serializer,
        )


def _split_host(listen: str) -> str:
    # IPv6 hosts keep their brackets, so that host:port stays unambiguous.
    return listen.rpartition(":")[0]


def serve(config: ServerConfig) -> RunningServer:
    """Start the pool, then the gRPC server with health and reflection; return it running."""
    config.validate()
    health_servicer = health.HealthServicer()

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
            EnvBridgeServicer(pool, config.limits, config.backend), server
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


def version() -> str:
    """Return the bridge's version with those of Python, gymnasium, MuJoCo and grpcio."""
    return (
        f"stpis_bridge {stpis_bridge.__version__} (python {platform.python_version()}, "
        f"gymnasium {gymnasium.__version__}, mujoco {mujoco.__version__}, "
        f"grpcio {grpc.__version__})"
    )


class _OneLineParser(argparse.ArgumentParser):
    """Says what is wrong with the command line in one line, without the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (-h lists the flags)\n")


def _parser() -> argparse.ArgumentParser:
    p = _OneLineParser(
        prog="python -m stpis_bridge",
        description="gRPC bridge that runs gymnasium MuJoCo episodes under linear policies. "
        "Prints 'LISTENING host:port' on stdout once ready.",
    )
    p.add_argument("--version", action="version", version=version())
    p.add_argument("--listen", default=DEFAULT_LISTEN, help="HOST:PORT; port 0 picks a free one")
    p.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help=f"worker processes, at most {WORKERS_PER_CORE} a core and what the available "
        f"memory holds at {WORKER_MEMORY_BYTES >> 20} MiB a worker (default: cores)",
    )
    p.add_argument("--max-episodes-per-call", type=int, default=DEFAULT_MAX_EPISODES_PER_CALL)
    p.add_argument("--max-horizon", type=int, default=DEFAULT_MAX_HORIZON)
    p.add_argument(
        "--max-weights", type=int, default=DEFAULT_MAX_WEIGHTS, help="max W entries per policy"
    )
    p.add_argument(
        "--max-sim-steps",
        type=int,
        default=DEFAULT_MAX_SIM_STEPS,
        help="max MuJoCo steps per episode: horizon x frame_skip",
    )
    p.add_argument("--max-abs-shift", type=float, default=DEFAULT_MAX_ABS_SHIFT, help="max |shift|")
    p.add_argument(
        "--max-steps-in-flight",
        type=int,
        default=DEFAULT_MAX_STEPS_IN_FLIGHT,
        help="steps (episodes x horizon) one client may have in flight; more: RESOURCE_EXHAUSTED",
    )
    p.add_argument(
        "--max-episode-seconds",
        type=float,
        default=DEFAULT_MAX_EPISODE_SECONDS,
        help="an episode running longer is aborted and its worker replaced",
    )
    p.add_argument(
        "--stall-seconds",
        type=float,
        default=DEFAULT_STALL_SECONDS,
        help="a busy worker whose CPU time stands still this long is replaced",
    )
    p.add_argument(
        "--respawn-attempts",
        type=int,
        default=DEFAULT_RESPAWN_ATTEMPTS,
        help="a worker dying before it is ready this many times in a row ends the bridge",
    )
    p.add_argument(
        "--max-concurrent-calls",
        type=int,
        default=DEFAULT_MAX_CONCURRENT_CALLS,
        help="calls (other than health) at once; more fail with UNAVAILABLE",
    )
    p.add_argument("--max-message-bytes", type=int, default=DEFAULT_MAX_MESSAGE_BYTES)
    p.add_argument(
        "--no-reflection",
        dest="reflection",
        action="store_false",
        help="do not serve gRPC reflection (grpcurl then needs the .proto)",
    )
    p.add_argument("--tls-cert", default="", help="PEM certificate (chain): serve TLS")
    p.add_argument("--tls-key", default="", help="PEM private key of --tls-cert")
    p.add_argument(
        "--plaintext-beyond-loopback",
        action="store_true",
        help="allow plaintext on a --listen address beyond 127.0.0.1: for a network that only "
        "the trainer reaches (compose's, or Kubernetes' with its NetworkPolicy)",
    )
    p.add_argument(
        "--tls-client-ca",
        default="",
        help="PEM CA certificates: require a client certificate they sign (mutual TLS)",
    )
    p.add_argument(
        "--exit-with-parent",
        action="store_true",
        help="stop when the parent process dies (for a bridge a trainer started)",
    )
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
            max_sim_steps=args.max_sim_steps,
            max_abs_shift=args.max_abs_shift,
            max_steps_in_flight=args.max_steps_in_flight,
        ),
        max_message_bytes=args.max_message_bytes,
        grace_seconds=args.grace_seconds,
        max_concurrent_calls=args.max_concurrent_calls,
        max_episode_seconds=args.max_episode_seconds,
        stall_seconds=args.stall_seconds,
        respawn_attempts=args.respawn_attempts,
        reflection=args.reflection,
        exit_with_parent=args.exit_with_parent,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_client_ca=args.tls_client_ca,
        plaintext_beyond_loopback=args.plaintext_beyond_loopback,
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
    "RunningServer",
    "ServerConfig",
    "available_memory",
    "envbridge_pb2",
    "main",
    "max_workers",
    "parse_config",
    "serve",
]
