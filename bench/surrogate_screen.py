"""Screen surrogate designs offline: what does each know about where the search goes next?

Reads logs of every evaluated point of ARS V2-t runs (npz files with X, R, IT, MU, SD, od, ad, as
`../shared/analysis/surrogate_info.py log` writes them: 8 antithetic pairs per iteration) and asks,
iteration by iteration (t >= 20), what a design fitted on the points before t knows about
iteration t:

  rank   Spearman correlation of its predictions for iteration t's 16 points with their returns;
  share  the fraction of the next gradient estimate's energy (the sum of the finite-difference
         estimates of iterations t..t+4) that lies in the k-dimensional subspace the design would
         sample, beside the same for a random k-dimensional subspace (expected k/n).

Designs (each a function of the history before t):
  mlp            the tanh MLP with Adam (width 8, lr 1e-3, 100 minibatch steps of 32 per iteration,
                 warm-started) on raw returns: its hidden units' input gradients (k = 8) and its
                 gradient (k = 1);
  mlp-centred    the same on returns centred per iteration (f's drift over time taken out);
  mlp-wide       width 32, lr 1e-2, centred returns;
  linear         a local linear model of the gradient: ridge regression of the antithetic
                 differences r+ - r- on 2 nu d, the last 10 iterations weighted 0.8^age (k = 1);
  linear-all     the same with every earlier iteration, unweighted;
  sum            the sum of every earlier gradient estimate (k = 1): the linear model's fit when the
                 directions are isotropic, in O(n) memory; sum-0.95 weights them 0.95^age;
  memory         the span of the last k gradient estimates (SGES, ASEBO).

One JSON object per design and log, then a summary per design (means over logs) as the last line.

    .venv/bin/python bench/surrogate_screen.py runs/hopper-101.npz runs/hopper-102.npz
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
AHEAD = 5
START = 20


class MLP:
    """One tanh hidden layer, scalar output, Adam on the squared error."""

    def __init__(self, d: int, width: int, lr: float, rng: np.random.Generator) -> None:
        """Initialize with scaled Gaussian weights."""
        self.w1: Array = rng.standard_normal((width, d)) / np.sqrt(d)
        self.b1: Array = np.zeros(width)
        self.w2: Array = rng.standard_normal(width) / np.sqrt(width)
        self.b2 = 0.0
        self.lr = lr
        self.t = 0
        self.m: list[Array] = [np.zeros_like(p) for p in self.params()]
        self.v: list[Array] = [np.zeros_like(p) for p in self.params()]

    def params(self) -> list[Array]:
        """The parameters, in a fixed order (b2 as a 1-vector copy)."""
        return [self.w1, self.b1, self.w2, np.array([self.b2])]

    def hidden(self, z: Array) -> Array:
        """Hidden activations for inputs z (rows)."""
        return np.tanh(z @ self.w1.T + self.b1)

    def __call__(self, z: Array) -> Array:
        """Predictions for inputs z (rows)."""
        return self.hidden(z) @ self.w2 + self.b2

    def step(self, z: Array, y: Array) -> None:
        """One Adam step on the minibatch (z, y)."""
        h = self.hidden(z)
        e = h @ self.w2 + self.b2 - y
        dh = np.outer(e, self.w2) * (1 - h**2)
        grads = [dh.T @ z / len(y), dh.mean(0), h.T @ e / len(y), np.array([e.mean()])]
        self.t += 1
        ps = self.params()
        for i, g in enumerate(grads):
            self.m[i] = 0.9 * self.m[i] + 0.1 * g
            self.v[i] = 0.999 * self.v[i] + 0.001 * g * g
            mh = self.m[i] / (1 - 0.9**self.t)
            vh = self.v[i] / (1 - 0.999**self.t)
            ps[i] -= self.lr * mh / (np.sqrt(vh) + 1e-8)
        self.b2 = float(ps[3][0])

    def tangent(self, z: Array) -> Array:
        """Hidden units' input gradients at z (one row each), in z's units."""
        h = self.hidden(z[None, :])[0]
        return self.w1 * (1 - h * h)[:, None]

    def gradient(self, z: Array) -> Array:
        """The output's gradient at z, in z's units."""
        return self.w2 @ self.tangent(z)


def spearman(a: Array, b: Array) -> float:
    """Spearman's rank correlation (no tie correction; returns are continuous)."""
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    return float(np.corrcoef(ra, rb)[0, 1])


def share(vectors: Array, g: Array) -> float:
    """Fraction of g's energy in the span of the rows of vectors."""
    q, _ = np.linalg.qr(vectors.T)
    p = q.T @ g
    return float(p @ p / (g @ g))


class Log:
    """One logged run: points, returns, iterations, and per-iteration estimates."""

    def __init__(self, path: Path) -> None:
        """Load the log and compute its gradient estimates."""
        d = np.load(path)
        self.x: Array = d["X"]
        self.r: Array = d["R"]
        self.it: NDArray[np.int64] = d["IT"]
        self.n = self.x.shape[1]
        self.iters = int(self.it.max()) + 1
        self.grad: list[Array] = []
        self.pairs: list[tuple[Array, Array]] = []  # (x+ - x-, r+ - r-) per iteration
        for t in range(self.iters):
            i = np.where(self.it == t)[0]
            dx = self.x[i[0::2]] - self.x[i[1::2]]
            dr = self.r[i[0::2]] - self.r[i[1::2]]
            self.pairs.append((dx, dr))
            self.grad.append((dr[:, None] * dx).sum(0))

    def ahead(self, t: int) -> Array:
        """The sum of the gradient estimates of iterations t..t+AHEAD-1."""
        return np.sum(self.grad[t : t + AHEAD], axis=0)


# A design sees the log and t, and returns (predictions for iteration t's points, its subspace).
Design = Callable[[Log, int], tuple[Array, Array]]


def mlp_design(width: int, lr: float, centred: bool, use_gradient: bool) -> Callable[[], Design]:
    """A fresh, warm-started MLP design per log."""

    def make() -> Design:
        rng = np.random.default_rng(0)
        net: MLP | None = None

        def design(log: Log, t: int) -> tuple[Array, Array]:
            nonlocal net
            tr, te = log.it < t, log.it == t
            if net is None:
                net = MLP(log.n, width, lr, rng)
            mx, sx = log.x[tr].mean(0), log.x[tr].std(0) + 1e-8
            y = log.r[tr].copy()
            if centred:
                for s in range(t):
                    y[log.it[tr] == s] -= y[log.it[tr] == s].mean()
            y = (y - y.mean()) / (y.std() + 1e-8)
            z = (log.x[tr] - mx) / sx
            for _ in range(100):
                idx = rng.integers(0, len(y), 32)
                net.step(z[idx], y[idx])
            i = np.where(te)[0]
            centre = ((log.x[i[0]] + log.x[i[1]]) / 2 - mx) / sx
            sub = net.gradient(centre)[None, :] if use_gradient else net.tangent(centre)
            return net((log.x[te] - mx) / sx), sub / sx[None, :]

        return design

    return make


def linear_design(window: int, decay: float) -> Callable[[], Design]:
    """Ridge regression of the antithetic differences on their perturbations."""

    def make() -> Design:
        def design(log: Log, t: int) -> tuple[Array, Array]:
            lo = 0 if window <= 0 else max(0, t - window)
            rows, ys, ws = [], [], []
            for s in range(lo, t):
                dx, dr = log.pairs[s]
                rows.append(dx)
                ys.append(dr)
                ws.append(np.full(len(dr), decay ** (t - 1 - s)))
            a, y, w = np.concatenate(rows), np.concatenate(ys), np.concatenate(ws)
            scale = float(np.mean(np.sum(a * a, 1)))
            lam = 1e-3 * scale * w.sum()
            g = np.linalg.solve(
                (a * w[:, None]).T @ a + lam * np.eye(log.n), (a * w[:, None]).T @ y
            )
            return log.x[log.it == t] @ g, g[None, :]

        return design

    return make


def sum_design(decay: float) -> Callable[[], Design]:
    """The decayed sum of the past gradient estimates (the ridge fit for isotropic directions)."""

    def make() -> Design:
        def design(log: Log, t: int) -> tuple[Array, Array]:
            g = np.sum([decay ** (t - 1 - s) * log.grad[s] for s in range(t)], axis=0)
            return log.x[log.it == t] @ g, g[None, :]

        return design

    return make


def memory_design(k: int) -> Callable[[], Design]:
    """The span of the last k gradient estimates (no predictions: a linear model of their sum)."""

    def make() -> Design:
        def design(log: Log, t: int) -> tuple[Array, Array]:
            sub = np.array([log.grad[t - j] for j in range(1, k + 1)])
            return log.x[log.it == t] @ sub.sum(0), sub

        return design

    return make


DESIGNS: dict[str, Callable[[], Design]] = {
    "mlp": mlp_design(8, 1e-3, centred=False, use_gradient=False),
    "mlp gradient": mlp_design(8, 1e-3, centred=False, use_gradient=True),
    "mlp-centred": mlp_design(8, 1e-3, centred=True, use_gradient=False),
    "mlp-centred gradient": mlp_design(8, 1e-3, centred=True, use_gradient=True),
    "mlp-wide gradient": mlp_design(32, 1e-2, centred=True, use_gradient=True),
    "linear": linear_design(10, 0.8),
    "linear-all": linear_design(0, 1.0),
    "memory": memory_design(8),
    "sum": sum_design(1.0),
    "sum-0.95": sum_design(0.95),
}


def screen(log: Log, name: str, make: Callable[[], Design]) -> dict[str, float | int | str]:
    """Rank correlation and subspace share of one design on one log."""
    design = make()
    rng = np.random.default_rng(5)
    ranks, shares, randoms = [], [], []
    k = 0
    for t in range(START, log.iters - AHEAD + 1):
        pred, sub = design(log, t)
        ranks.append(spearman(pred, log.r[log.it == t]))
        g = log.ahead(t)
        k = sub.shape[0]
        shares.append(share(sub, g))
        randoms.append(share(rng.standard_normal((k, log.n)), g))
    return {
        "design": name,
        "n": log.n,
        "k": k,
        "iterations": len(ranks),
        "rank": round(float(np.mean(ranks)), 3),
        "share": round(float(np.mean(shares)), 3),
        "random_share": round(float(np.mean(randoms)), 3),
        "ratio": round(float(np.mean(shares) / np.mean(randoms)), 2),
    }


def main() -> None:
    """Screen every design on every log given."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("logs", nargs="+", type=Path)
    ap.add_argument("--designs", default=",".join(DESIGNS), help="comma-separated design names")
    a = ap.parse_args()
    names = [d for d in a.designs.split(",") if d]
    for d in names:
        if d not in DESIGNS:
            ap.error(f"--designs: {d!r} is not one of {', '.join(DESIGNS)}")
    rows = []
    for path in a.logs:
        log = Log(path)
        for d in names:
            row = screen(log, d, DESIGNS[d]) | {"log": path.name}
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = {}
    for d in names:
        rs = [r for r in rows if r["design"] == d]
        summary[d] = {
            key: round(float(np.mean([float(r[key]) for r in rs])), 3)
            for key in ("rank", "share", "random_share", "ratio")
        }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
