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
from stpis_bridge import envs, servicer
from stpis_bridge.rollout import LinearPolicy, run_episode
from tests.conftest import assert_serving, hopper_spec, kw, policy, random_w

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


# The catalogue: every bad input tried against the bridge, and what a clean
# answer is. A clean answer is a status other than INTERNAL or UNKNOWN, with a
# message under 5000 characters that names the field, no numpy repr, and a
# server that still serves; or, for input that is valid but degenerate, a
# result flagged non_finite.
_HUGE = "x" * 300_000
_CLEAN = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


def _d(env_id: str = "Hopper-v5", **kwargs: bool | int | float | str) -> pb.DescribeRequest:
    return pb.DescribeRequest(env_id=env_id, kwargs=kw(kwargs))


def _r(*specs: pb.EpisodeSpec) -> pb.RolloutRequest:
    return pb.RolloutRequest(episodes=list(specs))


def _p(**changes: object) -> pb.EpisodeSpec:
    spec = hopper_spec(horizon=3)
    for name, value in changes.items():
        field = getattr(spec.policy, name)
        del field[:]
        field.extend(value)  # type: ignore[arg-type]
    return spec


def _unset_kwarg() -> pb.DescribeRequest:
    req = _d()
    req.kwargs["terminate_when_unhealthy"].CopyFrom(pb.KwargValue())
    return req


_HUMANOID = pb.EpisodeSpec(env_id="Humanoid-v5", policy=policy(random_w(0, 17, 348)), horizon=3)
_NAN_W = np.full((3, 11), 1.7e308)
_NAN_W[:, 1::2] = -1.7e308

BAD_INPUTS: list[tuple[str, str, object, str]] = [
    # (id, method, request or raw bytes, a needle the answer must hold)
    ("unknown-env", "Describe", _d("Hoper-v5"), "did you mean Hopper-v5"),
    ("empty-env", "Describe", _d(""), "env_id"),
    ("huge-env", "Describe", _d(_HUGE), "300000 characters"),
    ("unicode-env", "Describe", _d("Hopper-v5\x00\u202e"), "env_id"),
    ("unknown-kwarg", "Describe", _d(no_such=1.0), "kwargs['no_such']"),
    (
        "huge-kwarg-name",
        "Describe",
        pb.DescribeRequest(env_id="Hopper-v5", kwargs=kw({_HUGE: 1.0})),
        "300000 characters",
    ),
    ("str-for-float", "Describe", _d(ctrl_cost_weight="abc"), "ctrl_cost_weight"),
    ("huge-str-value", "Describe", _d(ctrl_cost_weight=_HUGE), "300000 characters"),
    ("bool-for-float", "Describe", _d(ctrl_cost_weight=True), "ctrl_cost_weight"),
    ("int-for-bool", "Describe", _d(terminate_when_unhealthy=1), "terminate_when"),
    ("nan-kwarg", "Describe", _d(healthy_reward=math.nan), "finite"),
    ("inf-kwarg", "Describe", _d(reset_noise_scale=-math.inf), "finite"),
    # Issue 43: finite and allowed, but the reset overflows: INVALID_ARGUMENT, not a
    # worker's INTERNAL halfway through a run.
    ("overflow-kwarg", "Describe", _d(reset_noise_scale=1e308), "reset_noise_scale"),
    (
        "overflow-kwarg-rollout",
        "Rollout",
        _r(hopper_spec(horizon=3, kwargs={"reset_noise_scale": 1e308})),
        "cannot run with them",
    ),
    ("frame-skip-0", "Describe", _d(frame_skip=0), "frame_skip"),
    ("frame-skip-neg", "Describe", _d(frame_skip=-5), "frame_skip"),
    ("frame-skip-huge", "Describe", _d(frame_skip=3_000_000), "frame_skip"),
    ("frame-skip-float", "Describe", _d(frame_skip=4.0), "frame_skip"),
    ("max-steps-0", "Describe", _d(max_episode_steps=0), "max_episode_steps"),
    ("xml-file", "Describe", _d(xml_file="/etc/passwd"), "reserved"),
    ("xml-file-relative", "Describe", _d(xml_file="../../../etc/hosts"), "reserved"),
    ("render-mode", "Describe", _d(render_mode="human"), "reserved"),
    ("main-body", "Describe", _d("Ant-v5", main_body="torso"), "reserved"),
    ("unset-kwarg", "Describe", _unset_kwarg(), "no value"),
    ("tuple-kwarg", "Describe", _d(healthy_z_range=0.7), "not a kwarg"),
    ("rows", "Rollout", _r(hopper_spec(horizon=3, w=random_w(1, rows=2))), "rows: expected 3"),
    ("weights-short", "Rollout", _r(_p(weights=[0.0] * 30)), "weights"),
    ("weights-nan", "Rollout", _r(_p(weights=[math.nan] * 33)), "weights[0]"),
    ("weights-inf", "Rollout", _r(_p(weights=[0.0] * 32 + [math.inf])), "weights[32]"),
    ("mean-len", "Rollout", _r(_p(obs_mean=[0.0] * 12)), "obs_mean"),
    ("std-negative", "Rollout", _r(_p(obs_std=[-1.0] * 11)), "negative (-1.0)"),
    ("std-nan", "Rollout", _r(_p(obs_std=[math.nan] * 11)), "obs_std[0]"),
    ("bias-len", "Rollout", _r(_p(bias=[0.0])), "bias"),
    ("bias-inf", "Rollout", _r(_p(bias=[0.0, math.inf, 0.0])), "bias[1]"),
    ("horizon-over", "Rollout", _r(hopper_spec(horizon=1_000_000)), "--max-horizon"),
    ("sim-steps", "Rollout", _r(hopper_spec(horizon=1000, kwargs={"frame_skip": 400})), "sim"),
    ("shift-nan", "Rollout", _r(hopper_spec(horizon=3, shift=math.nan)), "shift"),
    ("shift-inf", "Rollout", _r(hopper_spec(horizon=3, shift=-math.inf)), "shift"),
    ("shift-huge", "Rollout", _r(hopper_spec(horizon=3, shift=1e308)), "--max-abs-shift"),
    ("too-many", "Rollout", _r(*[hopper_spec(horizon=1)] * 65), "--max-episodes-per-call"),
    ("no-policy", "Rollout", _r(pb.EpisodeSpec(env_id="Humanoid-v5", horizon=3)), "rows"),
    ("too-many-weights", "Rollout", _r(_HUMANOID), "--max-weights"),
    ("unknown-env-2nd", "Rollout", _r(hopper_spec(), hopper_spec(env_id="X-v0")), "episodes[1]"),
    ("kwarg-type-2nd", "Rollout", _r(hopper_spec(), hopper_spec(kwargs={"frame_skip": "4"})), "1]"),
    ("nan-action", "Rollout", _r(hopper_spec(horizon=5, w=_NAN_W)), "non_finite"),
    ("raw-garbage-rollout", "Rollout", b"\xff\xff\xff", "not a valid message"),
    ("raw-truncated-rollout", "Rollout", b"\x0a\x05abc", "not a valid message"),
    ("raw-bad-utf8-env", "Describe", b"\x0a\x02\xff\xfe", "not a valid message"),
    ("raw-huge-length", "Describe", b"\x0a\xff\xff\xff\xff\x0f", "not a valid message"),
]


def _answer(channel: grpc.Channel, method: str, request: object) -> tuple[str, str]:
    call = channel.unary_unary(f"/envbridge.v1.EnvBridgeService/{method}")
    data = request if isinstance(request, bytes) else request.SerializeToString()  # type: ignore[attr-defined]
    try:
        reply = call(data, timeout=30)
    except grpc.RpcError as exc:
        return exc.code().name, exc.details() or ""
    if method == "Rollout":
        results = pb.RolloutResponse.FromString(reply).results
        if all(r.non_finite for r in results) and results:
            return "OK", "non_finite: " + results[0].non_finite_detail
    return "OK", "accepted"


@pytest.mark.parametrize(
    ("method", "request_", "needle"), [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS]
)
def test_bad_input_is_handled_cleanly(channel, stub, method, request_, needle):
    code, details = _answer(channel, method, request_)
    if needle == "non_finite":
        assert code == "OK" and details.startswith("non_finite"), (code, details)
    else:
        assert code in {c.name for c in _CLEAN}, (code, details[:500])
        assert needle in details, details[:500]
        assert len(details) < 5000 and "np." not in details and "Traceback" not in details
    assert_serving(stub)


def test_description_cache_is_bounded(server, monkeypatch):
    monkeypatch.setattr(servicer, "DESCRIPTION_CACHE_SIZE", 3)
    s = servicer.EnvBridgeServicer(server.pool, servicer.Limits())
    for i in range(6):  # endless distinct kwargs must not grow the server without bound
        s._describe("", "Hopper-v5", {"ctrl_cost_weight": float(i)})
    assert len(s._descriptions) == 3
    assert [k[1][0][1][1] for k in s._descriptions] == [3.0, 4.0, 5.0]
