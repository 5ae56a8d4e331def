"""One episode under a linear policy: a pure function of (env, policy, seed, horizon).

The action is ``clip(W · ((obs − mean) / std) + bias, low, high)`` where a feature
whose std is below ``STD_EPSILON`` contributes 0. The scaling is folded into ``W``
once per episode so that a step costs one matrix-vector product, one add and a clip.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Protocol

import numpy as np

STD_EPSILON = 1e-7
INITIAL_OBS_ROWS = 1024


class StepEnv(Protocol):
    """The part of the gymnasium Env API an episode uses."""

    def reset(self, *, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the env and return the first observation."""
        ...

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """Step the env."""
        ...


@dataclasses.dataclass(frozen=True)
class LinearPolicy:
    """A linear policy: ``weights`` is (rows, cols); the rest are float64 vectors."""

    weights: np.ndarray
    obs_mean: np.ndarray
    obs_std: np.ndarray
    bias: np.ndarray | None = None

    def folded(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (W', b') with ``W' obs + b' == W ((obs − mean) / std) + bias``.

        Columns with std below ``STD_EPSILON`` are zero in ``W'`` and do not enter ``b'``.
        """
        w = np.asarray(self.weights, dtype=np.float64)
        std = np.asarray(self.obs_std, dtype=np.float64)
        mean = np.asarray(self.obs_mean, dtype=np.float64)
        keep = std >= STD_EPSILON
        inv_std = np.zeros_like(std)
        np.divide(1.0, std, out=inv_std, where=keep)
        w_scaled = np.ascontiguousarray(w * inv_std[np.newaxis, :])
        mean_kept = np.where(keep, mean, 0.0)
        b = -(w_scaled @ mean_kept)
        if self.bias is not None and len(self.bias) > 0:
            b = b + np.asarray(self.bias, dtype=np.float64)
        return w_scaled, np.ascontiguousarray(b)


@dataclasses.dataclass
class EpisodeOutcome:
    """The result of one episode; ``obs_*`` are statistics of the observations acted on."""

    total_return: float
    shifted_return: float
    length: int
    terminated: bool
    truncated: bool
    obs_count: int
    obs_mean: np.ndarray
    obs_m2: np.ndarray
    non_finite: bool = False
    non_finite_detail: str = ""


def reward_detail(r: float, step: int) -> str:
    """Say that the reward of ``step`` was not finite."""
    return f"reward {r!r} at step {step}".replace("nan", "NaN").replace("inf", "Inf")


def shifted_detail(shifted: float, total: float, shift: float, length: int) -> str:
    """Say that the shifted return overflowed."""
    return f"shifted return {shifted} (return {total:g} - shift {shift:g} x {length} steps)"


def obs_stats(acted: np.ndarray, obs_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the mean and sum of squared deviations of the observations acted on.

    Finite observations can still give non-finite statistics (features near 1e200
    overflow when squared): ``outcome_detail`` flags them, so numpy's warning is
    not needed.
    """
    if len(acted) == 0:
        return np.zeros(obs_dim, dtype=np.float64), np.zeros(obs_dim, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        mean = acted.mean(axis=0)
        return mean, ((acted - mean) ** 2).sum(axis=0)


def outcome_detail(
    total: float, shifted: float, shift: float, length: int, mean: np.ndarray, m2: np.ndarray
) -> str:
    """Say which number an episode would return is not finite, or "" when all are.

    Every number of an ``EpisodeResult`` is checked: the return, the shifted return
    and the observation statistics. Each can overflow from finite rewards and
    observations (an env made with a huge ``reset_noise_scale``, say), and a caller
    trusts them exactly when ``non_finite`` is false.
    """
    # The shifted return first: its message names the return too.
    if not math.isfinite(shifted):
        return shifted_detail(shifted, total, shift, length)
    if not math.isfinite(total):
        return f"total return {_kind(total)} (the sum of {length} finite rewards overflowed)"
    if not np.isfinite(mean).all():
        return (
            f"{non_finite_what('obs_stats.mean', mean)}: the mean of {length} finite "
            "observations overflowed"
        )
    if not np.isfinite(m2).all():
        return (
            f"{non_finite_what('obs_stats.m2', m2)}: the squared deviations of {length} "
            f"finite observations overflowed (feature means up to {_largest(mean):.3g})"
        )
    return ""


def _kind(v: float) -> str:
    return "NaN" if math.isnan(v) else ("+Inf" if v > 0 else "-Inf")


def _largest(mean: np.ndarray) -> float:
    finite = np.abs(mean[np.isfinite(mean)])
    return float(finite.max()) if finite.size else math.nan


def non_finite_what(name: str, obs: np.ndarray) -> str:
    """Describe the first non-finite feature of ``obs``: ``observation[3] NaN (and 2 more)``."""
    bad = np.flatnonzero(~np.isfinite(obs))
    i = int(bad[0])
    more = f" (and {len(bad) - 1} more features)" if len(bad) > 1 else ""
    return f"{name}[{i}] {_kind(float(obs[i]))}{more}"


def _finite(obs: np.ndarray) -> bool:
    # A dot product is one BLAS call; it is finite iff every feature is finite,
    # except when finite features overflow, so fall back to the exact test then.
    if math.isfinite(obs @ obs):
        return True
    return bool(np.isfinite(obs).all())


def run_episode(
    env: StepEnv,
    policy: LinearPolicy,
    *,
    seed: int,
    horizon: int,
    shift: float,
    action_low: np.ndarray,
    action_high: np.ndarray,
) -> EpisodeOutcome:
    """Run one episode of at most ``horizon`` steps and return its outcome.

    The episode stops at ``horizon`` steps (reported as truncated), when the env
    terminates or truncates, or at the first non-finite action (``W · obs + b``,
    before clipping: MuJoCo would silently zero a NaN), reward or observation: then
    ``non_finite`` is set, the non-finite action is not sent, the non-finite reward
    is not added, and the non-finite observation is not recorded. A return, shifted
    return (``shift`` times ``length`` too large) or observation statistic that
    overflows is flagged too (``outcome_detail``).
    """
    w, b = policy.folded()
    low = np.asarray(action_low, dtype=np.float64)
    high = np.asarray(action_high, dtype=np.float64)
    obs_dim = w.shape[1]
    rows = max(1, min(horizon, INITIAL_OBS_ROWS))
    recorded = np.empty((rows, obs_dim), dtype=np.float64)

    total = 0.0
    length = 0
    terminated = False
    truncated = False
    detail = ""

    obs_raw, _ = env.reset(seed=seed)
    obs = np.asarray(obs_raw, dtype=np.float64)
    if obs.shape != (obs_dim,):
        raise ValueError(f"observation shape {obs.shape} does not match policy cols {obs_dim}")
    if not _finite(obs):
        detail = f"{non_finite_what('observation', obs)} at reset"

    has_b = bool(b.any())
    step = env.step
    matvec = w.dot
    maximum = np.maximum
    minimum = np.minimum
    isfinite = math.isfinite
    while not detail and length < horizon:
        if length == recorded.shape[0]:
            grown = np.empty((min(2 * length, horizon), obs_dim), dtype=np.float64)
            grown[:length] = recorded
            recorded = grown
        recorded[length] = obs
        action = matvec(obs)
        if has_b:
            action += b
        if not _finite(action):
            detail = f"{non_finite_what('action', action)} at step {length} (W · obs + b)"
            break
        maximum(action, low, out=action)
        minimum(action, high, out=action)
        obs_raw, reward, terminated, truncated, _ = step(action)
        length += 1
        if isinstance(reward, str | bytes):
            # float() would read "1.0": an env that returns text is broken.
            raise TypeError(
                f"the env's step returned the reward {reward!r:.60} (a {type(reward).__name__}) "
                f"at step {length - 1}: want a number"
            )
        r = float(reward)
        if not isfinite(r):
            detail = reward_detail(r, length - 1)
            break
        total += r
        obs = np.asarray(obs_raw, dtype=np.float64)
        if not _finite(obs):
            detail = f"{non_finite_what('observation', obs)} after step {length - 1}"
            break
        if terminated or truncated:
            break
    else:
        if not detail and length >= horizon and not terminated:
            truncated = True
    shifted = total - shift * length
    terminated = bool(terminated)
    truncated = bool(truncated)
    mean, m2 = obs_stats(recorded[:length], obs_dim)
    if not detail:
        detail = outcome_detail(total, shifted, shift, length, mean, m2)
    return EpisodeOutcome(
        total_return=total,
        shifted_return=shifted,
        length=length,
        terminated=terminated,
        truncated=truncated,
        obs_count=length,
        obs_mean=mean,
        obs_m2=m2,
        non_finite=bool(detail),
        non_finite_detail=detail,
    )
