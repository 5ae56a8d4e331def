"""``python -m stpis_bridge.healthcheck --addr HOST:PORT``: exit 0 when the server is SERVING.

A dependency-free replacement for grpc_health_probe, for container health checks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def check(addr: str, service: str = "", timeout: float = 3.0) -> tuple[bool, str]:
    """Ask the grpc.health.v1 service at ``addr``; return (serving, what it said)."""
    with grpc.insecure_channel(addr) as channel:
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
    args = p.parse_args(argv)
    ok, what = check(args.addr, args.service, args.timeout)
    print(f"{args.addr}: {what}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
