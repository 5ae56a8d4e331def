"""A user's own envs, outside gymnasium, for the bridge's ``module:EnvId`` tests.

Importing this module registers ``PointMass-v0`` (a Box env: push a unit mass to the
origin) and ``Coin-v0`` (a Discrete action space, which a linear policy cannot act
on). The Go test ``TestUserEnvModule`` trains PointMass end to end through a local
bridge, with this directory on PYTHONPATH.
"""

from __future__ import annotations

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


gym.register("PointMass-v0", entry_point=f"{__name__}:PointMass", max_episode_steps=50)
gym.register("Coin-v0", entry_point=f"{__name__}:Coin", max_episode_steps=5)
