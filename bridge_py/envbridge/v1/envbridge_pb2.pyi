from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KwargValue(_message.Message):
    __slots__ = ("bool_value", "int_value", "double_value", "string_value")
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    bool_value: bool
    int_value: int
    double_value: float
    string_value: str
    def __init__(self, bool_value: _Optional[bool] = ..., int_value: _Optional[int] = ..., double_value: _Optional[float] = ..., string_value: _Optional[str] = ...) -> None: ...

class DescribeRequest(_message.Message):
    __slots__ = ("env_id", "kwargs")
    class KwargsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: KwargValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[KwargValue, _Mapping]] = ...) -> None: ...
    ENV_ID_FIELD_NUMBER: _ClassVar[int]
    KWARGS_FIELD_NUMBER: _ClassVar[int]
    env_id: str
    kwargs: _containers.MessageMap[str, KwargValue]
    def __init__(self, env_id: _Optional[str] = ..., kwargs: _Optional[_Mapping[str, KwargValue]] = ...) -> None: ...

class DescribeResponse(_message.Message):
    __slots__ = ("requested_id", "resolved_id", "resolution_reason", "observation_dim", "action_dim", "action_low", "action_high", "max_episode_steps", "frame_skip", "gymnasium_version", "mujoco_version", "dt", "backend", "limits")
    REQUESTED_ID_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_ID_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_REASON_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_DIM_FIELD_NUMBER: _ClassVar[int]
    ACTION_DIM_FIELD_NUMBER: _ClassVar[int]
    ACTION_LOW_FIELD_NUMBER: _ClassVar[int]
    ACTION_HIGH_FIELD_NUMBER: _ClassVar[int]
    MAX_EPISODE_STEPS_FIELD_NUMBER: _ClassVar[int]
    FRAME_SKIP_FIELD_NUMBER: _ClassVar[int]
    GYMNASIUM_VERSION_FIELD_NUMBER: _ClassVar[int]
    MUJOCO_VERSION_FIELD_NUMBER: _ClassVar[int]
    DT_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    requested_id: str
    resolved_id: str
    resolution_reason: str
    observation_dim: int
    action_dim: int
    action_low: _containers.RepeatedScalarFieldContainer[float]
    action_high: _containers.RepeatedScalarFieldContainer[float]
    max_episode_steps: int
    frame_skip: int
    gymnasium_version: str
    mujoco_version: str
    dt: float
    backend: str
    limits: BridgeLimits
    def __init__(self, requested_id: _Optional[str] = ..., resolved_id: _Optional[str] = ..., resolution_reason: _Optional[str] = ..., observation_dim: _Optional[int] = ..., action_dim: _Optional[int] = ..., action_low: _Optional[_Iterable[float]] = ..., action_high: _Optional[_Iterable[float]] = ..., max_episode_steps: _Optional[int] = ..., frame_skip: _Optional[int] = ..., gymnasium_version: _Optional[str] = ..., mujoco_version: _Optional[str] = ..., dt: _Optional[float] = ..., backend: _Optional[str] = ..., limits: _Optional[_Union[BridgeLimits, _Mapping]] = ...) -> None: ...

class BridgeLimits(_message.Message):
    __slots__ = ("max_episodes_per_call", "max_horizon", "max_weights", "max_sim_steps", "max_abs_shift", "obs_std_floor")
    MAX_EPISODES_PER_CALL_FIELD_NUMBER: _ClassVar[int]
    MAX_HORIZON_FIELD_NUMBER: _ClassVar[int]
    MAX_WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    MAX_SIM_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_ABS_SHIFT_FIELD_NUMBER: _ClassVar[int]
    OBS_STD_FLOOR_FIELD_NUMBER: _ClassVar[int]
    max_episodes_per_call: int
    max_horizon: int
    max_weights: int
    max_sim_steps: int
    max_abs_shift: float
    obs_std_floor: float
    def __init__(self, max_episodes_per_call: _Optional[int] = ..., max_horizon: _Optional[int] = ..., max_weights: _Optional[int] = ..., max_sim_steps: _Optional[int] = ..., max_abs_shift: _Optional[float] = ..., obs_std_floor: _Optional[float] = ...) -> None: ...

class ListEnvsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListEnvsResponse(_message.Message):
    __slots__ = ("env_ids", "aliases")
    class AliasesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ENV_IDS_FIELD_NUMBER: _ClassVar[int]
    ALIASES_FIELD_NUMBER: _ClassVar[int]
    env_ids: _containers.RepeatedScalarFieldContainer[str]
    aliases: _containers.ScalarMap[str, str]
    def __init__(self, env_ids: _Optional[_Iterable[str]] = ..., aliases: _Optional[_Mapping[str, str]] = ...) -> None: ...

class LinearPolicy(_message.Message):
    __slots__ = ("rows", "cols", "weights", "obs_mean", "obs_std", "bias")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    OBS_MEAN_FIELD_NUMBER: _ClassVar[int]
    OBS_STD_FIELD_NUMBER: _ClassVar[int]
    BIAS_FIELD_NUMBER: _ClassVar[int]
    rows: int
    cols: int
    weights: _containers.RepeatedScalarFieldContainer[float]
    obs_mean: _containers.RepeatedScalarFieldContainer[float]
    obs_std: _containers.RepeatedScalarFieldContainer[float]
    bias: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, rows: _Optional[int] = ..., cols: _Optional[int] = ..., weights: _Optional[_Iterable[float]] = ..., obs_mean: _Optional[_Iterable[float]] = ..., obs_std: _Optional[_Iterable[float]] = ..., bias: _Optional[_Iterable[float]] = ...) -> None: ...

class EpisodeSpec(_message.Message):
    __slots__ = ("env_id", "kwargs", "policy", "seed", "horizon", "shift")
    class KwargsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: KwargValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[KwargValue, _Mapping]] = ...) -> None: ...
    ENV_ID_FIELD_NUMBER: _ClassVar[int]
    KWARGS_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    HORIZON_FIELD_NUMBER: _ClassVar[int]
    SHIFT_FIELD_NUMBER: _ClassVar[int]
    env_id: str
    kwargs: _containers.MessageMap[str, KwargValue]
    policy: LinearPolicy
    seed: int
    horizon: int
    shift: float
    def __init__(self, env_id: _Optional[str] = ..., kwargs: _Optional[_Mapping[str, KwargValue]] = ..., policy: _Optional[_Union[LinearPolicy, _Mapping]] = ..., seed: _Optional[int] = ..., horizon: _Optional[int] = ..., shift: _Optional[float] = ...) -> None: ...

class ObsStats(_message.Message):
    __slots__ = ("count", "mean", "m2")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    MEAN_FIELD_NUMBER: _ClassVar[int]
    M2_FIELD_NUMBER: _ClassVar[int]
    count: int
    mean: _containers.RepeatedScalarFieldContainer[float]
    m2: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, count: _Optional[int] = ..., mean: _Optional[_Iterable[float]] = ..., m2: _Optional[_Iterable[float]] = ...) -> None: ...

class EpisodeResult(_message.Message):
    __slots__ = ("total_return", "shifted_return", "length", "terminated", "truncated", "obs_stats", "non_finite", "non_finite_detail")
    TOTAL_RETURN_FIELD_NUMBER: _ClassVar[int]
    SHIFTED_RETURN_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    OBS_STATS_FIELD_NUMBER: _ClassVar[int]
    NON_FINITE_FIELD_NUMBER: _ClassVar[int]
    NON_FINITE_DETAIL_FIELD_NUMBER: _ClassVar[int]
    total_return: float
    shifted_return: float
    length: int
    terminated: bool
    truncated: bool
    obs_stats: ObsStats
    non_finite: bool
    non_finite_detail: str
    def __init__(self, total_return: _Optional[float] = ..., shifted_return: _Optional[float] = ..., length: _Optional[int] = ..., terminated: _Optional[bool] = ..., truncated: _Optional[bool] = ..., obs_stats: _Optional[_Union[ObsStats, _Mapping]] = ..., non_finite: _Optional[bool] = ..., non_finite_detail: _Optional[str] = ...) -> None: ...

class RolloutRequest(_message.Message):
    __slots__ = ("episodes",)
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    episodes: _containers.RepeatedCompositeFieldContainer[EpisodeSpec]
    def __init__(self, episodes: _Optional[_Iterable[_Union[EpisodeSpec, _Mapping]]] = ...) -> None: ...

class RolloutResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[EpisodeResult]
    def __init__(self, results: _Optional[_Iterable[_Union[EpisodeResult, _Mapping]]] = ...) -> None: ...
