"""CMA-ES and Nevergrad on the convex benchmark problem exported by cmd/convex.

Reads bench_problem.json (A, y, lambda, f*, target gap) and bench_result.json
(STP / STP_IS results) from the output directory, counts the evaluations each
baseline needs to reach f - f* <= target gap (budget-capped), prints a table
and, last, one JSON line: the Go result plus the baselines' counts.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]


class Ridge:
    """f(x) = 1/(2m) ||Ax - y||^2 + lambda/2 ||x||^2, counting evaluations."""

    def __init__(self, prob: dict[str, Any]) -> None:
        self.m = int(prob["m"])
        self.n = int(prob["n"])
        self.a: Array = np.asarray(prob["a_row_major"], dtype=np.float64).reshape(self.m, self.n)
        self.y: Array = np.asarray(prob["y"], dtype=np.float64)
        self.lam = float(prob["lambda"])
        self.fstar = float(prob["fstar"])
        self.target = float(prob["target_gap"])
        self.evals = 0
        self.hit: int | None = None
        self.best_gap = float("inf")

    def __call__(self, x: Array) -> float:
        x = np.asarray(x, dtype=np.float64)
        r = self.a @ x - self.y
        f = float(r @ r / (2 * self.m) + self.lam / 2 * (x @ x))
        self.evals += 1
        gap = f - self.fstar
        self.best_gap = min(self.best_gap, gap)
        if self.hit is None and gap <= self.target:
            self.hit = self.evals
        return f


def run_cma(prob: dict[str, Any], budget: int, seconds: float, seed: int) -> Ridge:
    """Run sep-CMA-ES (diagonal covariance; full CMA is O(n^2) per sample at n = 1000)."""
    import cma

    f = Ridge(prob)
    opts = {
        "seed": seed + 1,
        "maxfevals": budget,
        "CMA_diagonal": True,
        "verbose": -9,
        "tolfun": 0,
        "tolx": 0,
        "tolfunhist": 0,
        "tolflatfitness": 10**9,
    }
    es = cma.CMAEvolutionStrategy(np.zeros(f.n), 0.5, opts)
    start = time.monotonic()
    while not es.stop() and f.hit is None and time.monotonic() - start < seconds:
        xs = es.ask()
        es.tell(xs, [f(np.asarray(x)) for x in xs])
    return f


def run_nevergrad(prob: dict[str, Any], budget: int, seconds: float, seed: int) -> Ridge:
    """Run Nevergrad's NGOpt with an evaluation budget and a wall-clock cap."""
    import nevergrad as ng

    f = Ridge(prob)
    param = ng.p.Array(init=np.zeros(f.n))
    param.random_state = np.random.RandomState(seed)
    opt = ng.optimizers.NGOpt(parametrization=param, budget=budget)
    start = time.monotonic()
    while f.evals < budget and f.hit is None and time.monotonic() - start < seconds:
        cand = opt.ask()
        opt.tell(cand, f(cand.value))
    return f


def main() -> None:
    """Parse flags, run the baselines, print the table and the JSON line last."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--budget", type=int, default=200_000)
    ap.add_argument("--seconds", type=float, default=90.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    prob: dict[str, Any] = json.loads((args.dir / "bench_problem.json").read_text())
    res: dict[str, Any] = json.loads((args.dir / "bench_result.json").read_text())

    rows: list[tuple[str, str, str]] = [
        ("STP", str(res["stp_evals_to_gap"]), f"{res['stp_gap']:.4g}"),
        ("STP_IS", str(res["stpis_evals_to_gap"]), f"{res['stpis_gap']:.4g}"),
    ]
    for name, fn in (("CMA-ES", run_cma), ("Nevergrad", run_nevergrad)):
        key = "cmaes" if name == "CMA-ES" else "nevergrad"
        try:
            f = fn(prob, args.budget, args.seconds, args.seed)
        except Exception as exc:  # noqa: BLE001 - a baseline failing must not hide the Go result
            rows.append((name, f"error: {exc}", "-"))
            res[f"{key}_evals_to_gap"] = None
            continue
        hit = str(f.hit) if f.hit is not None else f"not reached in {f.evals}"
        rows.append((name, hit, f"{f.best_gap:.4g}"))
        res[f"{key}_evals_to_gap"] = f.hit
        res[f"{key}_evals_used"] = f.evals
        res[f"{key}_best_gap"] = f.best_gap

    print(f"target gap f - f* = {prob['target_gap']:.4g} (STP median final gap)")
    print(f"{'method':<10} {'evals to target':>28} {'best gap':>12}")
    for name, ev, gap in rows:
        print(f"{name:<10} {ev:>28} {gap:>12}")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
