from __future__ import annotations

import math
import time

import grpc
import gymnasium as gym
import numpy as np
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from stpis_bridge.rollout import LinearPolicy, run_episode
from tests.conftest import NO_TERMINATION, hopper_spec, kw, policy, random_w


def _direct_episode(env_id, kwargs, w, mean, std, bias, seed, horizon):
    """The policy formula written out plainly, on a fresh env with the env checker on."""
    env = gym.make(env_id, **kwargs)
    low, high = env.action_space.low, env.action_space.high
    obs, _ = env.reset(seed=seed)
    total, observations = 0.0, []
    terminated = truncated = False
    for _ in range(horizon):
        normalized = np.zeros_like(obs)
        for j in range(len(obs)):
            if std[j] >= 1e-7:
                normalized[j] = (obs[j] - mean[j]) / std[j]
        action = np.clip(w @ normalized + bias, low, high)
        observations.append(obs)
        obs, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        if terminated or truncated:
            break
    env.close()
    return total, np.array(observations), terminated, truncated


def test_same_seed_and_policy_give_bitwise_identical_returns_across_workers(stub):
    spec = hopper_spec(seed=42, horizon=150, w=random_w(3, scale=0.5))
    first = stub.Rollout(pb.RolloutRequest(episodes=[spec] * 8), timeout=120)
    second = stub.Rollout(pb.RolloutRequest(episodes=[spec] * 8), timeout=120)
    returns = [r.total_return for r in [*first.results, *second.results]]
    assert len(returns) == 16
    assert len(set(returns)) == 1, returns  # bit for bit, whichever worker ran it
    assert all(r.length == 150 for r in first.results)
    means = {tuple(r.obs_stats.mean) for r in [*first.results, *second.results]}
    assert len(means) == 1

    # The same episode on a fresh env in this process is bit-identical too.
    env = gym.make("Hopper-v5", disable_env_checker=True, **NO_TERMINATION)
    w = np.asarray(spec.policy.weights).reshape(3, 11)
    fresh = run_episode(
        env,
        LinearPolicy(w, np.zeros(11), np.ones(11)),
        seed=42,
        horizon=150,
        shift=0.0,
        action_low=env.action_space.low.astype(np.float64),
        action_high=env.action_space.high.astype(np.float64),
    )
    assert fresh.total_return == returns[0]


def test_different_seeds_give_different_returns(stub):
    w = random_w(3, scale=0.5)
    specs = [hopper_spec(seed=s, horizon=60, w=w) for s in range(4)]
    resp = stub.Rollout(pb.RolloutRequest(episodes=specs), timeout=60)
    assert len({r.total_return for r in resp.results}) == 4


def test_action_formula_matches_direct_gymnasium_loop(stub):
    rng = np.random.default_rng(7)
    w = rng.normal(0.0, 2.0, (3, 11))  # large enough that actions are clipped
    mean = rng.normal(0.0, 0.5, 11)
    std = rng.uniform(0.5, 2.0, 11)
    std[2] = 0.0  # zeroed feature
    std[5] = 1e-9  # below 1e-7: zeroed too
    mean[2], mean[5] = 3.0, -4.0  # would dominate if the zeroing were missing
    bias = np.array([0.3, -0.2, 0.1])
    kwargs = NO_TERMINATION
    horizon = 40
    spec = pb.EpisodeSpec(
        env_id="Hopper-v5",
        kwargs=kw(kwargs),
        policy=policy(w, mean, std, bias),
        seed=11,
        horizon=horizon,
        shift=1.5,
    )
    got = stub.Rollout(pb.RolloutRequest(episodes=[spec]), timeout=60).results[0]
    total, observations, _, _ = _direct_episode(
        "Hopper-v5", kwargs, w, mean, std, bias, 11, horizon
    )

    assert got.length == horizon == len(observations)
    assert got.total_return == pytest.approx(total, rel=1e-9, abs=1e-9)
    assert got.shifted_return == pytest.approx(got.total_return - 1.5 * horizon, rel=1e-12)
    assert not got.terminated
    assert got.truncated  # stopped by the horizon
    # Observation statistics of the observations the policy acted on.
    assert got.obs_stats.count == got.length
    mean_np = observations.mean(axis=0)
    m2_np = ((observations - mean_np) ** 2).sum(axis=0)
    np.testing.assert_allclose(got.obs_stats.mean, mean_np, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got.obs_stats.m2, m2_np, rtol=1e-7, atol=1e-9)

    # Without the zeroing the direct loop would diverge: the test can fail.
    std_unzeroed = std.copy()
    std_unzeroed[[2, 5]] = 1.0
    other, _, _, _ = _direct_episode("Hopper-v5", kwargs, w, mean, std_unzeroed, bias, 11, horizon)
    assert other != pytest.approx(total, rel=1e-6)


def test_swimmer_episode_and_max_episode_steps_default(stub):
    spec = pb.EpisodeSpec(
        env_id="Swimmer-v1",
        kwargs=kw({"max_episode_steps": 30}),
        policy=policy(random_w(5, rows=2, cols=8)),
        seed=3,
        horizon=0,  # the env's max_episode_steps (30 here)
    )
    r = stub.Rollout(pb.RolloutRequest(episodes=[spec]), timeout=60).results[0]
    assert r.length == 30
    assert r.truncated and not r.terminated
    assert r.obs_stats.count == 30
    assert len(r.obs_stats.mean) == 8
    assert math.isfinite(r.total_return)


def test_termination_is_reported(stub):
    # Default Hopper terminates when it falls; a strong random policy makes it fall fast.
    spec = hopper_spec(seed=0, horizon=1000, w=random_w(9, scale=3.0), kwargs={})
    r = stub.Rollout(pb.RolloutRequest(episodes=[spec]), timeout=60).results[0]
    assert r.terminated
    assert not r.truncated
    assert 0 < r.length < 1000
    assert r.obs_stats.count == r.length


def test_results_come_back_in_request_order(stub):
    horizons = [7, 3, 11, 5, 2, 9, 4, 6, 8, 1]
    specs = [hopper_spec(seed=i, horizon=h) for i, h in enumerate(horizons)]
    resp = stub.Rollout(pb.RolloutRequest(episodes=specs), timeout=60)
    assert [r.length for r in resp.results] == horizons
    assert [r.obs_stats.count for r in resp.results] == horizons


def test_empty_batch_returns_empty_results(stub):
    resp = stub.Rollout(pb.RolloutRequest(), timeout=10)
    assert len(resp.results) == 0


class _FakeEnv:
    """A stand-in env that yields a non-finite value at a chosen step (NaN unit tests only)."""

    def __init__(self, bad: str, at: int, value: float = math.nan) -> None:
        self.bad, self.at, self.value, self.t = bad, at, value, 0

    def reset(self, *, seed=None):
        self.t = 0
        obs = np.ones(2)
        if self.bad == "reset":
            obs[1] = self.value
        return obs, {}

    def step(self, action):
        self.t += 1
        obs = np.full(2, float(self.t))
        reward = 1.0
        if self.t - 1 == self.at:
            if self.bad == "reward":
                reward = self.value
            elif self.bad == "obs":
                obs[0] = self.value
        return obs, reward, False, False, {}


def _run_fake(env: _FakeEnv, horizon: int = 10):
    pol = LinearPolicy(np.ones((1, 2)), np.zeros(2), np.ones(2))
    return run_episode(
        env,
        pol,
        seed=0,
        horizon=horizon,
        shift=0.5,
        action_low=np.array([-1.0]),
        action_high=np.array([1.0]),
    )


@pytest.mark.parametrize(
    ("bad", "value", "length", "detail"),
    [
        ("reward", math.nan, 5, "reward NaN at step 4"),
        ("reward", math.inf, 5, "reward Inf at step 4"),
        ("obs", math.nan, 5, "observation[0] NaN after step 4"),
        ("obs", -math.inf, 5, "observation[0] -Inf after step 4"),
        ("reset", math.nan, 0, "observation[1] NaN at reset"),
    ],
    ids=["reward-nan", "reward-inf", "obs-nan", "obs-neg-inf", "reset-nan"],
)
def test_non_finite_stops_the_episode_and_is_flagged(bad, value, length, detail):
    out = _run_fake(_FakeEnv(bad, at=4, value=value))
    assert out.non_finite
    assert out.non_finite_detail == detail
    assert out.length == length
    assert math.isfinite(out.total_return)  # the non-finite reward is not added
    assert out.total_return == (4.0 if bad == "reward" else float(length))
    assert out.obs_count == length
    assert np.isfinite(out.obs_mean).all()


def test_finite_fake_episode_is_not_flagged():
    out = _run_fake(_FakeEnv("none", at=-1), horizon=6)
    assert not out.non_finite
    assert out.non_finite_detail == ""
    assert (out.length, out.total_return, out.shifted_return) == (6, 6.0, 3.0)
    assert out.truncated


def test_client_deadline_drops_the_calls_queued_episodes(stub, server):
    kwargs = {**NO_TERMINATION, "max_episode_steps": 2000}
    long_specs = [hopper_spec(seed=i, horizon=2000, kwargs=kwargs) for i in range(12)]
    with pytest.raises(grpc.RpcError) as info:
        stub.Rollout(pb.RolloutRequest(episodes=long_specs), timeout=0.5)
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # The episodes not yet started are dropped at once; the (at most 2) running ones finish.
    deadline = time.monotonic() + 1.0  # well under one long episode
    while server.pool.pending_tasks() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.pool.pending_tasks() == 0
    assert len(server.pool.busy()) <= 2
    resp = stub.Rollout(pb.RolloutRequest(episodes=[hopper_spec(horizon=5)] * 2), timeout=60)
    assert [r.length for r in resp.results] == [5, 5]
