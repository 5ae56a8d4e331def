"""The fast backend: the episodes of one batch stepped in lockstep, the v5 tasks in numpy.

gymnasium's ``env.step`` spends most of its time in Python around a few tens of
microseconds of MuJoCo. Here a batch of episodes of one (env id, kwargs) shares one
``MjModel``; each episode has its own ``MjData``. Every control step:

* the linear policies of the whole batch are one stacked ``matmul`` (a BLAS gemv per
  episode, the same call ``run_episode`` makes), then one add and one clip;
* each live episode's ``MjData`` takes ``frame_skip`` physics steps in one
  ``mujoco.mj_step`` call (C, without the GIL), plus ``mj_rnePostConstraint`` for the
  tasks that read contact forces, exactly as gymnasium's ``MujocoEnv`` does;
* the v5 observation, reward and termination of the whole batch are computed in numpy
  from the gathered ``qpos``, ``qvel`` (and ``xpos``, ``xipos``, ``cinert``, ``cvel``,
  ``qfrc_actuator``, ``cfrc_ext`` where the task reads them), with the same floating
  point operations as gymnasium 1.4.0's ``*_v5.py`` in the same order.

An episode is reset by the real gymnasium env made with the same kwargs
(``env.reset(seed=...)``), whose whole ``MjData`` is then copied into the episode's
own: reset noise, seeding and the first observation are gymnasium's own. Every episode
ends at its own termination, time limit, horizon or first non-finite value; it is then
masked out (its ``MjData`` is no longer stepped), never reset into a next episode.

So an episode's result is a function of its spec alone, bit for bit the result of
``rollout.run_episode`` on gymnasium (the parity tests check this), whatever batch it
ran in. This module knows nothing about gRPC or the pool. The stepping itself is
``lockstep``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from stpis_bridge import envs
from stpis_bridge.lockstep import Lockstep, _Episodes
from stpis_bridge.rollout import EpisodeOutcome, LinearPolicy

BACKEND_AUTO = "auto"
BACKEND_GYMNASIUM = "gymnasium"
BACKEND_FAST = "fast"
BACKENDS = (BACKEND_AUTO, BACKEND_GYMNASIUM, BACKEND_FAST)


# kwargs every task's fast path honours: they change the model, the frame skip, the
# weights and ranges read from the made env, the reset (done by gymnasium itself), or
# the time limit.
_COMMON_KWARGS = frozenset(
    {
        "xml_file",
        "frame_skip",
        "forward_reward_weight",
        "ctrl_cost_weight",
        "reset_noise_scale",
        "exclude_current_positions_from_observation",
        "max_episode_steps",
    }
)
_HEALTH_KWARGS = frozenset(
    {"healthy_reward", "terminate_when_unhealthy", "healthy_z_range", "healthy_angle_range"}
)


@dataclasses.dataclass(frozen=True)
class _Task:
    """What differs between the six v5 tasks, as far as the fast path is concerned."""

    # Leading qpos entries left out of the observation when positions are excluded.
    skipped_qpos: int
    # Where the forward position comes from: qpos[0], the main body's xpos, or the
    # mass-weighted mean of xipos.
    forward: str
    # How health is judged: "" (never unhealthy), "hopper", "walker", "ant", "humanoid".
    health: str
    # The kwargs this task's fast path honours, beyond _COMMON_KWARGS.
    kwargs: frozenset[str]
    # Velocities are clipped to ±this in the observation (0: not clipped).
    qvel_clip: float = 0.0
    # Whether the task reads cfrc_ext (and so needs mj_rnePostConstraint).
    contacts: bool = False


# By paper task (envs.PAPER_TASKS, the one list of them; a test holds the keys equal).
_BY_TASK: dict[str, _Task] = {
    "Swimmer": _Task(skipped_qpos=2, forward="qpos", health="", kwargs=frozenset()),
    "HalfCheetah": _Task(skipped_qpos=1, forward="qpos", health="", kwargs=frozenset()),
    "Hopper": _Task(
        skipped_qpos=1,
        forward="qpos",
        health="hopper",
        kwargs=_HEALTH_KWARGS | {"healthy_state_range"},
        qvel_clip=10.0,
    ),
    "Walker2d": _Task(
        skipped_qpos=1, forward="qpos", health="walker", kwargs=_HEALTH_KWARGS, qvel_clip=10.0
    ),
    "Ant": _Task(
        skipped_qpos=2,
        forward="xpos",
        health="ant",
        kwargs=_HEALTH_KWARGS
        | {"contact_cost_weight", "main_body", "contact_force_range"}
        | {"include_cfrc_ext_in_observation"},
        contacts=True,
    ),
    "Humanoid": _Task(
        skipped_qpos=2,
        forward="com",
        health="humanoid",
        kwargs=_HEALTH_KWARGS
        | {"contact_cost_weight", "contact_cost_range"}
        | {
            "include_cinert_in_observation",
            "include_cvel_in_observation",
            "include_qfrc_actuator_in_observation",
            "include_cfrc_ext_in_observation",
        },
        contacts=True,
    ),
}
# The fast backend steps every paper task, under its gymnasium id.
_TASKS: dict[str, _Task] = {envs.gymnasium_id(t): _BY_TASK[t] for t in envs.PAPER_TASKS}


def fast_env_ids() -> list[str]:
    """Return the gymnasium ids the fast backend can step, sorted."""
    return sorted(_TASKS)


def unsupported_reason(resolved_id: str, kwargs: envs.Kwargs) -> str | None:
    """Return why the fast backend cannot run ``resolved_id`` with ``kwargs``, or None."""
    task = _TASKS.get(resolved_id)
    if task is None:
        return f"{resolved_id} is not one of the fast backend's tasks ({', '.join(_TASKS)})"
    allowed = _COMMON_KWARGS | task.kwargs
    for name in sorted(kwargs):
        if name not in allowed:
            return (
                f"kwargs[{name!r}]: the fast backend does not honour it for {resolved_id} "
                f"(it honours {', '.join(sorted(allowed))})"
            )
    return None


def choose_backend(requested: str, resolved_id: str, kwargs: envs.Kwargs) -> str:
    """Return the backend that serves (``resolved_id``, ``kwargs``) under ``requested``.

    ``auto`` picks the fast backend wherever it can honour the request, else gymnasium.
    ``fast`` raises ``BadBackendError`` where it cannot.
    """
    if requested == BACKEND_GYMNASIUM:
        return BACKEND_GYMNASIUM
    reason = unsupported_reason(resolved_id, kwargs)
    if requested == BACKEND_FAST:
        if reason is not None:
            raise BadBackendError(f"--backend=fast: {reason}; use --backend=auto or gymnasium")
        return BACKEND_FAST
    if requested != BACKEND_AUTO:
        raise ValueError(f"--backend must be one of {', '.join(BACKENDS)}, got {requested!r}")
    return BACKEND_GYMNASIUM if reason is not None else BACKEND_FAST


class BadBackendError(ValueError):
    """The fast backend was required for an env or kwargs it cannot honour."""


def _time_limit(env: gym.Env[Any, Any]) -> int | None:
    layer: Any = env
    while layer is not None:
        if isinstance(layer, gym.wrappers.TimeLimit):
            return int(layer._max_episode_steps)
        layer = getattr(layer, "env", None)
    return None


@dataclasses.dataclass
class _Views:
    """Cached numpy views into one episode's ``MjData`` (valid while it lives)."""

    data: Any
    ctrl: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray
    xpos: np.ndarray
    xipos: np.ndarray
    cinert: np.ndarray
    cvel: np.ndarray
    qfrc_actuator: np.ndarray
    cfrc_ext: np.ndarray


class FastEnv:
    """One (v5 env id, kwargs): a gymnasium env for resets and a growing set of MjData."""

    def __init__(self, resolved_id: str, kwargs: envs.Kwargs) -> None:
        reason = unsupported_reason(resolved_id, kwargs)
        if reason is not None:
            raise BadBackendError(reason)
        self._task = _TASKS[resolved_id]
        self._env = envs.make_env(resolved_id, kwargs)
        self._low, self._high = envs.action_bounds(self._env)
        self._time_limit = _time_limit(self._env)
        u: Any = self._env.unwrapped
        self._u = u
        self._model = u.model
        self._frame_skip = int(u.frame_skip)
        self._dt = u.dt
        self._views: list[_Views] = []
        t = self._task
        self._skip = t.skipped_qpos if u._exclude_current_positions_from_observation else 0
        self._fw = u._forward_reward_weight
        self._cw = u._ctrl_cost_weight
        self._healthy_reward = getattr(u, "_healthy_reward", 0.0)
        self._terminate = bool(getattr(u, "_terminate_when_unhealthy", False))
        self._main_body = int(u.data.body(u._main_body).id) if t.forward == "xpos" else 0
        self._body_mass = np.asarray(self._model.body_mass)
        self._body_mass_sum = self._body_mass.sum()
        obs_space = self._env.observation_space
        assert isinstance(obs_space, gym.spaces.Box)
        self.obs_dim = int(obs_space.shape[0])
        self.act_dim = int(self._low.shape[0])

    def close(self) -> None:
        """Close the gymnasium env and drop the MjData."""
        self._views.clear()
        self._env.close()

    def _ensure(self, n: int) -> None:
        while len(self._views) < n:
            d = mujoco.MjData(self._model)
            self._views.append(
                _Views(
                    data=d,
                    ctrl=d.ctrl,
                    qpos=d.qpos,
                    qvel=d.qvel,
                    xpos=d.xpos,
                    xipos=d.xipos,
                    cinert=d.cinert,
                    cvel=d.cvel,
                    qfrc_actuator=d.qfrc_actuator,
                    cfrc_ext=d.cfrc_ext,
                )
            )

    def run(
        self,
        policies: Sequence[LinearPolicy],
        seeds: Sequence[int],
        horizons: Sequence[int],
        shifts: Sequence[float],
    ) -> list[EpisodeOutcome]:
        """Run the episodes in lockstep; one outcome each, in order."""
        if not policies:
            return []
        return _Episodes(self, policies, seeds, horizons, shifts).run()

    def lockstep(self, n: int) -> Lockstep:
        """Return ``n`` rows to reset and step directly (the parity tests do)."""
        return Lockstep(self, n)
