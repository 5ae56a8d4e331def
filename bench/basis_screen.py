"""Screen learned bases for importance sampling offline: does any basis give columns that differ?

STP_IS writes x = B y and samples B's column i with probability p_i. In a random orthogonal basis
every column sees about the same curvature, so p stays uniform and the importance sampling does
nothing (issue 50). Here each design, from the history of a logged ARS V2-t run before iteration
t, gives an orthonormal basis B (n columns) and probabilities p over its columns, and is scored
on the next gradient estimate ĝ (the sum of the finite-difference estimates of iterations
t..t+4, unit norm), for every t >= 20. With e_i = (b_iᵀ ĝ)² (the energies sum to 1):

  entropy   H(p) / ln n: 1 for uniform p; the issue's target is below 0.95;
  pshare    n Σ_i p_i e_i, the p-weighted energy relative to uniform p (1 = chance; at most n);
  pwin      the fraction of iterations where pshare > 1;
  top8      Σ e_i over the 8 columns of largest p, beside chance 8/n (top8_ratio);
  top1      n e_i of the column of largest p (1 = chance);
  bottom8_ratio  the same share as top8_ratio for the 8 columns of smallest p;
  pshare_perp, top8_perp_ratio  pshare and top8_ratio in the complement of the sum of every
            earlier estimate (the direction the default's `guide: gradient-sum` already takes),
            with the design's sampling restricted there (`beside_guide`): what the basis knows
            besides the guide (1 = chance).

Designs (each a function of the history before t; ε = 0.01 unless named):
  random            a random orthogonal B (Haar), uniform p: today's default, the control (drawn
                    afresh at each t, so that its means are chance: with one B per run, as the
                    trainer has, the top columns' share is one draw, 0.31 against chance's 0.5 on
                    swimmer-101 with this seed);
  guide             for reference, not a basis that learns: the sum of every earlier estimate
                    (the default's `guide: gradient-sum`) as column 1, a random orthonormal
                    complement, uniform p (pshare 1 by construction; top1 is the guide's share);
  random-energy     a random orthogonal B fixed per log, p ∝ its columns' decayed energy
                    Σ 0.9^age (b_iᵀ g_s)² (+ ε of the mean): importance sampling without
                    learning the basis;
  random-mlp        the fixed B, p ∝ the local curvature |b_iᵀ ∇²f̂ b_i| of the screen's tanh MLP
                    (width 8, 100 Adam steps per iteration): the appendix's `local` L_i;
  pca-γ-sqrt/-L     ASEBO: B = eigenvectors of Σ γ^age g_s g_sᵀ + ε tr/n I over the past
                    gradient estimates g_s, p ∝ sqrt(eigenvalue) (IS-sqrt) or eigenvalue (IS-L);
  pca-unit-0.9-...  the same with each g_s normalized to unit length first (iterations whose
                    returns differ more do not dominate);
  pca-smooth5-...   the same on the sums of 5 consecutive estimates g_{s-4} + ... + g_s (their
                    noise averages out; the target is such a sum);
  cma-sqrt/-L       CMA-ES's covariance, from C = I, adapted from the run's own steps: rank-one
                    update with the evolution path of the steps (x_{s+1} - x_s)/ν, rank-μ update
                    with the best 8 of the iteration's 16 points (±d, log weights); CMA's default
                    learning rates c_c, c_1, c_μ for dimension n; B its eigenvectors, p from its
                    eigenvalues (sqrt: the sampling standard deviations; L: the variances);
  cma-x10-sqrt/-L   the same with c_1 and c_μ ten times CMA's defaults;
  quad-sqrt/-L      a local quadratic model: antithetic differences cancel the Hessian, so it is
                    fitted to the pair sums r₊ + r₋ = 2 f(x_s) + ν² dᵀ H d + noise, centred within
                    each iteration (the logs have no centre evaluation, so f(x_s) is unknown and
                    only the spread of the sums within an iteration carries H), over the last 20
                    iterations, by kernel ridge regression on vec(d dᵀ) (kernel (d_iᵀ d_j)²,
                    ridge 0.1 of the kernel's mean diagonal); B = H's eigenvectors,
                    p ∝ |eigenvalue| (+ ε of the mean) or its square root.

Logs are npz files as `../shared/analysis/surrogate_info.py log` writes them (8 antithetic pairs
per iteration, ν = 0.025); the task is the file name up to its first '-'. One JSON object per
design and log, then one summary object per design and task (means over that task's logs).

    .venv/bin/python bench/basis_screen.py /tmp/basis/*.npz \
        -o results/archive/basis-screen/screen.jsonl
    .venv/bin/python bench/basis_screen.py --curvature /tmp/basis/*.npz  # where quad's H curves
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from surrogate_screen import AHEAD, MLP, START, Array, Log

NU = 0.025  # the logs' perturbation scale: x± = x ± ν d
TOP = 8
EPS = 0.01

# A design sees the log and t (called for t = START, START + 1, ... in order) and returns
# (B, p): an orthonormal n×n basis (columns) and probabilities over its columns.
Design = Callable[[Log, int], tuple[Array, Array]]


def haar(n: int, rng: np.random.Generator) -> Array:
    """A Haar-random orthogonal matrix (QR of a Gaussian one, signs fixed)."""
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))[None, :]


def weights(values: Array, power: float) -> Array:
    """Probabilities ∝ (|values| + ε of their mean)^power."""
    v = np.abs(values)
    v = v + EPS * max(float(v.mean()), 1e-300)
    w = v**power
    return w / w.sum()


def centre(log: Log, t: int) -> Array:
    """The point iteration t perturbed (the mean of its first antithetic pair)."""
    i = np.where(log.it == t)[0]
    return (log.x[i[0]] + log.x[i[1]]) / 2


def decayed_cov(log: Log, t: int, gamma: float, unit: bool = False) -> Array:
    """Σ_{s<t} γ^(t-1-s) g_s g_sᵀ over the past gradient estimates (unit: each g_s normalized)."""
    g = np.array(log.grad[:t])
    if unit:
        g = g / (np.linalg.norm(g, axis=1, keepdims=True) + 1e-300)
    w = gamma ** np.arange(t - 1, -1, -1, dtype=float)
    return (g * w[:, None]).T @ g


def eig_design(cov: Array, power: float) -> tuple[Array, Array]:
    """B = the eigenvectors of cov (descending), p ∝ eigenvalue^power after the ridge."""
    n = cov.shape[0]
    cov = cov + EPS * np.trace(cov) / n * np.eye(n)
    lam, vec = np.linalg.eigh(cov)
    order = np.argsort(-lam)
    return vec[:, order], weights(lam[order], power)


def random_design() -> Design:
    """A random orthogonal basis, uniform p (a fresh basis each t, so that the means are chance)."""
    rng = np.random.default_rng(7)

    def design(log: Log, t: int) -> tuple[Array, Array]:
        return haar(log.n, rng), np.full(log.n, 1 / log.n)

    return design


def guide_design() -> Design:
    """The default's guide for reference: u (the sum of every earlier estimate) as the first
    column, a random orthonormal complement, uniform p (its top1 is the guide's share)."""
    rng = np.random.default_rng(7)

    def design(log: Log, t: int) -> tuple[Array, Array]:
        u = np.sum(log.grad[:t], axis=0)
        m = np.column_stack([u, rng.standard_normal((log.n, log.n - 1))])
        q, r = np.linalg.qr(m)
        return q * np.sign(np.diag(r))[None, :], np.full(log.n, 1 / log.n)

    return design


def random_energy_design(gamma: float, power: float) -> Design:
    """A random orthogonal basis, p from its columns' decayed share of the past estimates."""
    basis: list[Array] = []

    def design(log: Log, t: int) -> tuple[Array, Array]:
        if not basis:
            basis.append(haar(log.n, np.random.default_rng(7)))
        b = basis[0]
        energy = np.einsum("ij,ik,kj->j", b, decayed_cov(log, t, gamma), b)
        return b, weights(energy, power)

    return design


def random_mlp_design(power: float) -> Design:
    """A random orthogonal basis, p from a tanh MLP's local curvature along each column."""
    basis: list[Array] = []
    rng = np.random.default_rng(0)
    nets: list[MLP] = []

    def design(log: Log, t: int) -> tuple[Array, Array]:
        if not basis:
            basis.append(haar(log.n, np.random.default_rng(7)))
            nets.append(MLP(log.n, 8, 1e-3, rng))
        b, net = basis[0], nets[0]
        tr = log.it < t
        mx, sx = log.x[tr].mean(0), log.x[tr].std(0) + 1e-8
        y = log.r[tr]
        y = (y - y.mean()) / (y.std() + 1e-8)
        z = (log.x[tr] - mx) / sx
        for _ in range(100):
            idx = rng.integers(0, len(y), 32)
            net.step(z[idx], y[idx])
        h = net.hidden(((centre(log, t) - mx) / sx)[None, :])[0]
        # f̂ = w2 · tanh(W1 z + b1), z = (x - mx)/sx; along b:
        # d²f̂ = Σ_h w2_h tanh''(a_h) (W1 b/sx)_h²
        a = net.w1 @ (b / sx[:, None])
        curv = (net.w2 * (-2 * h * (1 - h * h))) @ (a * a)
        return b, weights(curv, power)

    return design


def pca_design(gamma: float, power: float, unit: bool = False) -> Design:
    """ASEBO: the eigenvectors of the decayed covariance of the past gradient estimates."""

    def design(log: Log, t: int) -> tuple[Array, Array]:
        return eig_design(decayed_cov(log, t, gamma, unit), power)

    return design


def pca_smooth_design(width: int, gamma: float, power: float) -> Design:
    """PCA of running sums of `width` consecutive estimates (their noise averages out)."""

    def design(log: Log, t: int) -> tuple[Array, Array]:
        g = np.array(log.grad[:t])
        c = np.cumsum(np.vstack([np.zeros(log.n), g]), axis=0)
        h = np.array([c[s + 1] - c[max(0, s + 1 - width)] for s in range(t)])
        w = gamma ** np.arange(t - 1, -1, -1, dtype=float)
        return eig_design((h * w[:, None]).T @ h, power)

    return design


def cma_design(scale: float, power: float) -> Design:
    """CMA-ES's covariance adapted from the run's steps and best directions."""
    state: dict[str, Array] = {}
    done = [0]

    def update(log: Log, s: int) -> None:
        n = log.n
        mu = TOP
        w = np.log(mu + 0.5) - np.log(np.arange(1, mu + 1))
        w /= w.sum()
        mueff = 1 / float(w @ w)
        cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)
        c1 = scale * 2 / ((n + 1.3) ** 2 + mueff)
        cmu = scale * 2 * (mueff - 2 + 1 / mueff) / ((n + 2) ** 2 + mueff)
        c1, cmu = min(c1, 0.5), min(cmu, 0.5 - min(c1, 0.5))
        i = np.where(log.it == s)[0]
        c = centre(log, s)
        y = (log.x[i] - c) / NU  # ±d
        best = np.argsort(-log.r[i])[:mu]
        yb = y[best]
        step = (centre(log, s + 1) - c) / NU
        pc = (1 - cc) * state["pc"] + np.sqrt(cc * (2 - cc) * mueff) * step
        state["pc"] = pc
        state["C"] = (
            (1 - c1 - cmu) * state["C"] + c1 * np.outer(pc, pc) + cmu * (yb * w[:, None]).T @ yb
        )

    def design(log: Log, t: int) -> tuple[Array, Array]:
        if not state:
            state["C"], state["pc"] = np.eye(log.n), np.zeros(log.n)
        while done[0] < t:  # iterations 0..t-1 and the steps to x_1..x_t
            update(log, done[0])
            done[0] += 1
        lam, vec = np.linalg.eigh(state["C"])
        order = np.argsort(-lam)
        return vec[:, order], weights(lam[order], power)

    return design


def fit_hessian(log: Log, t: int, window: int) -> Array:
    """A Hessian fitted to the pair sums of the last `window` iterations before t.

    r₊ + r₋ = 2 f(x_s) + ν² dᵀ H d + noise; centred within each iteration, f(x_s) drops out.
    Kernel ridge regression on vec(d dᵀ) (kernel (d_iᵀ d_j)², block-centred, ridge 0.1 of its
    mean diagonal) gives H = Σ_j β_j d_j d_jᵀ.
    """
    ds, ys, blocks = [], [], []
    for s in range(max(0, t - window), t):
        i = np.where(log.it == s)[0]
        d = (log.x[i[0::2]] - log.x[i[1::2]]) / (2 * NU)
        total = (log.r[i[0::2]] + log.r[i[1::2]]) / NU**2
        ds.append(d)
        ys.append(total - total.mean())
        blocks.append(len(total))
    d, y = np.concatenate(ds), np.concatenate(ys)
    m = len(y)
    p = np.zeros((m, m))  # block-centring projector
    o = 0
    for k in blocks:
        p[o : o + k, o : o + k] = np.eye(k) - 1 / k
        o += k
    kc = p @ ((d @ d.T) ** 2) @ p
    lam = 0.1 * float(np.mean(np.diag(kc)))
    beta = p @ np.linalg.solve(kc + lam * np.eye(m), y)
    return (d * beta[:, None]).T @ d


def quad_design(window: int, power: float) -> Design:
    """Eigenvectors of a Hessian fitted to the pair sums, centred within each iteration."""

    def design(log: Log, t: int) -> tuple[Array, Array]:
        ev, vec = np.linalg.eigh(fit_hessian(log, t, window))
        order = np.argsort(-np.abs(ev))
        return vec[:, order], weights(ev[order], power)

    return design


def curvature(log: Log, window: int = 20) -> dict[str, float]:
    """Where the fitted Hessian curves, against the next gradient (medians over t).

    negative_top   the fraction of t where H's eigenvalue of largest magnitude is negative;
    negative_trace the fraction of t where tr H < 0 (a random direction's curvature is tr H / n);
    along_g        ĝᵀ H ĝ / |tr H / n|: the curvature along the next gradient in units of the
                   mean curvature's magnitude (negative: returns concave along the gradient).
    """
    neg, neg_trace, along = [], [], []
    for t in range(START, log.iters - AHEAD + 1):
        h = fit_hessian(log, t, window)
        ev = np.linalg.eigvalsh(h)
        neg.append(float(ev[np.argmax(np.abs(ev))] < 0))
        neg_trace.append(float(ev.sum() < 0))
        g = log.ahead(t)
        g = g / np.linalg.norm(g)
        along.append(float(g @ h @ g) / abs(float(np.trace(h)) / log.n))
    return {
        "negative_top": round(float(np.mean(neg)), 3),
        "negative_trace": round(float(np.mean(neg_trace)), 3),
        "along_g": round(float(np.median(along)), 2),
    }


DESIGNS: dict[str, Callable[[], Design]] = {
    "random": random_design,
    "guide": guide_design,
    "random-energy-sqrt": lambda: random_energy_design(0.9, 0.5),
    "random-energy-L": lambda: random_energy_design(0.9, 1.0),
    "random-mlp-L": lambda: random_mlp_design(1.0),
    "pca-0.9-sqrt": lambda: pca_design(0.9, 0.5),
    "pca-0.9-L": lambda: pca_design(0.9, 1.0),
    "pca-0.99-sqrt": lambda: pca_design(0.99, 0.5),
    "pca-0.99-L": lambda: pca_design(0.99, 1.0),
    "pca-unit-0.9-sqrt": lambda: pca_design(0.9, 0.5, unit=True),
    "pca-unit-0.9-L": lambda: pca_design(0.9, 1.0, unit=True),
    "pca-smooth5-0.9-sqrt": lambda: pca_smooth_design(5, 0.9, 0.5),
    "pca-smooth5-0.9-L": lambda: pca_smooth_design(5, 0.9, 1.0),
    "cma-sqrt": lambda: cma_design(1.0, 0.5),
    "cma-L": lambda: cma_design(1.0, 1.0),
    "cma-x10-sqrt": lambda: cma_design(10.0, 0.5),
    "cma-x10-L": lambda: cma_design(10.0, 1.0),
    "quad-sqrt": lambda: quad_design(20, 0.5),
    "quad-L": lambda: quad_design(20, 1.0),
}

KEYS = (
    "entropy",
    "pshare",
    "pwin",
    "top8",
    "top8_chance",
    "top8_ratio",
    "top1",
    "bottom8_ratio",
    "pshare_perp",
    "top8_perp_ratio",
)


def beside_guide(b: Array, p: Array, log: Log, t: int, g: Array) -> tuple[float, float]:
    """What the design knows besides the guide's direction u (the sum of every earlier estimate).

    The design's sampling covariance B diag(p) Bᵀ is restricted to the complement of u,
    M = P B diag(p) Bᵀ P with P = I - u uᵀ, and scored on ĝ⊥ = P ĝ (unit): the p-weighted share
    (n - 1) ĝ⊥ᵀ M ĝ⊥ / tr M (1 = chance) and the share of ĝ⊥ in M's top 8 eigenvectors against
    chance 8/(n - 1) (for uniform p, in the projection of B's first 8 columns).
    """
    n = len(p)
    u = np.sum(log.grad[:t], axis=0)
    u /= np.linalg.norm(u)
    proj = np.eye(n) - np.outer(u, u)
    gp = proj @ g
    gp /= np.linalg.norm(gp)
    m = proj @ (b * p[None, :]) @ b.T @ proj
    if float(np.ptp(p)) < 1e-12:
        pb = proj @ b
        top, _ = np.linalg.qr(pb[:, np.linalg.norm(pb, axis=0) > 1e-6][:, :TOP])
    else:
        lam, vec = np.linalg.eigh(m)
        keep = np.argsort(np.abs(vec.T @ u))[:-1]  # drop u's own eigenvector
        top = vec[:, keep[np.argsort(-lam[keep])][:TOP]]
    c = top.T @ gp
    return (n - 1) * float(gp @ m @ gp) / float(np.trace(m)), float(c @ c) / (TOP / (n - 1))


def screen(log: Log, name: str, make: Callable[[], Design]) -> dict[str, float | int | str]:
    """Entropy and next-gradient shares of one design on one log (means over t)."""
    design = make()
    n = log.n
    rows: dict[str, list[float]] = {k: [] for k in KEYS}
    for t in range(START, log.iters - AHEAD + 1):
        b, p = design(log, t)
        g = log.ahead(t)
        e = (b.T @ g) ** 2 / float(g @ g)
        order = np.argsort(-p, kind="stable")
        nz = p[p > 0]
        ps = n * float(p @ e)
        top8 = float(e[order[:TOP]].sum())
        rows["entropy"].append(float(-(nz * np.log(nz)).sum() / np.log(n)))
        rows["pshare"].append(ps)
        rows["pwin"].append(float(ps > 1 + 1e-9))
        rows["top8"].append(top8)
        rows["top8_chance"].append(TOP / n)
        rows["top8_ratio"].append(top8 / (TOP / n))
        rows["top1"].append(n * float(e[order[0]]))
        rows["bottom8_ratio"].append(float(e[order[-TOP:]].sum()) / (TOP / n))
        ps_perp, top8_perp = beside_guide(b, p, log, t, g)
        rows["pshare_perp"].append(ps_perp)
        rows["top8_perp_ratio"].append(top8_perp)
    return {"design": name, "n": n, "iterations": len(rows["entropy"])} | {
        k: round(float(np.mean(v)), 3) for k, v in rows.items()
    }


def main() -> None:
    """Screen every design on every log given."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("logs", nargs="+", type=Path)
    ap.add_argument("--designs", default=",".join(DESIGNS), help="comma-separated design names")
    ap.add_argument("-o", "--out", type=Path, help="also write the JSON lines here")
    ap.add_argument(
        "--curvature",
        action="store_true",
        help="instead, print where quad's fitted Hessian curves on each log (`curvature`)",
    )
    a = ap.parse_args()
    if a.curvature:
        for path in a.logs:
            print(json.dumps({"log": path.name} | curvature(Log(path))), flush=True)
        return
    names = [d for d in a.designs.split(",") if d]
    for d in names:
        if d not in DESIGNS:
            ap.error(f"--designs: {d!r} is not one of {', '.join(DESIGNS)}")
    rows: list[dict[str, float | int | str]] = []
    out = a.out.open("w") if a.out else None

    def emit(row: dict[str, float | int | str]) -> None:
        line = json.dumps(row)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    for path in a.logs:
        log = Log(path)
        for d in names:
            row = {"log": path.name, "task": path.name.split("-")[0]} | screen(log, d, DESIGNS[d])
            rows.append(row)
            emit(row)
    tasks = list(dict.fromkeys(str(r["task"]) for r in rows))
    for d in names:
        for task in tasks:
            rs = [r for r in rows if r["design"] == d and r["task"] == task]
            emit(
                {"summary": True, "design": d, "task": task, "logs": len(rs)}
                | {k: round(float(np.mean([float(r[k]) for r in rs])), 3) for k in KEYS}
            )
    if out:
        out.close()


if __name__ == "__main__":
    main()
