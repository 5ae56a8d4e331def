"""stpis_bridge.policy: the trainer's policy files in a plain gymnasium loop.

The policy files are written here in the JSON layout of Go's ``policy.Marshal``
(``policy/file.go``: version, env_id, policy {rows, cols, w, bias}, normalizer
{count, mean, m2}); Python's ``json`` writes floats in the shortest form that parses
back to the same bits, as Go's ``encoding/json`` does.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from stpis_bridge import envs, policy
from stpis_bridge.rollout import STD_EPSILON, LinearPolicy, run_episode

README = Path(__file__).resolve().parents[2] / "README.md"
SNIPPET = re.compile(
    r"<!-- policy-snippet:begin -->\s*```python\n(.*?)```\s*<!-- policy-snippet:end -->",
    re.DOTALL,
)
# The path the README's snippet loads, relative to the directory it runs in.
SNIPPET_RUN = Path("runs/Hopper-v1/stp-combined-guided/seed1")


def go_policy_file(
    path: Path,
    w: np.ndarray,
    *,
    env_id: str = "Hopper-v1",
    count: int = 0,
    mean: np.ndarray | None = None,
    m2: np.ndarray | None = None,
    bias: np.ndarray | None = None,
) -> Path:
    """Write a policy file as Go's policy.Marshal does and return its path."""
    rows, cols = w.shape
    lin: dict[str, Any] = {"rows": rows, "cols": cols, "w": w.ravel().tolist()}
    if bias is not None:  # Go omits an empty bias (omitempty)
        lin["bias"] = bias.tolist()
    doc = {
        "version": 1,
        "env_id": env_id,
        "policy": lin,
        "normalizer": {
            "count": count,
            "mean": (np.zeros(cols) if mean is None else mean).tolist(),
            "m2": (np.zeros(cols) if m2 is None else m2).tolist(),
        },
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
    return path


def hopper_policy(seed: int) -> dict[str, Any]:
    """A trained-looking Hopper policy: a normalizer of 500 observations, one constant
    feature (std 0, zeroed by the bridge), and a bias."""
    rng = np.random.default_rng(seed)
    mean = rng.normal(0, 1, 11)
    m2 = rng.uniform(1, 50, 11)
    m2[3] = 0.0
    return {
        "w": rng.normal(0, 0.3, (3, 11)),
        "count": 500,
        "mean": mean,
        "m2": m2,
        "bias": np.array([0.1, -0.2, 0.05]),
    }


def bridge_return(fields: dict[str, Any], seed: int) -> float:
    """The return of the bridge's own rollout of the policy on Hopper-v5 from seed."""
    std = np.sqrt(fields["m2"] / (fields["count"] - 1))
    lp = LinearPolicy(fields["w"], fields["mean"], std, fields["bias"])
    env = envs.make_env("Hopper-v5", {})
    try:
        low, high = envs.action_bounds(env)
        out = run_episode(
            env, lp, seed=seed, horizon=1000, shift=0.0, action_low=low, action_high=high
        )
    finally:
        env.close()
    return out.total_return


def test_readme_snippet_runs_one_episode(tmp_path, monkeypatch):
    found = SNIPPET.findall(README.read_text(encoding="utf-8"))
    assert len(found) == 1, "README.md must hold one policy snippet between its markers"
    code = found[0]
    assert len(code.strip().splitlines()) <= 8, f"the README snippet is over 8 lines:\n{code}"
    assert f'"{SNIPPET_RUN.as_posix()}"' in code, "the snippet loads another path; update the test"

    fields = hopper_policy(5)
    monkeypatch.chdir(tmp_path)
    go_policy_file(SNIPPET_RUN / "best_policy.json", **fields)
    # policy.json (the last checkpoint) is not what a run directory loads.
    go_policy_file(SNIPPET_RUN / "policy.json", np.zeros((3, 11)))

    ns: dict[str, Any] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), ns)

    want = bridge_return(fields, seed=0)
    assert ns["total"] == want  # bit for bit the bridge's return
    assert out.getvalue() == f"return {want:.1f}\n"
    assert ns["pi"].gymnasium_id == "Hopper-v5"
    assert ns["pi"].env_id == "Hopper-v1"


def test_act_is_the_go_policy_formula(tmp_path):
    fields = hopper_policy(7)
    pi = policy.load(go_policy_file(tmp_path / "p.json", **fields))
    std = np.sqrt(fields["m2"] / 499)
    np.testing.assert_array_equal(pi.obs_std, std)
    np.testing.assert_array_equal(pi.obs_mean, fields["mean"])
    np.testing.assert_array_equal(pi.action_low, -np.ones(3))  # Hopper-v5's bounds
    np.testing.assert_array_equal(pi.action_high, np.ones(3))
    rng = np.random.default_rng(8)
    for _ in range(50):
        obs = rng.normal(0, 3, 11)
        z = np.where(std >= STD_EPSILON, (obs - fields["mean"]) / np.where(std > 0, std, 1), 0)
        want = np.clip(fields["w"] @ z + fields["bias"], -1, 1)
        np.testing.assert_allclose(pi.act(obs), want, rtol=1e-12, atol=1e-12)
    # The constant feature (std 0) does not move the action, however large.
    obs = rng.normal(0, 1, 11)
    far = obs.copy()
    far[3] = 1e6
    np.testing.assert_array_equal(pi.act(obs), pi.act(far))


def test_normalizer_std_follows_go_snapshot():
    mean, m2 = np.array([2.0, -3.0]), np.array([8.0, 2.0])
    np.testing.assert_array_equal(policy.normalizer_std(0, mean, m2), [1.0, 1.0])
    np.testing.assert_array_equal(policy.normalizer_std(1, mean, m2), [2.0, 3.0])
    np.testing.assert_array_equal(policy.normalizer_std(5, mean, m2), np.sqrt([2.0, 0.5]))


def test_act_clips_to_the_given_bounds_and_checks_its_input(tmp_path):
    path = go_policy_file(tmp_path / "p.json", np.array([[100.0, 0.0], [0.0, -100.0]]))
    pi = policy.load(path, action_space=gym.spaces.Box(-0.5, 0.25, (2,)))
    np.testing.assert_array_equal(pi.act([1.0, 1.0]), [0.25, -0.5])
    np.testing.assert_array_equal(pi.act([0.001, 0.001]), [0.1, -0.1])
    pi = policy.load(path, action_space=([-2.0, -2.0], [2.0, 2.0]))
    np.testing.assert_array_equal(pi.act([1.0, 1.0]), [2.0, -2.0])
    with pytest.raises(ValueError, match=r"observation shape \(3,\)"):
        pi.act([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"action\[0\] NaN"):
        pi.act([np.nan, 0.0])
    with pytest.raises(policy.PolicyFileError, match=r"action_low has shape \(3,\), want \(2,\)"):
        policy.load(path, action_space=gym.spaces.Box(-1, 1, (3,)))


def test_gymnasium_env_id_maps_the_paper_names():
    known = set(envs.mujoco_env_ids())
    for task in envs.PAPER_TASKS:
        got = policy.gymnasium_env_id(f"{task}-v1")
        assert got == f"{task}-v5" and got in known
    assert policy.gymnasium_env_id("Hopper-v5") == "Hopper-v5"
    assert policy.gymnasium_env_id("Hopper-v4") == "Hopper-v4"


def test_load_a_run_directory(tmp_path):
    run = tmp_path / "seed1"
    go_policy_file(run / "policy.json", np.full((3, 11), 0.5))
    assert policy.load(run).weights[0, 0] == 0.5  # no best policy yet: the last one
    go_policy_file(run / "best_policy.json", np.full((3, 11), 0.25))
    assert policy.load(run).weights[0, 0] == 0.25
    with pytest.raises(policy.PolicyFileError, match="no such policy file"):
        policy.load(tmp_path / "empty")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(version=3), "file version 3, this module reads 1 and 2"),
        (lambda d: d.update(version=2), "sha256: missing or empty"),
        (lambda d: d.update(run_id="r1"), "version: 1, but the file names run 'r1'"),
        (lambda d: d.pop("normalizer"), "missing policy or normalizer"),
        (lambda d: d["policy"].update(w=[1.0]), r"W has 1 entries, want 6 \(2x3\)"),
        (lambda d: d["policy"].update(rows=0), "shape must be positive"),
        (lambda d: d["policy"].update(bias=[1.0]), "bias has 1 entries, want 0 or 2"),
        (lambda d: d["policy"].update(w=[1.0] * 5 + ["x"]), "policy.w is not a list of numbers"),
        (lambda d: d["policy"].update(w=[1.0] * 5 + [float("nan")]), r"policy.w\[5\] is nan"),
        (lambda d: d["policy"].update(w=[1.0] * 5 + [10**400]), r"policy.w\[5\] is 1000"),
        (lambda d: d["normalizer"].update(count=-1), "normalizer.count -1 is not a count"),
        (lambda d: d["normalizer"].update(m2=[0.0]), "normalizer has 3 means and 1 m2"),
        (lambda d: d.update(env_id=7), "env_id 7 is not a string"),
    ],
)
def test_bad_json_files_name_the_field(tmp_path, edit, message):
    path = go_policy_file(tmp_path / "p.json", np.ones((2, 3)), env_id="Swimmer-v1")
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(policy.PolicyFileError, match=message):
        policy.load(path, action_space=([-1, -1], [1, 1]))


def test_not_json_and_wrong_env(tmp_path):
    path = tmp_path / "p.json"
    path.write_text("{")
    with pytest.raises(policy.PolicyFileError, match="not a policy JSON file"):
        policy.load(path)
    go_policy_file(path, np.ones((2, 8)), env_id="Swimmer-v1")
    with pytest.raises(policy.PolicyFileError, match="trained on Swimmer-v1, not on env_id Hopper"):
        policy.load(path, env_id="Hopper-v1")
    assert policy.load(path, env_id="Swimmer-v5").env_id == "Swimmer-v5"


def test_npz_is_export_only(tmp_path):
    run = tmp_path / "seed1"
    run.mkdir()
    (run / "lin_policy_plus.npz").write_bytes(b"PK\x03\x04 an ARS export")
    with pytest.raises(policy.PolicyFileError, match="export in ARS's layout"):
        policy.load(run / "lin_policy_plus.npz", env_id="Swimmer-v1")


def test_sealed_policy_of_another_run_is_refused(tmp_path):
    """A version 2 file must be sealed, and name the run.json beside it."""
    run = tmp_path / "seed1"
    run.mkdir()
    go = subprocess_policy(run / "policy.json", run_id="aa", seed=1)
    (run / "run.json").write_text(json.dumps({"version": 3, "run_id": "aa", "seed": 1}))
    assert policy.load(run, action_space=([-1, -1], [1, 1])).weights.shape == (2, 3)
    (run / "run.json").write_text(json.dumps({"version": 3, "run_id": "bb", "seed": 1}))
    with pytest.raises(policy.PolicyFileError, match="a policy of another run"):
        policy.load(run, action_space=([-1, -1], [1, 1]))
    doc = json.loads(go.read_text())
    doc["sha256"] = ""
    go.write_text(json.dumps(doc))
    with pytest.raises(policy.PolicyFileError, match="sha256: missing or empty"):
        policy.load(go, action_space=([-1, -1], [1, 1]))


def subprocess_policy(path: Path, *, run_id: str, seed: int) -> Path:
    """Write a version 2 policy file sealed as Go's package seal does."""
    doc = {
        "version": 2,
        "env_id": "Swimmer-v1",
        "run_id": run_id,
        "seed": seed,
        "policy": {"rows": 2, "cols": 3, "w": [0.5] * 6},
        "normalizer": {"count": 0, "mean": [0.0] * 3, "m2": [0.0] * 3},
        "sha256": "",
    }
    raw = json.dumps(doc, separators=(",", ":")).encode()
    digest = hashlib.sha256(raw).hexdigest().encode()
    path.write_bytes(raw.replace(b'"sha256":""', b'"sha256":"' + digest + b'"'))
    return path
