"""make probe: bad inputs, by area, and whether each is handled cleanly.

Clean means: the exit code the README documents (2 for a bad command line, 1 for a
file that is there but damaged), one line on stderr that names the field or the file,
no panic or traceback, and nothing left behind in the working directory. Each case
runs bin/trainer (or the bridge's Python) in a fresh temporary directory.

The last line on stdout is one JSON object: per area, the cases tried and those handled
cleanly, and the cases that were not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import run_files

REPO = Path(__file__).resolve().parents[1]
TRAINER = str(REPO / "bin" / "trainer")
PYTHON = str(REPO / ".venv" / "bin" / "python")


@dataclass(frozen=True)
class Case:
    area: str
    argv: list[str]
    code: int
    needle: str
    files: tuple[tuple[str, str], ...] = ()
    # Prepares the working directory (copies of the base runs, damaged): run_files.py.
    setup: Callable[[Path, Path], None] | None = None
    # Paths (relative to the working directory) that must not exist afterwards.
    gone: tuple[str, ...] = ()


def flags(*argv: str, needle: str) -> Case:
    return Case("train flags", [TRAINER, "--env", "Hopper-v1", *argv], 2, needle)


def config(text: str, needle: str, name: str = "c.yaml") -> Case:
    return Case("config files", [TRAINER, "--config", name], 2, needle, ((name, text),))


POLICY = {
    "version": 1,
    "env_id": "Hopper-v1",
    "policy": {"rows": 3, "cols": 11, "w": [0.0] * 33},
    "normalizer": {"count": 5, "mean": [0.0] * 11, "m2": [1.0] * 11},
}


# Weights whose action overflows to NaN: render fails, and must leave x.gif as it was.
HUGE = {
    **POLICY,
    "policy": {"rows": 3, "cols": 11, "w": [1.7e308, -1.7e308] * 16 + [1.7e308]},
}


def policy(edit: dict[str, object], cmd: str, code: int, needle: str) -> Case:
    doc = json.loads(json.dumps(POLICY))
    for k, v in edit.items():
        part, _, field = k.partition(".")
        if field:
            doc[part][field] = v
        else:
            doc[part] = v
    argv = [TRAINER, cmd, "--policy", "p.json"]
    argv += ["-o", "x.gif"] if cmd == "render" else ["--log-level", "error"]
    return Case(f"{cmd} policy files", argv, code, needle, (("p.json", json.dumps(doc)),))


def bridge(*argv: str, needle: str) -> Case:
    return Case("bridge flags", [PYTHON, "-m", "stpis_bridge", *argv], 2, needle)


# Issue 52's cases: the exit code rule's rows, convex's refusals, and envs that are
# at fault (run through a local bridge allowed tests.user_envs: PYTHONPATH is bridge_py).
LABELS = "-5 1:0.5 2:1\n3 1:1\n-5 2:0.3\n3 1:0.2 2:0.1\n"
NOT_MUJOCO = {**POLICY, "env_id": "tests.user_envs:PointMass-v0"}
NOT_MUJOCO["policy"] = {"rows": 1, "cols": 2, "w": [0.0, 0.0]}
NOT_MUJOCO["normalizer"] = {"count": 0, "mean": [0.0, 0.0], "m2": [0.0, 0.0]}
RESULT = {"version": 3, "run_id": "r", "reached": False, "episodes": 40}
ISSUE_52: list[Case] = [
    Case("report", [TRAINER, "plot", "nowhere", "-o", "c.png"], 2, "nowhere"),
    Case(
        "report",
        [TRAINER, "plot", str(REPO / "results" / "other"), "-o", "c.jpg"],
        2,
        "c.jpg",
    ),
    Case(
        "convex",
        [TRAINER, "convex", "--data", "nowhere.svm", "--out", "o"],
        2,
        "nowhere",
    ),
    Case(
        "convex",
        [
            TRAINER,
            "convex",
            "--data",
            "f.svm",
            "--only",
            "table",
            "--runs",
            "1",
            "--out",
            "o",
        ],
        1,
        "not a regular file",
        (),
        run_files.fifo("f.svm"),
    ),
    Case(
        "convex",
        [TRAINER, "convex", "--data", "/dev/zero", "--only", "table", "--out", "o"],
        1,
        "not a regular file",
    ),
    Case(
        "convex",
        [
            TRAINER,
            "convex",
            "--data",
            "l.svm",
            "--problem",
            "svm",
            "--runs",
            "1",
            "--out",
            "o",
        ],
        1,
        "not two classes",
        (("l.svm", LABELS),),
    ),
    Case("convex", [TRAINER, "convex", "--runs", "1000000000", "--out", "o"], 2, "--runs"),
    Case(
        "convex",
        [TRAINER, "convex", "--data", "l.svm", "--only", "figure1", "--out", "o"],
        2,
        "--only figure1",
        (("l.svm", LABELS),),
    ),
    Case("version", [TRAINER, "version", "--bogus-flag"], 2, "--bogus-flag"),
    Case(
        "eval flags",
        [TRAINER, "eval", "--policy", "p.json", "--bridge", "127.0.0.1:1"]
        + ["--bridge-tls", "ca=/nonexistent"],
        2,
        "ca=/nonexistent",
    ),
    Case(
        "eval flags",
        [TRAINER, "eval", "--policy", "p.json", "--bridge", "http://x y"],
        2,
        "--bridge",
    ),
    Case(
        "eval policy files",
        [TRAINER, "eval", "--policy", "result.json"],
        1,
        "not a policy file",
        (("result.json", json.dumps(RESULT)),),
    ),
    Case(
        "train flags",
        [TRAINER, "--env", "--workers=64:X"],
        2,
        "not a Python module name",
    ),
    Case("train flags", [TRAINER, "--env", "-h:X"], 2, "not a Python module name"),
    Case("train flags", [TRAINER, "--env", "x" * 5000], 2, "5000 characters"),
    Case(
        "render flags",
        [TRAINER, "render", "--policy", "p.json", "-o", "x.gif", "--horizon", "5000"],
        2,
        "horizon",
    ),
    Case(
        "render flags",
        [TRAINER, "render", "--policy", "p.json", "-o", "x.gif", "--out", "y.mp4"],
        2,
        "-o and --out",
    ),
    Case(
        "render policy files",
        [TRAINER, "render", "--policy", "n.json", "-o", "x.gif"],
        1,
        "not a MuJoCo env",
        (("n.json", json.dumps(NOT_MUJOCO)),),
    ),
    Case(
        "envs at fault",
        [
            TRAINER,
            "--env",
            "phys2d/CartPole-v0",
            "--workers",
            "1",
            "--log-level",
            "error",
        ],
        1,
        "needs a package",
        gone=("runs",),
    ),
    Case(
        "envs at fault",
        [TRAINER, "--env", "tests.user_envs:CrashStep-v0", "--workers", "1"]
        + ["--max-episodes", "16", "--log-level", "error"],
        1,
        "the env's fault",
        gone=("runs",),
    ),
    Case(
        "envs at fault",
        [
            TRAINER,
            "--env",
            "Hopper-v1",
            "--kwarg",
            "reset_noise_scale=1e30",
            "--workers",
            "1",
        ]
        + ["--max-episodes", "16", "--log-level", "error"],
        1,
        "diverged",
        gone=("runs",),
    ),
]

CASES: list[Case] = [
    flags("--k", "0", needle="--k"),
    flags("--k", "many", needle="--k"),
    flags("--rate", "-1", needle="rate"),
    flags("--rate", "nan", needle="rate"),
    flags("--rate", "1e308", needle="rate"),
    flags("--noise", "1e308", needle="noise"),
    flags("--noise", "-Inf", needle="noise"),
    flags("--top", "99", needle="top"),
    flags("--directions", "0", needle="directions"),
    flags("--directions", "100000", needle="directions"),
    flags("--max-episodes", "-5", needle="max-episodes"),
    flags("--max-episodes", "1e3", needle="max-episodes"),
    flags("--shift", "nan", needle="shift"),
    flags("--horizon", "-1", needle="horizon"),
    flags("--threshold", "x", needle="threshold"),
    flags("--eval-episodes", "0", needle="eval-episodes"),
    flags("--restart", "300", needle="restart"),
    flags("--seed", "5-1", needle="seed"),
    flags("--seed", "1-100000", needle="seed"),
    flags("--method", "sgd", needle="method"),
    flags("--step", "huge", needle="step"),
    flags("--preset", "fast", needle="preset"),
    flags("--method", "ars", "--directions", "8", needle="--directions does not apply"),
    flags("--step", "adaptive", "--top", "2", needle="--top"),
    flags("--workers", "-1", needle="workers"),
    flags("--workers", "100000", needle="workers"),
    flags("--bridge-timeout", "-1s", needle="bridge-timeout"),
    flags("--bridge-timeout", "soon", needle="bridge-timeout"),
    flags("--bridge-tls", "name=x", needle="ca=FILE"),
    flags("--bridge-tls", "ca=a.pem", needle="needs --bridge"),
    flags("--out", "", needle="--out"),
    flags("--kwarg", "a=1", "--kwarg", "a=2", needle="twice"),
    flags("--kwarg", "noequals", needle="KEY=VALUE"),
    flags("--resume", "--force", needle="exclude"),
    flags("--stop-after", "-1", needle="stop-after"),
    flags("--log-level", "loud", needle="log"),
    flags("--nope", needle="unknown flag --nope"),
    config("env: Hopper-v1\nrate: -1\n", "rate"),
    config("env: Hopper-v1\nbogus: 1\n", "bogus"),
    config("env: Hopper-v1\nrate: 1\nrate: 2\n", "twice"),
    config("env: Hopper-v1\ntop: [1, 2]\n", "single value"),
    config("- a\n- b\n", "mapping"),
    config(": : :\n", "c.yaml"),
    config('{"config": {"method": "stp", "bogus": 1}}', "bogus", "r.json"),
    config('{"env": "Hopper-v1"}', "run.json", "r.json"),
    config('{"config": {"method": "sgd"}}', "sgd", "r.json"),
    Case("config files", [TRAINER, "--config", "missing.yaml"], 2, "missing.yaml"),
    Case(
        "config files",
        [TRAINER, "config", "--env", "Hopper-v1", "--method", "x"],
        2,
        "method",
    ),
    policy({"normalizer.m2": [-1.0] * 11}, "eval", 1, "normalizer.m2"),
    policy({"normalizer.mean": [1e400] * 11}, "eval", 1, "p.json"),
    policy({"policy.w": [0.0] * 5}, "eval", 1, "p.json"),
    policy({"version": 7}, "eval", 1, "version"),
    policy({"sha256": "0" * 64}, "eval", 1, "checksum"),
    policy({"normalizer.m2": [-1.0] * 11}, "render", 1, "normalizer.m2"),
    policy({"policy.rows": 0}, "render", 1, "p.json"),
    Case(
        "render flags",
        [TRAINER, "render", "--policy", "p.json", "-o", "x.avi"],
        2,
        ".gif",
    ),
    Case(
        "render flags",
        [TRAINER, "render", "--policy", "none.json", "-o", "x.gif"],
        2,
        "none",
    ),
    Case("render flags", [TRAINER, "render", "--policy", "p.json"], 2, "-o"),
    Case(
        "render flags",
        [TRAINER, "render", "--policy", "p.json", "-o", "x.gif", "--size", "33x20"],
        2,
        "size",
    ),
    Case(
        "render flags",
        [TRAINER, "render", "--policy", "p.json", "-o", "x.gif", "--episodes", "0"],
        2,
        "episodes",
    ),
    Case("report", [TRAINER, "table", "nowhere"], 2, "nowhere"),
    Case("report", [TRAINER, "plot"], 2, "run director"),
    Case("report", [TRAINER, "table", "--bogus", "."], 2, "bogus"),
    bridge("--workers", "0", needle="--workers"),
    bridge("--workers", "100000", needle="--workers"),
    bridge("--listen", "nohost", needle="--listen"),
    bridge("--listen", "0.0.0.0:0", needle="plaintext"),
    bridge("--grace-seconds", "nan", needle="--grace-seconds"),
    bridge("--tls-cert", "bad.pem", "--tls-key", "bad.pem", needle="PEM"),
    bridge("--tls-cert", "bad.pem", needle="--tls-key"),
    bridge("--tls-client-ca", "bad.pem", needle="--tls-client-ca"),
    bridge("--max-episodes-per-call", "0", needle="--max-episodes-per-call"),
    bridge("--max-steps-in-flight", "-3", needle="--max-steps-in-flight"),
    bridge("--max-abs-shift", "inf", needle="--max-abs-shift"),
    bridge("--backend", "turbo", needle="--backend"),
    config("env: Hopper-v1\n---\nrate: 5\n", "second YAML document"),
    Case(
        "config files",
        [TRAINER, "--config", "fifo.yaml"],
        2,
        "not a regular file",
        (),
        run_files.fifo("fifo.yaml"),
    ),
    Case(
        "config files",
        [TRAINER, "--config", "zero.yaml"],
        2,
        "not a regular file",
        (),
        run_files.zero("zero.yaml"),
    ),
    Case(
        "eval policy files",
        [TRAINER, "eval", "--policy", "zero.json"],
        1,
        "not a regular file",
        (),
        run_files.zero("zero.json"),
    ),
    Case(
        "eval policy files",
        [TRAINER, "eval", "--policy", "x.npz"],
        1,
        "export",
        (("x.npz", "PK\x03\x04"),),
    ),
    policy({"version": 2}, "eval", 1, "sha256: missing or empty"),
    policy({"env_id": "Nowhere-v1"}, "eval", 1, "Nowhere-v1"),
    policy({"policy.rows": 2, "policy.w": [0.0] * 22}, "eval", 1, "p.json"),
    policy({"policy.rows": 2, "policy.w": [0.0] * 22}, "render", 1, "p.json"),
    Case(
        "eval flags",
        [
            TRAINER,
            "eval",
            "--policy",
            "p.json",
            "--horizon",
            "5000",
            "--log-level",
            "error",
        ],
        2,
        "horizon",
    ),
    Case(
        "train flags",
        [
            TRAINER,
            "--env",
            "Hopper-v1",
            "--kwarg",
            "reset_noise_scale=1e308",
            "--log-level",
            "error",
        ],
        2,
        "reset_noise_scale",
        gone=("runs",),
    ),
    Case(
        "render policy files",
        [TRAINER, "render", "--policy", "huge.json", "-o", "x.gif"],
        1,
        "huge.json",
        (("huge.json", json.dumps(HUGE)), ("x.gif", "the render before")),
    ),
    *(Case(*spec) for spec in run_files.CASES),
    *ISSUE_52,
]


def clean(case: Case, proc: subprocess.CompletedProcess[str], left: list[str]) -> str:
    """Empty when the case was handled cleanly, else what was wrong."""
    err = proc.stderr.strip()
    lines = [line for line in err.splitlines() if line.strip()]
    wrong = []
    if proc.returncode != case.code:
        wrong.append(f"exit {proc.returncode}, want {case.code}")
    if any(s in err for s in ("goroutine ", "panic:", "Traceback")):
        wrong.append("a panic or traceback")
    if case.area != "bridge flags" and len(lines) != (1 if case.code else 0):
        wrong.append(f"{len(lines)} lines on stderr")
    if case.needle.lower() not in err.lower():
        wrong.append(f"stderr does not name {case.needle!r}")
    if left:
        wrong.append(f"left {left}")
    return "; ".join(wrong)


def main() -> int:
    areas: dict[str, dict[str, int]] = {}
    failures = []
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix="probe-") as tmp:
            work = Path(tmp)
            given = {"p.json": json.dumps(POLICY), "bad.pem": "garbage\n"}
            given.update(dict(case.files))
            for name, text in given.items():
                (work / name).write_text(text)
            if case.setup is not None:
                case.setup(work, run_files.base())
            before = {p.name for p in work.iterdir()}
            argv = run_files.expand(work, case.argv)
            try:
                proc = subprocess.run(
                    argv,
                    cwd=work,
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                    env={**os.environ, "PYTHONPATH": str(REPO / "bridge_py")},
                )
            except subprocess.TimeoutExpired as exc:
                proc = subprocess.CompletedProcess(argv, -9, "", f"hung for {exc.timeout}s")
            left = sorted(p.name for p in work.iterdir() if p.name not in before)
            left += [str(p.relative_to(work)) for g in case.gone for p in work.glob(g)]
            changed = [n for n, t in given.items() if (work / n).read_text() != t]
            wrong = clean(case, proc, left)
            if changed:
                wrong = "; ".join(filter(None, [wrong, f"changed {changed}"]))
        area = areas.setdefault(case.area, {"tried": 0, "clean": 0})
        area["tried"] += 1
        if wrong:
            failures.append({"area": case.area, "argv": case.argv[1:], "wrong": wrong})
            print(f"NOT CLEAN {case.area}: {case.argv[1:]}: {wrong}", file=sys.stderr)
        else:
            area["clean"] += 1
    total = {
        "tried": sum(a["tried"] for a in areas.values()),
        "clean": sum(a["clean"] for a in areas.values()),
    }
    print(json.dumps({"total": total, "areas": areas, "not_clean": failures}))
    run_files.cleanup()
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
