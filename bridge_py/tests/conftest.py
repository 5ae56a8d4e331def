"""Shared fixtures: one real in-process server on port 0 with 2 workers and small limits."""

from __future__ import annotations

import os

# Off-screen OpenGL for the render tests: MuJoCo picks its platform when first imported.
os.environ.setdefault("MUJOCO_GL", "egl")

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import grpc
import numpy as np
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from envbridge.v1 import envbridge_pb2_grpc as pbg
from stpis_bridge.server import RunningServer, ServerConfig, serve
from stpis_bridge.servicer import Limits

# Small limits so that the limit tests stay cheap.
TEST_LIMITS = Limits(max_episodes_per_call=64, max_horizon=5000, max_weights=4096)
TEST_MAX_MESSAGE_BYTES = 1 << 20
HOPPER_OBS, HOPPER_ACT = 11, 3
# Hopper that never terminates early, so that an episode's length is its horizon.
NO_TERMINATION = {"terminate_when_unhealthy": False}


def kw(values: Mapping[str, bool | int | float | str]) -> dict[str, pb.KwargValue]:
    out = {}
    for name, v in values.items():
        if isinstance(v, bool):
            out[name] = pb.KwargValue(bool_value=v)
        elif isinstance(v, int):
            out[name] = pb.KwargValue(int_value=v)
        elif isinstance(v, float):
            out[name] = pb.KwargValue(double_value=v)
        else:
            out[name] = pb.KwargValue(string_value=v)
    return out


def random_w(seed: int, rows: int = HOPPER_ACT, cols: int = HOPPER_OBS, scale: float = 0.1):
    return np.random.default_rng(seed).normal(0.0, scale, (rows, cols))


def policy(
    w: np.ndarray,
    mean: Sequence[float] | None = None,
    std: Sequence[float] | None = None,
    bias: Sequence[float] = (),
) -> pb.LinearPolicy:
    rows, cols = w.shape
    return pb.LinearPolicy(
        rows=rows,
        cols=cols,
        weights=w.ravel().tolist(),
        obs_mean=list(mean) if mean is not None else [0.0] * cols,
        obs_std=list(std) if std is not None else [1.0] * cols,
        bias=list(bias),
    )


def hopper_spec(
    seed: int = 0,
    horizon: int = 20,
    w: np.ndarray | None = None,
    kwargs: Mapping[str, bool | int | float | str] = NO_TERMINATION,
    env_id: str = "Hopper-v5",
    shift: float = 0.0,
) -> pb.EpisodeSpec:
    return pb.EpisodeSpec(
        env_id=env_id,
        kwargs=kw(kwargs),
        policy=policy(random_w(1) if w is None else w),
        seed=seed,
        horizon=horizon,
        shift=shift,
    )


def start_server(**config: Any) -> RunningServer:
    """Serve ``ServerConfig(**config)`` on a free port, with 2 workers unless told."""
    return serve(ServerConfig(**{"listen": "127.0.0.1:0", "workers": 2, **config}))


@pytest.fixture(scope="session")
def server() -> Iterator[RunningServer]:
    running = start_server(limits=TEST_LIMITS, max_message_bytes=TEST_MAX_MESSAGE_BYTES)
    yield running
    running.stop(5)


@pytest.fixture(scope="session")
def channel(server: RunningServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        yield ch


@pytest.fixture(scope="session")
def stub(channel: grpc.Channel) -> pbg.EnvBridgeServiceStub:
    return pbg.EnvBridgeServiceStub(channel)


def assert_serving(stub: pbg.EnvBridgeServiceStub) -> None:
    """A tiny real rollout succeeds: the server is still serving after an error."""
    resp = stub.Rollout(pb.RolloutRequest(episodes=[hopper_spec(horizon=3)]), timeout=30)
    assert len(resp.results) == 1
    assert resp.results[0].length == 3
