"""``python -m stpis_bridge.healthcheck --addr HOST:PORT``: exit 0 when the server is SERVING.

A dependency-free replacement for grpc_health_probe, for container health checks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def _channel(
    addr: str, tls_ca: str, tls_server_name: str, tls_client: tuple[str, str] | None
) -> grpc.Channel:
    if not tls_ca:
        return grpc.insecure_channel(addr)
    with open(tls_ca, "rb") as f:
        roots = f.read()
    cert = key = None
    if tls_client:
        with open(tls_client[0], "rb") as c, open(tls_client[1], "rb") as k:
            cert, key = c.read(), k.read()
    creds = grpc.ssl_channel_credentials(
        root_certificates=roots, private_key=key, certificate_chain=cert
    )
    options = [("grpc.ssl_target_name_override", tls_server_name)] if tls_server_name else []
    return grpc.secure_channel(addr, creds, options=options)


def check(
    addr: str,
    service: str = "",
    timeout: float = 3.0,
    tls_ca: str = "",
    tls_server_name: str = "",
    tls_client: tuple[str, str] | None = None,
) -> tuple[bool, str]:
    """Ask the grpc.health.v1 service at ``addr``; return (serving, what it said).

    With ``tls_ca`` (a PEM file of the certificates to trust) it speaks TLS, presenting
    ``tls_client`` (certificate and key files) to a bridge that requires one.
    """
    with _channel(addr, tls_ca, tls_server_name, tls_client) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            resp = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as exc:
            return False, f"{exc.code().name}: {exc.details()}"
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)
    return resp.status == health_pb2.HealthCheckResponse.SERVING, status


def main(argv: Sequence[str] | None = None) -> int:
    """Print the health status; return 0 when SERVING, 1 otherwise."""
    p = argparse.ArgumentParser(prog="python -m stpis_bridge.healthcheck")
    p.add_argument("--addr", default="127.0.0.1:50051", help="HOST:PORT of the bridge")
    p.add_argument("--service", default="", help="service name; empty means the whole server")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds")
    p.add_argument("--tls-ca", default="", help="PEM certificates to trust: speak TLS")
    p.add_argument("--tls-server-name", default="", help="name to check the certificate for")
    p.add_argument("--tls-cert", default="", help="client certificate (mutual TLS), with --tls-key")
    p.add_argument("--tls-key", default="", help="private key of --tls-cert")
    args = p.parse_args(argv)
    if bool(args.tls_cert) != bool(args.tls_key) or (args.tls_cert and not args.tls_ca):
        p.error("--tls-cert and --tls-key go together, and need --tls-ca")
    client = (args.tls_cert, args.tls_key) if args.tls_cert else None
    ok, what = check(
        args.addr, args.service, args.timeout, args.tls_ca, args.tls_server_name, client
    )
    print(f"{args.addr}: {what}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
