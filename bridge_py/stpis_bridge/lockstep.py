"""The fast backend's stepping: rows of ``MjData`` in lockstep, and whole episodes on them.

``Lockstep`` computes the v5 observation, reward and termination of a batch of rows in
numpy (see ``fast``); ``_Episodes`` runs linear policies on it to the episodes' ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import mujoco
import numpy as np

from stpis_bridge.rollout import (
    INITIAL_OBS_ROWS,
    EpisodeOutcome,
    LinearPolicy,
    non_finite_what,
    obs_stats,
    outcome_detail,
    reward_detail,
)


class Machine(Protocol):
    """What the lockstep needs of one (v5 env id, kwargs): ``fast.FastEnv`` is one.

    A protocol, so that this module sits beneath ``fast`` and imports nothing back.
    """

    obs_dim: int
    _env: Any  # the gymnasium env, for resets
    _u: Any  # its unwrapped MujocoEnv
    _model: Any  # mujoco.MjModel
    _task: Any  # fast's _Task: which terms the env's reward and observation have
    _views: list[Any]
    _low: np.ndarray
    _high: np.ndarray
    _time_limit: int | None
    _frame_skip: int
    _dt: float
    _skip: int
    _fw: float
    _cw: float
    _healthy_reward: float
    _terminate: bool
    _main_body: int
    _body_mass: np.ndarray
    _body_mass_sum: Any

    def _ensure(self, n: int) -> None: ...


class Lockstep:
    """Rows of MjData stepped together: reset by seed, advanced by a batch of actions.

    Row ``i`` is one episode. ``advance`` steps only the rows it is given, so a row
    that ended is masked out and keeps its last state; nothing resets it.
    """

    def __init__(self, env: Machine, n: int) -> None:
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
        env: Machine,
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
