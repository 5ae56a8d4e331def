"""A user's own env, named as ``module:EnvId``, and any registered Box env.

The bridge imports only the modules its operator allowed (--env-module); the envs of
``tests/user_envs.py`` stand for a user's package.
"""

from __future__ import annotations

import grpc
import numpy as np
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from envbridge.v1 import envbridge_pb2_grpc as pbg
from stpis_bridge import envs
from stpis_bridge import policy as policy_file
from stpis_bridge.cli import parse_config

from .conftest import policy, start_server


def test_module_env_is_refused_unless_allowed() -> None:
    with pytest.raises(envs.UnknownEnvError, match="--env-module tests") as info:
        envs.resolve("tests.user_envs:PointMass-v0")
    assert "\n" not in str(info.value)
    with pytest.raises(envs.UnknownEnvError, match="does not import 'os'"):
        envs.resolve("os:path", ("tests.user_envs",))
    # A package allows its submodules.
    assert (
        envs.resolve("tests.user_envs:PointMass-v0", ("tests",)) == "tests.user_envs:PointMass-v0"
    )


def test_module_env_is_described() -> None:
    d = envs.describe_env("tests.user_envs:PointMass-v0", {}, ("tests.user_envs",))
    assert (d.observation_dim, d.action_dim, d.max_episode_steps) == (2, 1, 50)
    assert d.action_low == (-1.0,) and d.action_high == (1.0,)
    with pytest.raises(envs.UnknownEnvError, match="registers no env 'Nope-v0'"):
        envs.resolve("tests.user_envs:Nope-v0", ("tests",))


def test_discrete_actions_are_refused_in_one_line() -> None:
    with pytest.raises(envs.BadKwargsError, match="Discrete\\(2\\) is not a flat Box") as info:
        envs.describe_env("tests.user_envs:Coin-v0", {}, ("tests",))
    assert "\n" not in str(info.value)


def test_registered_box_env_outside_mujoco_is_described() -> None:
    d = envs.describe_env("Pendulum-v1", {})
    assert (d.observation_dim, d.action_dim) == (3, 1)


def test_policy_bounds_of_a_module_env() -> None:
    # stpis_bridge.policy runs in the user's own Python: it makes their module's env
    # as gymnasium.make does, importing the module.
    low, high = policy_file._env_bounds("tests.user_envs:PointMass-v0")
    assert low.tolist() == [-1.0] and high.tolist() == [1.0]


def test_env_module_flag() -> None:
    config, _ = parse_config(["--env-module", "mypkg", "--env-module", "other.envs"])
    assert config.env_modules == ("mypkg", "other.envs")


def test_bridge_rolls_out_an_allowed_module_env() -> None:
    running = start_server(env_modules=("tests.user_envs",))
    try:
        with grpc.insecure_channel(running.address) as channel:
            stub = pbg.EnvBridgeServiceStub(channel)
            d = stub.Describe(pb.DescribeRequest(env_id="tests.user_envs:PointMass-v0"), timeout=60)
            assert d.resolved_id == "tests.user_envs:PointMass-v0" and d.backend == "gymnasium"
            spec = pb.EpisodeSpec(
                env_id="tests.user_envs:PointMass-v0",
                policy=policy(np.zeros((1, 2))),
                horizon=20,
                seed=3,
            )
            resp = stub.Rollout(pb.RolloutRequest(episodes=[spec, spec]), timeout=60)
            assert [r.length for r in resp.results] == [20, 20]
            assert resp.results[0].total_return == resp.results[1].total_return < 0
    finally:
        running.stop(grace=1)
