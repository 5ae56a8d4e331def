"""make chaos: inject faults into short training runs and check that each survives.

Every fault runs the same short run (Swimmer-v1, STP_IS adaptive, 120 training
episodes of 300 steps, seed 4) and compares its curve (less the wall-clock fields),
result and final policy with an undisturbed run's. A fault is survived when they are
identical; the episodes lost are the training episodes the disturbed run ended short of
the undisturbed one (0 when it finished, however often it was resumed).

Faults: SIGSTOP (3 s) and SIGKILL of a running bridge, of one of its workers, and of the
trainer; a restart of the bridge on its address; SIGKILL of the trainer's own local
bridge (the trainer starts it again); SIGTERM of the trainer (it checkpoints), also while the
bridge is down (it must stop within its 8 s grace); a second
trainer with --force on the run directory in use (refused; the first goes on); an env
whose step kills its worker (``os._exit(3)``, tests/user_envs.py's CrashStep-v0): its run
must fail in under 60 s (exit 1) with a line naming the env, and the bridge must then serve
the undisturbed run as before. A killed trainer is resumed with --resume, as a user would.

The last line on stdout is one JSON object: faults_injected, faults_survived,
episodes_lost, and one entry per fault.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRAINER = REPO / "bin" / "trainer"
PYTHON = REPO / ".venv" / "bin" / "python"
ENV, SEED, VARIANT = "Swimmer-v1", 4, "stp_is-adaptive"
ARGS = ["--env", ENV, "--method", "stp_is", "--k", "paper", "--directions", "1"]
ARGS += ["--max-episodes", "120", "--horizon", "300", "--seed", str(SEED), "--eval-episodes", "2"]
TIMING = ("elapsed_s", "eps_per_s", "time", "wall_s", "cpu_s")


@dataclass
class Outcome:
    """One fault: what was done, whether the run survived it, what it lost."""

    fault: str
    survived: bool
    episodes_lost: int
    detail: str


class Bridge:
    """A bridge on a fixed loopback port, which a fault may stop, kill or restart."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.proc = self.start()

    def start(self) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [str(PYTHON), "-m", "stpis_bridge", "--listen", f"127.0.0.1:{self.port}"]
            + ["--workers", "2", "--log-level", "warning", "--env-module", "tests.user_envs"],
            cwd=REPO / "bridge_py",
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("LISTENING "):
            raise RuntimeError(f"bridge did not start: {line!r}")
        return proc

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def workers(self) -> list[int]:
        """The pids of the bridge's worker processes (its children)."""
        return children(self.proc.pid)

    def restart(self) -> None:
        """Kill the bridge and its workers, and start it again on its port."""
        self.kill()
        self.proc = self.start()

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def children(pid: int) -> list[int]:
    """The pids of a process's children, whichever of its threads forked them."""
    pids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    return pids


def curve(run: Path) -> list[dict[str, object]]:
    out = []
    for line in (run / "curve.jsonl").read_text().splitlines():
        if line.strip():
            point = json.loads(line)
            out.append({k: v for k, v in point.items() if k not in TIMING})
    return out


# The fields that name a run (and the seals over them): two runs of the same settings
# differ in these only.
IDENTITY = {"run_id", "sha256"}


def result(run: Path) -> dict[str, object]:
    doc = json.loads((run / "result.json").read_text())
    # curve_sha256 covers the curve's wall-clock fields too: the curves are compared less them.
    return {
        k: v for k, v in doc.items() if k not in TIMING and k not in IDENTITY and "sha256" not in k
    }


def policy(run: Path) -> dict[str, object]:
    doc = json.loads((run / "policy.json").read_text())
    return {k: v for k, v in doc.items() if k not in IDENTITY}


def temporaries(run: Path) -> list[str]:
    """The temporary files of atomic writes left in the run directory."""
    return sorted(p.name for p in run.iterdir() if p.name.startswith(".") and ".tmp" in p.name)


def run_dir(out: Path) -> Path:
    return out / ENV / VARIANT / f"seed{SEED}"


def trainer(out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(TRAINER), *ARGS, "--out", str(out), "--log-level", "error", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_progress(run: Path, lines: int = 3, timeout: float = 60) -> None:
    """Wait until the run's curve has some lines: training is under way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = run / "curve.jsonl"
        if path.exists() and path.read_text().count("\n") >= lines:
            return
        time.sleep(0.02)
    raise TimeoutError(f"no progress in {run} within {timeout}s")


def finish(proc: subprocess.Popen[str], out: Path, bridge: list[str]) -> str:
    """Wait for the trainer; resume the run until it finishes. Returns what happened."""
    code = proc.wait(timeout=300)
    notes = [f"exit {code}"]
    for _ in range(3):
        if (run_dir(out) / "result.json").exists():
            break
        resumed = subprocess.run(
            [str(TRAINER), *ARGS, "--out", str(out), "--log-level", "error", "--resume", *bridge],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        notes.append(f"--resume: exit {resumed.returncode}")
    return ", ".join(notes)


def compare(name: str, reference: Path, out: Path, detail: str) -> Outcome:
    got = run_dir(out)
    want_curve, want_result = curve(reference), result(reference)
    episodes = int(str(want_result["episodes"]))
    if not (got / "result.json").exists():
        done = curve(got)
        reached = int(str(done[-1]["episodes"])) if done else 0
        return Outcome(name, False, episodes - reached, detail + "; the run did not finish")
    same = (
        curve(got) == want_curve and result(got) == want_result and policy(got) == policy(reference)
    )
    left = temporaries(got)
    lost = episodes - int(str(result(got)["episodes"]))
    note = ("" if same else "; differs") + (f"; left {left}" if left else "")
    return Outcome(name, same and not left, max(lost, 0), detail + note)


def pause(pid: int, seconds: float = 3.0, group: bool = False) -> None:
    send = os.killpg if group else os.kill
    send(pid, signal.SIGSTOP)
    time.sleep(seconds)
    send(pid, signal.SIGCONT)


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="chaos-"))
    bridge = Bridge(50600 + os.getpid() % 1000)
    via = ["--bridge", bridge.addr]
    outcomes: list[Outcome] = []
    try:
        ref_out = tmp / "reference"
        ref = trainer(ref_out, *via)
        if ref.wait(timeout=300) != 0:
            raise RuntimeError(
                f"the undisturbed run failed: {ref.stderr.read() if ref.stderr else ''}"
            )
        reference = run_dir(ref_out)

        faults: list[tuple[str, list[str], Callable[[subprocess.Popen[str]], None]]] = [
            ("bridge SIGSTOP 3s", via, lambda p: pause(bridge.proc.pid, group=True)),
            ("bridge restart", via, lambda p: bridge.restart()),
            ("worker SIGSTOP 3s", via, lambda p: pause(bridge.workers()[0])),
            ("worker SIGKILL", via, lambda p: os.kill(bridge.workers()[0], signal.SIGKILL)),
            ("trainer SIGSTOP 3s", via, lambda p: pause(p.pid)),
            ("trainer SIGKILL", via, lambda p: p.kill()),
            ("trainer SIGTERM", via, lambda p: p.send_signal(signal.SIGTERM)),
            ("local bridge SIGKILL", [], lambda p: kill_local_bridge(p.pid)),
        ]
        for name, extra, act in faults:
            out = tmp / name.replace(" ", "-")
            proc = trainer(out, *extra)
            wait_for_progress(run_dir(out))
            act(proc)
            detail = finish(proc, out, extra)
            outcomes.append(compare(name, reference, out, detail))

        # SIGTERM while the bridge is down: the trainer, retrying, must still stop
        # within its grace (8 s), on its last checkpoint; it resumes once the
        # bridge is back.
        out = tmp / "trainer-SIGTERM-bridge-down"
        proc = trainer(out, *via)
        wait_for_progress(run_dir(out))
        bridge.kill()
        time.sleep(2)
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
            stopped = True
        except subprocess.TimeoutExpired:
            proc.kill()
            stopped = False
        took = time.monotonic() - start
        bridge.proc = bridge.start()
        detail = finish(proc, out, via) + f"; stopped {took:.1f} s after SIGTERM"
        outcome = compare("trainer SIGTERM, bridge down", reference, out, detail)
        outcome.survived = outcome.survived and stopped
        outcomes.append(outcome)

        # A second trainer on a run in use is refused at once; the first goes on.
        out = tmp / "second-trainer"
        first = trainer(out, *via)
        wait_for_progress(run_dir(out))
        second = subprocess.run(
            [str(TRAINER), *ARGS, "--out", str(out), "--force", *via],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        refused = second.returncode == 1 and "in use by another trainer" in second.stderr
        detail = finish(first, out, via) + f"; second trainer: exit {second.returncode}"
        outcome = compare("second trainer --force", reference, out, detail)
        outcome.survived = outcome.survived and refused
        outcomes.append(outcome)

        # An env that kills its worker in step is the env's fault: its run fails at once,
        # naming it, and the bridge goes on serving the undisturbed run.
        crash_env = "tests.user_envs:CrashStep-v0"
        start = time.monotonic()
        bad = subprocess.run(
            [str(TRAINER), "--env", crash_env, "--max-episodes", "16", "--out", str(tmp / "crash")]
            + ["--log-level", "error", *via],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        took = time.monotonic() - start
        last = bad.stderr.strip().splitlines()[-1] if bad.stderr.strip() else ""
        named = bad.returncode == 1 and crash_env in last and "the env's fault" in last
        out = tmp / "after-crashing-env"
        proc = trainer(out, *via)
        detail = finish(proc, out, via)
        detail += f"; the crashing env's run: exit {bad.returncode} in {took:.1f} s: {last[-120:]}"
        outcome = compare("env kills its worker in step", reference, out, detail)
        outcome.survived = outcome.survived and named and took < 60
        outcomes.append(outcome)
    finally:
        bridge.kill()

    summary = {
        "faults_injected": len(outcomes),
        "faults_survived": sum(o.survived for o in outcomes),
        "episodes_lost": sum(o.episodes_lost for o in outcomes),
        "faults": [asdict(o) for o in outcomes],
    }
    for o in outcomes:
        print(f"{'ok  ' if o.survived else 'FAIL'} {o.fault}: {o.detail}", file=sys.stderr)
    print(json.dumps(summary))
    if summary["faults_survived"] != summary["faults_injected"]:
        print(f"the runs are kept in {tmp}", file=sys.stderr)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def kill_local_bridge(trainer_pid: int) -> None:
    """SIGKILL the process group of the bridge the trainer started (its child)."""
    for pid in children(trainer_pid):
        os.killpg(pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
