"""The admission interceptor: a bound on concurrent calls, and INVALID_ARGUMENT for bad bytes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc

from stpis_bridge.envs import clip

# Handler threads kept free of those calls, for health checks and reflection.
_RESERVED_RPC_THREADS = 8
# Methods that never wait on the pool, and so skip the admission limit.
_UNLIMITED_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.")


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
