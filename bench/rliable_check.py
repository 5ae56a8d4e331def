"""rliable's figures on a score matrix, for report's test against the reference implementation.

Reads one JSON object on stdin:

    {"x": [[...], ...], "y": [[...], ...], "reps": 5000, "seed": 1, "taus": [0.0, 0.5, ...]}

x and y are normalized score matrices of two methods, runs × tasks (rliable's layout), and
prints one JSON object: rliable 1.2's interquartile mean of x with its 95% stratified
bootstrap interval (``iqm``, ``iqm_ci``), the probability of improvement of x over y with
its interval (``poi``, ``poi_ci``), and x's performance profile at taus (``profile``),
all from rliable.library and rliable.metrics as published:

    .venv/bin/python bench/rliable_check.py < scores.json

report/rliable_test.go runs it and compares its figures with report's.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from rliable import library as rly
from rliable import metrics


def main() -> None:
    req = json.load(sys.stdin)
    x = np.asarray(req["x"], dtype=float)
    y = np.asarray(req["y"], dtype=float)
    reps = int(req["reps"])
    # rliable's stratified bootstraps draw their indices from numpy's global generator.
    np.random.seed(int(req["seed"]))
    iqm, iqm_ci = rly.get_interval_estimates(
        {"x": x}, lambda s: np.array([metrics.aggregate_iqm(s)]), reps=reps
    )
    poi, poi_ci = rly.get_interval_estimates(
        {"xy": [x, y]},
        lambda a, b: np.array([metrics.probability_of_improvement(a, b)]),
        reps=reps,
    )
    taus = np.asarray(req["taus"], dtype=float)
    profile, _ = rly.create_performance_profile({"x": x}, taus, reps=1)
    json.dump(
        {
            "iqm": float(iqm["x"][0]),
            "iqm_ci": [float(v) for v in iqm_ci["x"][:, 0]],
            "poi": float(poi["xy"][0]),
            "poi_ci": [float(v) for v in poi_ci["xy"][:, 0]],
            "profile": [float(v) for v in profile["x"]],
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
