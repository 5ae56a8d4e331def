"""make probe's run-file cases: runs that were forged, blanked, mixed in or not files.

Three small runs are trained once (Swimmer-v1 seeds 1 and 2 to the end, Swimmer-v1 seed
3 and Hopper-v1 seed 3 stopped after two iterations) and copied into each case's
working directory, where the case damages them. Every report (``table``, ``plot``,
``eval``, ``render``) and ``--resume`` must refuse the damage with exit 1 and one line
naming it, and leave no lock behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
TRAINER = str(REPO / "bin" / "trainer")

Setup = Callable[[Path, Path], None]


class Spec(NamedTuple):
    """The fields of probe_inputs.Case, in its order."""

    area: str
    argv: list[str]
    code: int
    needle: str
    files: tuple[tuple[str, str], ...]
    setup: Setup | None
    gone: tuple[str, ...]


_BASE: list[Path] = []


def _train(out: Path, *argv: str) -> None:
    proc = subprocess.run(
        [TRAINER, *argv, "--out", str(out), "--log-level", "error"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"training a base run failed: {proc.stderr}")


def base() -> Path:
    """Train the base runs once and return their directory."""
    if not _BASE:
        tmp = Path(tempfile.mkdtemp(prefix="probe-runs-"))
        _train(tmp / "done", "--env", "Swimmer-v1", "--seed", "1-2", "--max-episodes", "40")
        swimmer = ("--env", "Swimmer-v1", "--seed", "3", "--max-episodes", "400")
        _train(tmp / "open", *swimmer, "--stop-after", "2")
        _train(tmp / "hopper", "--env", "Hopper-v1", "--seed", "3", "--stop-after", "2")
        _BASE.append(tmp)
    return _BASE[0]


def cleanup() -> None:
    """Remove the base runs."""
    for tmp in _BASE:
        shutil.rmtree(tmp, ignore_errors=True)


def seed_dir(root: Path, env: str, seed: int) -> Path:
    """The run directory of env and seed under root (one variant each)."""
    found = sorted((root / env).glob(f"*/seed{seed}"))
    if len(found) != 1:
        raise RuntimeError(f"want one seed{seed} of {env} under {root}, found {found}")
    return found[0]


def expand(work: Path, argv: list[str]) -> list[str]:
    """Replace each argument with a * in it by the one path it matches under work."""
    out = []
    for a in argv:
        if "*" in a:
            found = sorted(work.glob(a))
            a = str(found[0].relative_to(work)) if len(found) == 1 else a
        out.append(a)
    return out


def fifo(name: str) -> Setup:
    """Make name a FIFO."""
    return lambda work, _: os.mkfifo(work / name)


def zero(name: str) -> Setup:
    """Make name a symbolic link to /dev/zero."""
    return lambda work, _: os.symlink("/dev/zero", work / name)


def _copy(work: Path, base_dir: Path, *which: str) -> None:
    for w in which:
        shutil.copytree(base_dir / w, work / "runs", dirs_exist_ok=True)


def _edit(path: Path, **fields: object) -> None:
    """Set (None: delete) fields of the JSON file path."""
    doc = json.loads(path.read_text())
    for k, v in fields.items():
        if v is None:
            doc.pop(k, None)
        else:
            doc[k] = v
    path.write_text(json.dumps(doc, indent=2))


def one_seed(damage: Callable[[Path, Path], None]) -> Setup:
    """Copy Swimmer seed 1 (finished) alone, then damage(seed1, seed2 of the base)."""

    def setup(work: Path, base_dir: Path) -> None:
        _copy(work, base_dir, "done")
        two = seed_dir(work / "runs", "Swimmer-v1", 2)
        keep = Path(tempfile.mkdtemp(prefix="probe-seed2-", dir=work.parent))
        shutil.move(str(two), keep / "seed2")
        damage(seed_dir(work / "runs", "Swimmer-v1", 1), keep / "seed2")
        shutil.rmtree(keep)

    return setup


def unfinished(damage: Callable[[Path, Path], None]) -> Setup:
    """Copy Swimmer seed 3 (unfinished) and Hopper seed 3, then damage(swimmer, hopper)."""

    def setup(work: Path, base_dir: Path) -> None:
        _copy(work, base_dir, "open", "hopper")
        swimmer = seed_dir(work / "runs", "Swimmer-v1", 3)
        hopper = seed_dir(work / "runs", "Hopper-v1", 3)
        damage(swimmer, hopper)
        shutil.rmtree(hopper.parent.parent)

    return setup


def _forge_result(run: Path, _: Path, drop: bool) -> None:
    _edit(
        run / "result.json",
        reached=True,
        episodes_to_threshold=24,
        sha256=None if drop else "",
    )


def _mix(names: tuple[str, ...]) -> Callable[[Path, Path], None]:
    def damage(run: Path, other: Path) -> None:
        for name in names:
            shutil.copyfile(other / name, run / name)

    return damage


def _replace(name: str, with_fifo: bool) -> Callable[[Path, Path], None]:
    def damage(run: Path, _: Path) -> None:
        (run / name).unlink()
        if with_fifo:
            os.mkfifo(run / name)
        else:
            os.symlink("/dev/zero", run / name)

    return damage


def _edit_curve_line(run: Path, _: Path) -> None:
    lines = (run / "curve.jsonl").read_text().splitlines(keepends=True)
    point = json.loads(lines[1])
    point["reward"] = 85
    lines[1] = json.dumps(point) + "\n"
    (run / "curve.jsonl").write_text("".join(lines))


def _truncate(name: str) -> Callable[[Path, Path], None]:
    def damage(run: Path, _: Path) -> None:
        b = (run / name).read_bytes()
        (run / name).write_bytes(b[: len(b) // 2])

    return damage


def _stale(run: Path, _: Path) -> None:
    for name in (
        ".policy.json.tmp0123456789abcdef",
        ".checkpoint.json.tmpfedcba9876543210",
    ):
        (run / name).write_text("{")


SEED1 = "runs/Swimmer-v1/*/seed1"
SEED3 = "runs/Swimmer-v1/*/seed3"
LOCK = SEED3 + "/.lock"
RESUME = [TRAINER, "--env", "Swimmer-v1", "--seed", "3", "--max-episodes", "400"]
RESUME += ["--out", "runs", "--resume", "--log-level", "error"]


def report(argv: list[str], needle: str, setup: Setup) -> Spec:
    """A report of a damaged finished run (seed 1): exit 1 naming the damage."""
    return Spec("report run files", [TRAINER, *argv], 1, needle, (), setup, ())


def resume(needle: str, damage: Callable[[Path, Path], None], code: int = 1) -> Spec:
    """--resume of the damaged unfinished run (seed 3): refused now, its lock let go."""
    extra = ["--stop-after", "1"] if code == 0 else []
    return Spec(
        "resume run files",
        RESUME + extra,
        code,
        needle,
        (),
        unfinished(damage),
        (LOCK,),
    )


def _pre_version(run: Path, _: Path) -> None:
    """Issue 52's forgery: a finished run rewritten as if written before versions, whose
    result then claims the threshold with a best eval its curve never saw."""
    (run / "checkpoint.json").unlink(missing_ok=True)
    strip = dict.fromkeys(("version", "run_id", "sha256", "curve_sha256", "schema"))
    _edit(run / "run.json", **strip)
    _edit(
        run / "result.json",
        **strip,
        reached=True,
        episodes_to_threshold=16,
        best_eval=3500,
    )


BLANKED = one_seed(lambda run, other: _forge_result(run, other, False))
DELETED = one_seed(lambda run, other: _forge_result(run, other, True))

CASES: list[Spec] = [
    report(["table", SEED1], "sha256: missing or empty", BLANKED),
    report(["table", SEED1], "sha256: missing or empty", DELETED),
    report(["plot", SEED1, "-o", "x.png"], "sha256: missing or empty", BLANKED),
    report(["table", SEED1], "another run", one_seed(_mix(("curve.jsonl", "result.json")))),
    report(["table", SEED1], "the result was edited", one_seed(_pre_version)),
    report(
        ["eval", "--policy", SEED1],
        "another run",
        one_seed(_mix(("best_policy.json",))),
    ),
    report(
        ["render", "--policy", SEED1, "-o", "x.gif"],
        "another run",
        one_seed(_mix(("best_policy.json",))),
    ),
    report(
        ["eval", "--policy", SEED1],
        "sha256: missing or empty",
        one_seed(lambda run, _: _edit(run / "best_policy.json", sha256="")),
    ),
    report(
        ["table", SEED1],
        "sha256: missing or empty",
        one_seed(lambda run, _: _edit(run / "run.json", sha256="")),
    ),
    report(["table", SEED1], "not a regular file", one_seed(_replace("curve.jsonl", False))),
    report(["table", SEED1], "not a regular file", one_seed(_replace("run.json", True))),
    report(
        ["eval", "--policy", SEED1],
        "not a regular file",
        one_seed(_replace("run.json", True)),
    ),
    report(
        ["table", SEED3],
        "checksum",
        unfinished(lambda run, _: _edit_curve_line(run, _)),
    ),
    resume("another run", _mix(("checkpoint.json", "curve.jsonl"))),
    resume("sha256: missing or empty", lambda run, _: _edit(run / "run.json", sha256="")),
    resume("run.json", _truncate("run.json")),
    resume("not a regular file", _replace("run.json", True)),
    resume("not a regular file", _replace("curve.jsonl", False)),
    resume("not a regular file", _replace("checkpoint.json", False)),
    Spec(
        "resume run files",
        RESUME + ["--stop-after", "1"],
        0,
        "",
        (),
        unfinished(_stale),
        (LOCK, SEED3 + "/.policy.json.tmp*", SEED3 + "/.checkpoint.json.tmp*"),
    ),
]
