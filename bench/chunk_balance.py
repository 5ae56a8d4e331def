"""How evenly the fast backend's chunks share a training-like call between 2 workers.

A call of the trainer's shape on Hopper-v5 (default termination): 2 directions × (+, −)
× K=3 repeats of a perturbed random linear policy, 12 episodes side by side in that
order. A chunk's cost is taken as the sum of its episodes' lengths (the physics
dominates a step); the figure is the longest worker's cost over half the total
(1.0 is a perfect split). Compared: two contiguous chunks, two chunks dealt round
robin (what stpis_bridge.backends.plan does), and one episode per task scheduled
greedily as the pool does for the gymnasium backend. Deterministic (seeded).

    cd bridge_py && ../.venv/bin/python ../bench/chunk_balance.py --calls 20
"""

from __future__ import annotations

import argparse
import heapq
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bridge_py"))

from stpis_bridge import fast  # noqa: E402
from stpis_bridge.rollout import LinearPolicy  # noqa: E402

_WORKERS = 2


def _greedy(costs: list[int]) -> int:
    loads = [0] * _WORKERS
    for c in costs:
        heapq.heappush(loads, heapq.heappop(loads) + c)
    return max(loads)


def main(argv: list[str] | None = None) -> int:
    """Print one JSON line of medians and maxima over the calls."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    env = fast.FastEnv("Hopper-v5", {})
    rng = np.random.default_rng(args.seed)
    figures: dict[str, list[float]] = {"contiguous": [], "dealt": [], "per_episode": []}
    for _ in range(args.calls):
        w0 = rng.normal(0.0, 0.1, (3, 11))
        policies = []
        for _direction in range(2):
            delta = rng.normal(0.0, 0.3, (3, 11))
            for sign in (1.0, -1.0):
                policies += [LinearPolicy(w0 + sign * delta, np.zeros(11), np.ones(11))] * 3
        n = len(policies)
        lengths = [o.length for o in env.run(policies, list(range(n)), [1000] * n, [0.0] * n)]
        half = sum(lengths) / _WORKERS
        figures["contiguous"].append(max(sum(lengths[: n // 2]), sum(lengths[n // 2 :])) / half)
        figures["dealt"].append(max(sum(lengths[c::_WORKERS]) for c in range(_WORKERS)) / half)
        figures["per_episode"].append(_greedy(lengths) / half)
    env.close()
    out = {
        k: {"median": round(float(np.median(v)), 3), "max": round(max(v), 3)}
        for k, v in figures.items()
    }
    print(json.dumps({"env": "Hopper-v5", "calls": args.calls, "workers": _WORKERS, **out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
