"""Offline screen: does whitening the observations speed a linear policy's climb on HalfCheetah?

The trainer normalizes each observation coordinate on its own (ARS's normalizer):
z = (o - mean) / std. On HalfCheetah those coordinates are strongly correlated along a
gait (the correlation matrix of z has a condition number of about 10^3), so a random
perturbation of W moves the actions mostly along two or three directions of z. Whitening,
z = (R + eps I)^(-1/2) (o - mean) / std with R the correlation matrix, gives every
direction of z the same variance. This screen runs a small ARS V2-t (N directions, the
best b combined, step alpha / (b sigma_R), noise nu, pair seeds) in gymnasium directly,
once with each normalizer and everything else equal, and prints one JSON line a run:

    .venv/bin/python bench/whiten_screen.py --seeds 101-106 --jobs 2

Both arms keep the policy's actions unchanged when the normalizer's statistics move
(W <- W A_old A_new^-1), freeze the statistics for an iteration, and count training
episodes only; the mean policy is evaluated every 5 iterations on 5 episodes.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor

import gymnasium as gym
import numpy as np


class Stats:
    """Running mean and sum of outer products of the training states."""

    def __init__(self, n: int) -> None:
        self.count = 0
        self.mean = np.zeros(n)
        self.m2 = np.zeros((n, n))

    def add(self, states: np.ndarray) -> None:
        k = len(states)
        if k == 0:
            return
        mean = states.mean(0)
        d = states - mean
        delta = mean - self.mean
        total = self.count + k
        self.m2 += d.T @ d + np.outer(delta, delta) * self.count * k / total
        self.mean += delta * k / total
        self.count = total

    def transform(self, whiten: bool, eps: float) -> np.ndarray:
        """A with z = A (o - mean): diagonal 1/std, or the shrunk whitening of the correlation."""
        n = len(self.mean)
        if self.count < 2:
            return np.eye(n)
        cov = self.m2 / (self.count - 1)
        std = np.sqrt(np.maximum(np.diag(cov), 1e-14))
        d_inv = np.diag(1 / std)
        if not whiten:
            return d_inv
        corr = d_inv @ cov @ d_inv
        vals, vecs = np.linalg.eigh(corr + eps * np.eye(n))
        return vecs @ np.diag(vals**-0.5) @ vecs.T @ d_inv


def rollout(
    env: gym.Env, w: np.ndarray, a: np.ndarray, mean: np.ndarray, seed: int
) -> tuple[float, np.ndarray]:
    m = w @ a
    bias = m @ mean
    obs, _ = env.reset(seed=seed)
    total, states = 0.0, []
    for _ in range(1000):
        states.append(obs)
        act = np.clip(m @ obs - bias, -1, 1)
        obs, r, term, trunc, _ = env.step(act)
        total += float(r)
        if term or trunc:
            break
    return total, np.asarray(states)


def run(job: tuple[int, bool, argparse.Namespace]) -> dict[str, object]:
    seed, whiten, args = job
    env = gym.make("HalfCheetah-v5")
    n_obs = env.observation_space.shape[0]  # type: ignore[index]
    n_act = env.action_space.shape[0]  # type: ignore[index]
    rng = np.random.default_rng(seed)
    stats = Stats(n_obs)
    w = np.zeros((n_act, n_obs))
    a = np.eye(n_obs)
    episodes, it, reached, best = 0, 0, None, -np.inf
    while episodes + 2 * args.directions <= args.budget:
        mean = stats.mean.copy()
        new_a = stats.transform(whiten, args.eps)
        w = w @ a @ np.linalg.inv(new_a)  # the same actions under the new statistics
        a = new_a
        deltas = rng.standard_normal((args.directions, n_act, n_obs))
        plus, minus, batch = [], [], []
        for d in deltas:
            ep_seed = int(rng.integers(2**31))
            rp, sp = rollout(env, w + args.noise * d, a, mean, ep_seed)
            rm, sm = rollout(env, w - args.noise * d, a, mean, ep_seed)
            plus.append(rp)
            minus.append(rm)
            batch += [sp, sm]
        episodes += 2 * args.directions
        for states in batch:
            stats.add(states)
        rp_a, rm_a = np.asarray(plus), np.asarray(minus)
        top = np.argsort(-np.maximum(rp_a, rm_a))[: args.top]
        sigma = np.concatenate([rp_a[top], rm_a[top]]).std() + 1e-8
        step = sum((rp_a[i] - rm_a[i]) * deltas[i] for i in top)
        w = w + args.rate / (args.top * sigma) * step
        it += 1
        if it % 5 == 0:
            ev = np.mean([rollout(env, w, a, mean, 10**6 + 7 * it + k)[0] for k in range(5)])
            best = max(best, float(ev))
            if ev >= args.threshold:
                reached = episodes
                break
    return {
        "seed": seed,
        "whiten": whiten,
        "reached_at": reached,
        "best": round(best, 1),
        "episodes": episodes,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="101-106", help="FIRST-LAST")
    ap.add_argument("--budget", type=int, default=3000, help="training episodes")
    ap.add_argument("--directions", type=int, default=8)
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--rate", type=float, default=0.02)
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--eps", type=float, default=0.1, help="whitening's shrinkage: R + eps I")
    ap.add_argument("--threshold", type=float, default=3430)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    lo, _, hi = args.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    jobs = [(s, wh, args) for s in seeds for wh in (False, True)]
    with ProcessPoolExecutor(args.jobs) as pool:
        for out in pool.map(run, jobs):
            print(json.dumps(out), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
