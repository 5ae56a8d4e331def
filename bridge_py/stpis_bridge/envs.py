"""Env id resolution, paper aliases, descriptions, and ``gym.make``.

The paper (gym 0.9 / mujoco-py) used ``*-v1`` ids that no current gymnasium can
make; they resolve to the ``*-v5`` environments of the installed gymnasium. This
module knows nothing about gRPC.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import inspect
import math
from collections.abc import Collection, Mapping
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from stpis_bridge import paper_tasks

KwargValue = bool | int | float | str
Kwargs = Mapping[str, KwargValue]

_MUJOCO_ENTRY_PREFIX = "gymnasium.envs.mujoco"

# The paper's control tasks (paper_tasks.py, generated from the Go package tasks'
# table by `go generate ./tasks`; internal/archtest holds it current): the paper
# aliases and the fast backend's tasks derive from it.
PAPER_TASKS = paper_tasks.PAPER_TASKS


def paper_id(task: str) -> str:
    """Return the paper's env id of a task: ``Hopper`` -> ``Hopper-v1``."""
    return f"{task}-{paper_tasks.PAPER_VERSION}"


def gymnasium_id(task: str) -> str:
    """Return the gymnasium id a paper task runs as: ``Hopper`` -> ``Hopper-v5``."""
    return f"{task}-{paper_tasks.GYMNASIUM_VERSION}"


# Paper name -> the gymnasium id that is made.
_PAPER_ALIASES: dict[str, str] = {paper_id(t): gymnasium_id(t) for t in PAPER_TASKS}

# What differs between the paper's v1 task and gymnasium's v5, worth telling a user;
# one entry per task of PAPER_TASKS (a test holds them equal).
_V1_DIFFERENCES: dict[str, str] = {
    "Swimmer": "same 8-dim observation and 2-dim action as v1; reward is forward velocity "
    "minus 1e-4 x control cost as in v1",
    "Hopper": "same 11-dim observation and 3-dim action as v1; v5 pays the healthy reward only "
    "while healthy (v1-v4 paid it every step)",
    "HalfCheetah": "same 17-dim observation and 6-dim action as v1",
    "Ant": "v1 observed 111 dims (27 positions/velocities + 84 contact forces, worldbody "
    "included); v5 observes 105 (the worldbody's 6 always-zero contact forces are excluded; "
    "include_cfrc_ext_in_observation=False gives 27); v5 always includes the contact cost "
    "and pays the healthy reward only while healthy",
    "Humanoid": "v1 observed 376 dims; v5 observes 348 (the worldbody's cinert/cvel/cfrc_ext "
    "and the root joint's qfrc_actuator, always zero, are excluded); v5 restores the contact "
    "cost and pays the healthy reward only while healthy",
    "Walker2d": "same 17-dim observation and 6-dim action as v1; v5 gives both feet friction "
    "1.9 (v1-v4: left 1.9, right 0.9) and pays the healthy reward only while healthy",
}

# gym.make parameters a client may not set through kwargs.
_RESERVED_KWARGS = frozenset(
    {"disable_env_checker", "render_mode", "apply_api_compatibility", "id", "autoreset"}
)
# Constructor parameters a client may not set either, though their defaults are
# plain values: files and bodies of the server (a path would let a client probe
# the server's file system), and rendering.
_SERVER_SIDE_KWARGS = frozenset(
    {"xml_file", "main_body", "width", "height", "camera_id", "camera_name", "max_geom"}
)
# Integer-valued kwargs, with their bounds. Every other numeric kwarg is a finite
# float (an int is accepted for it). frame_skip scales the MuJoCo steps of an
# episode; the servicer also bounds horizon x frame_skip (--max-sim-steps).
_INT_KWARGS: dict[str, tuple[int, int]] = {
    "frame_skip": (1, 1000),
    "max_episode_steps": (1, 1_000_000),
}
# gym.make's own kwargs that a client may set, with their default's type.
_MAKE_KWARGS: dict[str, type] = {"max_episode_steps": int}
# Echoed user values (ids, kwarg names, strings) are cut to this many characters.
ECHO_LIMIT = 200

GYMNASIUM_VERSION: str = gym.__version__
MUJOCO_VERSION: str = mujoco.__version__


def clip(value: object, limit: int = ECHO_LIMIT) -> str:
    """Return ``repr(value)`` cut to about ``limit`` characters, saying how long it was.

    Use it for every user value echoed into an error reply or a log line.
    """
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value)} characters)"
    text = repr(value)
    if len(text) > limit:
        return f"{text[:limit]}... ({len(text)} characters)"
    return text


class UnknownEnvError(LookupError):
    """The env id is neither an id gymnasium has registered nor a paper alias.

    The message names the nearest known ids, not all of them (the ListEnvs call, and
    `trainer envs --bridge ADDR`, list them).
    """

    def __init__(self, env_id: str, known: list[str], why: str = "") -> None:
        near = difflib.get_close_matches(env_id, known, n=3, cutoff=0.75)
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        super().__init__(
            f"unknown env id {clip(env_id)}{why}{hint} "
            f"({len(known)} MuJoCo ids and paper names are known; trainer envs --bridge lists them)"
        )
        self.env_id = env_id
        self.known = known


def _module_allowed(module: str, env_modules: Collection[str]) -> bool:
    return any(module == m or module.startswith(m + ".") for m in env_modules)


def _resolve_module_id(env_id: str, env_modules: Collection[str]) -> str:
    """Import the module of ``module:EnvId`` if allowed; return ``env_id`` if it registered it.

    A module is allowed when it, or a package above it, is in ``env_modules``: the
    bridge's operator lists them at start-up (--env-module), since importing a module
    a client names would run that module's code on the server.
    """
    module, _, name = env_id.partition(":")
    known = known_env_ids()
    if not module or not name:
        raise UnknownEnvError(env_id, known, ": want module:EnvId")
    top = module.split(".")[0]
    if not _module_allowed(module, env_modules):
        raise UnknownEnvError(
            env_id,
            known,
            f": this bridge does not import {clip(module)}; its operator allows it by "
            f"starting it with --env-module {top} (a local bridge the trainer starts does so)",
        )
    try:
        importlib.import_module(module)
    except Exception as exc:  # an import error of the user's module, whatever it is
        raise UnknownEnvError(
            env_id,
            known,
            f": importing {clip(module)} failed: {type(exc).__name__}: {clip(str(exc))}",
        ) from exc
    if name not in gym.registry:
        raise UnknownEnvError(env_id, known, f": {clip(module)} registers no env {clip(name)}")
    return env_id


def gymnasium_spec_id(resolved_id: str) -> str:
    """Return the registry id of a resolved id: ``mypkg.envs:PointMass-v0`` -> ``PointMass-v0``."""
    return resolved_id.rpartition(":")[2]


class BadKwargsError(ValueError):
    """``gym.make`` rejected the kwargs; the message names the kwarg."""


class MissingDependencyError(RuntimeError):
    """A registered env needs a package the bridge's Python lacks (jax, shimmy, Box2D)."""


@dataclasses.dataclass(frozen=True)
class EnvDescription:
    """What a client needs to know about an env before sending policies."""

    requested_id: str
    resolved_id: str
    resolution_reason: str
    observation_dim: int
    action_dim: int
    action_low: tuple[float, ...]
    action_high: tuple[float, ...]
    max_episode_steps: int
    frame_skip: int
    dt: float
    gymnasium_version: str
    mujoco_version: str


def mujoco_env_ids() -> list[str]:
    """Return the ids registered in gymnasium whose entry point is a MuJoCo env, sorted."""
    ids = []
    for env_id, spec in gym.registry.items():
        entry = spec.entry_point
        if isinstance(entry, str) and entry.startswith(_MUJOCO_ENTRY_PREFIX):
            ids.append(env_id)
    return sorted(ids)


def paper_aliases() -> dict[str, str]:
    """Return the paper aliases whose target gymnasium can make: alias -> gymnasium id."""
    known = set(mujoco_env_ids())
    return {alias: target for alias, target in _PAPER_ALIASES.items() if target in known}


def known_env_ids() -> list[str]:
    """Return every id the server accepts (MuJoCo ids and aliases), sorted."""
    return sorted(set(mujoco_env_ids()) | set(paper_aliases()))


def resolve(env_id: str, env_modules: Collection[str] = ()) -> str:
    """Return the gymnasium id to make for ``env_id``, or raise ``UnknownEnvError``.

    A paper alias resolves to its v5 id; any other id gymnasium has registered (MuJoCo or
    not) is made as given, as is ``module:EnvId`` where ``module`` is in ``env_modules``
    or below one of them. Describing the env checks that its spaces are ``Box``.
    """
    aliases = paper_aliases()
    if env_id in aliases:
        return aliases[env_id]
    if ":" in env_id:
        return _resolve_module_id(env_id, env_modules)
    if env_id in gym.registry:
        return env_id
    raise UnknownEnvError(env_id, known_env_ids())


def _family(env_id: str) -> str:
    return env_id.rsplit("-v", 1)[0]


def kwargs_key(kwargs: Kwargs) -> tuple[tuple[str, tuple[str, KwargValue]], ...]:
    """Return a hashable, order-independent cache key for kwargs.

    The type is part of the key so that ``1``, ``1.0`` and ``True`` stay distinct.
    """
    return tuple(sorted((k, (type(v).__name__, v)) for k, v in kwargs.items()))


@functools.cache
def allowed_kwargs(resolved_id: str) -> dict[str, type]:
    """Return the kwargs a client may set for ``resolved_id``: name -> bool, int or float.

    They are the env constructor's parameters whose default is a bool or a number,
    less the server-side ones (files, rendering), plus gym.make's ``max_episode_steps``.
    """
    out = dict(_MAKE_KWARGS)
    module, sep, _ = resolved_id.rpartition(":")
    if sep:
        # A worker process meets a module:EnvId the server resolved (and allowed):
        # importing the module registers the id.
        importlib.import_module(module)
    entry = gym.spec(gymnasium_spec_id(resolved_id)).entry_point
    creator: Any = entry
    if isinstance(entry, str):
        creator = gym.envs.registration.load_env_creator(entry)
    try:
        params = inspect.signature(creator).parameters.values()
    except (TypeError, ValueError):
        return out
    for p in params:
        default = p.default
        if p.name in _SERVER_SIDE_KWARGS or p.name in _RESERVED_KWARGS:
            continue
        if isinstance(default, bool):
            out[p.name] = bool
        elif isinstance(default, int) and p.name in _INT_KWARGS:
            out[p.name] = int
        elif isinstance(default, int | float):
            out[p.name] = float
    return out


def check_kwargs(resolved_id: str, kwargs: Kwargs) -> None:
    """Raise ``BadKwargsError`` naming the first kwarg that is not allowed, typed or bounded.

    Every kwarg must be on the env's allow-list (``allowed_kwargs``) with a value of
    its type: bools are bools, ints are ints within their bounds, floats are finite.
    """
    allowed = allowed_kwargs(resolved_id)
    for name in sorted(kwargs):
        value = kwargs[name]
        field = f"kwargs[{clip(name)}]"
        if name in _RESERVED_KWARGS or name in _SERVER_SIDE_KWARGS:
            raise BadKwargsError(f"{field}: reserved, the bridge sets it itself")
        want = allowed.get(name)
        if want is None:
            names = ", ".join(sorted(allowed))
            raise BadKwargsError(
                f"{field}: not a kwarg the bridge accepts for {resolved_id}; accepted: {names}"
            )
        got = type(value).__name__
        if want is bool:
            if not isinstance(value, bool):
                raise BadKwargsError(f"{field}: must be a bool, got {got} {clip(value)}")
        elif want is int:
            lo, hi = _INT_KWARGS[name]
            if isinstance(value, bool) or not isinstance(value, int):
                raise BadKwargsError(f"{field}: must be an integer, got {got} {clip(value)}")
            if not lo <= value <= hi:
                raise BadKwargsError(f"{field}: must be in [{lo}, {hi}], got {value}")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise BadKwargsError(f"{field}: must be a number, got {got} {clip(value)}")
        elif not math.isfinite(value):
            raise BadKwargsError(f"{field}: must be finite, got {float(value)}")


def make_env(resolved_id: str, kwargs: Kwargs) -> gym.Env[Any, Any]:
    """Make ``resolved_id`` with ``kwargs``; the env checker is off, the wrappers stay.

    Raises ``BadKwargsError`` naming the kwarg when the allow-list or gymnasium rejects it,
    ``MissingDependencyError`` when the env needs a package that is not installed.
    """
    try:
        # Reading the env's kwargs loads its entry point, which may import a package
        # that is missing, as making it may.
        check_kwargs(resolved_id, kwargs)
        extra: dict[str, Any] = {
            name: float(v) if allowed_kwargs(resolved_id)[name] is float else v
            for name, v in kwargs.items()
        }
        return gym.make(resolved_id, disable_env_checker=True, **extra)
    except BadKwargsError:
        raise  # check_kwargs's, naming the kwarg
    except ImportError as exc:
        # gymnasium's phys2d/ and tabular/ envs need jax, GymV26Environment shimmy.
        raise MissingDependencyError(
            f"{clip(resolved_id)} needs a package this bridge's Python does not have: "
            f"{type(exc).__name__}: {clip(str(exc), 4 * ECHO_LIMIT)}"
        ) from exc
    except (TypeError, ValueError, AssertionError, KeyError, OSError, gym.error.Error) as exc:
        # gym.error.Error: a registered env whose dependencies are not installed
        # (Box2D, say), among others.
        names = ", ".join(sorted(kwargs)) or "(none)"
        raise BadKwargsError(
            f"kwargs: {resolved_id} could not be made with kwargs {names}: "
            f"{type(exc).__name__}: {clip(str(exc), 4 * ECHO_LIMIT)}"
        ) from exc


def action_bounds(env: gym.Env[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Return the action bounds as float64 arrays; a space that is not a flat Box is refused.

    Raises ``BadKwargsError`` (the env, not its kwargs, is at fault: the message says so).
    """
    space = env.action_space
    if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
        name = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
        raise BadKwargsError(
            f"{name}: action space {space} is not a flat Box; a linear policy needs "
            "continuous actions"
        )
    return space.low.astype(np.float64), space.high.astype(np.float64)


def _reason(requested_id: str, resolved_id: str, obs_dim: int, act_dim: int, steps: int) -> str:
    if requested_id == resolved_id:
        return ""
    diff = _V1_DIFFERENCES.get(_family(resolved_id), "")
    return (
        f"{requested_id} is the paper's name (gym 0.9 / mujoco-py, which current gymnasium "
        f"cannot make); gymnasium {GYMNASIUM_VERSION} provides {resolved_id} on mujoco "
        f"{MUJOCO_VERSION}, so {requested_id} runs as {resolved_id}: observation {obs_dim}-dim, "
        f"action {act_dim}-dim, {steps} steps per episode. "
        f"Differences from v1: {diff}."
    )


def _try_kwargs(env: gym.Env[Any, Any], resolved_id: str, kwargs: Kwargs, action: Any) -> None:
    """Reset ``env`` and take one step: refuse kwargs it was made with but cannot run with.

    A value on the allow-list and finite can still be out of reach of the simulation
    (``reset_noise_scale=1e308`` overflows the reset's noise): raise ``BadKwargsError``
    naming the kwargs now, not in a worker halfway through a run.
    """
    names = ", ".join(f"{clip(k)}={clip(v)}" for k, v in sorted(kwargs.items()))
    try:
        first, _ = env.reset(seed=0)
        obs, reward, *_ = env.step(action)
    except Exception as exc:  # gymnasium and MuJoCo raise many kinds on such values
        raise BadKwargsError(
            f"kwargs: {resolved_id} was made with kwargs {names} but cannot run with them: "
            f"{type(exc).__name__}: {clip(str(exc))}"
        ) from exc
    if not (np.isfinite(first).all() and np.isfinite(obs).all() and math.isfinite(float(reward))):
        raise BadKwargsError(
            f"kwargs: {resolved_id} with kwargs {names} gives a non-finite observation or "
            "reward on its first reset and step"
        )


def describe_env(
    requested_id: str, kwargs: Kwargs, env_modules: Collection[str] = ()
) -> EnvDescription:
    """Resolve and make the env once, and describe it.

    ``env_modules`` are the modules whose envs may be named as ``module:EnvId``.
    Raises ``UnknownEnvError`` or ``BadKwargsError``.
    """
    resolved_id = resolve(requested_id, env_modules)
    env = make_env(resolved_id, kwargs)
    try:
        obs_space = env.observation_space
        if not isinstance(obs_space, gym.spaces.Box) or len(obs_space.shape) != 1:
            raise BadKwargsError(
                f"{resolved_id}: observation space {obs_space} is not a flat Box; "
                "a linear policy cannot act on it"
            )
        low, high = action_bounds(env)
        if kwargs:
            _try_kwargs(env, resolved_id, kwargs, np.clip(np.zeros_like(low), low, high))
        obs_dim = int(obs_space.shape[0])
        act_dim = int(low.shape[0])
        steps = env.spec.max_episode_steps if env.spec is not None else None
        unwrapped: Any = env.unwrapped
        return EnvDescription(
            requested_id=requested_id,
            resolved_id=resolved_id,
            resolution_reason=_reason(requested_id, resolved_id, obs_dim, act_dim, steps or 0),
            observation_dim=obs_dim,
            action_dim=act_dim,
            action_low=tuple(float(x) for x in low),
            action_high=tuple(float(x) for x in high),
            max_episode_steps=int(steps or 0),
            frame_skip=int(getattr(unwrapped, "frame_skip", 0)),
            dt=float(getattr(unwrapped, "dt", 0.0)),
            gymnasium_version=GYMNASIUM_VERSION,
            mujoco_version=MUJOCO_VERSION,
        )
    finally:
        env.close()
