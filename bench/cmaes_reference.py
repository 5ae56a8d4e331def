"""pycma on gymnasium directly, to cross-check the trainer's CMA-ES (`--method cmaes`).

It shares nothing with the trainer or the bridge: gymnasium directly, pycma's
CMA-ES (its defaults but σ0: the population 4 + ⌊3 ln n⌋ and its own weights),
a linear policy on raw observations (as Swimmer's runs are) or, with
`--normalize`, on observations normalized as ARS does (a running mean and
std of every training state, frozen for a generation, a feature whose std is
under 1e-7 left out: the bridge's rule), one episode a point, and an
evaluation of the distribution's mean (10 episodes) after each generation
that crosses a multiple of 40 training episodes, the trainer's spacing
(`--stop`: the run stops at the first past the threshold). It prints one
JSON line per evaluation and a last line with the episodes to the
threshold. pycma is not a dependency of the project; install
it apart from the venv:

    .venv/bin/python -m pip install --target /tmp/pycma cma
    PYTHONPATH=/tmp/pycma .venv/bin/python bench/cmaes_reference.py --env Swimmer-v5 --seed 101
"""

from __future__ import annotations

import argparse
import json

import cma  # type: ignore[import-not-found, unused-ignore]
import gymnasium as gym
import numpy as np


class Normalizer:
    """A running mean and variance of observations, ARS's (std 1 before any data)."""

    def __init__(self, dim: int) -> None:
        self.n = 0
        self.mean = np.zeros(dim)
        self.m2 = np.zeros(dim)

    def push(self, states: np.ndarray) -> None:
        """Fold in a batch of states (rows), Chan et al.'s merge."""
        nb = len(states)
        if nb == 0:
            return
        mb = states.mean(axis=0)
        m2b = ((states - mb) ** 2).sum(axis=0)
        tot = self.n + nb
        delta = mb - self.mean
        self.mean = self.mean + delta * nb / tot
        self.m2 = self.m2 + m2b + delta**2 * self.n * nb / tot
        self.n = tot

    def frozen(self) -> tuple[np.ndarray, np.ndarray]:
        """The mean and std a generation's policies divide by."""
        if self.n > 1:
            var = self.m2 / (self.n - 1)
        elif self.n == 1:
            var = self.mean**2
        else:
            var = np.ones_like(self.mean)
        return self.mean.copy(), np.sqrt(var)


def effective(
    w: np.ndarray, norm: tuple[np.ndarray, np.ndarray] | None
) -> tuple[np.ndarray, np.ndarray]:
    """The weights and bias acting on raw observations, W·((o − μ)/s).

    Features with s < 1e-7 are left out, as the bridge does.
    """
    if norm is None:
        return w, np.zeros(w.shape[0])
    mu, sd = norm
    scale = np.where(sd < 1e-7, 0.0, 1.0 / np.where(sd < 1e-7, 1.0, sd))
    we = w * scale
    return we, -we @ mu


def episode(
    env: gym.Env,
    w: np.ndarray,
    seed: int,
    shift: float,
    norm: tuple[np.ndarray, np.ndarray] | None = None,
    states: list[np.ndarray] | None = None,
) -> tuple[float, int]:
    """One episode of the linear policy w; the return less shift per step, and its length.

    States seen are appended to states when it is given.
    """
    we, b = effective(w, norm)
    obs, _ = env.reset(seed=seed)
    low, high = env.action_space.low, env.action_space.high  # type: ignore[attr-defined]
    total, steps, done = 0.0, 0, False
    while not done:
        if states is not None:
            states.append(obs)
        obs, r, term, trunc, _ = env.step(np.clip(we @ obs + b, low, high))
        total += float(r) - shift
        steps += 1
        done = term or trunc
    return total, steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env", default="Swimmer-v5")
    ap.add_argument("--seed", type=int, default=101)
    ap.add_argument("--episodes", type=int, default=1000, help="training-episode budget")
    ap.add_argument("--sigma", type=float, default=0.1, help="σ0")
    ap.add_argument("--threshold", type=float, default=325.0)
    ap.add_argument("--shift", type=float, default=0.0, help="alive bonus per training step")
    ap.add_argument("--normalize", action="store_true", help="ARS's observation normalizer")
    ap.add_argument(
        "--stop", action="store_true", help="stop at the first evaluation past the threshold"
    )
    args = ap.parse_args()

    env = gym.make(args.env)
    n_obs = env.observation_space.shape[0]  # type: ignore[index]
    n_act = env.action_space.shape[0]  # type: ignore[index]
    es = cma.CMAEvolutionStrategy(
        np.zeros(n_obs * n_act), args.sigma, {"seed": args.seed, "verbose": -9}
    )
    normalizer = Normalizer(n_obs) if args.normalize else None
    rng = np.random.default_rng(args.seed)
    used, next_eval, reached = 0, 40, None
    while used + es.popsize <= args.episodes:
        xs = es.ask()
        seeds = rng.integers(0, 2**31, size=len(xs))
        norm = normalizer.frozen() if normalizer else None
        states: list[np.ndarray] = []
        values = [
            episode(env, np.reshape(x, (n_act, n_obs)), int(s), args.shift, norm, states)[0]
            for x, s in zip(xs, seeds, strict=True)
        ]
        if normalizer:
            normalizer.push(np.asarray(states))
        es.tell(xs, [-v for v in values])
        used += len(xs)
        if used >= next_eval:
            next_eval = (used // 40 + 1) * 40
            w = np.reshape(es.mean, (n_act, n_obs))
            norm = normalizer.frozen() if normalizer else None
            ev = float(
                np.mean(
                    [episode(env, w, int(s), 0.0, norm)[0] for s in rng.integers(0, 2**31, size=10)]
                )
            )
            print(json.dumps({"episodes": used, "eval": ev, "sigma": float(es.sigma)}))
            if reached is None and ev >= args.threshold:
                reached = used
                if args.stop:
                    break
    print(
        json.dumps(
            {
                "env": args.env,
                "seed": args.seed,
                "sigma0": args.sigma,
                "episodes_to_threshold": reached,
            }
        )
    )


if __name__ == "__main__":
    main()
