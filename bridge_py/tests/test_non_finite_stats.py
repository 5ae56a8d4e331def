"""Issue 34, defect 4: every non-finite number an episode returns is flagged.

``--kwarg reset_noise_scale=1e200`` gives finite observations near 1e198 whose
squared deviations overflow: the bridge returned ``obs_stats.m2 = inf`` with
``non_finite = false``, and the trainer died merging it. Real Hopper-v5, on both
backends and through the server.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from stpis_bridge import envs, fast
from stpis_bridge.rollout import EpisodeOutcome, LinearPolicy, outcome_detail, run_episode
from tests.conftest import HOPPER_ACT, HOPPER_OBS, hopper_spec

HUGE_NOISE = {"reset_noise_scale": 1e200}


def _all_finite(numbers: list[float]) -> bool:
    return all(math.isfinite(v) for v in numbers)


def _zero_policy() -> LinearPolicy:
    return LinearPolicy(
        np.zeros((HOPPER_ACT, HOPPER_OBS)), np.zeros(HOPPER_OBS), np.ones(HOPPER_OBS)
    )


def _assert_flagged(out: EpisodeOutcome) -> None:
    numbers = [out.total_return, out.shifted_return, *out.obs_mean, *out.obs_m2]
    assert not _all_finite(numbers), "the case no longer overflows: pick a larger noise"
    assert out.non_finite, out
    assert out.non_finite_detail.startswith("obs_stats.m2[0] +Inf"), out.non_finite_detail


def test_overflowing_statistics_are_flagged_by_the_gymnasium_backend():
    env = envs.make_env("Hopper-v5", HUGE_NOISE)
    try:
        low, high = envs.action_bounds(env)
        out = run_episode(
            env,
            _zero_policy(),
            seed=1,
            horizon=50,
            shift=0.0,
            action_low=low,
            action_high=high,
        )
    finally:
        env.close()
    _assert_flagged(out)


def test_overflowing_statistics_are_flagged_by_the_fast_backend():
    env = fast.FastEnv("Hopper-v5", HUGE_NOISE)
    try:
        (out,) = env.run([_zero_policy()], [1], [50], [0.0])
    finally:
        env.close()
    _assert_flagged(out)


def test_overflowing_statistics_are_flagged_over_grpc(stub):
    spec = hopper_spec(seed=1, horizon=50, w=np.zeros((HOPPER_ACT, HOPPER_OBS)), kwargs=HUGE_NOISE)
    resp = stub.Rollout(pb.RolloutRequest(episodes=[spec, hopper_spec(horizon=5)]), timeout=60)
    huge, plain = resp.results
    assert not _all_finite(list(huge.obs_stats.m2))
    assert huge.non_finite, huge
    assert "obs_stats.m2[" in huge.non_finite_detail
    # Whatever is not flagged is finite, number for number.
    assert not plain.non_finite
    assert _all_finite(
        [plain.total_return, plain.shifted_return, *plain.obs_stats.mean, *plain.obs_stats.m2]
    )


@pytest.mark.parametrize(
    ("total", "shifted", "mean", "m2", "start"),
    [
        (math.inf, math.inf, 0.0, 0.0, "shifted return inf (return inf"),
        (math.inf, 1.0, 0.0, 0.0, "total return +Inf"),
        (math.nan, 1.0, 0.0, 0.0, "total return NaN"),
        (1.0, -math.inf, 0.0, 0.0, "shifted return -inf"),
        (1.0, 1.0, -math.inf, 0.0, "obs_stats.mean[1] -Inf"),
        (1.0, 1.0, 0.0, math.inf, "obs_stats.m2[1] +Inf"),
        (1.0, 1.0, 0.0, math.nan, "obs_stats.m2[1] NaN"),
    ],
)
def test_outcome_detail_names_the_first_non_finite_number(total, shifted, mean, m2, start):
    means = np.array([0.0, mean, 0.0])
    m2s = np.array([0.0, m2, 0.0])
    detail = outcome_detail(total, shifted, 2.0, 10, means, m2s)
    assert detail.startswith(start), detail


def test_outcome_detail_is_empty_when_every_number_is_finite():
    assert outcome_detail(1e300, -1e300, 0.0, 5, np.full(3, 1e150), np.full(3, 1e300)) == ""
