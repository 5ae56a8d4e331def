"""Every bad request gets a precise status and message, and the server keeps serving."""

from __future__ import annotations

import math
import time

import grpc
import numpy as np
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from envbridge.v1 import envbridge_pb2_grpc as pbg
from stpis_bridge import servicer
from stpis_bridge.servicer import Limits
from tests.conftest import (
    NO_TERMINATION,
    TEST_LIMITS,
    assert_serving,
    hopper_spec,
    kw,
    policy,
    random_w,
    start_server,
)

INVALID = grpc.StatusCode.INVALID_ARGUMENT


def _spec_with(**changes) -> pb.EpisodeSpec:
    spec = hopper_spec(horizon=5)
    for name, value in changes.items():
        target = spec.policy if name in pb.LinearPolicy.DESCRIPTOR.fields_by_name else spec
        field = getattr(target, name)
        if isinstance(value, list):
            del field[:]
            field.extend(value)
        else:
            setattr(target, name, value)
    return spec


def _call_fails(stub, episodes, code, *needles):
    with pytest.raises(grpc.RpcError) as info:
        stub.Rollout(pb.RolloutRequest(episodes=episodes), timeout=30)
    err = info.value
    assert err.code() == code, err.details()
    for needle in needles:
        assert needle in err.details(), err.details()
    assert_serving(stub)
    return err.details()


def test_unknown_env_in_describe_is_not_found_and_names_the_nearest(stub):
    with pytest.raises(grpc.RpcError) as info:
        stub.Describe(pb.DescribeRequest(env_id="Hoper-v5"), timeout=30)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    details = info.value.details()
    for needle in ["'Hoper-v5'", "did you mean Hopper-v5", "trainer envs"]:
        assert needle in details
    # One short line, not every id (there are 28).
    assert "Swimmer-v5" not in details and len(details) < 300, details
    assert_serving(stub)


def test_unknown_env_in_rollout_is_not_found_naming_the_episode(stub):
    bad = hopper_spec(horizon=5, env_id="Hoper-v5")
    _call_fails(
        stub,
        [hopper_spec(horizon=5), bad],
        grpc.StatusCode.NOT_FOUND,
        "episodes[1].env_id",
        "Hopper-v5",
    )


def test_discrete_action_space_is_refused_in_one_line(stub):
    with pytest.raises(grpc.RpcError) as info:
        stub.Describe(pb.DescribeRequest(env_id="CartPole-v1"), timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "action space Discrete(2) is not a flat Box" in info.value.details()
    assert "\n" not in info.value.details()
    assert_serving(stub)


W30 = np.zeros(30).tolist()


@pytest.mark.parametrize(
    ("changes", "needles"),
    [
        ({"rows": 2}, ["episodes[3].policy.rows: expected 3", "got 2"]),
        ({"cols": 12}, ["episodes[3].policy.cols: expected 11", "got 12"]),
        ({"weights": W30}, ["episodes[3].policy.weights: expected 33 entries (3x11), got 30"]),
        ({"obs_mean": [0.0] * 10}, ["episodes[3].policy.obs_mean: expected 11 entries", "got 10"]),
        ({"obs_std": [1.0] * 12}, ["episodes[3].policy.obs_std: expected 11 entries", "got 12"]),
        ({"bias": [0.0, 0.0]}, ["episodes[3].policy.bias: expected 3 entries", "got 2"]),
        (
            {"weights": [0.0] * 5 + [math.nan] + [0.0] * 27},
            ["episodes[3].policy.weights[5]", "nan"],
        ),
        ({"weights": [math.inf] * 33}, ["episodes[3].policy.weights[0]", "inf"]),
        ({"obs_mean": [0.0] * 10 + [math.inf]}, ["episodes[3].policy.obs_mean[10]", "inf"]),
        ({"obs_std": [math.nan] + [1.0] * 10}, ["episodes[3].policy.obs_std[0]", "nan"]),
        (
            {"obs_std": [1.0] * 4 + [-0.5] + [1.0] * 6},
            ["episodes[3].policy.obs_std[4]", "negative"],
        ),
        ({"bias": [0.0, math.nan, 0.0]}, ["episodes[3].policy.bias[1]", "nan"]),
        ({"shift": math.nan}, ["episodes[3].shift"]),
    ],
    ids=[
        "rows",
        "cols",
        "weights-len",
        "mean-len",
        "std-len",
        "bias-len",
        "weights-nan",
        "weights-inf",
        "mean-inf",
        "std-nan",
        "std-negative",
        "bias-nan",
        "shift-nan",
    ],
)
def test_bad_policy_is_invalid_argument_naming_field_and_episode(stub, changes, needles):
    good = hopper_spec(horizon=5)
    _call_fails(stub, [good, good, good, _spec_with(**changes)], INVALID, *needles)


def test_bad_kwarg_is_invalid_argument_naming_it(stub):
    spec = hopper_spec(horizon=5, kwargs={"no_such_kwarg": 1.5})
    _call_fails(stub, [spec], INVALID, "episodes[0].kwargs['no_such_kwarg']")
    with pytest.raises(grpc.RpcError) as info:
        stub.Describe(
            pb.DescribeRequest(env_id="Hopper-v5", kwargs=kw({"no_such_kwarg": True})), timeout=30
        )
    assert info.value.code() == INVALID
    assert "no_such_kwarg" in info.value.details()


def test_reserved_kwarg_and_unset_kwarg_are_invalid(stub):
    spec = hopper_spec(horizon=5, kwargs={"render_mode": "human"})
    _call_fails(stub, [spec], INVALID, "kwargs['render_mode']", "reserved")
    spec = hopper_spec(horizon=5)
    spec.kwargs["empty"].CopyFrom(pb.KwargValue())
    _call_fails(stub, [spec], INVALID, "episodes[0].kwargs['empty']", "no value")


def test_too_many_episodes_is_resource_exhausted_naming_the_limit(stub):
    n = TEST_LIMITS.max_episodes_per_call + 1
    details = _call_fails(
        stub,
        [hopper_spec(horizon=1)] * n,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "--max-episodes-per-call=64",
        str(n),
    )
    assert "episodes" in details


def test_horizon_over_the_limit_is_invalid_naming_the_limit(stub):
    spec = hopper_spec(horizon=TEST_LIMITS.max_horizon + 1)
    _call_fails(stub, [spec], INVALID, "episodes[0].horizon", "--max-horizon=5000", "5001")


def test_too_many_weights_is_resource_exhausted_naming_the_limit(stub):
    # Humanoid-v5: 17 x 348 = 5916 entries, over the test limit of 4096.
    spec = pb.EpisodeSpec(
        env_id="Humanoid-v5", policy=policy(random_w(0, rows=17, cols=348)), horizon=5
    )
    _call_fails(
        stub,
        [spec],
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "episodes[0].policy.weights",
        "5916",
        "--max-weights=4096",
    )


def test_message_over_max_message_bytes_is_resource_exhausted(stub):
    # 200k doubles is 1.6 MB, over the test server's 1 MiB message limit.
    spec = hopper_spec(horizon=5)
    spec.policy.weights.extend([0.0] * 200_000)
    _call_fails(stub, [spec], grpc.StatusCode.RESOURCE_EXHAUSTED)


def test_errors_do_not_leak_into_a_valid_batch(stub):
    resp = stub.Rollout(
        pb.RolloutRequest(episodes=[hopper_spec(horizon=4, kwargs=NO_TERMINATION)] * 3),
        timeout=30,
    )
    assert [r.length for r in resp.results] == [4, 4, 4]


def test_steps_in_flight_are_capped_per_host_not_per_connection() -> None:
    """Issue 43: eight channels from one process each got their quota. A second
    channel (another connection, another port) from the same host shares the first's:
    while the first's call holds the whole quota, the second's is refused."""
    running = start_server(limits=Limits(max_steps_in_flight=20_000), workers=1)
    try:
        # A local subchannel pool each: two connections (gRPC shares one otherwise).
        own = [("grpc.use_local_subchannel_pool", 1)]
        with (
            grpc.insecure_channel(f"127.0.0.1:{running.port}", options=own) as a,
            grpc.insecure_channel(f"127.0.0.1:{running.port}", options=own) as b,
        ):
            first = pbg.EnvBridgeServiceStub(a).Rollout.future(
                pb.RolloutRequest(episodes=[hopper_spec(horizon=1000)] * 20), timeout=120
            )
            time.sleep(0.2)
            with pytest.raises(grpc.RpcError) as exc:
                pbg.EnvBridgeServiceStub(b).Rollout(
                    pb.RolloutRequest(episodes=[hopper_spec(horizon=1)]), timeout=30
                )
            assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "20000 this client has in flight" in (exc.value.details() or "")
            assert [r.length for r in first.result().results] == [1000] * 20
            resp = pbg.EnvBridgeServiceStub(b).Rollout(
                pb.RolloutRequest(episodes=[hopper_spec(horizon=1)]), timeout=30
            )
            assert [r.length for r in resp.results] == [1]
    finally:
        running.stop(5)


def test_client_key_is_the_host_or_the_certificate() -> None:
    class Context:
        def __init__(self, peer: str, ids: list[bytes] | None = None) -> None:
            self._peer, self._ids = peer, ids

        def peer(self) -> str:
            return self._peer

        def peer_identities(self) -> list[bytes] | None:
            return self._ids

    key = servicer.client_key
    assert key(Context("ipv4:127.0.0.1:5000")) == key(Context("ipv4:127.0.0.1:6000"))
    assert key(Context("ipv4:127.0.0.1:5000")) != key(Context("ipv4:10.0.0.2:5000"))
    assert key(Context("ipv6:[::1]:5000")) == "ipv6:[::1]"
    assert key(Context("ipv4:10.0.0.2:1", [b"trainer-a"])) == "cert:trainer-a"
    assert key(Context("unix:/tmp/s")) == "unix:/tmp/s"


def test_steps_in_flight_are_capped_per_client() -> None:
    """One client cannot queue more steps (episodes x horizon) than
    --max-steps-in-flight: RESOURCE_EXHAUSTED names it; within it, and after a call
    ends (its steps released), calls run."""
    running = start_server(limits=Limits(max_steps_in_flight=100), workers=1)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
            s = pbg.EnvBridgeServiceStub(ch)
            with pytest.raises(grpc.RpcError) as exc:
                s.Rollout(pb.RolloutRequest(episodes=[hopper_spec(horizon=60)] * 2), timeout=30)
            assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "--max-steps-in-flight=100" in (exc.value.details() or "")
            for _ in range(3):
                resp = s.Rollout(pb.RolloutRequest(episodes=[hopper_spec(horizon=50)] * 2))
                assert [r.length for r in resp.results] == [50, 50]
    finally:
        running.stop(5)
