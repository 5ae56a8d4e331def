"""Render episodes of a trained policy to a GIF or MP4, off-screen, with a following camera.

``trainer render`` runs this module in the bridge's venv::

    MUJOCO_GL=egl python -m stpis_bridge.render --policy RUN_OR_FILE --out out.gif

It loads the policy with ``stpis_bridge.policy.load`` (so the action is the one
``trainer eval`` takes), plays ``--episodes`` episodes of the env the policy was trained
on, resetting episode i with seed ``--seed + i``, and draws the scene with MuJoCo's own
off-screen renderer. The camera tracks the robot's root body, so a Swimmer or an Ant
stays in view. A frame is drawn after every ``--every``-th step (by default about 30
frames per second of simulated time). Frames go to the file as they are drawn (MP4
through imageio-ffmpeg; GIF through Pillow, which holds a GIF's frames until it closes).
The last line on stdout is one JSON object: the returns and lengths of the episodes,
the number of frames and the file's size.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMATS = {".gif", ".mp4"}
"""The files ``render`` writes, by suffix."""

MAX_EPISODES = 100
MAX_PIXELS = 1920 * 1080
MAX_HORIZON = 100_000


class RenderError(ValueError):
    """A render request that cannot be met; the message names the field and the limit."""


class NotMujocoError(RuntimeError):
    """The policy's env is not a MuJoCo env: there is no MuJoCo scene to draw."""


def _temp_prefix(target: Path) -> str:
    return f".{target.name}.tmp"


def remove_stale(target: Path) -> list[str]:
    """Remove the temporary files an interrupted render of ``target`` left; return their names.

    They are ``.NAME.tmpXXXXXXXX.SUFFIX`` beside the target (``tempfile.mkstemp``'s
    names), as ``trainer --resume`` removes a killed trainer's ``.NAME.tmp…`` files.
    """
    prefix = _temp_prefix(target)
    removed: list[str] = []
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    for name in names:
        middle = name[len(prefix) : len(name) - len(target.suffix)]
        if (
            name.startswith(prefix)
            and name.endswith(target.suffix)
            and len(middle) == 8
            and all(c.isalnum() or c == "_" for c in middle)
        ):
            with contextlib.suppress(FileNotFoundError):
                (target.parent / name).unlink()
                removed.append(name)
    return removed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@dataclass(frozen=True)
class Rendered:
    """What ``render`` did: one entry per episode, and the file it wrote."""

    env: str
    returns: list[float]
    lengths: list[int]
    frames: int
    fps: float
    out: str
    bytes: int


def check(out: Path, episodes: int, width: int, height: int, every: int, horizon: int) -> None:
    """Raise ``RenderError`` naming the first argument out of its limits."""
    if out.suffix.lower() not in FORMATS:
        raise RenderError(f"out: {out.name} must end in .gif or .mp4")
    if not 1 <= episodes <= MAX_EPISODES:
        raise RenderError(f"episodes: {episodes} is outside 1..{MAX_EPISODES}")
    if width < 16 or height < 16 or width * height > MAX_PIXELS:
        raise RenderError(
            f"size: {width}x{height} must be at least 16x16 and at most {MAX_PIXELS} pixels"
        )
    if width % 2 or height % 2:
        raise RenderError(f"size: {width}x{height} must be even in both (H.264's need)")
    if not 0 <= every <= 1000:
        raise RenderError(f"every: {every} is outside 0..1000 (0: about 30 frames a second)")
    if not 0 <= horizon <= MAX_HORIZON:
        raise RenderError(f"horizon: {horizon} is outside 0..{MAX_HORIZON} (0: the env's)")


def render(
    policy_path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    episodes: int = 1,
    seed: int = 0,
    width: int = 480,
    height: int = 360,
    every: int = 0,
    horizon: int = 0,
) -> Rendered:
    """Render ``episodes`` episodes of the policy at ``policy_path`` into ``out``.

    Needs an off-screen OpenGL: set ``MUJOCO_GL=egl`` (or ``osmesa``) before MuJoCo is
    first imported; ``python -m stpis_bridge.render`` sets ``egl`` when it is unset.
    """
    import gymnasium as gym
    import imageio.v2 as imageio
    import mujoco
    from gymnasium.envs.mujoco.mujoco_env import MujocoEnv

    from stpis_bridge import policy

    target = Path(out)
    check(target, episodes, width, height, every, horizon)
    pi = policy.load(policy_path)
    env_id = pi.gymnasium_id
    env = gym.make(env_id)
    limit = env.spec.max_episode_steps if env.spec is not None else None
    if not isinstance(env.unwrapped, MujocoEnv):
        env.close()
        raise NotMujocoError(
            f"{env_id} is not a MuJoCo env ({type(env.unwrapped).__name__}): render draws "
            "MuJoCo envs only (trainer eval runs any env)"
        )
    if horizon and limit and horizon > limit:
        env.close()
        raise RenderError(f"horizon: {horizon} is beyond {env_id}'s episodes of {limit} steps")
    if horizon:
        env.close()
        env = gym.make(env_id, max_episode_steps=horizon)
    model = env.unwrapped.model  # type: ignore[attr-defined]
    dt = float(env.unwrapped.dt)  # type: ignore[attr-defined]
    stride = every or max(1, round(1 / (30 * dt)))
    fps = 1 / (dt * stride)
    if width > model.vis.global_.offwidth or height > model.vis.global_.offheight:
        model.vis.global_.offwidth = max(width, model.vis.global_.offwidth)
        model.vis.global_.offheight = max(height, model.vis.global_.offheight)
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
    camera.trackbodyid = 1  # the first body under the world: the robot's root
    camera.distance = 3.0 * _robot_radius(env.unwrapped)
    camera.elevation = -25.0
    camera.azimuth = 90.0
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target)
    # Written to a temporary file beside the target (with its suffix, which picks the
    # format), renamed over it once complete: a render that fails or is interrupted
    # (SIGINT, SIGTERM: main turns both into exceptions) leaves the target as it was
    # and removes the temporary file. Its mode follows the umask, as a file the user
    # wrote would (mkstemp's is 0600).
    fd, name = tempfile.mkstemp(
        prefix=_temp_prefix(target), suffix=target.suffix, dir=target.parent
    )
    os.fchmod(fd, 0o666 & ~_umask())
    os.close(fd)
    partial = Path(name)
    if target.suffix.lower() == ".gif":
        writer: Any = imageio.get_writer(partial, mode="I", duration=1000 / fps, loop=0)
    else:
        writer = imageio.get_writer(
            partial, fps=fps, codec="libx264", quality=7, macro_block_size=2
        )
    returns: list[float] = []
    lengths: list[int] = []
    frames = 0
    try:
        with mujoco.Renderer(model, height, width) as renderer:
            for i in range(episodes):
                obs, _ = env.reset(seed=seed + i)
                total, steps, done = 0.0, 0, False
                while not done:
                    obs, reward, terminated, truncated, _ = env.step(pi.act(obs))
                    total += float(reward)
                    steps += 1
                    done = terminated or truncated
                    if steps % stride == 0:
                        renderer.update_scene(env.unwrapped.data, camera=camera)  # type: ignore[attr-defined]
                        writer.append_data(renderer.render())
                        frames += 1
                returns.append(total)
                lengths.append(steps)
    except BaseException:
        with contextlib.suppress(Exception):
            writer.close()
        partial.unlink(missing_ok=True)
        raise
    else:
        writer.close()
        os.replace(partial, target)
    finally:
        env.close()
    return Rendered(
        env=env_id,
        returns=returns,
        lengths=lengths,
        frames=frames,
        fps=fps,
        out=str(target),
        bytes=target.stat().st_size,
    )


def _robot_radius(env: Any) -> float:
    """Return the robot's radius at reset: its geoms' farthest reach from its root.

    The world's geoms (the floor) do not count.
    """
    import mujoco

    model, data = env.model, env.data
    mujoco.mj_forward(model, data)
    root = data.xpos[1]
    reach = [
        float(np.linalg.norm(data.geom_xpos[g] - root) + model.geom_rbound[g])
        for g in range(model.ngeom)
        if model.geom_bodyid[g] != 0
    ]
    return max(reach, default=1.0)


def main(argv: list[str] | None = None) -> int:
    """``python -m stpis_bridge.render``: exit 2 on bad arguments, 1 on a bad policy."""
    parser = argparse.ArgumentParser(
        prog="python -m stpis_bridge.render", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--policy", required=True, help="a run directory or a policy file")
    parser.add_argument("--out", required=True, help="the file to write: .gif or .mp4")
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="episode i resets with seed+i")
    parser.add_argument("--width", type=int, default=480)
    parser.add_argument("--height", type=int, default=360)
    parser.add_argument(
        "--every", type=int, default=0, help="a frame every N steps (0: about 30 per second)"
    )
    parser.add_argument("--horizon", type=int, default=0, help="steps per episode (0: the env's)")
    args = parser.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")
    # SIGTERM unwinds as SIGINT does, so that the temporary file is removed; SIGINT
    # is set too, since Python leaves it ignored when its parent ignored it (a
    # background job of a non-interactive shell).
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGINT, _interrupted)
    from stpis_bridge.policy import PolicyFileError

    try:
        # A non-finite action is checked (Policy.act raises): numpy's warnings on the
        # way there would only add lines to the one that says so.
        with np.errstate(over="ignore", invalid="ignore"):
            done = render(
                args.policy,
                args.out,
                episodes=args.episodes,
                seed=args.seed,
                width=args.width,
                height=args.height,
                every=args.every,
                horizon=args.horizon,
            )
    except RenderError as exc:
        print(f"render: {exc}", file=sys.stderr)
        return 2
    except (PolicyFileError, NotMujocoError) as exc:
        # A bad file, or one of an env render cannot draw: not a bad command line (1).
        print(f"render: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("render: interrupted", file=sys.stderr)
        return 130
    except ValueError as exc:  # the policy's action is not finite (Policy.act)
        print(f"render: {args.policy}: {exc}", file=sys.stderr)
        return 1
    result = asdict(done)
    result["returns"] = [r if math.isfinite(r) else None for r in done.returns]
    print(json.dumps(result))
    return 0


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


if __name__ == "__main__":
    sys.exit(main())
