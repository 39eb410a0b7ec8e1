"""A tiny training run end to end: warm start, PPO, checkpoints, resume after a kill, export,
numpy loading, and parity between the SB3 policy, the npz policy and the ONNX model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")

from yahtzee_agents.config import load_config  # noqa: E402
from yahtzee_agents.run.folder import merit  # noqa: E402
from yahtzee_agents.train import train  # noqa: E402
from yahtzee_env.envs.vector import YahtzeeVectorEnv  # noqa: E402
from yahtzee_env.policies.models import load_opponent  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny.yaml"


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "yahtzee_env", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
        **kwargs,
    )


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    torch.set_num_threads(1)
    runs = tmp_path_factory.mktemp("runs")
    return train(load_config(TINY), runs / "tiny", progress=False, argv=["test"])


def test_run_folder_contents(tiny_run: Path) -> None:
    for name in (
        "config.yaml",
        "command.txt",
        "meta.json",
        "warm_start.json",
        "best/model.zip",
        "best/eval.json",
        "final/model.zip",
        "final/eval.json",
    ):
        assert (tiny_run / name).exists(), name
    meta = json.loads((tiny_run / "meta.json").read_text())
    assert meta["config_sha256"] == load_config(TINY).digest()
    assert meta["package_version"]
    env = meta["environment"]  # issue 21.4: what the run ran on
    assert env["libraries"]["torch"] == torch.__version__.split("+")[0] or env["libraries"]["torch"]
    assert env["libraries"]["stable-baselines3"] and env["cpu"]["logical_cpus"] >= 1
    if Path("/proc/cpuinfo").exists():
        assert env["cpu"]["model"] and env["cpu"]["flags"]
    assert env["kernels"]["torch"]["cpu_capability"] and "MKL" in env["kernels"]["torch"]["config"]
    if not isinstance(env["kernels"]["threadpools"], str):
        assert {p["user_api"] for p in env["kernels"]["threadpools"]} & {"blas", "openmp"}
    assert len(meta["sessions"]) == 1
    ckpts = sorted((tiny_run / "checkpoints").glob("ckpt_*.zip"))
    assert 1 <= len(ckpts) <= load_config(TINY).train.keep_checkpoints
    assert not list(tiny_run.rglob("*.tmp*")), "no half-written files left behind"
    assert list((tiny_run / "tb").rglob("events.out.tfevents.*"))
    final = json.loads((tiny_run / "final" / "eval.json").read_text())
    assert final["timesteps"] >= load_config(TINY).train.total_timesteps
    assert final["games"] == load_config(TINY).train.eval_games


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _tb_steps(run: Path) -> dict[str, list[int]]:
    """TensorBoard scalar tag -> the steps it was written at, over every TB run of ``run``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps: dict[str, list[int]] = {}
    for folder in sorted((run / "tb").iterdir()):
        events = EventAccumulator(str(folder))
        events.Reload()
        for tag in events.Tags()["scalars"]:
            steps.setdefault(tag, []).extend(e.step for e in events.Scalars(tag))
    return steps


def test_train_scalars_are_logged_once_per_step(tiny_run: Path) -> None:
    """Evaluations between PPO updates dump only eval/*: train/* are written by SB3 alone,
    once per step (they used to appear twice at every evaluation step)."""
    steps = _tb_steps(tiny_run)
    assert steps["eval/mean_score"] and steps["train/loss"]
    for tag, at in steps.items():
        assert len(at) == len(set(at)), f"{tag} written twice at a step: {at}"


def test_resuming_a_finished_run_changes_nothing(tiny_run: Path) -> None:
    """Nothing left to train: nothing is written (no stray TensorBoard run, no new files),
    the command says so and prints the run's result."""
    before = _tree(tiny_run)
    out = _cli("train", "--resume", str(tiny_run), "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "already finished at 2048 steps" in out.stdout
    assert "result: final" in out.stdout and "best" in out.stdout
    assert _tree(tiny_run) == before


def test_best_is_ranked_by_regret_when_measured() -> None:
    luckier = {"mean": 250.0, "regret_per_game": 5.0}  # a lucky sample of a worse policy
    better = {"mean": 248.0, "regret_per_game": 4.0}
    assert merit(better) > merit(luckier)
    assert merit({"mean": 200.0}) < merit({"mean": 201.0})
    assert merit({"mean": 100.0, "regret_per_game": 90.0}) > merit({"mean": 250.0})


def test_resume_extends_a_finished_run(tiny_run: Path) -> None:
    """RL Zoo's habit: --resume RUN --set train.total_timesteps=N trains on to N steps, in
    the same TensorBoard run, keeping the best model unless the new one is better."""
    best_before = merit(json.loads((tiny_run / "best" / "eval.json").read_text()))
    tb_runs = sorted(p.name for p in (tiny_run / "tb").iterdir())
    refused = _cli("train", "--resume", str(tiny_run), "--set", "ppo.learning_rate=1e-3")
    assert refused.returncode == 2 and "train.total_timesteps" in refused.stderr
    out = _cli(
        "train", "--resume", str(tiny_run), "--set", "train.total_timesteps=3072", "--no-progress"
    )
    assert out.returncode == 0, out.stderr
    assert "result: final" in out.stdout and "3,072 steps" in out.stdout
    final = json.loads((tiny_run / "final" / "eval.json").read_text())
    assert final["timesteps"] == 3072
    assert load_config(tiny_run / "config.yaml").train.total_timesteps == 3072
    best_after = merit(json.loads((tiny_run / "best" / "eval.json").read_text()))
    assert best_after >= best_before
    assert sorted(p.name for p in (tiny_run / "tb").iterdir()) == tb_runs
    steps = _tb_steps(tiny_run)
    assert max(steps["eval/mean_score"]) == 3072
    for tag, at in steps.items():
        assert len(at) == len(set(at)), f"{tag} written twice at a step: {at}"


def test_stray_temporary_files_are_ignored(tmp_path: Path) -> None:
    from yahtzee_agents.run.folder import RunPaths

    paths = RunPaths(tmp_path)
    paths.checkpoints.mkdir()
    for name in ("ckpt_1024.zip", "ckpt_2048.zip", ".ckpt_4096.zip.tmp", "ckpt_x.zip"):
        (paths.checkpoints / name).write_bytes(b"")
    assert [p.name for p in paths.checkpoint_files()] == ["ckpt_1024.zip", "ckpt_2048.zip"]
    assert paths.latest_checkpoint().name == "ckpt_2048.zip"


def test_refuses_to_overwrite_a_run(tiny_run: Path) -> None:
    out = _cli("train", str(TINY), "--runs-dir", str(tiny_run.parent), "--no-progress")
    assert out.returncode == 2
    assert "already exists" in out.stderr


def test_bad_config_fails_before_training(tmp_path: Path) -> None:
    out = _cli("train", str(TINY), "--runs-dir", str(tmp_path), "--set", "ppo.batch_size=100")
    assert out.returncode == 2
    assert "ppo.batch_size" in out.stderr
    assert not (tmp_path / "tiny").exists()


def _recorded_states(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and canonical masks from random games."""
    env = YahtzeeVectorEnv(num_envs=256, canonical_holds=True)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    all_obs, all_masks = [], []
    while sum(len(o) for o in all_obs) < n:
        masks = env.action_masks().copy()
        all_obs.append(obs)
        all_masks.append(masks)
        obs, *_ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    return np.concatenate(all_obs)[:n], np.concatenate(all_masks)[:n]


def test_export_parity_sb3_npz_onnx(tiny_run: Path, tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    out = _cli("export", str(tiny_run), "--format", "npz", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    out = _cli("export", str(tiny_run), "--format", "onnx", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    policy = load_opponent(tmp_path / "tiny.json")
    from yahtzee_env.policies.knowledge import knowledge_of
    from yahtzee_env.policies.sources import load_onnx_policy

    knew = knowledge_of(policy)  # both exports say what the run's config gave it
    assert "not stated" not in knew.values()
    assert knowledge_of(load_onnx_policy(tmp_path / "tiny.onnx")) == knew
    model = MaskablePPO.load(tiny_run / "best" / "model.zip", device="cpu")
    obs, masks = _recorded_states(10_000)

    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs))
        sb3_logits = dist.distribution.logits.numpy()  # log-softmax of the raw logits
    np_logits = policy.logits(obs)
    shift = np_logits - sb3_logits  # equal up to a per-row constant (log-softmax)
    np.testing.assert_allclose(shift - shift.mean(axis=1, keepdims=True), 0, atol=1e-4)
    # Actions are compared only where the choice is clear: float32 log-softmax (SB3) and raw
    # logits (numpy) can order a near-tie differently on another machine's BLAS.
    allowed = policy._allowed(obs, masks)
    masked = np.sort(np.where(allowed, np_logits, -np.inf), axis=1)
    clear = (masked[:, -1] - masked[:, -2]) > 1e-4
    assert clear.mean() > 0.5, "too few clear-cut states to compare actions"
    sb3_actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(policy.act_batch(obs, masks)[clear], sb3_actions[clear])

    onnxruntime = pytest.importorskip("onnxruntime")
    session = onnxruntime.InferenceSession(str(tmp_path / "tiny.onnx"))
    onnx_logits, onnx_actions = session.run(["logits", "action"], {"obs": obs, "mask": masks})
    np.testing.assert_allclose(onnx_logits, np_logits, atol=1e-4)
    np.testing.assert_array_equal(onnx_actions[clear], sb3_actions[clear])


def test_resume_after_kill(tmp_path: Path) -> None:
    """Kill a run after its first checkpoint; --resume finishes it with the same config."""
    total = 12_288
    args = [
        "train",
        str(TINY),
        "--runs-dir",
        str(tmp_path),
        "--no-progress",
        "--set",
        f"train.total_timesteps={total}",
        "--set",
        "train.eval_interval=0",
        "--set",
        "train.checkpoint_interval=1024",
        "--set",
        "warm_start.teacher=none",
    ]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "yahtzee_env", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    ckpts = tmp_path / "tiny" / "checkpoints"
    deadline = time.monotonic() + 120
    while not list(ckpts.glob("ckpt_*.zip")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert list(ckpts.glob("ckpt_*.zip")), "no checkpoint was written before the deadline"
    assert not (tmp_path / "tiny" / "final").exists(), "the run finished before it was killed"

    out = _cli("train", "--resume", str(tmp_path / "tiny"), "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "resuming tiny from ckpt_" in out.stdout
    final = json.loads((tmp_path / "tiny" / "final" / "eval.json").read_text())
    assert final["timesteps"] >= total
    assert len((tmp_path / "tiny" / "command.txt").read_text().splitlines()) == 2
    out = _cli("train", "--resume", str(tmp_path / "tiny"), "--set", "ppo.n_epochs=3")
    assert out.returncode == 2 and "only --set train.total_timesteps" in out.stderr


# ------------------------------------------------------------------ other model files (8.6)
def _main(*args: str) -> subprocess.CompletedProcess:
    """`yahtzee ARGS` in this process (torch is imported already: seconds faster per call
    than `_cli` on a loaded 2-core machine); stdout and stderr captured."""
    import contextlib
    import io

    from yahtzee_env.commands.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse
            code = exit_.code
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def _copy_run(tiny_run: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(tiny_run, tmp_path / "run", ignore=shutil.ignore_patterns("tb")))


def test_onnx_metadata_round_trip(tiny_run: Path, tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from yahtzee_env.policies.models import ModelFormatError, RulesMismatchError
    from yahtzee_env.policies.sources import load_onnx_policy

    out = _main("export", str(tiny_run), "--format", "onnx", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    path = tmp_path / "tiny.onnx"
    meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    assert meta["holds"] == "canonical" and meta["rules"] == "official"
    assert meta["observation_version"] == "1" and len(meta["arrays_sha256"]) == 64
    assert "level" in meta
    policy = load_onnx_policy(path, rules="official")
    obs, _ = _recorded_states(2_000)
    reference = load_opponent_from_run(tiny_run)
    np.testing.assert_allclose(policy.logits(obs), reference.logits(obs), atol=1e-4)
    with pytest.raises(RulesMismatchError, match="trained for rules 'official'"):
        load_onnx_policy(path, rules="no-joker")
    import pickle  # the evaluation harness sends policies to worker processes

    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(policy)).logits(obs), policy.logits(obs)
    )

    def edited(edit) -> Path:
        model = onnx.load(str(path))
        edit(model)
        target = tmp_path / "edited.onnx"
        target.write_bytes(model.SerializeToString())
        return target

    def bump_weight(model):
        from onnx import numpy_helper

        w = numpy_helper.to_array(model.graph.initializer[0]).copy()
        w[0, 0] += 1.0
        model.graph.initializer[0].CopyFrom(numpy_helper.from_array(w, "w0"))

    with pytest.raises(ModelFormatError, match="sha256"):
        load_onnx_policy(edited(bump_weight))
    with pytest.raises(ModelFormatError, match="metadata"):
        load_onnx_policy(edited(lambda m: m.ClearField("metadata_props")))

    def old_observation(model):
        for prop in model.metadata_props:
            if prop.key == "observation_version":
                prop.value = "0"

    with pytest.raises(ModelFormatError, match="observation version 0"):
        load_onnx_policy(edited(old_observation))
    (tmp_path / "junk.onnx").write_bytes(b"\x00junk" * 100)
    with pytest.raises(ModelFormatError):
        load_onnx_policy(tmp_path / "junk.onnx")


def load_opponent_from_run(run: Path):
    from yahtzee_env.policies.sources import load_sb3_policy

    return load_sb3_policy(run)


def test_evaluate_accepts_onnx_zip_and_run_folders(tiny_run: Path, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    assert (
        _main("export", str(tiny_run), "--format", "onnx", "--out", str(tmp_path)).returncode == 0
    )
    sources = [str(tmp_path / "tiny.onnx"), str(tiny_run), str(tiny_run / "best" / "model.zip")]
    json_out = tmp_path / "eval.json"
    args = ["--games", "40", "--no-regret", "--no-progress", "--json", str(json_out)]
    out = _main("evaluate", "--policy", ",".join(sources), *args)
    assert out.returncode == 0, out.stderr
    results = json.loads(json_out.read_text())["results"]
    assert [r["policy"] for r in results] == sources
    assert results[1]["mean"] == results[2]["mean"]  # the same best model, the same games
    out = _main("tournament", "--policies", f"{sources[0]},{sources[1]}", "--games", "8")
    assert out.returncode == 0, out.stderr
    out = _main("evaluate", "--policy", str(tiny_run), "--rules", "no-joker", "--games", "2")
    assert out.returncode == 0 and "(trained for official rules)" in out.stdout


@pytest.mark.parametrize(
    ("hidden", "source", "extra"),
    [("onnxruntime", "tiny.onnx", "export"), ("torch", "RUN", "train")],
)
def test_missing_dependency_gives_the_extras_hint(tiny_run, tmp_path, hidden, source, extra):
    pytest.importorskip("onnxruntime")
    assert (
        _main("export", str(tiny_run), "--format", "onnx", "--out", str(tmp_path)).returncode == 0
    )
    source = str(tiny_run) if source == "RUN" else str(tmp_path / source)
    code = (
        f"import sys; sys.modules[{hidden!r}] = None\n"
        "from yahtzee_env.commands.cli import main\n"
        f"sys.exit(main(['evaluate', '--policy', {source!r}, '--games', '2', '--no-regret']))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert out.returncode == 2, out.stderr
    assert f"pip install 'yahtzee-rl[{extra}]'" in out.stderr and "Traceback" not in out.stderr


# ------------------------------------------------------------------ hostile run files (8.12/13)
def test_export_name_must_be_a_plain_file_name(tiny_run: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "a" / "b"
    for name in ("../../escape", "/abs", "x/y", ".hidden", "a\\b"):
        out = _main("export", str(tiny_run), "--out", str(out_dir), "--name", name)
        assert out.returncode == 2 and "--name must be a plain file name" in out.stderr
    assert not (tmp_path / "escape.json").exists() and not list(tmp_path.rglob("*.json"))
    out = _main("export", str(tiny_run), "--out", "/dev/null/x")
    assert out.returncode == 2 and "--out" in out.stderr and "Traceback" not in out.stderr


def test_export_picks_a_checkpoint_by_its_env_steps(tiny_run: Path, tmp_path: Path) -> None:
    steps = sorted(int(p.stem.split("_")[1]) for p in (tiny_run / "checkpoints").glob("ckpt_*.zip"))
    out = _main("export", str(tiny_run), "--out", str(tmp_path), "--model", str(steps[0]))
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / f"{tiny_run.name}.json").read_text())
    assert manifest["timesteps"] == steps[0] and manifest["env_steps"] == steps[0]
    assert manifest["objective"] == "score"  # trained for the score (issue 34.4)
    assert manifest["evaluation"]["timesteps"] == steps[0]  # the run logged one there
    out = _main("export", str(tiny_run), "--out", str(tmp_path), "--model", "12345")
    assert out.returncode == 2 and "has no 12345 model" in out.stderr
    out = _main("export", str(tiny_run), "--out", str(tmp_path), "--model", "../x")
    assert out.returncode == 2 and "not best, final, latest" in out.stderr


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("truncated-zip", "not a readable zip"),
        ("garbage-zip", "not a readable zip"),
        ("config-latin1", "not UTF-8"),
        ("config-bad-value", "ppo.gamma"),
        ("config-not-yaml", "not valid YAML"),
    ],
)
def test_damaged_run_files_fail_export_and_resume_up_front(tiny_run, tmp_path, damage, message):
    run = _copy_run(tiny_run, tmp_path)
    best = run / "best" / "model.zip"
    config = run / "config.yaml"
    if damage == "truncated-zip":
        best.write_bytes(best.read_bytes()[:1000])
        (run / "checkpoints").mkdir(exist_ok=True)
        (run / "checkpoints" / "ckpt_999999.zip").write_bytes(best.read_bytes())
    elif damage == "garbage-zip":
        best.write_bytes(b"PK\x03\x04" + b"\x00" * 500)
    elif damage == "config-latin1":
        config.write_bytes(config.read_bytes() + "# caf\xe9\n".encode("latin-1"))
    elif damage == "config-bad-value":
        config.write_text(config.read_text().replace("gamma: 1.0", "gamma: .nan"))
    else:
        config.write_text("name: [unclosed\n")
    export = _main("export", str(run), "--out", str(tmp_path / "out"))
    resume = _main("train", "--resume", str(run), "--no-progress")
    for out in (export, resume):
        assert out.returncode == 2, out.stdout + out.stderr
        assert message in out.stderr and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    assert "resuming" not in resume.stdout
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_bad_runs_dir_fails_before_training(tmp_path: Path) -> None:
    out = _main("train", str(TINY), "--runs-dir", "/dev/null/runs", "--no-progress")
    assert out.returncode == 2 and "--runs-dir" in out.stderr and "Traceback" not in out.stderr


# ------------------------------------------------------------------ exact resume (issue 21.3)
EXACT = ["--set", "train.total_timesteps=16384", "--set", "train.checkpoint_interval=2048"]


def _weights_and_evals(run: Path) -> tuple[str, list[dict]]:
    final = json.loads((run / "final" / "eval.json").read_text())
    evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
    return final["weights_sha256"], evals


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("exact")
    out = _cli("train", str(TINY), "--runs-dir", str(runs), "--no-progress", *EXACT)
    assert out.returncode == 0, out.stderr
    return runs / "tiny"


def test_sigterm_then_resume_equals_the_uninterrupted_run(uninterrupted, tmp_path) -> None:
    """A real SIGTERM mid-run: the run checkpoints at the next rollout boundary and exits
    143; --resume ends with the same weights (sha256) and the same evaluations, bit for bit."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "yahtzee_env", "train", str(TINY), "--no-progress"]
    proc = subprocess.Popen(
        [*command, "--runs-dir", str(tmp_path), *EXACT],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    ckpts = tmp_path / "tiny" / "checkpoints"
    deadline = time.monotonic() + 120
    while not (ckpts / "ckpt_2048.zip").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert "stopped by SIGTERM" in stderr and not (tmp_path / "tiny" / "final").exists()
    stopped_at = max(int(p.stem.split("_")[1]) for p in ckpts.glob("ckpt_*.zip"))
    assert 2048 <= stopped_at < 16384
    out = _cli("train", "--resume", str(tmp_path / "tiny"), "--no-progress")
    assert out.returncode == 0, out.stderr
    assert f"from ckpt_{stopped_at}.zip" in out.stdout
    assert _weights_and_evals(tmp_path / "tiny") == _weights_and_evals(uninterrupted)
    assert len(list((tmp_path / "tiny" / "tb").iterdir())) == 1  # one TensorBoard run


def test_time_limit_then_resume_equals_the_uninterrupted_run(uninterrupted, tmp_path) -> None:
    """--time-limit 0 stops at the first rollout boundary (right after the warm start) with
    exit 75; the resumed run repeats the uninterrupted one exactly."""
    out = _cli("train", str(TINY), "--runs-dir", str(tmp_path), "--no-progress", *EXACT,
               "--time-limit", "0")  # fmt: skip
    assert out.returncode == 75, out.stderr
    assert "stopped by time limit at 0 steps" in out.stderr
    out = _cli("train", "--resume", str(tmp_path / "tiny"), "--no-progress", "--time-limit", "1h")
    assert out.returncode == 0, out.stderr
    assert _weights_and_evals(tmp_path / "tiny") == _weights_and_evals(uninterrupted)


def test_resume_without_a_checkpoint_says_so_and_starts_clean(uninterrupted, tmp_path) -> None:
    """A run killed before its first checkpoint: --resume says there is nothing to resume,
    removes the stale best/ and TensorBoard run, and trains from zero to the same result."""
    import shutil

    run = Path(shutil.copytree(uninterrupted, tmp_path / "tiny"))
    shutil.rmtree(run / "checkpoints")
    shutil.rmtree(run / "final")
    out = _cli("train", "--resume", str(run), "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "no checkpoint to resume from: starting from the beginning" in out.stdout
    assert "best/" in out.stdout and "tb/" in out.stdout
    assert len(list((run / "tb").iterdir())) == 1
    assert _weights_and_evals(run) == _weights_and_evals(uninterrupted)


# ------------------------------------------------------------------ the benchmark (issue 21.1)
def test_benchmark_each_model_kind(tiny_run: Path, tmp_path: Path) -> None:
    """npz (+ manifest), ONNX, SB3 zip and run folder: the same best model, the same games,
    so the same row (ONNX and npz differ only on float near-ties, hence the tolerance)."""
    import yahtzee_env

    for fmt in ("npz", "onnx"):
        assert (
            _main("export", str(tiny_run), "--format", fmt, "--out", str(tmp_path)).returncode == 0
        )
    sources = {
        "npz": tmp_path / "tiny.npz",
        "manifest": tmp_path / "tiny.json",
        "zip": tiny_run / "best" / "model.zip",
        "run": tiny_run,
    }
    if _has("onnxruntime"):
        sources["onnx"] = tmp_path / "tiny.onnx"
    rows = {kind: yahtzee_env.benchmark(str(path), games=48) for kind, path in sources.items()}
    for kind in ("manifest", "zip", "run"):
        assert rows[kind]["mean"] == rows["npz"]["mean"], kind
    if "onnx" in rows:
        assert rows["onnx"]["mean"] == pytest.approx(rows["npz"]["mean"], abs=rows["npz"]["ci95"])
    code = _main("benchmark", str(tiny_run), "--games", "48", "--json", str(tmp_path / "r.json"))
    assert code.returncode == 0, code.stderr
    assert json.loads((tmp_path / "r.json").read_text())["mean"] == rows["run"]["mean"]
    bare = tmp_path / "bare.zip"
    bare.write_bytes((tiny_run / "best" / "model.zip").read_bytes())
    # Issue 28: a zip with no run folder around it (as any script saves one) is taken; its
    # input version comes from its observation space, its holds and rules are the env's
    # defaults unless given, and what was assumed is printed and written into the row.
    out = _main("benchmark", str(bare), "--games", "48", "--holds", "canonical", "--json",
                str(tmp_path / "bare.json"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "assumed: input_version 1 (observation space (72 floats)); holds canonical (given)" in (
        out.stderr
    )
    bare_row = json.loads((tmp_path / "bare.json").read_text())
    assert bare_row["mean"] == rows["run"]["mean"]  # the tiny run trains with canonical holds
    assert bare_row["assumed"]["rules"] == {"value": "official", "from": "Yahtzee-v0's default"}
    out = _main("benchmark", str(bare), "--games", "4", "--json", str(tmp_path / "all.json"))
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "all.json").read_text())["assumed"]["holds"]["value"] == "all"
    for fmt in ("npz", "onnx"):
        out = _main("export", str(bare), "--format", fmt, "--out", str(tmp_path / "bare-out"))
        assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "bare-out" / "bare.json").read_text())
    assert manifest["holds"] == "all" and manifest["assumed"]["input_version"]["value"] == 1
    # any other observation shape is refused by name
    odd = tmp_path / "odd.zip"
    with zipfile.ZipFile(bare) as src, zipfile.ZipFile(odd, "w") as dst:
        for info in src.infolist():
            blob = src.read(info.filename)
            if info.filename == "data":
                data = json.loads(blob)
                data["observation_space"]["_shape"] = [80]
                blob = json.dumps(data).encode()
            dst.writestr(info.filename, blob)
    out = _main("benchmark", str(odd), "--games", "4")
    assert out.returncode == 2 and "observation of 80 floats" in out.stderr, out.stderr


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_exports_name_a_level_only_when_asked(tiny_run: Path, tmp_path: Path) -> None:
    """A config that trains a level (ppo.yaml says `level: hard`) does not label every export
    with it: only `--level NAME` does (issue 21.5); the input version is the config's."""
    run = _copy_run(tiny_run, tmp_path)
    config = run / "config.yaml"
    config.write_text(config.read_text().replace("level: null", "level: hard"))
    assert "level: hard" in config.read_text()
    out = tmp_path / "out"
    assert _main("export", str(run), "--out", str(out), "--name", "plain").returncode == 0
    assert (
        _main("export", str(run), "--out", str(out), "--name", "lv", "--level", "hard").returncode
        == 0
    )
    assert json.loads((out / "plain.json").read_text())["level"] is None
    assert json.loads((out / "lv.json").read_text())["level"] == "hard"
    assert json.loads((out / "plain.json").read_text())["observation_version"] == 1
    if _has("onnx"):
        import onnx

        assert _main("export", str(run), "--format", "onnx", "--out", str(out)).returncode == 0
        meta = {p.key: p.value for p in onnx.load(str(out / "tiny.onnx")).metadata_props}
        assert meta["level"] == ""


def test_input_version_comes_from_the_config_never_the_width(tiny_run: Path) -> None:
    """Issue 16.2: the exporter takes the version it is given (the run config's) and checks
    it against the network, instead of guessing it from the first layer's width."""
    from sb3_contrib import MaskablePPO

    from yahtzee_agents.export import numpy_policy

    model = MaskablePPO.load(tiny_run / "best" / "model.zip", device="cpu")
    assert numpy_policy(model, input_version=1).input_version == 1
    with pytest.raises(ValueError, match="config says input version 2"):
        numpy_policy(model, input_version=2)
    with pytest.raises(TypeError):
        numpy_policy(model)  # no default to fall back on


def test_a_run_without_a_solver_table_says_its_evaluations_log_no_regret(
    tmp_path, monkeypatch, capsys
) -> None:
    from yahtzee_agents.run.folder import say_if_no_regret

    cfg = load_config(TINY)
    monkeypatch.setenv("YAHTZEE_CACHE_DIR", str(tmp_path))
    say_if_no_regret(cfg)
    said = capsys.readouterr().err
    assert "log no regret" in said and f"yahtzee solve --rules {cfg.env.rules}" in said
    from yahtzee_env.solver.exact import cache_path

    cache_path(cfg.env.rules).write_bytes(b"")  # cached: nothing to say
    say_if_no_regret(cfg)
    assert capsys.readouterr().err == ""


class _Payload:
    """Unpickled by a plain pickle reader, this would run a shell command."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_an_sb3_zip_never_runs_the_code_in_it(tiny_run: Path, tmp_path: Path) -> None:
    """SB3's own loader unpickles `data`'s serialized entries (cloudpickle: any code). The
    zip loader reads them with a pickle reader that builds nothing: a payload in
    `policy_kwargs` is refused by name, and its command never runs."""
    import base64
    import pickle

    from yahtzee_agents.sources import load_sb3_policy
    from yahtzee_env.policies.models import ModelFormatError

    marker = tmp_path / "ran"
    hostile = tmp_path / "hostile.zip"
    with (
        zipfile.ZipFile(tiny_run / "best" / "model.zip") as src,
        zipfile.ZipFile(hostile, "w") as dst,
    ):
        for info in src.infolist():
            blob = src.read(info.filename)
            if info.filename == "data":
                data = json.loads(blob)
                payload = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
                data["policy_kwargs"] = {":type:": "<class 'dict'>", ":serialized:": payload}
                blob = json.dumps(data).encode()
            dst.writestr(info.filename, blob)
    with pytest.raises(ModelFormatError, match="policy_kwargs"):
        load_sb3_policy(hostile)
    assert not marker.exists()


def test_track_logs_the_tensorboard_scalars_to_wandb_offline(tmp_path: Path) -> None:
    """`yahtzee train --track` (issue 29.9, as CleanRL's --track): a Weights & Biases run in
    offline mode under RUN_DIR/wandb/ holding every scalar the run's TensorBoard log has."""
    pytest.importorskip("wandb")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    env = {**os.environ, "WANDB_SILENT": "true", "WANDB_MODE": "offline"}
    env.pop("WANDB_API_KEY", None)
    out = subprocess.run(
        [sys.executable, "-m", "yahtzee_env", "train", str(TINY), "--runs-dir", str(tmp_path),
         "--no-progress", "--track", "--set", "train.total_timesteps=1024"],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    run = tmp_path / "tiny"
    (log,) = run.glob("wandb/offline-run-*/run-*.wandb")
    events = EventAccumulator(str(next((run / "tb").rglob("events.out.tfevents.*")).parent))
    tags = events.Reload().Tags()["scalars"]
    assert "eval/mean_score" in tags and "episode/score" in tags
    data = log.read_bytes()
    missing = [t for t in tags if t.encode() not in data]
    assert not missing, missing


def test_a_runs_checkpoint_says_what_it_knew(tiny_run: Path, tmp_path: Path) -> None:
    """A zip inside a run folder (a checkpoint, best/, final/) takes what it knew from the
    run's config, so its benchmark row states its track; the same zip without its run folder
    cannot say, and its row says "nobody" rather than a guess."""
    import shutil

    from yahtzee_agents.run.folder import load_run_config, model_facts
    from yahtzee_agents.sources import load_sb3_policy
    from yahtzee_env.policies.knowledge import knowledge_of

    inside = tiny_run / "best" / "model.zip"
    policy = load_sb3_policy(inside)
    cfg = load_run_config(tiny_run)
    assert knowledge_of(policy) == model_facts(cfg, policy.timesteps)["knew"]
    loose = tmp_path / "loose.zip"
    shutil.copy(inside, loose)
    assert set(knowledge_of(load_sb3_policy(loose)).values()) == {"not stated"}
    rows = {}
    for label, source in (("inside", inside), ("loose", loose)):
        json_out = tmp_path / f"{label}.json"
        out = _cli("benchmark", str(source), "--games", "20", "--no-progress",
                   "--json", str(json_out))  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        rows[label] = json.loads(json_out.read_text())
    assert rows["inside"]["knew_from"] == "the agent"
    assert rows["inside"]["knew"] == knowledge_of(policy)
    assert rows["loose"]["knew_from"] == "nobody"
