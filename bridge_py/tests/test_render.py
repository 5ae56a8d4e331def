"""stpis_bridge.render: a policy's episodes drawn off-screen (EGL) and decoded back."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stpis_bridge import render
from tests.test_policy import go_policy_file, hopper_policy

# The command line runs from anywhere with the bridge's package on the path.
BRIDGE_ENV = {**os.environ, "PYTHONPATH": str(Path(render.__file__).parents[1])}


def decode(path: Path) -> np.ndarray:
    """All frames of a GIF or MP4 file, as read back by imageio (Pillow or ffmpeg).

    In a child process: ffmpeg, forked from this one, inherits the session's gRPC
    server's fork handlers, which break its pipes under load.
    """
    code = (
        "import sys, imageio.v2 as io, numpy as np\n"
        "r = io.get_reader(sys.argv[1])\n"
        "np.save(sys.stdout.buffer, np.stack([np.asarray(f)[..., :3] for f in r]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, env=BRIDGE_ENV, check=True
    )
    frames: np.ndarray = np.load(io.BytesIO(proc.stdout))
    return frames


def run_render(pol: Path, out: Path, *args: str) -> dict[str, Any]:
    """Run ``python -m stpis_bridge.render`` (as ``trainer render`` does) and return its
    JSON line. In a child process: the session's in-process gRPC server forks badly."""
    proc = subprocess.run(
        [sys.executable, "-m", "stpis_bridge.render", "--policy", str(pol), "--out", str(out)]
        + list(args),
        capture_output=True,
        text=True,
        env=BRIDGE_ENV,
        check=True,
    )
    doc: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_frames_match_the_episode_and_move(tmp_path: Path, suffix: str) -> None:
    fields = hopper_policy(3)
    pol = go_policy_file(
        tmp_path / "policy.json",
        fields["w"],
        count=fields["count"],
        mean=fields["mean"],
        m2=fields["m2"],
        bias=fields["bias"],
    )
    out = tmp_path / f"hop{suffix}"
    size = ["--width", "96", "--height", "64", "--horizon", "15", "--seed", "4"]
    done = run_render(pol, out, "--episodes", "2", "--every", "1", *size)
    frames = decode(out)
    assert done["env"] == "Hopper-v5"
    assert done["lengths"][0] <= 15 and done["frames"] == sum(done["lengths"]) == len(frames)
    assert frames.shape[1:] == (64, 96, 3)
    # The robot moves: no two consecutive frames of the first episode are the same.
    first = done["lengths"][0]
    diffs = [np.abs(frames[i + 1].astype(int) - frames[i]).mean() for i in range(first - 1)]
    assert min(diffs) > 0, diffs
    assert done["bytes"] == out.stat().st_size > 0
    # The returns are the episodes' own: a second render with the same seed repeats them.
    again = run_render(pol, tmp_path / f"again{suffix}", "--every", "5", *size)
    assert again["returns"][0] == done["returns"][0]
    assert again["frames"] == first // 5


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--out", "x.avi"], "out"),
        (["--out", "x.gif", "--episodes", "0"], "episodes"),
        (["--out", "x.gif", "--width", "5000", "--height", "5000"], "size"),
        (["--out", "x.gif", "--width", "33"], "size"),
        (["--out", "x.gif", "--every", "-1"], "every"),
        (["--out", "x.gif", "--horizon", "-3"], "horizon"),
        # Issue 52: beyond the env's episodes (Hopper's 1000 steps), as eval refuses.
        (["--out", "x.gif", "--horizon", "5000"], "horizon"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], field: str) -> None:
    fields = hopper_policy(1)
    pol = go_policy_file(tmp_path / "p.json", fields["w"])
    proc = subprocess.run(
        [sys.executable, "-m", "stpis_bridge.render", "--policy", str(pol), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=BRIDGE_ENV,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"render: {field}:"), proc.stderr
    assert not list(tmp_path.glob("x.*"))


def test_command_line_prints_json(tmp_path: Path) -> None:
    fields = hopper_policy(2)
    pol = go_policy_file(tmp_path / "p.json", fields["w"])
    out = tmp_path / "sub" / "h.gif"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "stpis_bridge.render",
            "--policy",
            str(pol),
            "--out",
            str(out),
            "--width",
            "64",
            "--height",
            "48",
            "--horizon",
            "20",
        ],
        capture_output=True,
        text=True,
        env=BRIDGE_ENV,
        check=True,
    )
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    assert doc["frames"] == len(decode(out)) and doc["out"] == str(out)


def test_failed_render_leaves_the_output_as_it_was(tmp_path: Path) -> None:
    """Issue 43: a policy whose action overflows fails with exit 1, one line, and the
    existing output (and no partial file) left behind; a wrong-shaped policy is a bad
    file too (exit 1, as trainer eval), not a bad command line."""
    fields = hopper_policy(3)
    out = tmp_path / "x.gif"
    out.write_bytes(b"the render before")
    huge = np.full((3, 11), 1.7e308)
    huge[:, 1::2] = -1.7e308
    for name, w in [("huge.json", huge), ("shape.json", np.ones((2, 11)))]:
        pol = go_policy_file(
            tmp_path / name, w, count=fields["count"], mean=fields["mean"], m2=fields["m2"]
        )
        proc = subprocess.run(
            [sys.executable, "-m", "stpis_bridge.render", "--policy", str(pol), "--out", str(out)],
            capture_output=True,
            text=True,
            env=BRIDGE_ENV,
            check=False,
        )
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert out.read_bytes() == b"the render before"
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["x.gif", "huge.json"] + (["shape.json"] if name == "shape.json" else [])
        )


def test_output_mode_follows_the_umask_and_stale_temporaries_go(tmp_path: Path) -> None:
    """Issue 53 item 9: the GIF was written 0600 (mkstemp's mode); it follows the umask.
    Issue 52 item 5: a temporary file an interrupted render left is removed by the next
    render of the same target, and no other file is touched."""
    pol = go_policy_file(tmp_path / "p.json", hopper_policy(4)["w"])
    out = tmp_path / "x.gif"
    stale = tmp_path / ".x.gif.tmpab_cd123.gif"
    other = tmp_path / ".y.gif.tmpab_cd123.gif"
    stale.write_bytes(b"")
    other.write_bytes(b"")
    old = os.umask(0o022)
    try:
        run_render(pol, out, "--width", "32", "--height", "32", "--horizon", "4")
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644
    assert not stale.exists() and other.exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_render_removes_its_temporary_file(tmp_path: Path, sig: int) -> None:
    """Issue 52 item 5: SIGINT or SIGTERM during a render left ``.x.mp4.tmp….mp4``; the
    render now removes it, leaves the target as it was, and exits 130."""
    pol = go_policy_file(tmp_path / "p.json", hopper_policy(5)["w"])
    out = tmp_path / "x.mp4"
    out.write_bytes(b"the render before")
    proc = subprocess.Popen(
        [sys.executable, "-m", "stpis_bridge.render", "--policy", str(pol), "--out", str(out)]
        + ["--episodes", "100", "--every", "1"],
        stderr=subprocess.PIPE,
        text=True,
        env=BRIDGE_ENV,
    )
    try:
        deadline = time.monotonic() + 60
        while not [p for p in tmp_path.iterdir() if p.name.startswith(".x.mp4.tmp")]:
            assert proc.poll() is None and time.monotonic() < deadline, "no temporary file"
            time.sleep(0.05)
        time.sleep(0.5)  # frames written
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json", "x.mp4"]
    assert out.read_bytes() == b"the render before"


def test_env_that_is_not_mujoco_is_one_line(tmp_path: Path) -> None:
    """Issue 52 item 6: a policy of a registered Box env outside MuJoCo gave a raw
    AttributeError ('PointMass' object has no attribute 'model'); it is one line saying
    render needs a MuJoCo env, exit 1, and nothing written."""
    pol = go_policy_file(
        tmp_path / "p.json", np.zeros((1, 2)), env_id="tests.user_envs:PointMass-v0"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "stpis_bridge.render", "--policy", str(pol), "--out", "x.gif"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=BRIDGE_ENV,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1 and "is not a MuJoCo env" in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]
