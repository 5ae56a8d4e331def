"""An independent ARS V2-t in numpy, to cross-check the trainer's harness.

It shares nothing with the trainer or the bridge: gymnasium directly, numpy's own
RNG, ARS's MeanStdFilter semantics (mean 0 and std 1 until the first update, then
the running statistics of every training state, frozen within an iteration, std
below 1e-7 zeroing the feature), antithetic directions, top-b selection and σ_R
scaling. It prints one JSON line per evaluation (5 episodes every 10 iterations):

    .venv/bin/python bench/ars_reference.py --env Hopper-v5 --seed 1 --episodes 1400

With ARS's published Hopper settings (the defaults here), a 4-seed check of an
earlier draft of this script (same algorithm, another order of RNG draws) on
Hopper-v5 gave evals of 3134 and 2647 by 1440-1600 episodes on two seeds and 740
and 314 by 1280 on the other two: the same spread as `trainer --method ars`
(1355 and 163 by 1408 episodes on seeds 2 and 1), so the harness is not what
holds ARS back on Hopper-v5; seed variance is.
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym
import numpy as np


class RunningStat:
    """Welford's running mean and variance (ARS's RunningStat)."""

    def __init__(self, dim: int) -> None:
        self.n = 0
        self.mean = np.zeros(dim)
        self.m2 = np.zeros(dim)

    def push(self, x: np.ndarray) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    def std(self) -> np.ndarray:
        var = self.m2 / (self.n - 1) if self.n > 1 else np.square(self.mean)
        s = np.sqrt(var)
        s[s < 1e-7] = np.inf
        return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env", default="Hopper-v5")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--episodes", type=int, default=1400, help="training-episode budget")
    ap.add_argument("--step", type=float, default=0.01, help="step size α")
    ap.add_argument("--directions", type=int, default=8, help="N")
    ap.add_argument("--top", type=int, default=4, help="b")
    ap.add_argument("--noise", type=float, default=0.025, help="ν")
    ap.add_argument("--shift", type=float, default=1.0, help="alive bonus subtracted per step")
    args = ap.parse_args()

    env = gym.make(args.env)
    rng = np.random.default_rng(args.seed)
    obs_space, act_space = env.observation_space, env.action_space
    if not isinstance(obs_space, gym.spaces.Box) or not isinstance(act_space, gym.spaces.Box):
        raise SystemExit(f"{args.env}: a linear policy needs Box observation and action spaces")
    obs_dim = obs_space.shape[0]
    act_dim = act_space.shape[0]
    low, high = act_space.low, act_space.high
    w = np.zeros((act_dim, obs_dim))
    stat = RunningStat(obs_dim)
    mean, std = np.zeros(obs_dim), np.ones(obs_dim)
    seen: list[np.ndarray] = []

    def rollout(wp: np.ndarray, seed: int, train: bool) -> float:
        obs, _ = env.reset(seed=seed)
        total = 0.0
        for _ in range(1000):
            if train:
                seen.append(np.asarray(obs, dtype=np.float64))
            action = np.clip(wp @ ((obs - mean) / (std + 1e-8)), low, high)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward) - (args.shift if train else 0.0)
            if terminated or truncated:
                break
        return total

    episodes = 0
    it = 0
    while episodes < args.episodes:
        deltas = rng.standard_normal((args.directions, act_dim, obs_dim))
        plus = np.array(
            [rollout(w + args.noise * d, int(rng.integers(1 << 30)), True) for d in deltas]
        )
        minus = np.array(
            [rollout(w - args.noise * d, int(rng.integers(1 << 30)), True) for d in deltas]
        )
        episodes += 2 * args.directions
        top = np.argsort(-np.maximum(plus, minus))[: args.top]
        sigma = np.std(np.concatenate([plus[top], minus[top]]))
        if sigma > 0:
            w = w + args.step / (args.top * sigma) * np.tensordot(
                plus[top] - minus[top], deltas[top], axes=1
            )
        for x in seen:
            stat.push(x)
        seen.clear()
        mean, std = stat.mean.copy(), stat.std()
        it += 1
        if it % 10 == 0:
            ev = float(np.mean([rollout(w, 10**6 + 10 * it + j, False) for j in range(5)]))
            print(
                json.dumps({"iter": it, "episodes": episodes, "eval_mean": round(ev, 1)}),
                flush=True,
            )


if __name__ == "__main__":
    main()
