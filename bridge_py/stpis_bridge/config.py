"""The server's configuration (``ServerConfig``) and its validation, TLS files included."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import ssl

from stpis_bridge import fast
from stpis_bridge.memory import max_workers
from stpis_bridge.pool import (
    DEFAULT_MAX_EPISODE_SECONDS,
    DEFAULT_RESPAWN_ATTEMPTS,
    DEFAULT_STALL_SECONDS,
)
from stpis_bridge.servicer import DEFAULT_MAX_MESSAGE_BYTES, Limits

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_GRACE_SECONDS = 10.0
# Calls other than health that may run at once: each Rollout call blocks a
# handler thread while the pool runs its episodes.
DEFAULT_MAX_CONCURRENT_CALLS = 64


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
    # Modules whose envs clients may name as module:EnvId (--env-module).
    env_modules: tuple[str, ...] = ()

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
