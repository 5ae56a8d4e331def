"""Screen restart checks offline: which early check gives up Hopper's failing attempts soonest?

Reads runs made with every attempt given up at its check (`--restart 300x1`, so that a run of
1500 episodes is five attempts of about 300), splits each run's curve at its restart marks, and
asks of every attempt that ran to 300 episodes:

  pass    did it pass the default check: its episodes since its 150th last on average 1/8 of the
          horizon at its 300th (`--restart 300x0.125`)?
  E x L   would an early check have given it up: its episodes since its E/2-th last on average
          under L of the horizon at its E-th (the trainer's rule: the counts at the first
          iteration that reaches E/2 and E episodes)?

For each early check it prints the passing attempts it gives up (false rejects), the failing ones
it gives up, and the expected training episodes before a kept attempt: with p the share that
passes, a failure costs its check's episodes (E when caught, 300 otherwise), a false reject E,
and 1/(p (1 - false reject rate)) attempts are made. One JSON object per check; the last line
is the single check at 300 alone.

    for s in $(seq 101 120); do bin/trainer --env Hopper-v1 --seed $s --max-episodes 1500 \\
      --restart 300x1 --eval-spacing 100000 --bridge ADDR --out OUT; done
    .venv/bin/python bench/attempts.py OUT/Hopper-v1/*/seed*
"""

import argparse
import json
import sys
from pathlib import Path

Attempt = list[tuple[int, int, int]]  # per iteration: episodes into the attempt, episodes, steps


def attempts(run: Path) -> list[Attempt]:
    """The attempts of one run, from its curve.jsonl's restart marks."""
    out: list[Attempt] = [[]]
    start, prev = 0, None
    for line in (run / "curve.jsonl").read_text().splitlines():
        r = json.loads(line)
        if prev is not None and r["episodes"] > prev["episodes"]:
            de, ds = r["episodes"] - prev["episodes"], r["env_steps"] - prev["env_steps"]
            out[-1].append((r["episodes"] - start, de, ds))
        if r.get("restarted"):
            start = r["episodes"]
            out.append([])
        prev = r
    return [a for a in out if a]


def check(a: Attempt, after: int, length: float, horizon: int) -> tuple[bool, int] | None:
    """Whether the attempt passes the check and at how many episodes; None if it never ran it."""
    mid = None
    for i, (ran, _, _) in enumerate(a):
        if mid is None and ran >= after // 2:
            mid = i
        if ran >= after:
            if mid is None or i == mid:
                return None
            eps = sum(x[1] for x in a[mid + 1 : i + 1])
            steps = sum(x[2] for x in a[mid + 1 : i + 1])
            return steps / eps >= length * horizon, ran
    return None


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("runs", nargs="+", type=Path, help="run directories (each with a curve.jsonl)")
    ap.add_argument("--horizon", type=int, default=1000, help="the env's horizon (Hopper: 1000)")
    args = ap.parse_args()
    rows: list[tuple[Attempt, bool]] = []
    for run in args.runs:
        for a in attempts(run):
            c = check(a, 300, 0.125, args.horizon)
            if c is not None:
                rows.append((a, c[0]))
    n, passed = len(rows), sum(ok for _, ok in rows)
    if n == 0 or passed == 0 or passed == n:
        print(
            "attempts.py: need attempts that pass and attempts that fail the check at 300",
            file=sys.stderr,
        )
        return 1
    p = passed / n
    for early in (100, 150, 200):
        for length in (0.05, 0.055, 0.06, 0.065, 0.07, 0.075, 0.08):
            gave_up = [
                (ok, c)
                for a, ok in rows
                if (c := check(a, early, length, args.horizon)) and not c[0]
            ]
            fr = sum(ok for ok, _ in gave_up)
            caught = len(gave_up) - fr
            frr, cr = fr / passed, caught / (n - passed)
            cost = ((1 - p) * (cr * early + (1 - cr) * 300) + p * frr * early) / (p * (1 - frr))
            print(
                json.dumps(
                    {
                        "check": f"{early}x{length}",
                        "attempts": n,
                        "pass": passed,
                        "false_rejects": fr,
                        "fails_caught": caught,
                        "fails": n - passed,
                        "expected_episodes": round(cost),
                    }
                )
            )
    print(
        json.dumps(
            {
                "check": "300x0.125 alone",
                "attempts": n,
                "pass": passed,
                "expected_episodes": round((1 - p) * 300 / p),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
