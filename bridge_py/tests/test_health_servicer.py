"""The health servicer sends no Watch response under the lock that a stream's end needs.

gRPC's serving thread both completes a non-blocking send and runs the callbacks
of streams that end. The fake send below waits, as gRPC's does, until that
thread has moved on, and the thread is made to end another watcher's stream
first: with grpc_health's own servicer it waits for the lock the sender holds,
so the bridge never answers again (seen in a matrix of trainers on one bridge).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from stpis_bridge.health_servicer import HealthServicer
from stpis_bridge.server import RunningServer

_WAIT_S = 2.0


class _Context:
    """The part of a ServicerContext that Watch uses: callbacks run when the call ends."""

    def __init__(self) -> None:
        self.callbacks: list[Callable[[], None]] = []

    def add_callback(self, callback: Callable[[], None]) -> bool:
        self.callbacks.append(callback)
        return True

    def end(self) -> None:
        for callback in self.callbacks:
            callback()


def _watch(servicer: Any, ctx: _Context, send: Callable[[Any], None]) -> None:
    servicer.Watch(
        health_pb2.HealthCheckRequest(service=""),
        ctx,  # type: ignore[arg-type]
        send_response_callback=send,
    )


def _serving_thread_ends(ctx: _Context) -> Callable[[Any], None]:
    """A send that completes only after "the serving thread" has ended ctx's stream."""

    def send(_response: Any) -> None:
        t = threading.Thread(target=ctx.end, daemon=True)
        t.start()
        t.join(_WAIT_S)
        if t.is_alive():
            raise TimeoutError("the serving thread is stuck on the servicer's lock")

    return send


def _first_watcher(servicer: Any) -> _Context:
    ctx = _Context()
    _watch(servicer, ctx, lambda _r: None)
    return ctx


def test_the_stock_servicer_deadlocks() -> None:
    """The model reproduces the defect: grpc_health's servicer sends under its lock."""
    stock = health.HealthServicer()
    other = _first_watcher(stock)
    with pytest.raises(TimeoutError):
        _watch(stock, _Context(), _serving_thread_ends(other))


@pytest.mark.parametrize("change", ["watch", "set", "shutdown"])
def test_no_send_under_the_lock(change: str) -> None:
    servicer = HealthServicer()
    other = _first_watcher(servicer)
    got: list[Any] = []
    if change == "watch":
        _watch(servicer, _Context(), _serving_thread_ends(other))
        return
    # A watcher whose send waits on the serving thread, which ends the other stream.
    sends = iter([lambda r: got.append(r.status), _serving_thread_ends(other)])

    def send(response: Any) -> None:
        next(sends, lambda r: got.append(r.status))(response)

    _watch(servicer, _Context(), send)
    if change == "set":
        servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    else:
        servicer.enter_graceful_shutdown()
        servicer.set("", health_pb2.HealthCheckResponse.SERVING)  # frozen: ignored
    assert got == [health_pb2.HealthCheckResponse.SERVING]
    assert servicer._server_status[""] == health_pb2.HealthCheckResponse.NOT_SERVING


def test_a_watch_of_an_ended_call_is_not_kept() -> None:
    servicer = HealthServicer()

    class Ended(_Context):
        def add_callback(self, callback: Callable[[], None]) -> bool:
            return False

    sent: list[Any] = []
    _watch(servicer, Ended(), sent.append)
    assert sent == []
    assert not servicer._send_response_callbacks.get("")


def test_watch_answers_over_grpc(server: RunningServer) -> None:
    """Through the real server: watchers come and go, and the bridge still answers."""
    bridge_address = f"127.0.0.1:{server.port}"
    for _ in range(20):
        with grpc.insecure_channel(bridge_address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            stream = stub.Watch(health_pb2.HealthCheckRequest(service=""), timeout=10)
            assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
            stream.cancel()
    with grpc.insecure_channel(bridge_address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=10
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
