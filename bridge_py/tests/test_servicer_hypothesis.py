"""Property tests of the servicer's request validation (issue 34: fuzzing of every parser).

Any Describe or Rollout request, however malformed, must end in a clean status: a
validation error (INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED) naming the field, or,
for a request that passes validation, the pool's answer. Nothing steps an env here: the
servicer runs in-process on a pool stand-in whose ``submit`` refuses (UNAVAILABLE), and
envs are only described (``gym.make``, a few milliseconds each), never reset or stepped.

``STPIS_HYPOTHESIS_EXAMPLES`` sets the examples per test (200 by default, derandomized so
that ``make test`` is repeatable; ``make fuzz`` raises it and draws afresh).
"""

from __future__ import annotations

import math
import os
from datetime import timedelta
from typing import Any, cast

import grpc
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from envbridge.v1 import envbridge_pb2 as pb
from stpis_bridge import fast
from stpis_bridge.pool import PoolError, WorkerPool
from stpis_bridge.servicer import EnvBridgeServicer, Limits

_EXAMPLES = int(os.environ.get("STPIS_HYPOTHESIS_EXAMPLES", "200"))
_FUZZING = "STPIS_HYPOTHESIS_EXAMPLES" in os.environ
_SETTINGS = settings(
    max_examples=_EXAMPLES,
    deadline=timedelta(seconds=2),
    derandomize=not _FUZZING,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Small limits, so that requests over them are cheap to build.
LIMITS = Limits(max_episodes_per_call=4, max_horizon=2000, max_weights=4096, max_sim_steps=10_000)
VALIDATION = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
POOL_REFUSAL = "fake pool: this test steps no env"

# Env ids with their (action dim, observation dim): paper aliases, gymnasium ids, and a
# MuJoCo env of no paper task.
DIMS = {
    "Hopper-v1": (3, 11),
    "Hopper-v5": (3, 11),
    "Swimmer-v1": (2, 8),
    "HalfCheetah-v5": (6, 17),
    "Walker2d-v5": (6, 17),
    "InvertedPendulum-v5": (1, 4),
}
KWARG_NAMES = [
    "terminate_when_unhealthy",
    "frame_skip",
    "max_episode_steps",
    "reset_noise_scale",
    "ctrl_cost_weight",
    "healthy_reward",
    "exclude_current_positions_from_observation",
    "xml_file",
    "render_mode",
    "id",
    "",
]


class _Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(code, details)
        self.code = code
        self.details = details


class _Context:
    """The grpc.ServicerContext calls the servicer makes: abort raises, as grpc's does."""

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise _Aborted(code, details)

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def peer_identities(self) -> None:
        return None  # no client certificate (servicer.client_key)

    def add_callback(self, callback: object) -> bool:
        return True


class _Pool:
    """A pool stand-in: a request that passes validation reaches submit, which refuses."""

    size = 2

    def submit(self, *args: object, **kwargs: object) -> None:
        raise PoolError(POOL_REFUSAL)


def _servicer(backend: str) -> EnvBridgeServicer:
    return EnvBridgeServicer(cast(WorkerPool, _Pool()), LIMITS, backend=backend)


SERVICERS = {b: _servicer(b) for b in fast.BACKENDS}

any_float = st.floats(allow_nan=True, allow_infinity=True, width=64)


def _mostly(draw: st.DrawFn, usual: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> Any:
    """Draw from usual 9 times in 10, so that most requests get past the first check."""
    return draw(odd if draw(st.integers(0, 9)) == 0 else usual)


@st.composite
def kwarg_values(draw: st.DrawFn) -> pb.KwargValue:
    kind = draw(st.sampled_from(["bool", "int", "double", "string", "unset"]))
    if kind == "bool":
        return pb.KwargValue(bool_value=draw(st.booleans()))
    if kind == "int":
        return pb.KwargValue(int_value=draw(st.integers(-(2**63), 2**63 - 1)))
    if kind == "double":
        return pb.KwargValue(double_value=draw(any_float))
    if kind == "string":
        return pb.KwargValue(string_value=draw(st.text(max_size=40)))
    return pb.KwargValue()


kwarg_maps = st.dictionaries(
    st.one_of(st.sampled_from(KWARG_NAMES), st.text(max_size=30)), kwarg_values(), max_size=3
)
# Well-typed kwargs the Hopper-like envs accept.
good_kwargs = st.fixed_dictionaries(
    {},
    optional={
        "terminate_when_unhealthy": st.builds(pb.KwargValue, bool_value=st.booleans()),
        "frame_skip": st.builds(pb.KwargValue, int_value=st.integers(1, 8)),
        "reset_noise_scale": st.builds(pb.KwargValue, double_value=st.floats(0, 1)),
    },
)
odd_env_ids = st.one_of(
    st.sampled_from(["", "os:path", "json:JSONDecoder", "Hopper", "hopper-v5", "CartPole-v1"]),
    st.text(max_size=60),
)


def _vector(draw: st.DrawFn, n: int) -> list[float]:
    """N values, or a length a little off; mostly finite and plausible."""
    length = _mostly(draw, st.just(n), st.integers(0, n + 2))
    return _mostly(
        draw,
        st.lists(st.floats(-10, 10), min_size=length, max_size=length),
        st.lists(any_float, min_size=length, max_size=length),
    )


@st.composite
def policies(draw: st.DrawFn, env_id: str) -> pb.LinearPolicy:
    rows, cols = DIMS.get(env_id, (3, 11))
    if draw(st.integers(0, 19)) == 0:  # a shape of anything
        rows, cols = draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 2**32 - 1))
    n = rows * cols if rows * cols <= 4096 else 4
    m = min(cols, 4096)
    if draw(st.integers(0, 9)):
        std = draw(st.lists(st.floats(0, 10), min_size=m, max_size=m))
    else:
        std = _vector(draw, m)
    bias = _mostly(
        draw, st.sampled_from([[], [0.5] * min(rows, 64)]), st.lists(any_float, max_size=8)
    )
    return pb.LinearPolicy(
        rows=rows,
        cols=cols,
        weights=_vector(draw, n),
        obs_mean=_vector(draw, m),
        obs_std=std,
        bias=bias,
    )


@st.composite
def episode_specs(draw: st.DrawFn) -> pb.EpisodeSpec:
    env_id = _mostly(draw, st.sampled_from(sorted(DIMS)), odd_env_ids)
    return pb.EpisodeSpec(
        env_id=env_id,
        kwargs=_mostly(draw, good_kwargs, kwarg_maps),
        policy=draw(policies(env_id)),
        seed=draw(st.integers(0, 2**64 - 1)),
        horizon=_mostly(draw, st.integers(0, 300), st.integers(0, 2**32 - 1)),
        shift=_mostly(draw, st.floats(-10, 10), any_float),
    )


def _clean(exc: _Aborted) -> None:
    assert exc.code in VALIDATION or (
        exc.code == grpc.StatusCode.UNAVAILABLE and exc.details == POOL_REFUSAL
    ), (exc.code, exc.details[:500])
    assert exc.details, exc.code
    assert len(exc.details) < 5000 and "Traceback" not in exc.details, exc.details[:500]


def _floats_ok(spec: pb.EpisodeSpec) -> bool:
    p = spec.policy
    values = [*p.weights, *p.obs_mean, *p.obs_std, *p.bias, spec.shift]
    return all(math.isfinite(v) for v in values) and all(s >= 0 for s in p.obs_std)


@_SETTINGS
@given(
    backend=st.sampled_from(fast.BACKENDS),
    episodes=st.one_of(
        st.lists(episode_specs(), max_size=2),
        st.lists(episode_specs(), max_size=LIMITS.max_episodes_per_call + 1),
    ),
)
def test_any_rollout_request_ends_in_a_clean_status(backend: str, episodes: list[Any]) -> None:
    request = pb.RolloutRequest(episodes=episodes)
    try:
        response = SERVICERS[backend].Rollout(request, cast(grpc.ServicerContext, _Context()))
    except _Aborted as exc:
        _clean(exc)
        event(exc.code.name)
        if exc.code == grpc.StatusCode.UNAVAILABLE:
            # Passed validation: every value the servicer takes is finite and in bounds.
            assert len(episodes) <= LIMITS.max_episodes_per_call
            for spec in episodes:
                assert _floats_ok(spec), spec
                assert abs(spec.shift) <= LIMITS.max_abs_shift
                assert spec.horizon <= LIMITS.max_horizon
        return
    assert not episodes and len(response.results) == 0


@st.composite
def describe_requests(draw: st.DrawFn) -> pb.DescribeRequest:
    return pb.DescribeRequest(
        env_id=_mostly(draw, st.sampled_from(sorted(DIMS)), odd_env_ids),
        kwargs=draw(st.one_of(good_kwargs, kwarg_maps)),
    )


@_SETTINGS
@given(backend=st.sampled_from(fast.BACKENDS), request=describe_requests())
def test_any_describe_request_ends_in_a_clean_status(
    backend: str, request: pb.DescribeRequest
) -> None:
    try:
        response = SERVICERS[backend].Describe(request, cast(grpc.ServicerContext, _Context()))
    except _Aborted as exc:
        _clean(exc)
        event(exc.code.name)
        assert exc.code != grpc.StatusCode.UNAVAILABLE
        return
    event("OK")
    assert response.observation_dim > 0 and response.action_dim > 0
    assert response.backend in (fast.BACKEND_FAST, fast.BACKEND_GYMNASIUM)


@pytest.mark.parametrize("backend", fast.BACKENDS)
def test_a_valid_rollout_passes_validation(backend: str) -> None:
    """The properties above hold the valid case to the pool's refusal: check it is reached."""
    rows, cols = DIMS["Hopper-v5"]
    spec = pb.EpisodeSpec(
        env_id="Hopper-v5",
        policy=pb.LinearPolicy(
            rows=rows,
            cols=cols,
            weights=[0.0] * (rows * cols),
            obs_mean=[0.0] * cols,
            obs_std=[1.0] * cols,
        ),
        horizon=10,
    )
    with pytest.raises(_Aborted) as info:
        SERVICERS[backend].Rollout(
            pb.RolloutRequest(episodes=[spec]), cast(grpc.ServicerContext, _Context())
        )
    assert info.value.code == grpc.StatusCode.UNAVAILABLE and info.value.details == POOL_REFUSAL
