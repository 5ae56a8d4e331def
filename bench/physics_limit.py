"""The physics limit for the bridge benchmark: mujoco.rollout with zero controls.

The same model and frame skip as the env (made by gymnasium with the same kwargs),
``--episodes`` initial states from gymnasium's own resets (seeds ``--seed`` on), each
rolled out for ``--horizon`` control steps (``horizon × frame_skip`` physics steps)
with zero controls on ``--threads`` C threads (``mujoco.rollout.Rollout``). Prints one
JSON line, the shape of bench/inprocess_bridge.py's:

    {"env": ..., "workers": ..., "episodes": ..., "eps": ..., "steps_per_s": ...}

where ``steps_per_s`` counts control steps. Only the rollout call is timed; one
warm-up rollout of 10 control steps runs first.

    .venv/bin/python bench/physics_limit.py --env Hopper-v5 --threads 2 --episodes 64
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
from mujoco import rollout

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bridge_py"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from inprocess_bridge import parse_kwarg  # noqa: E402
from stpis_bridge import envs  # noqa: E402

_WARMUP_STEPS = 10


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its JSON line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="Hopper-v5")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--horizon", type=int, default=1000)
    p.add_argument("--kwarg", type=parse_kwarg, action="append", default=[], help="NAME=VALUE")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    env = envs.make_env(envs.resolve(args.env), dict(args.kwarg))
    u: Any = env.unwrapped
    model, frame_skip = u.model, int(u.frame_skip)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    states = np.empty((args.episodes, mujoco.mj_stateSize(model, spec)))
    for i in range(args.episodes):
        env.reset(seed=args.seed + i)
        mujoco.mj_getState(model, u.data, states[i], spec)
    env.close()
    datas = [mujoco.MjData(model) for _ in range(args.threads)]
    control = np.zeros((args.episodes, 1, model.nu))
    with rollout.Rollout(nthread=args.threads) as r:
        r.rollout(model, datas, states, control, nstep=_WARMUP_STEPS * frame_skip)
        start = time.perf_counter()
        r.rollout(model, datas, states, control, nstep=args.horizon * frame_skip)
        elapsed = time.perf_counter() - start
    print(
        json.dumps(
            {
                "env": args.env,
                "workers": args.threads,
                "episodes": args.episodes,
                "eps": args.episodes / elapsed,
                "steps_per_s": args.episodes * args.horizon / elapsed,
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
