"""Screen step directions offline: does a gradient model in the step point closer to the gradient?

Reads the ARS V2-t logs that `../shared/analysis/surrogate_info.py log` writes (every evaluated
point: 8 antithetic pairs per iteration, ν 0.025; bench/surrogate_screen.py reads the same) and,
iteration by iteration (t >= 20), compares candidate step directions built from what is known at
t with the gradient that follows: T = the sum of the finite-difference estimates of iterations
t+1..t+5, which share no noise with iteration t's. Scored by the mean cosine with T (a larger
cosine is a larger first-order gain for a step of the same length).

Directions (gradient units: y_j = (r+ - r-) / 2ν is the directional derivative along d_j):
  est      the iteration's own estimate, as ARS's step: (1/b) Σ_top y_j d_j over the b = 4
           pairs whose better return is best;
  model    the gradient model m_t, the sum of every earlier estimate (the guide's surrogate),
           scaled by β = Σ p y / Σ p² (p_j = m_t·d_j its predicted derivatives) over the last
           W = 10 iterations' pairs: the model's gradient in the measurements' units;
  cv       the control variate: est + model - (1/b) Σ_top (model·d_j) d_j, the model's gradient
           corrected by the iteration's measured residuals (coefficient 1);
  cv-half  the same with the model weighted 1/2;
  plus     est + model (a momentum on the model, no correction);
  agree    est + ρ⁺ · model, ρ⁺ the correlation of p and y over the last W iterations, clipped
           at 0.

One JSON object per log, then a summary (means over the logs of each environment).

    .venv/bin/python bench/step_screen.py /tmp/basis/hopper-10{1,2,3,4}.npz
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from surrogate_screen import AHEAD, START, Array, Log

NU = 0.025
TOP = 4
WINDOW = 10


def cosine(a: Array, b: Array) -> float:
    """Cosine of the angle between a and b (0 when either is zero)."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return 0.0 if na == 0 or nb == 0 else float(a @ b / (na * nb))


def screen(path: Path) -> dict[str, float | str]:
    """Mean cosine of each direction with the gradient that follows, on one log."""
    log = Log(path)
    # Per iteration: the directions d_j, the derivatives y_j along them, and
    # the TOP pairs whose better return is best.
    dirs = [dx / (2 * NU) for dx, _ in log.pairs]
    ys = [dr / (2 * NU) for _, dr in log.pairs]
    tops = []
    for t in range(log.iters):
        r = log.r[log.it == t]
        tops.append(np.argsort(-np.maximum(r[0::2], r[1::2]))[:TOP])
    cos: dict[str, list[float]] = {
        k: [] for k in ("est", "model", "cv", "cv-half", "plus", "agree")
    }
    for t in range(START, log.iters - AHEAD):
        target = log.ahead(t + 1)
        dt, yt, top = dirs[t], ys[t], tops[t]
        est = (yt[top, None] * dt[top]).mean(0)
        m = np.sum(log.grad[:t], axis=0)
        lo = max(0, t - WINDOW + 1)
        dw = np.concatenate(dirs[lo : t + 1])
        yw = np.concatenate(ys[lo : t + 1])
        p = dw @ m
        beta = max(float(p @ yw / (p @ p)), 0.0) if p @ p > 0 else 0.0
        rho = max(float(np.corrcoef(p, yw)[0, 1]), 0.0)
        model = beta * m
        proj = ((dt[top] @ model)[:, None] * dt[top]).mean(0)
        cos["est"].append(cosine(est, target))
        cos["model"].append(cosine(model, target) if beta > 0 else 0.0)
        cos["cv"].append(cosine(est + model - proj, target))
        cos["cv-half"].append(cosine(est + 0.5 * (model - proj), target))
        cos["plus"].append(cosine(est + model, target))
        cos["agree"].append(cosine(est + rho * model, target))
    return {"log": path.name} | {k: round(float(np.mean(v)), 4) for k, v in cos.items()}


def main() -> None:
    """Screen every log given."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("logs", nargs="+", type=Path)
    a = ap.parse_args()
    rows = []
    for path in a.logs:
        row = screen(path)
        rows.append(row)
        print(json.dumps(row), flush=True)
    envs = sorted({str(row["log"]).split("-")[0] for row in rows})
    summary = {}
    for env in envs:
        rs = [row for row in rows if str(row["log"]).startswith(env + "-")]
        summary[env] = {
            k: round(float(np.mean([float(row[k]) for row in rs])), 4) for k in rs[0] if k != "log"
        }
    print(json.dumps({"summary": summary}))


if __name__ == "__main__":
    main()
