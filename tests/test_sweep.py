"""Sweep files are validated before anything starts (naming the bad key or distribution), and
the tiny sweep (configs/sweeps/tiny.yaml: 4 trials of configs/tiny.yaml, Optuna + ASHA) runs,
writes its table and best config, and resumes after its driver is killed without training a
finished trial again."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("yaml", reason="needs the train extra")
from yahtzee_agents.config import ConfigError, load_config
from yahtzee_agents.sweep import TRIAL_INDEX, load_sweep, trial_values

ROOT = Path(__file__).resolve().parents[1]
TINY_SWEEP = ROOT / "configs" / "sweeps" / "tiny.yaml"

GOOD = """\
name: s
base: {base}
space:
  ppo.learning_rate: loguniform(1e-5, 1e-3)
  policy.net_arch: choice([[32, 32], [64, 64]])
  train.seed: grid([0, 1])
trials: 4
"""


def _sweep_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(text.format(base=ROOT / "configs" / "tiny.yaml"))
    return path


def test_a_good_sweep_file_and_its_grid(tmp_path: Path) -> None:
    sweep = load_sweep(_sweep_file(tmp_path, GOOD))
    assert sweep.mode == "max"
    assert sweep.grid == [{"train.seed": 0}, {"train.seed": 1}]
    config = {"ppo.learning_rate": 1e-4, "policy.net_arch": "[64, 64]", TRIAL_INDEX: 1}
    values = trial_values(sweep, config)
    assert values == {"ppo.learning_rate": 1e-4, "policy.net_arch": [64, 64], "train.seed": 1}
    cfg = sweep.trial_config(values, "s-1")
    assert (cfg.ppo.learning_rate, cfg.policy.net_arch, cfg.train.seed) == (1e-4, [64, 64], 1)
    assert load_sweep(TINY_SWEEP).file.trials == 4


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("ppo.learning_rate:", "ppo.learnig_rate:", "space.ppo.learnig_rate: unknown config key"),
        ("policy.net_arch:", "policy:", "space.policy: is a section"),
        ("loguniform(1e-5, 1e-3)", "loguniform(0, 1e-3)", "loguniform needs low > 0"),
        ("loguniform(1e-5, 1e-3)", "loguniform(1e-3, 1e-5)", "needs low < high"),
        ("loguniform(1e-5, 1e-3)", "normal(0, 1)", "unknown distribution 'normal'"),
        ("loguniform(1e-5, 1e-3)", "1e-4", "space.ppo.learning_rate: expected a distribution"),
        ("choice([[32, 32], [64, 64]])", "choice([32, 64])", "space.policy.net_arch: choice"),
        ("choice([[32, 32], [64, 64]])", "choice([])", "takes one non-empty list"),
        ("grid([0, 1])", "grid([0, -1])", "train.seed: must be in 0..2**32-1, got -1"),
        ("trials: 4", "trials: 3", "trials: must be a positive multiple of the 2 grid points"),
        ("trials: 4", "trails: 4", "trails: unknown key"),
        ("trials: 4", "metric: reward", "metric: expected one of 'mean', 'regret'"),
    ],
)
def test_bad_sweep_files_fail_naming_the_problem(tmp_path, old, new, message) -> None:
    assert old in GOOD
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_sweep(_sweep_file(tmp_path, GOOD.replace(old, new)))


def test_cli_refuses_a_bad_sweep_before_starting(tmp_path: Path) -> None:
    path = _sweep_file(tmp_path, GOOD.replace("ppo.learning_rate:", "ppo.nope:"))
    out = subprocess.run(
        [sys.executable, "-m", "yahtzee_env", "sweep", str(path), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert "space.ppo.nope: unknown config key" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_tiny_sweep_finishes_and_resumes_after_a_kill(tmp_path: Path) -> None:
    pytest.importorskip("ray.tune", reason="needs the ray extra")
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    out = tmp_path / "sweep"
    env = {
        **os.environ,
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # Ray on loopback
        "RAY_USAGE_STATS_ENABLED": "0",
        "YAHTZEE_RAY_OBJECT_STORE_MB": "80",
    }
    command = [sys.executable, "-m", "yahtzee_env", "sweep", str(TINY_SWEEP), "--out", str(out)]
    with open(tmp_path / "first.log", "w") as log:
        driver = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:  # kill the driver (and the Ray it started) once a trial has finished
        deadline = time.monotonic() + 600
        while not list(out.glob("runs/*/final/eval.json")):
            assert driver.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    finished = {p.parents[1].name for p in out.glob("runs/*/final/eval.json")}
    assert not (out / "results.csv").exists()

    resumed = subprocess.run(
        [*command, "--resume"], capture_output=True, text=True, env=env, timeout=900
    )
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    summary = json.loads((out / "results.json").read_text())
    trials = summary["trials"]
    assert len(trials) == 4
    assert {t["status"] for t in trials} <= {"completed", "stopped early"}
    assert finished <= {t["trial_id"] for t in trials}
    for trial_id in finished:  # trained once: one session in its run folder
        sessions = (out / "runs" / trial_id / "sessions.jsonl").read_text().splitlines()
        assert len(sessions) == 1, trial_id
    header = (out / "results.csv").read_text().splitlines()[0].split(",")
    assert header[:2] == ["trial_id", "status"] and "ppo.learning_rate" in header
    best = load_config(out / "best.yaml")  # ready to train
    assert best.name == "tiny-sweep-best"
    assert best.ppo.learning_rate == pytest.approx(summary["best"]["ppo.learning_rate"])
    assert summary["best"]["status"] == "completed"
    assert (out / "results.png").stat().st_size > 0
