"""Load a policy that the trainer wrote and act with it in a plain gymnasium loop.

::

    import gymnasium as gym
    from stpis_bridge import policy

    pi = policy.load("runs/Hopper-v1/stp-combined-guided/seed1")  # run dir or policy.json
    env = gym.make(pi.gymnasium_id)  # Hopper-v1 (the paper's name) is gymnasium's Hopper-v5
    action = pi.act(obs)

``load`` reads the files of a run directory: ``best_policy.json`` and ``policy.json``
(version 2 of the format Go's ``policy.Marshal`` writes, always sealed, naming its run;
version 1, from before seals, is read too: the weights, an optional bias and the running
normalizer's count, mean and M2). ARS's ``lin_policy_plus.npz`` and
``best_lin_policy_plus.npz`` are exports for ARS's own tools: they carry no seal, and
``load`` refuses them.

``Policy.act`` computes the action exactly as the bridge does when ``trainer eval``
replays the file (``rollout.LinearPolicy``):
``clip(W · ((obs − mean) / std) + bias, low, high)``, where a feature whose std is below
``rollout.STD_EPSILON`` contributes 0, and std is the normalizer's as Go's
``Normalizer.Snapshot`` computes it: ``sqrt(M2 / (n − 1))`` for n > 1 observations,
``|mean|`` for n = 1, and 1 before any. The same seed therefore gives the same return
as ``trainer eval``'s episode with that seed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from stpis_bridge import envs
from stpis_bridge.rollout import LinearPolicy, non_finite_what

FILE_VERSION = 2
"""The version of the policy JSON format Go's ``policy.Marshal`` writes (``policy.FileVersion``).

A file of this version is always sealed; version 1 (written before seals) is read too."""
MAX_FILE_BYTES = 64 << 20
"""The largest policy file read (Go's ``policy.maxFileBytes``)."""

BEST_FILE = "best_policy.json"
POLICY_FILE = "policy.json"
RUN_FILE = "run.json"

Vector = npt.NDArray[np.float64]


class PolicyFileError(ValueError):
    """A policy file is missing, malformed, or does not fit its env; the message names it."""


class Bounded(Protocol):
    """What ``load`` needs of an action space: a gymnasium ``Box`` has both."""

    @property
    def low(self) -> npt.ArrayLike:
        """The lower action bounds."""
        ...

    @property
    def high(self) -> npt.ArrayLike:
        """The upper action bounds."""
        ...


def gymnasium_env_id(env_id: str) -> str:
    """Return the gymnasium id that the trainer runs ``env_id`` as.

    The paper's names map to gymnasium's v5 tasks (``Hopper-v1`` -> ``Hopper-v5``), as
    on the bridge; any other id is returned unchanged.
    """
    aliases = {envs.paper_id(t): envs.gymnasium_id(t) for t in envs.PAPER_TASKS}
    return aliases.get(env_id, env_id)


class Policy:
    """A linear policy with its frozen normalizer and action bounds.

    ``weights`` is (actions, observations); ``bias``, ``obs_mean``, ``obs_std``,
    ``action_low`` and ``action_high`` are float64 vectors. ``env_id`` is the id the
    policy was trained on, as its file records it (``None`` when it is not known).
    """

    def __init__(
        self,
        weights: npt.ArrayLike,
        obs_mean: npt.ArrayLike,
        obs_std: npt.ArrayLike,
        action_low: npt.ArrayLike,
        action_high: npt.ArrayLike,
        bias: npt.ArrayLike | None = None,
        env_id: str | None = None,
    ) -> None:
        """Check the shapes and that every entry is finite; raise ``PolicyFileError``."""
        try:
            w = np.array(weights, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise PolicyFileError(f"weights: not numbers: {exc}") from exc
        if w.ndim != 2 or w.size == 0:
            raise PolicyFileError(f"weights must be a non-empty matrix, got shape {w.shape}")
        rows, cols = w.shape
        self.weights: npt.NDArray[np.float64] = w
        self.obs_mean = _vector("obs_mean", obs_mean, cols)
        self.obs_std = _vector("obs_std", obs_std, cols)
        self.action_low = _vector("action_low", action_low, rows)
        self.action_high = _vector("action_high", action_high, rows)
        self.bias = _vector("bias", np.zeros(rows) if bias is None else bias, rows)
        self.env_id = env_id
        if not np.isfinite(w).all():
            raise PolicyFileError(f"weights: {non_finite_what('W', w.ravel())}")
        if (self.obs_std < 0).any():
            raise PolicyFileError("obs_std: a standard deviation is negative")
        if (self.action_low > self.action_high).any():
            raise PolicyFileError("action bounds: a lower bound is above its upper bound")
        for name, v in (("obs_mean", self.obs_mean), ("obs_std", self.obs_std)):
            v.setflags(write=False)
            if not np.isfinite(v).all():
                raise PolicyFileError(f"{name}: {non_finite_what(name, v)}")
        for v in (w, self.bias, self.action_low, self.action_high):
            v.setflags(write=False)
        # The bridge's own folding, so that actions match its bit for bit.
        self._w, self._b = LinearPolicy(w, self.obs_mean, self.obs_std, self.bias).folded()
        self._has_b = bool(self._b.any())

    @property
    def observation_dim(self) -> int:
        """The number of observation features the policy reads."""
        return int(self.weights.shape[1])

    @property
    def action_dim(self) -> int:
        """The number of actions the policy sets."""
        return int(self.weights.shape[0])

    @property
    def gymnasium_id(self) -> str:
        """The gymnasium id to make for this policy (``Hopper-v1`` -> ``Hopper-v5``)."""
        if self.env_id is None:
            raise PolicyFileError("the policy's env id is not known: pass env_id to load")
        return gymnasium_env_id(self.env_id)

    def act(self, obs: npt.ArrayLike) -> Vector:
        """Return the action for one observation, normalized and clipped as the bridge does.

        Raises ``ValueError`` for an observation of the wrong shape, and for a non-finite
        action (which the bridge would not send: MuJoCo silently zeroes a NaN).
        """
        x = np.asarray(obs, dtype=np.float64)
        if x.shape != (self.observation_dim,):
            raise ValueError(
                f"observation shape {x.shape}, the policy reads ({self.observation_dim},)"
            )
        action: Vector = self._w.dot(x)
        if self._has_b:
            action += self._b
        if not np.isfinite(action).all():
            raise ValueError(f"{non_finite_what('action', action)} (W · obs + b)")
        np.maximum(action, self.action_low, out=action)
        np.minimum(action, self.action_high, out=action)
        return action


def load(
    path: str | os.PathLike[str],
    *,
    env_id: str | None = None,
    action_space: Bounded | tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
) -> Policy:
    """Read a policy file, or a run directory's best policy, and return a ``Policy``.

    ``path`` is a ``.json`` policy file, an ``.npz`` in ARS's layout, or a run directory
    (its ``best_policy.json``, else its ``policy.json``, as ``trainer eval`` reads it).
    ``env_id`` is needed only for an npz outside its run directory (the JSON files
    record it; an npz takes it from the ``run.json`` beside it). The action bounds come
    from ``action_space`` (``env.action_space``, or a ``(low, high)`` pair) when given,
    else from the env, made once. Raises ``PolicyFileError`` naming what is wrong.
    """
    file = Path(path)
    if file.is_dir():
        file = file / BEST_FILE if (file / BEST_FILE).is_file() else file / POLICY_FILE
    if not file.is_file():
        raise PolicyFileError(f"{file}: no such policy file")
    if file.suffix.lower() == ".npz":
        raise PolicyFileError(
            f"{file}: an .npz is an export in ARS's layout, for ARS's own tools: it carries "
            "no seal, and load does not read it back; load policy.json or best_policy.json "
            "(or the run directory)"
        )
    weights, bias, mean, std, recorded = _read_json(file)
    if env_id is None:
        env_id = recorded
    elif recorded is not None and gymnasium_env_id(env_id) != gymnasium_env_id(recorded):
        raise PolicyFileError(f"{file}: trained on {recorded}, not on env_id {env_id}")
    low: npt.ArrayLike
    high: npt.ArrayLike
    if action_space is None:
        if env_id is None:
            raise PolicyFileError(
                f"{file}: no env id recorded beside it: pass env_id or action_space to load"
            )
        low, high = _env_bounds(env_id)
    elif isinstance(action_space, tuple):
        low, high = action_space
    else:
        low, high = action_space.low, action_space.high
    try:
        return Policy(weights, mean, std, low, high, bias=bias, env_id=env_id)
    except PolicyFileError as exc:
        raise PolicyFileError(f"{file}: {exc}") from exc


def normalizer_std(count: int, mean: Vector, m2: Vector) -> Vector:
    """Return the std of a running normalizer as Go's ``Normalizer.Snapshot`` does.

    The variance is ``M2 / (n − 1)`` for n > 1, ``mean²`` for n = 1 (ARS's convention)
    and 1 for n = 0.
    """
    if count > 1:
        var = m2 / float(count - 1)
    elif count == 1:
        var = mean * mean
    else:
        var = np.ones_like(mean)
    out: Vector = np.sqrt(var)
    return out


def _vector(name: str, values: npt.ArrayLike, n: int) -> Vector:
    try:
        v = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise PolicyFileError(f"{name}: not numbers: {exc}") from exc
    if v.shape != (n,):
        raise PolicyFileError(f"{name} has shape {v.shape}, want ({n},)")
    return v


_SEAL_KEY = b'"sha256":'


def seal_matches(raw: bytes) -> bool:
    """Check the checksum Go's ``policy.Marshal`` puts in a file (package seal).

    The last ``"sha256"`` field holds the hex SHA-256 of the file with that value
    empty; a file without one (written before it) is not checked.
    """
    i = raw.rfind(_SEAL_KEY)
    if i < 0:
        return True
    j = i + len(_SEAL_KEY)
    while j < len(raw) and raw[j : j + 1] in (b" ", b"\t", b"\n", b"\r"):
        j += 1
    if raw[j : j + 1] != b'"':
        return True
    end = raw.find(b'"', j + 1)
    if end < 0 or end == j + 1:
        return True
    digest = hashlib.sha256(raw[: j + 1] + raw[end:]).hexdigest().encode()
    return raw[j + 1 : end] == digest


def _read_json(file: Path) -> tuple[Vector, Vector | None, Vector, Vector, str | None]:
    """Return (W, bias, mean, std, env id) of a policy JSON file, validated as Go's Load."""
    try:
        with file.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise PolicyFileError(f"{file}: over the limit of {MAX_FILE_BYTES >> 20} MiB")
        doc = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PolicyFileError(f"{file}: not a policy JSON file: {exc}") from exc
    if not isinstance(doc, dict):
        raise PolicyFileError(f"{file}: not a policy JSON file: the top level is not an object")
    if not seal_matches(raw):
        raise PolicyFileError(f"{file}: sha256: the checksum does not match: edited or damaged")
    version = doc.get("version")
    if version not in (1, FILE_VERSION) or isinstance(version, bool):
        raise PolicyFileError(
            f"{file}: file version {envs.clip(version)}, this module reads 1 and {FILE_VERSION}"
        )
    if version == 1 and doc.get("run_id"):
        raise PolicyFileError(
            f"{file}: version: 1, but the file names run {envs.clip(doc.get('run_id'))} "
            "(version 1 names none): the version was changed"
        )
    if version == FILE_VERSION and not doc.get("sha256"):
        raise PolicyFileError(
            f"{file}: sha256: missing or empty, but a file of version {FILE_VERSION} is always "
            "sealed: the file was edited"
        )
    _check_run(file, doc)
    pol, norm = doc.get("policy"), doc.get("normalizer")
    if not isinstance(pol, dict) or not isinstance(norm, dict):
        raise PolicyFileError(f"{file}: missing policy or normalizer")
    rows, cols = (
        _count(file, "policy.rows", pol.get("rows")),
        _count(file, "policy.cols", pol.get("cols")),
    )
    if rows == 0 or cols == 0:
        raise PolicyFileError(f"{file}: shape must be positive, got rows={rows} cols={cols}")
    w = _floats(file, "policy.w", pol.get("w"))
    if len(w) != rows * cols:
        raise PolicyFileError(f"{file}: W has {len(w)} entries, want {rows * cols} ({rows}x{cols})")
    bias = _floats(file, "policy.bias", pol.get("bias", []))
    if len(bias) not in (0, rows):
        raise PolicyFileError(f"{file}: bias has {len(bias)} entries, want 0 or {rows}")
    count = _count(file, "normalizer.count", norm.get("count", 0))
    mean = _floats(file, "normalizer.mean", norm.get("mean"))
    m2 = _floats(file, "normalizer.m2", norm.get("m2"))
    if len(mean) != cols or len(m2) != cols:
        raise PolicyFileError(
            f"{file}: normalizer has {len(mean)} means and {len(m2)} m2, policy {cols} columns"
        )
    env_id = doc.get("env_id")
    if env_id is not None and not isinstance(env_id, str):
        raise PolicyFileError(f"{file}: env_id {envs.clip(env_id)} is not a string")
    return (
        w.reshape(rows, cols),
        bias if len(bias) else None,
        mean,
        normalizer_std(count, mean, m2),
        env_id or None,
    )


def _count(file: Path, field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PolicyFileError(f"{file}: {field} {envs.clip(value)} is not a count")
    return value


def _floats(file: Path, field: str, value: object) -> Vector:
    ok = isinstance(value, list) and all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in value
    )
    if not ok:
        raise PolicyFileError(f"{file}: {field} is not a list of numbers")
    assert isinstance(value, list)
    out = np.empty(len(value), dtype=np.float64)
    for i, x in enumerate(value):
        try:
            out[i] = float(x)
        except OverflowError:
            out[i] = math.inf
        if not math.isfinite(out[i]):
            raise PolicyFileError(f"{file}: {field}[{i}] is {envs.clip(x)}")
    return out


def _check_run(file: Path, doc: dict[str, Any]) -> None:
    """Refuse a policy file beside a run.json of another run (Go's ``ofRun``)."""
    run_file = file.parent / RUN_FILE
    if not run_file.is_file():
        return
    try:
        with run_file.open("rb") as f:
            run = json.loads(f.read(1 << 20).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PolicyFileError(f"{run_file}: not a run.json: {exc}") from exc
    if not isinstance(run, dict):
        raise PolicyFileError(f"{run_file}: not a run.json")
    run_id, seed = run.get("run_id", ""), run.get("seed", 0)
    versioned = bool(run.get("version"))
    if doc.get("run_id", "") != run_id or (versioned and doc.get("seed", 0) != seed):
        raise PolicyFileError(
            f"{file}: run_id: run {envs.clip(doc.get('run_id', ''))}, seed "
            f"{envs.clip(doc.get('seed', 0))}, but {run_file} is run {envs.clip(run_id)}, seed "
            f"{envs.clip(seed)}: a policy of another run"
        )


def _env_bounds(env_id: str) -> tuple[Vector, Vector]:
    """Make the env once and return its action bounds."""
    resolved = gymnasium_env_id(env_id)
    # A user's module:EnvId is made here as gymnasium.make makes it, importing the
    # module: this is the user's own process, not a bridge serving clients.
    module, sep, _ = resolved.partition(":")
    try:
        env = envs.make_env(envs.resolve(resolved, (module,) if sep else ()), {})
    except (envs.UnknownEnvError, envs.BadKwargsError) as exc:
        raise PolicyFileError(
            f"action bounds of {env_id}: {exc}; pass action_space to load"
        ) from exc
    try:
        return envs.action_bounds(env)
    finally:
        env.close()
