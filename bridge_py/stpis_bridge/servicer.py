"""The gRPC servicer: validates requests, maps them to pool tasks, and sets status codes.

The env logic lives in ``envs``, ``rollout`` and ``pool``; this module only
translates between protobuf messages and those, and reports every bad request
with a precise status and a message naming the field and the episode index.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import NoReturn

import grpc
import numpy as np

from envbridge.v1 import envbridge_pb2, envbridge_pb2_grpc
from stpis_bridge import backends, envs, fast
from stpis_bridge.pool import (
    BatchCancelledError,
    EnvFaultError,
    EpisodeBudgetError,
    PoolClosedError,
    PoolError,
    TaskFailedError,
    WorkerCrashedError,
    WorkerPool,
)
from stpis_bridge.rollout import STD_EPSILON, EpisodeOutcome, LinearPolicy
from stpis_bridge.worker import EpisodeTask

_LOG = logging.getLogger(__name__)

SERVICE_NAME = envbridge_pb2.DESCRIPTOR.services_by_name["EnvBridgeService"].full_name

DEFAULT_MAX_EPISODES_PER_CALL = 4096
DEFAULT_MAX_HORIZON = 10_000
DEFAULT_MAX_WEIGHTS = 1_000_000
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# MuJoCo steps per episode (horizon x frame_skip): 10,000 steps at frame_skip 20.
DEFAULT_MAX_SIM_STEPS = 200_000
# |shift| above this is no alive bonus (the paper's are 1 and 5): shift x length
# would swamp the return, or overflow it.
DEFAULT_MAX_ABS_SHIFT = 1e6
# Steps (episodes x horizon) one client may have in flight at once: about 20,000
# 1000-step episodes, far above a trainer's 4 calls a replica, far below the
# 64 x 4096 x 10,000 a client could otherwise queue.
DEFAULT_MAX_STEPS_IN_FLIGHT = 20_000_000
# Env descriptions kept, least recently used dropped first.
DESCRIPTION_CACHE_SIZE = 256
# Error replies are cut to this many characters (log lines too).
_MAX_MESSAGE_CHARS = 4096


# Describe reports the limits as protobuf integers; uint32 bounds them all.
_MAX_LIMIT = 2**32 - 1


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-call limits; each is named after the CLI flag that sets it."""

    max_episodes_per_call: int = DEFAULT_MAX_EPISODES_PER_CALL
    max_horizon: int = DEFAULT_MAX_HORIZON
    max_weights: int = DEFAULT_MAX_WEIGHTS
    max_sim_steps: int = DEFAULT_MAX_SIM_STEPS
    max_abs_shift: float = DEFAULT_MAX_ABS_SHIFT
    max_steps_in_flight: int = DEFAULT_MAX_STEPS_IN_FLIGHT

    def validate(self) -> None:
        """Raise ValueError when a limit is not positive."""
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            flag = "--" + field.name.replace("_", "-")
            if field.type == "float":
                if not isinstance(value, int | float) or not 0 < value < float("inf"):
                    raise ValueError(f"{flag} must be a positive finite number, got {value!r}")
            elif not isinstance(value, int) or not 1 <= value <= _MAX_LIMIT:
                raise ValueError(f"{flag} must be an integer in [1, {_MAX_LIMIT}], got {value!r}")


class _Invalid(Exception):
    """A request problem: the status code and the message to return."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _kwargs(
    field: str, kwargs: Mapping[str, envbridge_pb2.KwargValue]
) -> dict[str, envs.KwargValue]:
    out: dict[str, envs.KwargValue] = {}
    for name in sorted(kwargs):
        value = kwargs[name]
        kind = value.WhichOneof("kind")
        if kind is None:
            raise _Invalid(
                grpc.StatusCode.INVALID_ARGUMENT, f"{field}[{envs.clip(name)}]: no value is set"
            )
        out[name] = getattr(value, kind)
    return out


def _vector(field: str, values: object, expected: int, shape: str) -> np.ndarray:
    arr = np.asarray(list(values), dtype=np.float64)  # type: ignore[call-overload]
    if arr.shape[0] != expected:
        raise _Invalid(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{field}: expected {expected} entries ({shape}), got {arr.shape[0]}",
        )
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise _Invalid(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{field}[{int(bad[0])}]: {float(arr[bad[0]])!r} is not finite "
            f"({bad.size} non-finite entries)",
        )
    return arr


class EnvBridgeServicer(envbridge_pb2_grpc.EnvBridgeServiceServicer):
    """Implements envbridge.v1.EnvBridgeService on a ``WorkerPool``."""

    def __init__(
        self,
        pool: WorkerPool,
        limits: Limits,
        backend: str = fast.BACKEND_AUTO,
        env_modules: Sequence[str] = (),
    ) -> None:
        limits.validate()
        # The modules whose envs clients may name as module:EnvId (--env-module).
        self._env_modules = tuple(env_modules)
        if backend not in fast.BACKENDS:
            raise ValueError(f"--backend must be one of {', '.join(fast.BACKENDS)}: {backend!r}")
        self._backend = backend
        self._pool = pool
        self._limits = limits
        self._limits_pb = envbridge_pb2.BridgeLimits(
            max_episodes_per_call=limits.max_episodes_per_call,
            max_horizon=limits.max_horizon,
            max_weights=limits.max_weights,
            max_sim_steps=limits.max_sim_steps,
            max_abs_shift=limits.max_abs_shift,
            obs_std_floor=STD_EPSILON,
        )
        self._descriptions: collections.OrderedDict[tuple[str, object], envs.EnvDescription] = (
            collections.OrderedDict()
        )
        self._lock = threading.Lock()
        # Steps in flight by client (client_key: its certificate, else its host).
        self._in_flight: dict[str, int] = {}

    # Env descriptions are made once per (id, kwargs) in the server process and cached.

    def _describe(
        self, field: str, env_id: str, kwargs: dict[str, envs.KwargValue]
    ) -> envs.EnvDescription:
        key = (env_id, envs.kwargs_key(kwargs))
        with self._lock:
            hit = self._descriptions.get(key)
            if hit is not None:
                self._descriptions.move_to_end(key)
        if hit is not None:
            return hit
        try:
            desc = envs.describe_env(env_id, kwargs, self._env_modules)
        except envs.UnknownEnvError as exc:
            raise _Invalid(grpc.StatusCode.NOT_FOUND, f"{field}env_id: {exc}") from exc
        except envs.BadKwargsError as exc:
            raise _Invalid(grpc.StatusCode.INVALID_ARGUMENT, f"{field}{exc}") from exc
        except envs.MissingDependencyError as exc:
            raise _Invalid(grpc.StatusCode.FAILED_PRECONDITION, f"{field}env_id: {exc}") from exc
        with self._lock:
            self._descriptions[key] = desc
            # Bounded: a client could send endless distinct kwargs.
            while len(self._descriptions) > DESCRIPTION_CACHE_SIZE:
                self._descriptions.popitem(last=False)
        return desc

    def Describe(  # noqa: N802  (gRPC method name)
        self, request: envbridge_pb2.DescribeRequest, context: grpc.ServicerContext
    ) -> envbridge_pb2.DescribeResponse:
        """Resolve an env id and report its spaces and limits."""
        try:
            kwargs = _kwargs("kwargs", request.kwargs)
            d = self._describe("", request.env_id, kwargs)
            backend = fast.choose_backend(self._backend, d.resolved_id, kwargs)
        except _Invalid as exc:
            _abort(context, exc)
        except fast.BadBackendError as exc:
            _abort(context, _Invalid(grpc.StatusCode.INVALID_ARGUMENT, str(exc)))
        resp = envbridge_pb2.DescribeResponse(
            requested_id=d.requested_id,
            resolved_id=d.resolved_id,
            resolution_reason=d.resolution_reason,
            observation_dim=d.observation_dim,
            action_dim=d.action_dim,
            action_low=d.action_low,
            action_high=d.action_high,
            max_episode_steps=d.max_episode_steps,
            frame_skip=d.frame_skip,
            gymnasium_version=d.gymnasium_version,
            mujoco_version=d.mujoco_version,
            dt=d.dt,
            backend=backend,
            limits=self._limits_pb,
        )
        return resp

    def ListEnvs(  # noqa: N802  (gRPC method name)
        self, request: envbridge_pb2.ListEnvsRequest, context: grpc.ServicerContext
    ) -> envbridge_pb2.ListEnvsResponse:
        """List the env ids this server can make, with the paper aliases."""
        return envbridge_pb2.ListEnvsResponse(
            env_ids=envs.known_env_ids(), aliases=envs.paper_aliases()
        )

    def _task(self, i: int, spec: envbridge_pb2.EpisodeSpec) -> EpisodeTask:
        field = f"episodes[{i}]"
        kwargs = _kwargs(f"{field}.kwargs", spec.kwargs)
        d = self._describe(f"{field}.", spec.env_id, kwargs)
        lim = self._limits

        horizon = spec.horizon or d.max_episode_steps or lim.max_horizon
        what = "horizon" if spec.horizon else "horizon (0: the env's max_episode_steps)"
        if horizon > lim.max_horizon:
            raise _Invalid(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{field}.{what}: {horizon} exceeds the limit --max-horizon={lim.max_horizon}",
            )
        sim_steps = horizon * max(d.frame_skip, 1)
        if sim_steps > lim.max_sim_steps:
            raise _Invalid(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{field}.{what} x kwargs['frame_skip']: {horizon} x {d.frame_skip} = "
                f"{sim_steps} MuJoCo steps exceed the limit --max-sim-steps={lim.max_sim_steps}",
            )
        if not np.isfinite(spec.shift):
            raise _Invalid(
                grpc.StatusCode.INVALID_ARGUMENT, f"{field}.shift: {spec.shift!r} is not finite"
            )
        if abs(spec.shift) > lim.max_abs_shift:
            raise _Invalid(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{field}.shift: {spec.shift:g} exceeds the limit --max-abs-shift="
                f"{lim.max_abs_shift:g} in magnitude",
            )

        p = spec.policy
        pf = f"{field}.policy"
        n_weights = len(p.weights)
        if n_weights > lim.max_weights or p.rows * p.cols > lim.max_weights:
            n = max(n_weights, p.rows * p.cols)
            raise _Invalid(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{pf}.weights: {n} entries exceed the limit --max-weights={lim.max_weights}",
            )
        rows, cols = d.action_dim, d.observation_dim
        if p.rows != rows:
            raise _Invalid(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{pf}.rows: expected {rows} (the action dim of {d.resolved_id}), got {p.rows}",
            )
        if p.cols != cols:
            raise _Invalid(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{pf}.cols: expected {cols} (the observation dim of {d.resolved_id}), "
                f"got {p.cols}",
            )
        shape = f"{rows}x{cols}"
        weights = _vector(f"{pf}.weights", p.weights, rows * cols, shape).reshape(rows, cols)
        mean = _vector(f"{pf}.obs_mean", p.obs_mean, cols, f"observation dim {cols}")
        std = _vector(f"{pf}.obs_std", p.obs_std, cols, f"observation dim {cols}")
        negative = np.flatnonzero(std < 0)
        if negative.size:
            j = int(negative[0])
            raise _Invalid(
                grpc.StatusCode.INVALID_ARGUMENT, f"{pf}.obs_std[{j}]: negative ({float(std[j])!r})"
            )
        bias = None
        if len(p.bias):
            bias = _vector(f"{pf}.bias", p.bias, rows, f"empty or action dim {rows}")
        return EpisodeTask(
            env_id=d.resolved_id,
            kwargs=tuple(sorted(kwargs.items())),
            policy=LinearPolicy(weights=weights, obs_mean=mean, obs_std=std, bias=bias),
            seed=int(spec.seed),
            horizon=int(horizon),
            shift=float(spec.shift),
        )

    def Rollout(  # noqa: N802  (gRPC method name)
        self, request: envbridge_pb2.RolloutRequest, context: grpc.ServicerContext
    ) -> envbridge_pb2.RolloutResponse:
        """Run a batch of episodes; results in request order, or the call fails."""
        n = len(request.episodes)
        limit = self._limits.max_episodes_per_call
        try:
            if n > limit:
                raise _Invalid(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"episodes: {n} episodes exceed the limit --max-episodes-per-call={limit}",
                )
            tasks = [self._task(i, spec) for i, spec in enumerate(request.episodes)]
            plan = backends.plan(tasks, self._backend, self._pool.size)
        except _Invalid as exc:
            _abort(context, exc)
        except backends.BackendError as exc:
            msg = f"episodes[{exc.index}].env_id: {exc}"
            _abort(context, _Invalid(grpc.StatusCode.INVALID_ARGUMENT, msg))
        if not tasks:
            return envbridge_pb2.RolloutResponse()

        peer, steps = client_key(context), sum(t.horizon for t in tasks)
        limit = self._limits.max_steps_in_flight
        with self._lock:
            held = self._in_flight.get(peer, 0)
            admitted = held + steps <= limit
            if admitted:
                self._in_flight[peer] = held + steps
        if not admitted:
            msg = (
                f"episodes: {steps} steps (episodes x horizon) on top of the {held} this client "
                f"has in flight exceed the limit --max-steps-in-flight={limit}; wait for them"
            )
            _abort(context, _Invalid(grpc.StatusCode.RESOURCE_EXHAUSTED, msg))
        try:
            return self._run(context, plan, n)
        finally:
            with self._lock:
                left = self._in_flight[peer] - steps
                if left:
                    self._in_flight[peer] = left
                else:
                    del self._in_flight[peer]

    def _run(
        self, context: grpc.ServicerContext, plan: backends.Plan, n: int
    ) -> envbridge_pb2.RolloutResponse:
        """Run an admitted Rollout's planned episodes on the pool."""
        start = time.monotonic()
        _LOG.debug("Rollout: %d episodes started", n)
        try:
            handle = self._pool.submit(plan.tasks, tag=context.peer(), names=plan.names())
        except EnvFaultError as exc:
            # The env crashed or hung workers before: refused at once, no retry helps.
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, _cut(str(exc)))
        except PoolError as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        # A client that gives up (deadline, cancel) frees the workers from its queued tasks.
        if not context.add_callback(handle.cancel):
            handle.cancel()
        try:
            results = handle.wait()
        except EnvFaultError as exc:
            # Its env crashed or hung a worker the same way twice: the env's fault, and
            # the same on every replica, so the client must not retry it.
            _LOG.warning("Rollout of %d episodes failed: %s", n, exc)
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, _cut(str(exc)))
        except WorkerCrashedError as exc:
            _LOG.warning("Rollout of %d episodes failed: %s", n, exc)
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except (PoolClosedError, BatchCancelledError) as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except EpisodeBudgetError as exc:
            _LOG.warning("Rollout of %d episodes failed: %s", n, exc)
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except TaskFailedError as exc:
            _LOG.error("Rollout of %d episodes failed: %s", n, exc)
            context.abort(grpc.StatusCode.INTERNAL, _cut(str(exc)))
        except PoolError as exc:
            # The pool is restarting workers or broken (then the server exits and
            # its supervisor restarts it): another replica, or a retry, can serve.
            _LOG.error("Rollout of %d episodes failed: %s", n, exc)
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        try:
            outcomes = plan.unpack(results)
        except RuntimeError as exc:
            _LOG.error("Rollout of %d episodes: %s", n, exc)
            context.abort(grpc.StatusCode.INTERNAL, f"the bridge lost track of an outcome: {exc}")
        _LOG.debug("Rollout: %d episodes done in %.3fs", n, time.monotonic() - start)
        return envbridge_pb2.RolloutResponse(results=[_result(o) for o in outcomes])


def client_key(context: grpc.ServicerContext) -> str:
    """Return the client that ``--max-steps-in-flight`` counts a call against.

    Under mutual TLS, the identity of its certificate; else its host: the peer address
    less the port, so that the channels one process opens (each a connection, each
    with its own port) share one quota. A Unix socket's peers are one client.
    """
    ids = context.peer_identities()
    if ids:
        return "cert:" + ",".join(i.decode("utf-8", "replace") for i in ids)
    peer = context.peer()  # ipv4:127.0.0.1:5000, ipv6:[::1]:5000, unix:...
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6") and ":" in rest:
        return f"{kind}:{rest.rpartition(':')[0]}"
    return peer


def _result(o: EpisodeOutcome) -> envbridge_pb2.EpisodeResult:
    return envbridge_pb2.EpisodeResult(
        total_return=o.total_return,
        shifted_return=o.shifted_return,
        length=o.length,
        terminated=o.terminated,
        truncated=o.truncated,
        obs_stats=envbridge_pb2.ObsStats(
            count=o.obs_count, mean=o.obs_mean.tolist(), m2=o.obs_m2.tolist()
        ),
        non_finite=o.non_finite,
        non_finite_detail=o.non_finite_detail,
    )


def _cut(message: str) -> str:
    if len(message) <= _MAX_MESSAGE_CHARS:
        return message
    return f"{message[:_MAX_MESSAGE_CHARS]}... ({len(message)} characters)"


def _abort(context: grpc.ServicerContext, exc: _Invalid) -> NoReturn:
    message = _cut(exc.message)
    _LOG.info("rejected request: %s: %s", exc.code.name, message)
    context.abort(exc.code, message)
    raise AssertionError("unreachable")  # context.abort raises
