import gymnasium
import mujoco
import pytest

from envbridge.v1 import envbridge_pb2 as pb
from stpis_bridge.rollout import STD_EPSILON
from tests.conftest import TEST_LIMITS, kw


def test_describe_paper_alias_resolves_to_v5(stub):
    d = stub.Describe(pb.DescribeRequest(env_id="Hopper-v1"), timeout=30)
    assert d.requested_id == "Hopper-v1"
    assert d.resolved_id == "Hopper-v5"
    assert "Hopper-v5" in d.resolution_reason
    assert "paper" in d.resolution_reason
    assert (d.observation_dim, d.action_dim) == (11, 3)
    assert list(d.action_low) == [-1.0] * 3
    assert list(d.action_high) == [1.0] * 3
    assert d.max_episode_steps == 1000
    assert d.frame_skip == 4
    assert d.dt == pytest.approx(0.008)
    assert d.gymnasium_version == gymnasium.__version__
    assert d.mujoco_version == mujoco.__version__


def test_describe_v5_id_has_no_reason(stub):
    d = stub.Describe(pb.DescribeRequest(env_id="Hopper-v5"), timeout=30)
    assert d.resolved_id == "Hopper-v5"
    assert d.resolution_reason == ""
    assert (d.observation_dim, d.action_dim) == (11, 3)


def test_describe_reports_the_bridge_limits(stub):
    # The bridge's limits and its normalization floor come with every description,
    # so that clients read them instead of copying them; it carries no paper figures.
    d = stub.Describe(pb.DescribeRequest(env_id="Hopper-v1"), timeout=30)
    assert d.limits.max_episodes_per_call == TEST_LIMITS.max_episodes_per_call
    assert d.limits.max_horizon == TEST_LIMITS.max_horizon
    assert d.limits.max_abs_shift == TEST_LIMITS.max_abs_shift
    assert d.limits.obs_std_floor == STD_EPSILON
    assert "paper_reward_threshold" not in pb.DescribeResponse.DESCRIPTOR.fields_by_name


@pytest.mark.parametrize(
    ("alias", "target", "obs_dim", "mentions"),
    [
        ("Ant-v1", "Ant-v5", 105, ["111", "105"]),
        ("Humanoid-v1", "Humanoid-v5", 348, ["376", "348"]),
        ("Swimmer-v1", "Swimmer-v5", 8, ["forward velocity"]),
    ],
    ids=["ant", "humanoid", "swimmer"],
)
def test_describe_reason_tells_dimension_differences(stub, alias, target, obs_dim, mentions):
    d = stub.Describe(pb.DescribeRequest(env_id=alias), timeout=30)
    assert d.resolved_id == target
    assert d.observation_dim == obs_dim
    for text in mentions:
        assert text in d.resolution_reason


def test_describe_walker_alias(stub):
    d = stub.Describe(pb.DescribeRequest(env_id="Walker2d-v1"), timeout=30)
    assert d.resolved_id == "Walker2d-v5"


def test_describe_kwargs_change_the_observation_dim(stub):
    d = stub.Describe(
        pb.DescribeRequest(env_id="Ant-v5", kwargs=kw({"include_cfrc_ext_in_observation": False})),
        timeout=30,
    )
    assert d.observation_dim == 27
    d = stub.Describe(
        pb.DescribeRequest(env_id="Hopper-v5", kwargs=kw({"max_episode_steps": 77})),
        timeout=30,
    )
    assert d.max_episode_steps == 77


def test_list_envs(stub):
    resp = stub.ListEnvs(pb.ListEnvsRequest(), timeout=30)
    ids = list(resp.env_ids)
    assert ids == sorted(ids)
    for env_id in ["Hopper-v5", "Swimmer-v5", "Humanoid-v5", "Hopper-v1", "Walker2d-v1"]:
        assert env_id in ids
    assert not [i for i in ids if "CartPole" in i]
    assert dict(resp.aliases) == {
        "Swimmer-v1": "Swimmer-v5",
        "Hopper-v1": "Hopper-v5",
        "HalfCheetah-v1": "HalfCheetah-v5",
        "Ant-v1": "Ant-v5",
        "Humanoid-v1": "Humanoid-v5",
        "Walker2d-v1": "Walker2d-v5",
    }
