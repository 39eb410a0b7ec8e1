"""The run folder: its shape, and every file a trainer writes into it, whichever engine trains.

    runs/<name>/
        config.yaml        the resolved config (after --set overrides)
        command.txt        the command lines, one per session
        meta.json          package version, git commit, engine, what the agent knew, library
                           versions, the machine; ``sessions``: each session's
        evals.jsonl        one greedy, solver-graded evaluation per line ({"timesteps", ...})
        sessions.jsonl     each session's wall and training seconds, and where it ended
        checkpoints/       ckpt_<steps>.<model> + ckpt_<steps>.state.npz (exact resume); the
                           last ``train.keep_checkpoints`` are kept
        best/              the best model by evaluation (`merit`) + eval.json
        final/             the model at the end of training + eval.json
        tb/                TensorBoard logs (sb3)

A model is the engine's: ``model.zip`` (sb3: SB3's MaskablePPO file) or ``model.json`` +
``model.npz`` (jax: the numpy model format, `yahtzee_env.policies.models`, a `NumpyModel`); a
checkpoint is ``ckpt_<steps>.zip`` or ``ckpt_<steps>.json`` + ``.npz`` beside its state file.
`RunPaths.model` finds either, so export and benchmark read both engines' runs alike.

Every file above is written by this module (`write_model`, `write_checkpoint`,
`record_evaluation`, ...); an engine hands it the objects (its model, its state's arrays),
never a path to write. TensorBoard's files are the libraries' own, in `RunPaths.tb`.
"""

from __future__ import annotations

import io
import json
import math
import platform
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yahtzee_env.fileio import atomic_path, atomic_write

from ..config import (
    DIGEST_VERSION,
    FOLLOW_TOTAL,
    SCHEDULED,
    ConfigError,
    RunConfig,
    Schedule,
    apply_overrides,
    config_from_dict,
    digest_version_of,
    read_yaml_mapping,
)

CHECKPOINT_PREFIX = "ckpt_"
STATE_SUFFIX = ".state.npz"
MODEL_SUFFIX = {"sb3": ".zip", "jax": ".json"}
"""An engine's model file (jax: the manifest; its weights are the ``.npz`` beside it)."""
MODEL_STEM = "model"


@dataclass
class RunPaths:
    root: Path

    def __post_init__(self) -> None:
        self.root = Path(self.root)

    @property
    def config(self) -> Path:
        return self.root / "config.yaml"

    @property
    def command(self) -> Path:
        return self.root / "command.txt"

    @property
    def meta(self) -> Path:
        return self.root / "meta.json"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def best(self) -> Path:
        return self.root / "best"

    @property
    def final(self) -> Path:
        return self.root / "final"

    @property
    def tb(self) -> Path:
        return self.root / "tb"

    @property
    def evals(self) -> Path:
        return self.root / "evals.jsonl"

    @property
    def sessions(self) -> Path:
        return self.root / "sessions.jsonl"

    @property
    def warm_start(self) -> Path:
        return self.root / "warm_start.json"

    @property
    def init(self) -> Path:
        return self.root / "init.json"

    def eval_record(self, folder: Path) -> Path:
        """``best/eval.json`` or ``final/eval.json``."""
        return folder / "eval.json"

    def model_in(self, folder: Path, engine: str) -> Path:
        """The model file an engine writes in ``best/`` or ``final/``."""
        return folder / (MODEL_STEM + MODEL_SUFFIX[engine])

    def checkpoint(self, steps: int, engine: str) -> Path:
        return self.checkpoints / f"{CHECKPOINT_PREFIX}{steps}{MODEL_SUFFIX[engine]}"

    @staticmethod
    def state_of(checkpoint: Path) -> Path:
        """The state file beside ``checkpoints/ckpt_<steps>.<model>``."""
        return checkpoint.with_name(checkpoint.stem + STATE_SUFFIX)

    def model(self, which: str) -> Path | None:
        """The model a reader asks for: ``best``, ``final``, ``latest`` or a checkpoint's
        env-steps (``"2048"``), of either engine; None if the run has none."""
        if which == "latest":
            return self.latest_checkpoint()
        if which.isdigit():
            candidates = [self.checkpoints / f"{CHECKPOINT_PREFIX}{int(which)}{s}"
                          for s in MODEL_SUFFIX.values()]  # fmt: skip
        else:
            folder = {"best": self.best, "final": self.final}[which]
            candidates = [folder / (MODEL_STEM + s) for s in MODEL_SUFFIX.values()]
        return next((path for path in candidates if path.exists()), None)

    def start_afresh(self) -> list[str]:
        """Remove what an earlier, unfinished attempt left (no checkpoint to resume from):
        TensorBoard runs, best and final models, evaluations, the warm start's record and
        checkpoint leftovers. Returns the names removed."""
        removed = []
        for path in (self.tb, self.best, self.final, self.checkpoints):
            if path.exists():
                shutil.rmtree(path)
                removed.append(path.name + "/")
        for path in (self.evals, self.warm_start, self.init, self.sessions):
            if path.exists():
                path.unlink()
                removed.append(path.name)
        return removed

    def checkpoint_files(self) -> list[Path]:
        """Checkpoints ``ckpt_<steps>.zip`` or ``.json``, oldest first (temporary files and
        state files are not listed)."""
        found = []
        for suffix in MODEL_SUFFIX.values():
            for path in self.checkpoints.glob(f"{CHECKPOINT_PREFIX}*{suffix}"):
                steps = path.stem.removeprefix(CHECKPOINT_PREFIX)
                if steps.isdigit():
                    found.append((int(steps), path))
        return [path for _, path in sorted(found)]

    def latest_checkpoint(self) -> Path | None:
        ckpts = self.checkpoint_files()
        return ckpts[-1] if ckpts else None

    def prune_checkpoints(self, keep: int) -> None:
        """Keep the newest ``keep`` checkpoints: an older one goes with its state file and its
        weights."""
        for old in self.checkpoint_files()[:-keep]:
            old.unlink()
            self.state_of(old).unlink(missing_ok=True)
            if old.suffix == ".json":
                old.with_suffix(".npz").unlink(missing_ok=True)


# ------------------------------------------------------------------------------ config
def run_digest(run_dir: str | Path, cfg: RunConfig) -> tuple[str, int]:
    """``(config_sha256, config_digest_version)`` of a run: the digest its ``meta.json``
    recorded when ``cfg`` reproduces it in some digest version (a run made by older code keeps
    its digest), else ``cfg``'s in the current version."""
    try:
        recorded = json.loads(RunPaths(run_dir).meta.read_text()).get("config_sha256")
    except (OSError, ValueError, AttributeError):
        recorded = None
    version = digest_version_of(cfg, recorded) if isinstance(recorded, str) else None
    if version is None:
        return cfg.digest(), DIGEST_VERSION
    return recorded, version


def is_run_folder(path: str | Path) -> bool:
    return RunPaths(Path(path)).config.is_file()


def load_run_config(run_dir: str | Path, overrides: list[str] | None = None) -> RunConfig:
    """The resolved config of a run folder, with ``section.key=value`` overrides applied."""
    paths = RunPaths(Path(run_dir))
    if not paths.config.exists():
        raise FileNotFoundError(f"{run_dir}: not a run folder (no config.yaml)")
    try:
        data = read_yaml_mapping(paths.config)
        return config_from_dict(apply_overrides(data, overrides) if overrides else data)
    except ConfigError as err:
        if str(err).startswith(str(paths.config)):
            raise
        raise ConfigError(f"{paths.config}: {err}") from None


def check_extension(old: RunConfig, new: RunConfig) -> None:
    """Refuse to extend (or shorten) a run whose schedules stretch over
    ``train.total_timesteps``: the value at every step already trained would change."""
    if old.train.total_timesteps == new.train.total_timesteps:
        return
    for name in SCHEDULED:
        value = getattr(new.ppo, name)
        if isinstance(value, Schedule) and value.steps == FOLLOW_TOTAL:
            raise ConfigError(
                f"ppo.{name}.steps: the schedule follows train.total_timesteps, so changing "
                f"it from {old.train.total_timesteps:,} to {new.train.total_timesteps:,} would "
                f"change the rate at every step (a jump at the resume point); write the length "
                f"into the run's config.yaml instead (steps: {old.train.total_timesteps})"
            )


def finished_at(run_dir: str | Path) -> int | None:
    """The step count of a run's final model (``final/eval.json``), None if it has none."""
    paths = RunPaths(Path(run_dir))
    try:
        return int(json.loads(paths.eval_record(paths.final).read_text())["timesteps"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def open_run(cfg: RunConfig, paths: RunPaths, resume: bool) -> Path | None:
    """The checks at the start of every session, whichever engine: a new run's folder must not
    hold one already; a resumed run may be extended only where its schedules allow; a resume
    with no checkpoint starts afresh (and says so). Returns the checkpoint to resume from."""
    ckpt = paths.latest_checkpoint() if resume else None
    if not resume and paths.config.exists():
        raise FileExistsError(
            f"{paths.root} already exists: resume it with --resume, or choose another name"
        )
    if resume and paths.config.exists():
        check_extension(load_run_config(paths.root), cfg)
    if resume and ckpt is None:
        removed = paths.start_afresh()
        left = f" (removed {', '.join(removed)})" if removed else ""
        print(f"{paths.root}: no checkpoint to resume from: starting from the beginning{left}")
    return ckpt


# ------------------------------------------------------------------------------ metadata
def git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=here
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], capture_output=True, text=True, cwd=here
        ).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def model_facts(cfg: Any, env_steps: int) -> dict[str, Any]:
    """How a model of this run was made, for its manifest and ``meta.json``: ``method``
    (``"ppo"``: PPO with no teacher, whatever aids its ``knew`` states; ``"distilled"``:
    imitating ``teacher`` first), ``objective`` (``"score"``: the game's score; ``"win"``: at a
    2-seat table), ``teacher``, ``env_steps`` (PPO env-steps behind the weights; 0 for a
    distilled policy before PPO) and ``knew``: what the model knew
    (`yahtzee_env.policies.knowledge`), from the config."""
    from yahtzee_env.policies.knowledge import knowledge_of_training

    teacher = cfg.warm_start.teacher
    return {
        "method": "ppo" if teacher == "none" else "distilled",
        "objective": "win" if getattr(cfg, "versus", None) is not None else "score",
        "teacher": None if teacher == "none" else teacher,
        "env_steps": int(env_steps),
        "knew": knowledge_of_training(
            observation_version=cfg.env.observation_version,
            shaping=cfg.env.shaping if cfg.env.shaping_weight else "none",
            canonical_holds=cfg.env.canonical_holds,
            teacher=teacher,
            ppo_steps=int(env_steps),
            init=getattr(cfg.policy, "init", None),
            anchor_kl=getattr(cfg.ppo, "anchor_kl", 0.0),
            anchor_release=getattr(cfg.ppo, "anchor_release", 0),
        ),
    }


def write_run_metadata(
    paths: RunPaths, cfg: RunConfig, argv: list[str], libraries: dict[str, str | None]
) -> None:
    """``config.yaml``, ``command.txt`` (appended) and ``meta.json``: versions, git commit,
    engine, what the agent knew, start time and the machine (`provenance`:
    CPU, flags, kernels in use); ``libraries`` are the engine's own (torch, jax, ...) by the
    key ``meta.json`` names them. A resumed session appends its facts to ``sessions``."""
    import numpy as np
    import yaml

    import yahtzee_env

    from .provenance import environment_facts

    paths.root.mkdir(parents=True, exist_ok=True)

    atomic_write(paths.config, yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    with open(paths.command, "a") as f:
        f.write(shlex.join(argv) + "\n")
    session = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "git_commit": git_commit(),
        "environment": environment_facts(),
    }
    try:
        earlier = json.loads(paths.meta.read_text()).get("sessions", [])
    except (OSError, ValueError, AttributeError):
        earlier = []
    facts = model_facts(cfg, cfg.train.total_timesteps)
    meta = {
        "package_version": yahtzee_env.__version__,
        "git_commit": session["git_commit"],
        "config_sha256": cfg.digest(),
        "config_digest_version": DIGEST_VERSION,
        "engine": cfg.train.engine,
        "method": facts["method"],
        "knew": facts["knew"],
        "python": platform.python_version(),
        "numpy": np.__version__,
        **libraries,
        "started": session["started"],
        "environment": session["environment"],
        "sessions": [*earlier, session],
    }
    atomic_write(paths.meta, json.dumps(meta, indent=2) + "\n")


def record_session(paths: RunPaths, session_start: float, train_seconds: float, steps: int):
    with open(paths.sessions, "a") as f:
        record = {
            "wall_seconds": time.perf_counter() - session_start,  # warm start and evals too
            "ppo_seconds": train_seconds,
            "end_timesteps": int(steps),
        }
        f.write(json.dumps(record) + "\n")


def record_init(paths: RunPaths, started_from: dict[str, Any]) -> None:
    """``init.json``: the weights a run started from (``policy.init``) and how they were
    widened."""
    atomic_write(paths.init, json.dumps(started_from, indent=2) + "\n")


def record_warm_start(paths: RunPaths, stats: dict[str, Any]) -> None:
    """``warm_start.json``: the warm start's imitation statistics."""
    atomic_write(paths.warm_start, json.dumps(stats, indent=2))


# ------------------------------------------------------------------------------ models
@dataclass
class NumpyModel:
    """A model of the JAX engine as the run writes it: the policy head's (W [in, out], b)
    pairs, hidden layers first, in the numpy model format (`yahtzee_env.policies.models`),
    its manifest saying how it was made (`model_facts`) at ``env_steps`` and ``facts``."""

    weights: list[tuple[Any, Any]]
    cfg: RunConfig
    env_steps: int
    facts: dict[str, Any] = field(default_factory=dict)


def write_model(path: Path, model: Any) -> Path:
    """A model of the run at ``path`` (`RunPaths.model_in`, `RunPaths.checkpoint`),
    atomically, in its engine's format: an SB3 model as a ``.zip`` (its own ``save``; the
    temporary name is outside the checkpoints' glob), or a `NumpyModel` as ``.json`` +
    ``.npz``. Returns the path."""
    if path.suffix == MODEL_SUFFIX["sb3"]:
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            model.save(f)
        return path
    from yahtzee_env.policies.models import save_policy

    cfg = model.cfg
    steps = int(model.env_steps)
    extra = {**model_facts(cfg, steps), "timesteps": steps, **model.facts}
    return save_policy(
        path.parent, path.stem, model.weights, cfg.policy.activation,
        rules=cfg.env.rules, config_sha256=cfg.digest(),
        canonical_holds=cfg.env.canonical_holds, input_version=cfg.env.observation_version,
        extra=extra,
    )  # fmt: skip


def write_state(path: Path, arrays: dict[str, Any]) -> Path:
    """A checkpoint's state file (``ckpt_<steps>.state.npz``): the engine's arrays in one
    npz (read back with ``allow_pickle=False``), written atomically."""
    import numpy as np

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return atomic_write(path, buffer.getvalue())


def write_checkpoint(
    paths: RunPaths, steps: int, engine: str, model: Any, state: dict[str, Any], keep: int
) -> Path:
    """``checkpoints/ckpt_<steps>``: the state file, then the model (so that a listed model
    has its state), then only the newest ``keep`` checkpoints are kept. Returns the model's
    path."""
    path = paths.checkpoint(steps, engine)
    write_state(paths.state_of(path), state)
    write_model(path, model)
    paths.prune_checkpoints(keep)
    return path


# ------------------------------------------------------------------------------ evaluations
EvalHook = Callable[[dict[str, Any], int], None]
"""Called with every evaluation's result and the step count (e.g. a sweep reports to Tune)."""


def evaluate(policy: Any, cfg: RunConfig) -> dict[str, Any]:
    """The run's evaluation of a numpy policy: ``train.eval_games`` greedy games from
    ``train.eval_seed``, graded by the solver where its table is cached (the regret)."""
    from yahtzee_env.analysis.evaluation import evaluate_policy

    return evaluate_policy(
        policy,
        games=cfg.train.eval_games,
        seed=cfg.train.eval_seed,
        rules=cfg.env.rules,
        regret="if-cached",
    )


def brief(result: dict[str, Any]) -> dict[str, Any]:
    """What ``evals.jsonl`` and ``eval.json`` keep of an evaluation."""
    if "win_rate" in result:
        return dict(result)
    keys = ("games", "seed", "mean", "ci95", "std", "median", "upper_bonus_rate", "yahtzee_rate")
    kept = {k: result[k] for k in keys if k in result}
    if result.get("regret") is not None:
        kept["regret_per_game"] = result["regret"]["mean"]
    return kept


def merit(record: dict[str, Any]) -> tuple[int, float]:
    """How good an evaluation (`brief`) is, for ``best/``: at a table, the higher win rate;
    else the lower regret per game when it was measured (its 95% CI is about a tenth of the
    mean's: ±0.1 against ±1.8 points on 4,000 games, so a mean's luck does not pick the
    model), else the higher mean. Any evaluation with a regret ranks above any without."""
    if record.get("win_rate") is not None:
        return (2, float(record["win_rate"]))
    if record.get("regret_per_game") is not None:
        return (1, -float(record["regret_per_game"]))
    return (0, float(record["mean"]))


def best_merit(paths: RunPaths) -> tuple[int, float]:
    """The merit of the run's best model so far (a resumed run keeps competing with it)."""
    record = paths.eval_record(paths.best)
    return merit(json.loads(record.read_text())) if record.exists() else (0, -math.inf)


def record_evaluation(
    paths: RunPaths,
    steps: int,
    result: dict[str, Any],
    best: tuple[int, float],
    engine: str,
    model: Any,
) -> tuple[int, float]:
    """Append the evaluation at ``steps`` to ``evals.jsonl``; if it beats ``best``, write the
    engine's ``model`` (`write_model`) to ``best/`` and ``best/eval.json``. Returns the best
    merit now."""
    kept = brief(result)
    with open(paths.evals, "a") as f:
        f.write(json.dumps({"timesteps": int(steps), **kept}) + "\n")
    if merit(kept) > best:
        best = merit(kept)
        write_model(paths.model_in(paths.best, engine), model)
        atomic_write(
            paths.eval_record(paths.best),
            json.dumps({**kept, "timesteps": int(steps)}, indent=2),
        )
    return best


def write_final(paths: RunPaths, result: dict[str, Any], steps: int, **facts: Any) -> None:
    """``final/eval.json``: the final model's evaluation, its step count and ``facts``."""
    atomic_write(
        paths.eval_record(paths.final),
        json.dumps({**brief(result), "timesteps": int(steps), **facts}, indent=2),
    )


def keep_evals_until(paths: RunPaths, steps: int) -> None:
    """Drop evaluations logged after ``steps`` (a run killed after its last checkpoint
    repeats them when resumed)."""
    if not paths.evals.exists():
        return
    lines = [line for line in paths.evals.read_text().splitlines() if line.strip()]
    kept = [line for line in lines if json.loads(line)["timesteps"] <= steps]
    if len(kept) != len(lines):
        atomic_write(paths.evals, "".join(line + "\n" for line in kept))


def say_if_no_regret(cfg: RunConfig) -> None:
    """The evaluations grade with the solver only where its table is cached (building it costs
    seconds and memory): say so at the start, where a long run would otherwise log no regret
    and pick ``best/`` by the noisier mean without a word."""
    from yahtzee_env.solver import exact as solver

    if cfg.train.eval_interval and not solver.cache_path(cfg.env.rules).exists():
        print(
            f"note: no solver table for the rules {cfg.env.rules!r} is cached, so the "
            "evaluations log no regret and best/ is picked by the mean; "
            f"`yahtzee solve --rules {cfg.env.rules}` builds it (the run sees it at its next "
            "evaluation)",
            file=sys.stderr,
        )


def final_result(run_dir: Path) -> str:
    """One line: the final model's evaluation, and the best one's."""
    paths = RunPaths(Path(run_dir))
    parts = []
    for label, folder in (("final", paths.final), ("best", paths.best)):
        try:
            ev = json.loads(paths.eval_record(folder).read_text())
            if "win_rate" in ev:  # a 2-seat table's evaluation
                parts.append(
                    f"{label} win rate {ev['win_rate']:.4f} ± {ev['win_ci95']:.4f} against "
                    f"{ev['opponent']} at {ev['timesteps']:,} steps"
                )
                continue
            parts.append(
                f"{label} {ev['mean']:.2f} ± {ev['ci95']:.2f} at {ev['timesteps']:,} steps"
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return "result: " + ("; ".join(parts) if parts else "no evaluation")


def check_run_files(paths: RunPaths) -> None:
    """Refuse a run whose files a resume would read (the newest checkpoint, the best model
    and its evaluation) if they are damaged: `ModelFormatError` naming the file, before any
    training (a damaged file otherwise fails deep inside torch or JAX, or after a warm
    start)."""
    from yahtzee_env.policies.checkpoints import check_sb3_zip
    from yahtzee_env.policies.models import ModelFormatError, read_manifest

    for model in (paths.latest_checkpoint(), paths.model("best")):
        if model is None or not model.exists():
            continue
        if model.suffix == ".zip":
            check_sb3_zip(model)
        else:
            read_manifest(model)
    eval_file = paths.eval_record(paths.best)
    if eval_file.exists():
        try:
            record = json.loads(eval_file.read_bytes()[: 1 << 20].decode("utf-8"))
            key = "win_rate" if isinstance(record, dict) and "win_rate" in record else "mean"
            mean = record[key]  # a 2-seat table's evaluation: its win rate
            if isinstance(mean, bool) or not math.isfinite(float(mean)):
                raise ValueError(f"{key} is {mean!r}")
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as err:
            raise ModelFormatError(f"{eval_file}: corrupt evaluation record ({err})") from None


# ------------------------------------------------------------------------------ stopping
class TrainingInterrupted(Exception):
    """A run stopped early by SIGTERM, SIGINT or its time limit, after writing an exact
    checkpoint; ``yahtzee train --resume`` continues it as if it had never stopped."""

    def __init__(self, reason: str, steps: int, checkpoint: Path) -> None:
        super().__init__(
            f"stopped by {reason} at {steps:,} steps; checkpoint {checkpoint.name} written "
            f"(continue with: yahtzee train --resume {checkpoint.parent.parent})"
        )
        self.reason, self.steps, self.checkpoint = reason, steps, checkpoint


class StopRequests:
    """Turns SIGTERM/SIGINT and a wall-time budget into a request to stop at the next point
    where a checkpoint is exact (a PPO rollout boundary). A second signal stops at once."""

    def __init__(self, time_limit: float | None, start: float) -> None:
        self.deadline = None if time_limit is None else start + time_limit
        self.reason: str | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return  # signals reach the main thread only (e.g. a Ray worker thread)
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)

    def uninstall(self) -> None:
        import signal

        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    def _handle(self, signum: int, frame: Any) -> None:
        import signal

        self.reason = signal.Signals(signum).name
        self.uninstall()  # a second Ctrl-C interrupts at once

    def requested(self) -> str | None:
        late = self.deadline is not None and time.perf_counter() >= self.deadline
        if self.reason is None and late:
            self.reason = "time limit"
        return self.reason
