"""Hostile and unlucky input (issue 19): each gets a clear error or a flag, never a crash.

Every case here was found by sending it to a running bridge; the server must
answer it with a precise status naming the field, and keep serving.
"""

from __future__ import annotations

import logging
import math

import grpc
import numpy as np
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from stpis_bridge import envs
from stpis_bridge.rollout import LinearPolicy, run_episode
from tests.conftest import assert_serving, hopper_spec, kw, policy

INVALID = grpc.StatusCode.INVALID_ARGUMENT


def _rollout_fails(stub, spec: pb.EpisodeSpec, code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.RpcError) as info:
        stub.Rollout(pb.RolloutRequest(episodes=[spec]), timeout=30)
    assert info.value.code() == code, info.value.details()
    assert_serving(stub)
    return info.value.details()


def _describe_fails(stub, env_id: str, kwargs: dict, code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.RpcError) as info:
        stub.Describe(pb.DescribeRequest(env_id=env_id, kwargs=kw(kwargs)), timeout=30)
    assert info.value.code() == code, info.value.details()
    return info.value.details()


# Defect 2: a kwarg that scales the cost of an episode is bounded up front.
def test_frame_skip_that_pins_a_worker_is_rejected_naming_the_budget(stub):
    spec = hopper_spec(horizon=3, kwargs={"frame_skip": 3_000_000})
    details = _rollout_fails(stub, spec, INVALID)
    assert "episodes[0].kwargs['frame_skip']" in details
    assert "[1, 1000]" in details and "3000000" in details
    # Within the kwarg's bounds, horizon x frame_skip is bounded by --max-sim-steps.
    spec = hopper_spec(horizon=1000, kwargs={"frame_skip": 1000})
    details = _rollout_fails(stub, spec, INVALID)
    assert "episodes[0].horizon x kwargs['frame_skip']: 1000 x 1000 = 1000000" in details
    assert "--max-sim-steps=200000" in details


# Defect 7: a kwarg of the wrong type is INVALID_ARGUMENT at Describe and at Rollout.
@pytest.mark.parametrize(
    ("kwargs", "needles"),
    [
        ({"ctrl_cost_weight": "abc"}, ["kwargs['ctrl_cost_weight']", "must be a number", "'abc'"]),
        ({"ctrl_cost_weight": True}, ["kwargs['ctrl_cost_weight']", "must be a number"]),
        ({"terminate_when_unhealthy": 1}, ["kwargs['terminate_when_unhealthy']", "bool"]),
        ({"frame_skip": 2.5}, ["kwargs['frame_skip']", "must be an integer"]),
        ({"frame_skip": 0}, ["kwargs['frame_skip']", "[1, 1000]"]),
        ({"healthy_reward": math.inf}, ["kwargs['healthy_reward']", "finite"]),
        ({"healthy_z_range": 1.0}, ["kwargs['healthy_z_range']", "not a kwarg", "accepted:"]),
    ],
    ids=[
        "str-for-float",
        "bool-for-float",
        "int-for-bool",
        "float-for-int",
        "zero",
        "inf",
        "tuple",
    ],
)
def test_kwarg_of_wrong_type_or_range_is_invalid_naming_it(stub, kwargs, needles):
    for details in (
        _describe_fails(stub, "Hopper-v5", kwargs, INVALID),
        _rollout_fails(stub, hopper_spec(horizon=3, kwargs=kwargs), INVALID),
    ):
        for needle in needles:
            assert needle in details, details
        assert "TypeError" not in details and "Traceback" not in details


def test_an_int_for_a_float_kwarg_is_accepted(stub):
    resp = stub.Describe(
        pb.DescribeRequest(env_id="Swimmer-v5", kwargs=kw({"ctrl_cost_weight": 0})), timeout=30
    )
    assert resp.observation_dim == 8


# Defect 11: no kwarg names a file; the reply does not depend on the file system.
@pytest.mark.parametrize("name", ["xml_file", "main_body", "render_mode", "camera_name"])
def test_server_side_kwargs_are_reserved(stub, name):
    answers = set()
    for path in ("/etc/passwd", "/no/such/file.xml", "hopper.xml"):
        details = _describe_fails(stub, "Hopper-v5", {name: path}, INVALID)
        assert f"kwargs['{name}']: reserved" in details
        answers.add(details)
    assert len(answers) == 1, answers  # the same reply whether the path exists or not


# Defect 8: a NaN action (finite weights that overflow) is flagged, not silently zeroed.
def test_non_finite_action_is_flagged(stub):
    w = np.full((2, 8), 1.7e308)
    w[:, 1::2] = -1.7e308
    spec = pb.EpisodeSpec(
        env_id="Swimmer-v5",
        kwargs=kw({"ctrl_cost_weight": 0.0}),
        policy=policy(w, std=[1e-3] * 8),
        horizon=50,
    )
    resp = stub.Rollout(pb.RolloutRequest(episodes=[spec]), timeout=30)
    r = resp.results[0]
    assert r.non_finite, r
    assert "action[" in r.non_finite_detail and "W · obs + b" in r.non_finite_detail
    assert math.isfinite(r.total_return)


# Defect 9: an implausible shift is rejected; an overflowing shifted return is flagged.
def test_implausible_shift_is_rejected_naming_the_limit(stub):
    details = _rollout_fails(stub, hopper_spec(horizon=3, shift=1e308), INVALID)
    assert "episodes[0].shift: 1e+308 exceeds the limit --max-abs-shift=1e+06" in details
    resp = stub.Rollout(
        pb.RolloutRequest(episodes=[hopper_spec(horizon=3, shift=-1e6)]), timeout=30
    )
    assert resp.results[0].shifted_return == pytest.approx(resp.results[0].total_return + 3e6)


def test_overflowing_shifted_return_is_flagged():
    env = envs.make_env("Hopper-v5", {"terminate_when_unhealthy": False})
    try:
        low, high = envs.action_bounds(env)
        out = run_episode(
            env,
            LinearPolicy(np.zeros((3, 11)), np.zeros(11), np.ones(11)),
            seed=0,
            horizon=3,
            shift=1e308,
            action_low=low,
            action_high=high,
        )
    finally:
        env.close()
    assert out.shifted_return == -math.inf
    assert out.non_finite
    assert out.non_finite_detail.startswith("shifted return -inf")


# Defect 10: echoed user input is cut, in the reply and in the log.
def test_huge_env_id_and_kwarg_name_are_cut_in_reply_and_log(stub, caplog):
    huge = "H" * 500_000
    with caplog.at_level(logging.INFO, logger="stpis_bridge"):
        details = _describe_fails(stub, huge, {}, grpc.StatusCode.NOT_FOUND)
        assert "HHHH" in details and "(500000 characters)" in details
        assert len(details) < 5000
        details = _rollout_fails(
            stub, hopper_spec(horizon=3, env_id=huge), grpc.StatusCode.NOT_FOUND
        )
        assert len(details) < 5000
        details = _describe_fails(stub, "Hopper-v5", {huge: 1.0}, INVALID)
        assert "(500000 characters)" in details and len(details) < 5000
        details = _describe_fails(stub, "Hopper-v5", {"ctrl_cost_weight": huge}, INVALID)
        assert "(500000 characters)" in details and len(details) < 5000
    assert caplog.records
    assert max(len(r.getMessage()) for r in caplog.records) < 5000


# Numpy values are reported as plain numbers.
def test_messages_have_no_numpy_reprs(stub):
    spec = hopper_spec(horizon=3)
    del spec.policy.obs_std[:]
    spec.policy.obs_std.extend([1.0] * 4 + [-1.0] + [1.0] * 6)
    details = _rollout_fails(stub, spec, INVALID)
    assert "obs_std[4]: negative (-1.0)" in details
    assert "np." not in details
