"""The health service, without the deadlock of grpc_health's servicer.

grpc_health's ``HealthServicer`` (1.85) sends ``Watch`` responses while it holds
its lock, and a non-blocking send waits until gRPC's serving thread has taken
the message. That same thread runs the callback of every ``Watch`` stream that
ends, which needs the lock. So a client that starts watching while another
client's stream ends (trainers that come and go on one bridge: every Go client
watches health) stops the serving thread for good: no call of any kind is
answered again, and SIGTERM's graceful shutdown waits on the same lock.

This servicer keeps the state under that lock and sends outside it, under a
lock of its own that the serving thread never takes (the order of an update
and of a new watcher's first response is kept by that lock). Upstream, the open
pull request grpc/grpc#43403 reorders these locks; drop this class once a
grpcio-health-checking release with it is pinned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2

_Send = Callable[[Any], None]


class HealthServicer(health.HealthServicer):  # type: ignore[misc]
    """grpc_health's servicer, sending outside its state lock."""

    def __init__(self) -> None:
        super().__init__()
        self._gracefully_shutting_down: bool  # set by the base class; typed for mypy
        self._send_lock = threading.RLock()

    def Watch(  # noqa: N802 (the gRPC method's name)
        self,
        request: health_pb2.HealthCheckRequest,
        context: grpc.ServicerContext,
        send_response_callback: _Send | None = None,
    ) -> Any:
        """Send the status now and on each change: registered under the lock, sent after."""
        if send_response_callback is None:
            # A blocking server: responses go through a queue, never under the lock.
            return super().Watch(request, context)
        service = request.service
        with self._send_lock:
            with self._lock:
                status = self._server_status.get(
                    service, health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
                )
                self._send_response_callbacks.setdefault(service, set()).add(send_response_callback)
            if not context.add_callback(self._on_close_callback(send_response_callback, service)):
                # The call has ended already: nothing will remove it.
                with self._lock:
                    self._send_response_callbacks[service].discard(send_response_callback)
                return None
            send_response_callback(health_pb2.HealthCheckResponse(status=status))
        return None

    def set(self, service: str, status: Any) -> None:
        """Set a service's status and send it to its watchers, outside the state lock."""
        with self._send_lock:
            with self._lock:
                if self._gracefully_shutting_down:
                    return
                self._server_status[service] = status
                sends = list(self._send_response_callbacks.get(service, ()))
            for send in sends:
                send(health_pb2.HealthCheckResponse(status=status))

    def enter_graceful_shutdown(self) -> None:
        """Send NOT_SERVING for every service, then freeze the statuses."""
        with self._send_lock:
            with self._lock:
                if self._gracefully_shutting_down:
                    return
                services = list(self._server_status)
            for service in services:
                self.set(service, health_pb2.HealthCheckResponse.NOT_SERVING)
            with self._lock:
                self._gracefully_shutting_down = True
