"""A user's own envs, outside gymnasium, for the bridge's ``module:EnvId`` tests.

Importing this module registers ``PointMass-v0`` (a Box env: push a unit mass to the
origin), ``Coin-v0`` (a Discrete action space, which a linear policy cannot act
on), ``CrashStep-v0`` (its ``step`` ends the worker with ``os._exit(3)``),
``HangStep-v0`` (its ``step`` sleeps for an hour), ``Unbounded-v0`` (a Box action
space with infinite bounds), ``StringReward-v0`` (its reward is the string "1.0") and
``NeedsPackage-v0`` (made, it imports a package that
is not installed, as gymnasium's phys2d envs import jax). The Go test
``TestUserEnvModule`` trains PointMass end to end through a local bridge, with this
directory on PYTHONPATH.
"""

from __future__ import annotations

import os
import time
from typing import Any

import gymnasium as gym
import numpy as np


class PointMass(gym.Env[np.ndarray, np.ndarray]):
    """A unit mass on a line, pushed by a force in [-1, 1]; the reward is -x^2."""

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self._state = np.zeros(2)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._state = self.np_random.uniform(-1.0, 1.0, size=2)
        return self._state.copy(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        x, v = self._state
        v += 0.1 * float(np.clip(action[0], -1.0, 1.0))
        x += 0.1 * v
        self._state = np.array([x, v])
        return self._state.copy(), -float(x * x), False, False, {}


class Coin(gym.Env[np.ndarray, np.int64]):
    """Two actions: not a Box, so the bridge refuses it."""

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float64)
        self.action_space = gym.spaces.Discrete(2)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        return np.zeros(1), {}

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        return np.zeros(1), float(action), True, False, {}


class CrashStep(PointMass):
    """PointMass whose ``step`` kills its process, as a crashing C extension would."""

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        os._exit(3)


class HangStep(PointMass):
    """PointMass whose ``step`` never returns (it sleeps: no CPU time moves)."""

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        time.sleep(3600)
        return super().step(action)


class Unbounded(PointMass):
    """PointMass pushed by any force: its action space is Box(-inf, inf, (1,))."""

    def __init__(self) -> None:
        super().__init__()
        self.action_space = gym.spaces.Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)


class StringReward(PointMass):
    """PointMass whose reward is text, "1.0", which float() would read."""

    def step(self, action: np.ndarray) -> tuple[np.ndarray, Any, bool, bool, dict[str, Any]]:
        obs, _, terminated, truncated, info = super().step(action)
        return obs, "1.0", terminated, truncated, info


class NeedsPackage(PointMass):
    """PointMass that needs a package nobody installs, imported when it is made."""

    def __init__(self) -> None:
        import importlib

        importlib.import_module("stpis_not_installed_package")
        super().__init__()


gym.register("PointMass-v0", entry_point=f"{__name__}:PointMass", max_episode_steps=50)
gym.register("Coin-v0", entry_point=f"{__name__}:Coin", max_episode_steps=5)
gym.register("CrashStep-v0", entry_point=f"{__name__}:CrashStep", max_episode_steps=50)
gym.register("HangStep-v0", entry_point=f"{__name__}:HangStep", max_episode_steps=50)
gym.register("Unbounded-v0", entry_point=f"{__name__}:Unbounded", max_episode_steps=50)
gym.register("NeedsPackage-v0", entry_point=f"{__name__}:NeedsPackage", max_episode_steps=50)
gym.register("StringReward-v0", entry_point=f"{__name__}:StringReward", max_episode_steps=50)
