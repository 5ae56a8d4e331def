"""In-process baseline for the bridge benchmark: the bridge's episode loop without gRPC.

Runs the same episodes as the bridge (stpis_bridge.rollout.run_episode) on the same
kind of worker pool (stpis_bridge.pool.WorkerPool), with a fixed random linear
policy, and prints one JSON line:

    {"env": ..., "workers": ..., "episodes": ..., "eps": ..., "steps_per_s": ...}

Only the episodes are timed: the pool is started and each worker has run one
warm-up episode (making its env) first.

    .venv/bin/python bench/inprocess_bridge.py --env Hopper-v5 --workers 2 \\
        --episodes 64 --horizon 1000 --kwarg terminate_when_unhealthy=false --seed 0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bridge_py"))

from stpis_bridge import envs  # noqa: E402
from stpis_bridge.pool import WorkerPool  # noqa: E402
from stpis_bridge.rollout import EpisodeOutcome, LinearPolicy  # noqa: E402
from stpis_bridge.worker import EpisodeTask  # noqa: E402

_WARMUP_HORIZON = 10


def parse_kwarg(text: str) -> tuple[str, envs.KwargValue]:
    """Parse NAME=VALUE; VALUE is a bool (true/false), an int, a float, or a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--kwarg must be NAME=VALUE, got {text!r}")
    value: envs.KwargValue
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        try:
            value = int(raw)
        except ValueError:
            try:
                value = float(raw)
            except ValueError:
                value = raw
    return name, value


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its JSON line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="Hopper-v5")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--horizon", type=int, default=1000)
    p.add_argument("--kwarg", type=parse_kwarg, action="append", default=[], help="NAME=VALUE")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    kwargs = dict(args.kwarg)
    desc = envs.describe_env(args.env, kwargs)
    rng = np.random.default_rng(args.seed)
    weights = rng.normal(0.0, 0.1, (desc.action_dim, desc.observation_dim))
    policy = LinearPolicy(weights, np.zeros(desc.observation_dim), np.ones(desc.observation_dim))
    key = tuple(sorted(kwargs.items()))

    def task(seed: int, horizon: int) -> EpisodeTask:
        return EpisodeTask(desc.resolved_id, key, policy, seed, horizon, 0.0)

    pool = WorkerPool(args.workers)
    pool.start()
    try:
        pool.run([task(args.seed, _WARMUP_HORIZON) for _ in range(args.workers)])
        tasks = [task(args.seed + i, args.horizon) for i in range(args.episodes)]
        start = time.perf_counter()
        outcomes = pool.run(tasks)
        elapsed = time.perf_counter() - start
    finally:
        pool.close()
    steps = sum(o.length for o in outcomes if isinstance(o, EpisodeOutcome))
    print(
        json.dumps(
            {
                "env": args.env,
                "workers": args.workers,
                "episodes": args.episodes,
                "eps": args.episodes / elapsed,
                "steps_per_s": steps / elapsed,
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
