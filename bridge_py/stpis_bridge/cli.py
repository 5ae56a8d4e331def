"""The bridge's command line: its flags, ``--version``, and parsing them into a ``ServerConfig``."""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Sequence
from typing import NoReturn

import grpc
import gymnasium
import mujoco

import stpis_bridge
from stpis_bridge import fast
from stpis_bridge.config import (
    DEFAULT_GRACE_SECONDS,
    DEFAULT_LISTEN,
    DEFAULT_MAX_CONCURRENT_CALLS,
    ServerConfig,
)
from stpis_bridge.memory import WORKER_MEMORY_BYTES, WORKERS_PER_CORE
from stpis_bridge.pool import (
    DEFAULT_MAX_EPISODE_SECONDS,
    DEFAULT_RESPAWN_ATTEMPTS,
    DEFAULT_STALL_SECONDS,
)
from stpis_bridge.servicer import (
    DEFAULT_MAX_ABS_SHIFT,
    DEFAULT_MAX_EPISODES_PER_CALL,
    DEFAULT_MAX_HORIZON,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_SIM_STEPS,
    DEFAULT_MAX_STEPS_IN_FLIGHT,
    DEFAULT_MAX_WEIGHTS,
    Limits,
)

_LOG_LEVELS = ("debug", "info", "warning", "error")
# The --backend default, so that a whole test suite can run on one backend.
_BACKEND_ENV = "STPIS_BRIDGE_BACKEND"


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
        help="steps (episodes x horizon) one client (its certificate under mutual TLS, else "
        "its host) may have in flight; more: RESOURCE_EXHAUSTED",
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
    p.add_argument(
        "--env-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module (or package) whose envs clients may name as MODULE:EnvId, as "
        "gymnasium.make takes them; the bridge imports it on first use (repeatable; the "
        "bridge imports no module a client names otherwise)",
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
        env_modules=tuple(args.env_module),
    )
    try:
        config.validate()
    except ValueError as exc:
        parser.error(str(exc))
    return config, args.log_level
