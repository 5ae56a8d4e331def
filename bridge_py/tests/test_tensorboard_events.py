"""TensorBoard reads the event files that the Go side writes.

The files are written by Go (package ``tbevents``, and the trainer's recorder in
``cmd/trainer/recorder.go``) and read back here with the ``tensorboard`` package's own
readers: ``EventFileLoader`` for the raw events of a file (it stops at the first record
whose CRC32C fails, so reading every record means every checksum held) and
``EventAccumulator`` for the scalars as TensorBoard shows them. Needs the ``go`` command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator, event_file_loader
from tensorboard.compat.proto import event_pb2

from stpis_bridge import policy

REPO = Path(__file__).resolve().parents[2]
GO = shutil.which("go")
pytestmark = pytest.mark.skipif(GO is None, reason="needs the go command to write the files")


@pytest.fixture(scope="module")
def gobin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build tbwrite and the trainer once for the module."""
    out = tmp_path_factory.mktemp("bin")
    for pkg in ("./tbevents/internal/cmd/tbwrite", "./cmd/trainer"):
        subprocess.run(
            [str(GO), "build", "-o", str(out) + os.sep, pkg], cwd=REPO, check=True, timeout=600
        )
    return out


def events(path: Path) -> list[Any]:
    return list(event_file_loader.EventFileLoader(str(path)).Load())


def scalars(logdir: Path) -> dict[str, list[tuple[int, float]]]:
    acc = event_accumulator.EventAccumulator(
        str(logdir), size_guidance={event_accumulator.SCALARS: 0}
    )
    acc.Reload()
    assert acc.file_version == 2.0
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def f32(x: float) -> float:
    """X as TensorBoard stores a scalar (simple_value is a float32)."""
    return float(np.float32(x))


def test_tbwrite_files_read_back(gobin: Path, tmp_path: Path) -> None:
    out = subprocess.run(
        [str(gobin / "tbwrite"), str(tmp_path / "tb")],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.split()
    paths = [Path(p) for p in out]
    assert [p.name for p in paths] == [
        "events.out.tfevents.1700000001.tbwrite",
        "events.out.tfevents.1700000007.tbwrite",
    ]
    # Every record of both files, in order: version, session start, one event a step.
    for path, start, steps in ((paths[0], 0, [0, 12, 24, 36]), (paths[1], 24, [24, 36, 48])):
        evs = events(path)
        assert len(evs) == 2 + len(steps)
        assert evs[0].file_version == "brain.Event:2"
        assert evs[1].step == start
        assert evs[1].session_log.status == event_pb2.SessionLog.START
        assert [e.step for e in evs[2:]] == steps
        assert all(e.HasField("summary") for e in evs[2:])
        assert [e.wall_time for e in evs] == sorted(e.wall_time for e in evs)

    # The second file's start at step 24 drops the first file's steps from 24 on.
    got = scalars(tmp_path / "tb")
    assert got == {
        "eval/mean": [(0, -4.25)],
        "eval/std": [(0, 0.5)],
        "train/return": [(12, 3.0), (24, 106.0), (36, 109.0), (48, 112.0)],
        "train/step_size": [(s, 0.125) for s in (12, 24, 36, 48)],
        "train/episodes_per_s": [(12, 50.0), (24, 150.0), (36, 150.0), (48, 150.0)],
    }


def test_reader_checks_the_crc(gobin: Path, tmp_path: Path) -> None:
    """The reader does check the checksums: one flipped data byte loses that record."""
    path = Path(
        subprocess.run(
            [str(gobin / "tbwrite"), str(tmp_path / "tb")],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.split()[0]
    )
    n = len(events(path))
    b = bytearray(path.read_bytes())
    b[-5] ^= 0x01  # the last record's last data byte
    path.write_bytes(bytes(b))
    assert len(events(path)) == n - 1


def curve(run: Path) -> Iterator[dict[str, Any]]:
    for line in (run / "curve.jsonl").read_text().splitlines():
        if line.strip():
            yield json.loads(line)


def test_trainer_writes_scalars(gobin: Path, tmp_path: Path) -> None:
    """A tiny Swimmer run, stopped after 2 iterations and resumed: TensorBoard shows
    every point of curve.jsonl once, at its training episodes."""
    cfg = tmp_path / "evals.yaml"
    cfg.write_text("eval-every: 3\n")
    args = [str(gobin / "trainer"), "--env", "Swimmer-v1", "--method", "stp", "--k", "paper"]
    args += ["--directions", "1"]
    args += ["--max-episodes", "36", "--horizon", "50", "--seed", "3", "--config", str(cfg)]
    args += ["--shift", "1"]
    args += ["--out", str(tmp_path / "runs"), "--log-level", "warn"]
    env = {**os.environ, "STPIS_BRIDGE_PYTHON": sys.executable}
    for extra in (["--stop-after", "2"], ["--resume"]):
        subprocess.run(args + extra, cwd=REPO, env=env, check=True, timeout=300)
    (run,) = (tmp_path / "runs" / "Swimmer-v1").glob("*/seed3")
    pts = list(curve(run))

    # The policy the Go trainer sealed loads in Python; an edit of the same length does not.
    raw = (run / "policy.json").read_text()
    assert policy.seal_matches(raw.encode())
    assert policy.load(run).weights.shape == (2, 8)
    at = next(k for k in range(raw.index('"w":['), len(raw)) if raw[k] in "12345678")
    edited = tmp_path / "edited" / "policy.json"
    edited.parent.mkdir()
    edited.write_text(raw[:at] + str(int(raw[at]) + 1) + raw[at + 1 :])
    with pytest.raises(policy.PolicyFileError, match="checksum does not match"):
        policy.load(edited)
    assert [p["iter"] for p in pts] == list(range(7))

    files = sorted((run / "tb").iterdir())
    assert len(files) == 2
    assert all(f.name.startswith("events.out.tfevents.") for f in files)
    # Each invocation's file: the version, a session start at its first point's step.
    for f, first in zip(files, (pts[0], pts[3]), strict=True):
        evs = events(f)
        assert evs[0].file_version == "brain.Event:2"
        assert evs[1].session_log.status == event_pb2.SessionLog.START
        assert evs[1].step == first["episodes"]

    trained = [p for p in pts if p["iter"] > 0]
    evaluated = [p for p in pts if "eval_mean" in p]
    assert [p["iter"] for p in evaluated] == [0, 3, 6]
    # Swimmer's episodes all last the horizon: the shifted return is 50 below the raw one.
    assert all(abs(p["reward"] - 50 - p["reward_shifted"]) < 1e-9 for p in trained)
    want = {
        "train/return": [(p["episodes"], f32(p["reward"])) for p in trained],
        "train/return_shifted": [(p["episodes"], f32(p["reward_shifted"])) for p in trained],
        "train/step_size": [(p["episodes"], f32(p["step_size"])) for p in trained],
        "train/episodes_per_s": [(p["episodes"], f32(p["eps_per_s"])) for p in trained],
        "eval/mean": [(p["episodes"], f32(p["eval_mean"])) for p in evaluated],
        "eval/std": [(p["episodes"], f32(p["eval_std"])) for p in evaluated],
    }
    assert scalars(run / "tb") == want
