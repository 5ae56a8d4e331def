"""Where in a run the episodes to a threshold go: before or after a lower level.

For each method directory (runs/<env>/<variant>/, one seed<N>/curve.jsonl per
seed), over its seeds: how many reached the level (an evaluation at or above
it) and the median training episodes by then; the median of all evaluations
from that first one on, and the fraction of them at or above the threshold;
and the median episodes from the level to the threshold over the seeds that
reached both. One JSON object per method, then nothing else.

    .venv/bin/python bench/phases.py --level 2500 --threshold 3120 \\
        results/rl/runs/Hopper-v1/stp-combined results/rl/runs/Hopper-v1/ars
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


def evaluations(curve: Path) -> list[tuple[int, float]]:
    """The (training episodes, evaluation mean) pairs of one curve.jsonl."""
    out: list[tuple[int, float]] = []
    for line in curve.read_text().splitlines():
        point = json.loads(line)
        if "eval_mean" in point:
            out.append((int(point["episodes"]), float(point["eval_mean"])))
    return out


def first_at(evals: list[tuple[int, float]], level: float) -> int | None:
    """The training episodes of the first evaluation at or above level."""
    return next((e for e, v in evals if v >= level), None)


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def method_phases(runs: Path, level: float, threshold: float) -> dict[str, object]:
    curves = sorted(runs.glob("seed*/curve.jsonl"))
    if not curves:
        raise SystemExit(f"phases: no seed*/curve.jsonl under {runs}")
    to_level: list[float] = []
    after: list[float] = []
    last_mile: list[float] = []
    for curve in curves:
        evals = evaluations(curve)
        at = first_at(evals, level)
        if at is None:
            continue
        to_level.append(at)
        after.extend(v for e, v in evals if e >= at)
        reached = first_at(evals, threshold)
        if reached is not None:
            last_mile.append(reached - at)
    return {
        "runs": str(runs),
        "seeds": len(curves),
        "reached_level": len(to_level),
        "median_episodes_to_level": median(to_level),
        "median_eval_after_level": median(after),
        "fraction_after_level_at_threshold": (
            sum(v >= threshold for v in after) / len(after) if after else None
        ),
        "median_episodes_level_to_threshold": median(last_mile),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", type=float, required=True, help="the lower evaluation level")
    parser.add_argument("--threshold", type=float, required=True, help="the task's threshold")
    parser.add_argument("runs", nargs="+", type=Path, help="runs/<env>/<variant> directories")
    args = parser.parse_args(argv)
    if not args.level < args.threshold:
        parser.error(f"--level {args.level} must be below --threshold {args.threshold}")
    for runs in args.runs:
        print(json.dumps(method_phases(runs, args.level, args.threshold)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
