"""pycma on gymnasium directly, to cross-check the trainer's CMA-ES (`--method cmaes`).

It shares nothing with the trainer or the bridge: gymnasium directly, pycma's
CMA-ES (its defaults but σ0: the population 4 + ⌊3 ln n⌋ and its own weights),
a linear policy on raw observations (as Swimmer's runs are), one episode a
point, and an evaluation of the distribution's mean (10 episodes) after each
generation that crosses a multiple of 40 training episodes, the trainer's
spacing. It prints one JSON line per evaluation and a last line with the
episodes to the threshold. pycma is not a dependency of the project; install
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


def episode(env: gym.Env, w: np.ndarray, seed: int, shift: float) -> tuple[float, int]:
    """One episode of the linear policy w; the return less shift per step, and its length."""
    obs, _ = env.reset(seed=seed)
    low, high = env.action_space.low, env.action_space.high  # type: ignore[attr-defined]
    total, steps, done = 0.0, 0, False
    while not done:
        obs, r, term, trunc, _ = env.step(np.clip(w @ obs, low, high))
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
    args = ap.parse_args()

    env = gym.make(args.env)
    n_obs = env.observation_space.shape[0]  # type: ignore[index]
    n_act = env.action_space.shape[0]  # type: ignore[index]
    es = cma.CMAEvolutionStrategy(
        np.zeros(n_obs * n_act), args.sigma, {"seed": args.seed, "verbose": -9}
    )
    rng = np.random.default_rng(args.seed)
    used, next_eval, reached = 0, 40, None
    while used + es.popsize <= args.episodes:
        xs = es.ask()
        seeds = rng.integers(0, 2**31, size=len(xs))
        values = [
            episode(env, np.reshape(x, (n_act, n_obs)), int(s), args.shift)[0]
            for x, s in zip(xs, seeds, strict=True)
        ]
        es.tell(xs, [-v for v in values])
        used += len(xs)
        if used >= next_eval:
            next_eval = (used // 40 + 1) * 40
            w = np.reshape(es.mean, (n_act, n_obs))
            ev = float(
                np.mean([episode(env, w, int(s), 0.0)[0] for s in rng.integers(0, 2**31, size=10)])
            )
            print(json.dumps({"episodes": used, "eval": ev, "sigma": float(es.sigma)}))
            if reached is None and ev >= args.threshold:
                reached = used
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
