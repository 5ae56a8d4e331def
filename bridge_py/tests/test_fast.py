"""The fast backend against gymnasium, both on real MuJoCo.

Stated tolerances: step by step, observations, rewards and terminations are equal bit
for bit (tolerance 0) for 100 steps; whole episodes (returns, lengths, flags,
observation count/mean/M2) are equal bit for bit; over 100 seeds the returns of the
two backends on disjoint seeds pass a two-sample Kolmogorov-Smirnov test at level 0.01.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import grpc
import gymnasium as gym
import numpy as np
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from envbridge.v1 import envbridge_pb2_grpc as pbg
from stpis_bridge import backends, envs, fast
from stpis_bridge.rollout import EpisodeOutcome, LinearPolicy, run_episode
from stpis_bridge.server import ServerConfig, parse_config, serve
from stpis_bridge.worker import EpisodeTask
from tests.conftest import TEST_LIMITS, hopper_spec, random_w

PAPER_TASKS = [envs.gymnasium_id(t) for t in envs.PAPER_TASKS]
# Weight scales that keep each task's episodes varied but not instantly over.
_SCALE = {
    "Swimmer-v5": 0.3,
    "Hopper-v5": 0.3,
    "HalfCheetah-v5": 0.3,
    "Walker2d-v5": 0.2,
    "Ant-v5": 0.05,
    "Humanoid-v5": 0.02,
}
# Kolmogorov-Smirnov: c(alpha) of the asymptotic two-sample critical value at 0.01.
_KS_C_001 = 1.628


def _policies(env: fast.FastEnv, n: int, seed: int, scale: float) -> list[LinearPolicy]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        w = rng.normal(0.0, scale, (env.act_dim, env.obs_dim))
        mean = rng.normal(0.0, 0.1, env.obs_dim)
        std = rng.uniform(0.5, 2.0, env.obs_dim)
        std[0] = 0.0  # a zeroed feature
        bias = rng.normal(0.0, 0.1, env.act_dim) if i % 2 else None
        out.append(LinearPolicy(w, mean, std, bias))
    return out


def _reference(env_id, kwargs, policies, seeds, horizons, shift=0.25) -> list[EpisodeOutcome]:
    env = envs.make_env(env_id, kwargs)
    low, high = envs.action_bounds(env)
    try:
        return [
            run_episode(env, p, seed=s, horizon=h, shift=shift, action_low=low, action_high=high)
            for p, s, h in zip(policies, seeds, horizons, strict=True)
        ]
    finally:
        env.close()


def _assert_same(got: list[EpisodeOutcome], want: list[EpisodeOutcome]) -> None:
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        where = f"episode {i}"
        assert a.total_return == b.total_return, where
        assert a.shifted_return == b.shifted_return, where
        assert (a.length, a.terminated, a.truncated) == (b.length, b.terminated, b.truncated), where
        assert a.obs_count == b.obs_count == a.length, where
        assert np.array_equal(a.obs_mean, b.obs_mean), where
        assert np.array_equal(a.obs_m2, b.obs_m2), where
        assert (a.non_finite, a.non_finite_detail) == (b.non_finite, b.non_finite_detail), where


@pytest.mark.parametrize("env_id", PAPER_TASKS)
def test_step_by_step_matches_gymnasium(env_id):
    """From gymnasium's own reset, 100 steps of the same actions: equal bit for bit."""
    steps, seeds = 100, [3, 4, 5]
    fe = fast.FastEnv(env_id, {})
    rows = fe.lockstep(len(seeds))
    obs0 = rows.reset(seeds)
    refs = [envs.make_env(env_id, {}) for _ in seeds]
    try:
        for k, (ref, seed) in enumerate(zip(refs, seeds, strict=True)):
            ref_obs, _ = ref.reset(seed=seed)
            assert np.array_equal(obs0[k], ref_obs)
        rng = np.random.default_rng(0)
        low, high = envs.action_bounds(refs[0])
        for t in range(steps):
            actions = rng.uniform(low, high, (len(seeds), len(low))) * 0.5
            obs, reward, terminated = rows.advance(list(range(len(seeds))), actions)
            for k, ref in enumerate(refs):
                ref_obs, ref_reward, ref_term, _, _ = ref.step(actions[k])
                assert np.array_equal(obs[k], ref_obs), f"step {t} row {k} observation"
                assert reward[k] == ref_reward, f"step {t} row {k} reward"
                assert bool(terminated[k]) == ref_term, f"step {t} row {k} termination"
        # The comparison is not vacuous: the robots moved.
        assert not np.array_equal(obs[0], obs0[0])
    finally:
        for ref in refs:
            ref.close()
        fe.close()


@pytest.mark.parametrize("env_id", PAPER_TASKS)
def test_whole_episodes_match_gymnasium_bit_for_bit(env_id):
    """Mixed horizons, biases, zeroed features and terminations in one lockstep batch."""
    fe = fast.FastEnv(env_id, {})
    try:
        n = 6
        pols = _policies(fe, n, seed=11, scale=_SCALE[env_id])
        seeds = [100 + i for i in range(n)]
        horizons = [60, 150, 1, 150, 90, 150]
        got = fe.run(pols, seeds, horizons, [0.25] * n)
    finally:
        fe.close()
    want = _reference(env_id, {}, pols, seeds, horizons)
    _assert_same(got, want)
    assert got[2].length == 1 and got[2].truncated  # horizon 1


def test_results_do_not_depend_on_the_batch_split():
    fe = fast.FastEnv("Hopper-v5", {})
    try:
        pols = _policies(fe, 12, seed=5, scale=0.3)
        seeds = list(range(12))
        horizons = [200] * 12
        whole = fe.run(pols, seeds, horizons, [1.0] * 12)
        parts = fe.run(pols[:5], seeds[:5], horizons[:5], [1.0] * 5)
        parts += fe.run(pols[5:], seeds[5:], horizons[5:], [1.0] * 7)
        alone = fe.run(pols[7:8], seeds[7:8], horizons[7:8], [1.0])
    finally:
        fe.close()
    _assert_same(parts, whole)
    _assert_same(alone, whole[7:8])
    assert len({o.length for o in whole}) > 1  # episodes ended at different steps


def test_time_limit_and_horizon_truncate_as_gymnasium():
    kwargs = {"max_episode_steps": 30}
    fe = fast.FastEnv("Swimmer-v5", kwargs)
    try:
        pols = _policies(fe, 3, seed=2, scale=0.3)
        horizons = [50, 30, 10]  # past the limit, at it, before it
        got = fe.run(pols, [1, 2, 3], horizons, [0.0] * 3)
    finally:
        fe.close()
    assert [o.length for o in got] == [30, 30, 10]
    assert all(o.truncated and not o.terminated for o in got)
    _assert_same(got, _reference("Swimmer-v5", kwargs, pols, [1, 2, 3], horizons, shift=0.0))


def test_overflowing_return_is_flagged_as_gymnasium():
    # Kwargs must be finite (issue 19), so the reward itself stays finite; a healthy
    # reward of 1e308 a step overflows the return at the second step instead.
    kwargs = {"healthy_reward": 1e308, "terminate_when_unhealthy": False}
    fe = fast.FastEnv("Hopper-v5", kwargs)
    try:
        pols = _policies(fe, 2, seed=3, scale=0.3)
        got = fe.run(pols, [0, 1], [20, 20], [0.0, 0.0])
    finally:
        fe.close()
    assert all(o.non_finite for o in got)
    assert all(o.non_finite_detail.startswith("shifted return") for o in got)
    _assert_same(got, _reference("Hopper-v5", kwargs, pols, [0, 1], [20, 20], shift=0.0))


def test_non_finite_action_and_shifted_return_are_flagged_as_gymnasium():
    # Huge finite weights make W · obs overflow to ±Inf or NaN (issue 19, defect 8);
    # a huge shift overflows the shifted return (defect 9). The other episodes of the
    # batch run on.
    kwargs = {"ctrl_cost_weight": 0.0}
    fe = fast.FastEnv("Swimmer-v5", kwargs)
    try:
        pols = _policies(fe, 3, seed=4, scale=0.3)
        p1 = pols[1]
        pols[1] = LinearPolicy(np.full_like(p1.weights, 1.7e308), p1.obs_mean, p1.obs_std, None)
        got = fe.run(pols, [0, 1, 2], [20, 20, 20], [0.0, 0.0, 1e308])
    finally:
        fe.close()
    assert not got[0].non_finite and got[0].length == 20
    assert got[1].non_finite and "action" in got[1].non_finite_detail
    assert got[2].non_finite and got[2].non_finite_detail.startswith("shifted return")
    want = [
        _reference("Swimmer-v5", kwargs, [p], [s], [20], shift=sh)[0]
        for p, s, sh in zip(pols, [0, 1, 2], [0.0, 0.0, 1e308], strict=True)
    ]
    _assert_same(got, want)


def _ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    grid = np.concatenate([a, b])
    fa = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    fb = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    return float(np.abs(fa - fb).max())


@pytest.mark.parametrize("env_id", PAPER_TASKS)
def test_returns_over_100_seeds_match_in_distribution(env_id):
    """Fast on seeds 0-99 against gymnasium on seeds 1000-1099: KS at level 0.01."""
    n, horizon = 100, 100
    fe = fast.FastEnv(env_id, {})
    try:
        w = np.random.default_rng(21).normal(0.0, _SCALE[env_id], (fe.act_dim, fe.obs_dim))
        pol = LinearPolicy(w, np.zeros(fe.obs_dim), np.ones(fe.obs_dim))
        got = fe.run([pol] * n, list(range(n)), [horizon] * n, [0.0] * n)
        other = fe.run([pol] * n, list(range(2000, 2000 + n)), [horizon] * n, [0.0] * n)
    finally:
        fe.close()
    want = _reference(env_id, {}, [pol] * n, list(range(1000, 1000 + n)), [horizon] * n)
    fast_returns = np.array([o.total_return for o in got])
    gym_returns = np.array([o.total_return for o in want])
    assert fast_returns.std() > 0 and gym_returns.std() > 0
    critical = _KS_C_001 * math.sqrt(2.0 / n)
    assert _ks_statistic(fast_returns, gym_returns) < critical
    # The test has power: the same returns moved by one standard deviation are told apart.
    moved = gym_returns + gym_returns.std()
    assert _ks_statistic(fast_returns, moved) > critical
    # Fast against fast on other seeds passes too (the statistic is not degenerate).
    assert _ks_statistic(fast_returns, np.array([o.total_return for o in other])) < critical


def test_auto_chooses_fast_only_where_it_can():
    assert fast.choose_backend("auto", "Hopper-v5", {"healthy_reward": 0.5}) == "fast"
    assert fast.choose_backend("auto", "Hopper-v5", {"width": 64}) == "gymnasium"
    assert fast.choose_backend("auto", "InvertedPendulum-v5", {}) == "gymnasium"
    assert fast.choose_backend("gymnasium", "Hopper-v5", {}) == "gymnasium"
    with pytest.raises(fast.BadBackendError, match=r"kwargs\['width'\]"):
        fast.choose_backend("fast", "Hopper-v5", {"width": 64})


def test_plan_chunks_per_worker_and_names_the_episode_fast_cannot_run():
    pol = LinearPolicy(np.zeros((3, 11)), np.zeros(11), np.ones(11))
    hop = EpisodeTask("Hopper-v5", (), pol, 0, 10, 0.0)
    odd = EpisodeTask("Hopper-v5", (("width", 64),), pol, 0, 10, 0.0)
    plan = backends.plan([hop, odd, hop, hop, hop], "auto", 2)
    assert plan.positions == [[0, 3], [2, 4], [1]]  # dealt round robin, then gymnasium's
    assert plan.names() == [
        "episodes[0, 3] (2 episodes run as one fast chunk)",
        "episodes[2, 4] (2 episodes run as one fast chunk)",
        "episodes[1]",
    ]
    assert sorted(i for p in plan.positions for i in p) == [0, 1, 2, 3, 4]
    # A chunk's recorded observations stay within the memory bound.
    long = EpisodeTask("Hopper-v5", (), pol, 0, 10_000, 0.0)
    per_chunk = backends.CHUNK_OBS_BYTES // (8 * 10_000 * 11)
    plan = backends.plan([long] * (3 * per_chunk), "auto", 2)
    assert [len(p) for p in plan.positions] == [per_chunk] * 3
    with pytest.raises(backends.BackendError, match=r"kwargs\['width'\]") as info:
        backends.plan([hop, odd], "fast", 2)
    assert info.value.index == 1


def test_backend_flag_is_validated():
    config, _ = parse_config(["--backend", "gymnasium"])
    assert config.backend == "gymnasium"
    with pytest.raises(SystemExit):
        parse_config(["--backend", "turbo"])
    with pytest.raises(ValueError, match="--backend"):
        ServerConfig(backend="turbo").validate()


def _one_backend_stub(backend: str) -> Iterator[pbg.EnvBridgeServiceStub]:
    """A 1-worker bridge serving every env with one backend."""
    running = serve(
        ServerConfig(listen="127.0.0.1:0", workers=1, limits=TEST_LIMITS, backend=backend)
    )
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
        yield pbg.EnvBridgeServiceStub(ch)
    running.stop(5)


@pytest.fixture(scope="module")
def strict_fast_stub() -> Iterator[pbg.EnvBridgeServiceStub]:
    yield from _one_backend_stub("fast")


def test_describe_reports_the_backend(stub, strict_fast_stub):
    d = stub.Describe(pb.DescribeRequest(env_id="Hopper-v1"), timeout=60)
    assert d.backend == "fast"
    d = stub.Describe(pb.DescribeRequest(env_id="Hopper-v4"), timeout=60)
    assert d.backend == "gymnasium"
    with pytest.raises(grpc.RpcError) as info:
        strict_fast_stub.Describe(pb.DescribeRequest(env_id="InvertedPendulum-v5"), timeout=60)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "--backend=fast" in info.value.details()


def test_strict_fast_rejects_an_episode_it_cannot_run(strict_fast_stub):
    specs = [hopper_spec(horizon=5), hopper_spec(horizon=5, kwargs={}, env_id="Hopper-v4")]
    with pytest.raises(grpc.RpcError) as info:
        strict_fast_stub.Rollout(pb.RolloutRequest(episodes=specs), timeout=60)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "episodes[1]" in info.value.details()
    assert "Hopper-v4" in info.value.details()


@pytest.fixture(scope="module")
def gymnasium_stub() -> Iterator[pbg.EnvBridgeServiceStub]:
    yield from _one_backend_stub("gymnasium")


def test_both_backends_give_the_same_results_through_the_server(stub, gymnasium_stub):
    """The same specs through the fast path and through a gymnasium-only bridge: equal."""
    w = random_w(8, scale=0.5)
    specs = [hopper_spec(seed=s, horizon=300, w=w, kwargs={}) for s in range(7)]
    assert stub.Describe(pb.DescribeRequest(env_id="Hopper-v5"), timeout=60).backend == "fast"
    got = list(stub.Rollout(pb.RolloutRequest(episodes=specs), timeout=120).results)
    got += gymnasium_stub.Rollout(pb.RolloutRequest(episodes=specs), timeout=120).results
    for a, b in zip(got[:7], got[7:], strict=True):
        assert a.total_return == b.total_return
        assert (a.length, a.terminated, a.truncated) == (b.length, b.terminated, b.truncated)
        assert list(a.obs_stats.mean) == list(b.obs_stats.mean)
        assert list(a.obs_stats.m2) == list(b.obs_stats.m2)
    assert any(r.terminated for r in got[:7])


def test_gym_make_and_fast_env_agree_on_the_observation_size():
    for env_id in PAPER_TASKS:
        fe = fast.FastEnv(env_id, {})
        env = gym.make(env_id)
        try:
            assert env.observation_space.shape == (fe.obs_dim,)
        finally:
            env.close()
            fe.close()
