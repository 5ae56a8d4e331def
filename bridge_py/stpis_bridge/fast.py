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
ran in. This module knows nothing about gRPC or the pool.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from stpis_bridge import envs
from stpis_bridge.rollout import (
    INITIAL_OBS_ROWS,
    EpisodeOutcome,
    LinearPolicy,
    non_finite_what,
    obs_stats,
    outcome_detail,
    reward_detail,
)

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


class Lockstep:
    """Rows of MjData stepped together: reset by seed, advanced by a batch of actions.

    Row ``i`` is one episode. ``advance`` steps only the rows it is given, so a row
    that ended is masked out and keeps its last state; nothing resets it.
    """

    def __init__(self, env: FastEnv, n: int) -> None:
        self.env = env
        self.n = n
        env._ensure(n)
        self.views = env._views[:n]
        m = env._model
        self.qpos = np.empty((n, m.nq))
        self.qvel = np.empty((n, m.nv))
        self.fwd = np.zeros(n)  # the main body's x (xpos), for the "xpos" tasks (Ant)
        nb = m.nbody
        t = env._task
        self.cfrc = np.empty((n, nb, 6)) if t.contacts else None
        self.xipos = np.empty((n, nb, 3)) if t.forward == "com" else None
        self.cinert = np.empty((n, nb, 10)) if t.health == "humanoid" else None
        self.cvel = np.empty((n, nb, 6)) if t.health == "humanoid" else None
        self.qfrc = np.empty((n, m.nv)) if t.health == "humanoid" else None

        self.obs = np.empty((n, env.obs_dim))

    # Gathering from the MjData into the batch arrays.

    def _gather(self, i: int) -> None:
        v = self.views[i]
        self.qpos[i] = v.qpos
        self.qvel[i] = v.qvel
        if self.cfrc is not None:
            self.cfrc[i] = v.cfrc_ext
        if self.xipos is not None:
            self.xipos[i] = v.xipos
        if self.cinert is not None:
            assert self.cvel is not None and self.qfrc is not None
            self.cinert[i] = v.cinert
            self.cvel[i] = v.cvel
            self.qfrc[i] = v.qfrc_actuator
        if self.env._task.forward == "xpos":
            self.fwd[i] = v.xpos[self.env._main_body, 0]

    def _forward_position(self, rows: np.ndarray) -> np.ndarray:
        kind = self.env._task.forward
        if kind == "qpos":
            return self.qpos[rows, 0]
        if kind == "xpos":
            return self.fwd[rows]
        assert self.xipos is not None
        # humanoid_v5.mass_center: einsum("b,bj->j", body_mass, xipos) / body_mass.sum().
        num = np.einsum("b,nbj->nj", self.env._body_mass, self.xipos[rows])
        return (num / self.env._body_mass_sum)[:, 0]

    def _observe(self, rows: np.ndarray) -> np.ndarray:
        env, t = self.env, self.env._task
        parts = [self.qpos[rows, env._skip :]]
        vel = self.qvel[rows]
        if t.qvel_clip:
            vel = np.clip(vel, -t.qvel_clip, t.qvel_clip)
        parts.append(vel)
        u = env._u
        k = len(rows)
        if t.health == "ant" and u._include_cfrc_ext_in_observation:
            assert self.cfrc is not None
            lo, hi = u._contact_force_range
            parts.append(np.clip(self.cfrc[rows], lo, hi)[:, 1:].reshape(k, -1))
        if t.health == "humanoid":
            assert self.cinert is not None and self.cvel is not None
            assert self.qfrc is not None and self.cfrc is not None
            if u._include_cinert_in_observation is True:
                parts.append(self.cinert[rows, 1:].reshape(k, -1))
            if u._include_cvel_in_observation is True:
                parts.append(self.cvel[rows, 1:].reshape(k, -1))
            if u._include_qfrc_actuator_in_observation is True:
                parts.append(self.qfrc[rows, 6:])
            if u._include_cfrc_ext_in_observation is True:
                parts.append(self.cfrc[rows, 1:].reshape(k, -1))
        return np.concatenate(parts, axis=1)

    def _healthy(self, rows: np.ndarray) -> np.ndarray:
        u, kind = self.env._u, self.env._task.health
        qpos = self.qpos[rows]
        if kind == "hopper":
            state = np.concatenate((qpos, self.qvel[rows]), axis=1)[:, 2:]
            lo, hi = u._healthy_state_range
            zlo, zhi = u._healthy_z_range
            alo, ahi = u._healthy_angle_range
            z, angle = qpos[:, 1], qpos[:, 2]
            return (
                np.all(np.logical_and(lo < state, state < hi), axis=1)
                & (zlo < z)
                & (z < zhi)
                & (alo < angle)
                & (angle < ahi)
            )
        if kind == "walker":
            zlo, zhi = u._healthy_z_range
            alo, ahi = u._healthy_angle_range
            z, angle = qpos[:, 1], qpos[:, 2]
            return (zlo < z) & (z < zhi) & (alo < angle) & (angle < ahi)
        if kind == "ant":
            state = np.concatenate((qpos, self.qvel[rows]), axis=1)
            zlo, zhi = u._healthy_z_range
            return np.isfinite(state).all(axis=1) & (zlo <= qpos[:, 2]) & (qpos[:, 2] <= zhi)
        if kind == "humanoid":
            zlo, zhi = u._healthy_z_range
            return (zlo < qpos[:, 2]) & (qpos[:, 2] < zhi)
        return np.ones(len(rows), dtype=bool)

    def _contact_cost(self, rows: np.ndarray) -> np.ndarray | None:
        u, kind = self.env._u, self.env._task.health
        k = len(rows)
        if kind == "ant":
            assert self.cfrc is not None
            lo, hi = u._contact_force_range
            forces = np.clip(self.cfrc[rows], lo, hi).reshape(k, -1)
            cost: np.ndarray = u._contact_cost_weight * np.square(forces).sum(axis=1)
            return cost
        if kind == "humanoid":
            assert self.cfrc is not None
            forces = self.cfrc[rows].reshape(k, -1)
            cost = u._contact_cost_weight * np.square(forces).sum(axis=1)
            lo, hi = u._contact_cost_range
            return np.clip(cost, lo, hi)
        return None

    def reset(self, seeds: Sequence[int]) -> np.ndarray:
        """Reset row i as gymnasium's ``env.reset(seed=seeds[i])``; return the observations."""
        env = self.env
        source = env._u.data
        for i, seed in enumerate(seeds):
            obs_raw, _ = env._env.reset(seed=int(seed))
            mujoco.mj_copyData(self.views[i].data, env._model, source)
            self._gather(i)
            self.obs[i] = np.asarray(obs_raw, dtype=np.float64)
        return self.obs[: len(seeds)].copy()

    def advance(
        self, live: Sequence[int], action: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Step rows ``live`` by ``action`` (one row each, inside the action bounds).

        Returns their observations, rewards and terminations, as gymnasium's ``step``.
        """
        env = self.env
        model = env._model
        frame_skip = env._frame_skip
        step = mujoco.mj_step
        rne = mujoco.mj_rnePostConstraint if env._task.contacts else None
        views = self.views
        gather = self._gather
        rows = np.asarray(live, dtype=np.intp)
        before = self._forward_position(rows)
        for k, i in enumerate(live):
            v = views[i]
            v.ctrl[:] = action[k]
            step(model, v.data, frame_skip)
            if rne is not None:
                rne(model, v.data)
            gather(i)
        after = self._forward_position(rows)
        velocity = (after - before) / env._dt
        forward_reward = env._fw * velocity
        healthy = self._healthy(rows)
        rewards = forward_reward + healthy * env._healthy_reward
        ctrl_cost = env._cw * np.square(action).sum(axis=1)
        contact_cost = self._contact_cost(rows)
        costs = ctrl_cost if contact_cost is None else ctrl_cost + contact_cost
        reward = rewards - costs
        terminated = ~healthy & env._terminate
        obs = self._observe(rows)
        self.obs[rows] = obs
        return obs, reward, terminated


class _Episodes:
    """One lockstep run of whole episodes under linear policies, with their bookkeeping."""

    def __init__(
        self,
        env: FastEnv,
        policies: Sequence[LinearPolicy],
        seeds: Sequence[int],
        horizons: Sequence[int],
        shifts: Sequence[float],
    ) -> None:
        n = len(policies)
        if not (len(seeds) == len(horizons) == len(shifts) == n):
            raise ValueError("policies, seeds, horizons and shifts must have one entry each")
        self.env = env
        self.n = n
        self.rows = Lockstep(env, n)
        folded = [p.folded() for p in policies]
        self.w = np.stack([w for w, _ in folded])
        self.b = np.stack([b for _, b in folded])
        self.has_b = np.array([bool(b.any()) for _, b in folded], dtype=bool)
        self.any_b = bool(self.has_b.any())
        self.seeds = [int(s) for s in seeds]
        self.horizons = np.array([int(h) for h in horizons], dtype=np.int64)
        self.shifts = [float(s) for s in shifts]
        self.total = [0.0] * n
        self.length = np.zeros(n, dtype=np.int64)
        self.terminated = [False] * n
        self.truncated = [False] * n
        self.detail = [""] * n
        cap = max(1, min(int(self.horizons.max()), INITIAL_OBS_ROWS))
        self.recorded = np.empty((n, cap, env.obs_dim))

    def _record(self, rows: np.ndarray, t: int) -> None:
        if t == self.recorded.shape[1]:
            cap = min(2 * t, int(self.horizons.max()))
            grown = np.empty((self.n, cap, self.env.obs_dim))
            grown[:, :t] = self.recorded
            self.recorded = grown
        self.recorded[rows, t] = self.rows.obs[rows]

    def _end(self, i: int, terminated: bool, truncated: bool, detail: str = "") -> None:
        self.terminated[i] = terminated
        self.truncated[i] = truncated
        self.detail[i] = detail

    def run(self) -> list[EpisodeOutcome]:
        env = self.env
        low, high = env._low, env._high
        obs_all = self.rows.reset(self.seeds)
        live = []
        for i in range(self.n):
            if not np.isfinite(obs_all[i]).all():
                what = non_finite_what("observation", obs_all[i])
                self._end(i, False, False, f"{what} at reset")
            elif self.horizons[i] <= 0:
                self._end(i, False, True)
            else:
                live.append(i)
        t = 0
        while live:
            rows = np.array(live, dtype=np.intp)
            self._record(rows, t)
            action = np.matmul(self.w[rows], self.rows.obs[rows, :, np.newaxis])[:, :, 0]
            if self.any_b:
                np.add(action, self.b[rows], out=action, where=self.has_b[rows, np.newaxis])
            act_ok = np.isfinite(action).all(axis=1)
            if not act_ok.all():
                for bad in np.flatnonzero(~act_ok):
                    what = non_finite_what("action", action[bad])
                    self._end(live[bad], False, False, f"{what} at step {t} (W · obs + b)")
                live = [i for k, i in enumerate(live) if act_ok[k]]
                if not live:
                    break
                rows, action = rows[act_ok], action[act_ok]
            np.maximum(action, low, out=action)
            np.minimum(action, high, out=action)
            obs, reward, terminated = self.rows.advance(live, action)
            t += 1
            obs_ok = np.isfinite(obs).all(axis=1)
            self.length[rows] = t
            timed_out = env._time_limit is not None and t >= env._time_limit
            still = []
            for k, i in enumerate(live):
                r = float(reward[k])
                term = bool(terminated[k])
                if not np.isfinite(r):
                    self._end(i, term, timed_out, reward_detail(r, t - 1))
                    continue
                self.total[i] += r
                if not obs_ok[k]:
                    what = non_finite_what("observation", obs[k])
                    self._end(i, term, timed_out, f"{what} after step {t - 1}")
                elif term or timed_out:
                    self._end(i, term, timed_out)
                elif t >= self.horizons[i]:
                    self._end(i, False, True)
                else:
                    still.append(i)
            live = still
        return [self._outcome(i) for i in range(self.n)]

    def _outcome(self, i: int) -> EpisodeOutcome:
        length = int(self.length[i])
        mean, m2 = obs_stats(self.recorded[i, :length], self.env.obs_dim)
        total = self.total[i]
        shifted = total - self.shifts[i] * length
        detail = self.detail[i] or outcome_detail(total, shifted, self.shifts[i], length, mean, m2)
        return EpisodeOutcome(
            total_return=total,
            shifted_return=shifted,
            length=length,
            terminated=self.terminated[i],
            truncated=self.truncated[i],
            obs_count=length,
            obs_mean=mean,
            obs_m2=m2,
            non_finite=bool(detail),
            non_finite_detail=detail,
        )
