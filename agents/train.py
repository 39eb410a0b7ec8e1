"""Train a MaskablePPO agent from a `RunConfig` into a run folder ``runs/<name>/``.

The run folder holds everything needed to understand and continue the run::

    config.yaml        the resolved config (after --set overrides)
    command.txt        the command line
    meta.json          package version, git commit, library versions, start time
    tb/                TensorBoard logs
    checkpoints/       ckpt_<steps>.zip, written atomically; the last K are kept
    best/              best model by evaluation (`merit`: regret, else mean; model.zip + eval.json)
    final/             the model at the end of training (model.zip + eval.json)

`train` resumes from the newest checkpoint when ``resume=True``.
"""

from __future__ import annotations

import json
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from stable_baselines3.common.callbacks import BaseCallback

from yahtzee_agents.config import (
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
    value_at,
)
from yahtzee_agents.export import numpy_policy
from yahtzee_agents.resume import save_state, state_path
from yahtzee_env.analysis.evaluation import evaluate_policy
from yahtzee_env.fileio import atomic_path, atomic_write
from yahtzee_env.game.rules import Box, RuleSet

CHECKPOINT_PREFIX = "ckpt_"


@dataclass
class RunPaths:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.yaml"

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

    def start_afresh(self) -> list[str]:
        """Remove what an earlier, unfinished attempt left (no checkpoint to resume from):
        TensorBoard runs, best and final models, evaluations, the warm start's record and
        checkpoint leftovers. Returns the names removed."""
        import shutil

        removed = []
        for path in (self.tb, self.best, self.final, self.checkpoints):
            if path.exists():
                shutil.rmtree(path)
                removed.append(path.name + "/")
        for name in ("evals.jsonl", "warm_start.json", "init.json", "sessions.jsonl"):
            if (self.root / name).exists():
                (self.root / name).unlink()
                removed.append(name)
        return removed

    def checkpoint_files(self) -> list[Path]:
        """Checkpoints ``ckpt_<steps>.zip``, oldest first (temporary files are not listed)."""
        found = []
        for path in self.checkpoints.glob(f"{CHECKPOINT_PREFIX}*.zip"):
            steps = path.stem.removeprefix(CHECKPOINT_PREFIX)
            if steps.isdigit():
                found.append((int(steps), path))
        return [path for _, path in sorted(found)]

    def latest_checkpoint(self) -> Path | None:
        ckpts = self.checkpoint_files()
        return ckpts[-1] if ckpts else None


def run_digest(run_dir: str | Path, cfg: RunConfig) -> tuple[str, int]:
    """``(config_sha256, config_digest_version)`` of a run: the digest its ``meta.json``
    recorded when ``cfg`` reproduces it in some digest version (a run made by older code keeps
    its digest), else ``cfg``'s in the current version."""
    try:
        recorded = json.loads((Path(run_dir) / "meta.json").read_text()).get("config_sha256")
    except (OSError, ValueError, AttributeError):
        recorded = None
    version = digest_version_of(cfg, recorded) if isinstance(recorded, str) else None
    if version is None:
        return cfg.digest(), DIGEST_VERSION
    return recorded, version


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


def finished_at(run_dir: str | Path) -> int | None:
    """The step count of a run's final model (``final/eval.json``), None if it has none."""
    final = RunPaths(Path(run_dir)).final / "eval.json"
    try:
        return int(json.loads(final.read_text())["timesteps"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


# ------------------------------------------------------------------------------ env and model
def make_env(cfg: RunConfig, seed: int):
    """The native vector env behind the SB3 adapter, as the network sees it: model input of
    ``env.observation_version``, rewards shaped (``env.shaping``) and scaled for learning.
    ``YahtzeeVs-v0``: the 2-seat tables of `yahtzee_agents.versus_env`."""
    if cfg.env.id == "YahtzeeVs-v0":
        from yahtzee_agents.versus_env import make_table_env

        return make_table_env(cfg, seed)
    from yahtzee_agents.vec_env import LearningView, SB3VecEnv
    from yahtzee_env.envs.vector import YahtzeeVectorEnv

    vec = YahtzeeVectorEnv(
        num_envs=cfg.env.num_envs, rules=cfg.env.rules, canonical_holds=cfg.env.canonical_holds
    )
    env = SB3VecEnv(vec)
    env.seed(seed)
    return LearningView(
        env,
        rules=vec.rules,
        observation_version=cfg.env.observation_version,
        reward_scale=cfg.env.reward_scale,
        shaping_weight=cfg.env.shaping_weight if cfg.env.shaping == "upper-bonus" else 0.0,
    )


def build_model(cfg: RunConfig, env: Any, tb_dir: Path | None):
    import torch.nn as nn

    from yahtzee_agents.anchor import attach_anchor, model_class
    from yahtzee_agents.config import sb3_value
    from yahtzee_agents.distribution import install

    p = cfg.ppo
    policy_kwargs = {
        "net_arch": {
            "pi": list(cfg.policy.net_arch),
            "vf": list(cfg.policy.vf_arch or cfg.policy.net_arch),
        },
        "activation_fn": {"relu": nn.ReLU, "tanh": nn.Tanh}[cfg.policy.activation],
    }
    model = model_class(cfg)(
        "MlpPolicy",
        env,
        learning_rate=sb3_value(p.learning_rate, cfg.train.total_timesteps),
        n_steps=p.n_steps,
        batch_size=p.batch_size,
        n_epochs=p.n_epochs,
        gamma=p.gamma,
        gae_lambda=p.gae_lambda,
        clip_range=sb3_value(p.clip_range, cfg.train.total_timesteps),
        clip_range_vf=p.clip_range_vf,
        normalize_advantage=p.normalize_advantage,
        ent_coef=value_at(p.ent_coef, 0, cfg.train.total_timesteps),
        vf_coef=p.vf_coef,
        max_grad_norm=p.max_grad_norm,
        target_kl=p.target_kl,
        policy_kwargs=policy_kwargs,
        tensorboard_log=str(tb_dir) if tb_dir else None,
        seed=cfg.train.seed,
        device="cpu",
        verbose=0,
    )
    attach_anchor(model, cfg)
    return install(model)


# ------------------------------------------------------------------------------ run folder
def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def write_run_metadata(paths: RunPaths, cfg: RunConfig, argv: list[str]) -> None:
    """``config.yaml``, ``command.txt`` (appended) and ``meta.json``: versions, git commit,
    start time and the machine (`yahtzee_agents.provenance`: CPU, flags, kernels in use).
    A resumed session appends its own facts to ``meta.json``'s ``sessions`` list."""
    import yahtzee_env
    from yahtzee_agents.provenance import environment_facts

    paths.root.mkdir(parents=True, exist_ok=True)
    atomic_write(paths.config, yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    with open(paths.root / "command.txt", "a") as f:
        f.write(shlex.join(argv) + "\n")
    session = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "git_commit": _git_commit(),
        "environment": environment_facts(),
    }
    meta_file = paths.root / "meta.json"
    try:
        earlier = json.loads(meta_file.read_text()).get("sessions", [])
    except (OSError, ValueError, AttributeError):
        earlier = []
    libraries = session["environment"]["libraries"]
    meta = {
        "package_version": yahtzee_env.__version__,
        "git_commit": session["git_commit"],
        "config_sha256": cfg.digest(),
        "config_digest_version": DIGEST_VERSION,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": libraries.get("torch"),
        "stable_baselines3": libraries.get("stable-baselines3"),
        "sb3_contrib": libraries.get("sb3-contrib"),
        "started": session["started"],
        "environment": session["environment"],
        "sessions": [*earlier, session],
    }
    atomic_write(meta_file, json.dumps(meta, indent=2) + "\n")


def save_model_atomic(model: Any, path: Path) -> None:
    """Save an SB3 model so that ``path`` is either the old file or the complete new one."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:  # the temp name is outside the glob
        model.save(f)


# ------------------------------------------------------------------------------ callback
EvalHook = Callable[[dict[str, Any], int], None]
"""Called with every evaluation's result and the step count (e.g. a sweep reports to Tune)."""


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
    """Turns SIGTERM/SIGINT and a wall-time budget into a request to stop at the next PPO
    rollout boundary (where a checkpoint is exact). A second signal stops at once."""

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


def weights_sha256(model: Any) -> str:
    """sha256 over the policy's parameters (name order, float32 bytes): two runs that
    trained the same weights have the same digest."""
    import hashlib

    digest = hashlib.sha256()
    for name, tensor in sorted(model.policy.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().numpy().tobytes())
    return digest.hexdigest()


class TrainingCallback(BaseCallback):
    """Episode statistics, periodic evaluation (also appended to ``evals.jsonl``),
    exact checkpoints, the progress bar, and stopping on request (`StopRequests`)."""

    def __init__(self, cfg, paths, progress, on_eval, stop=None) -> None:
        super().__init__()
        self.cfg, self.paths, self.progress, self.on_eval = cfg, paths, progress, on_eval
        self.stop = stop
        self.threshold = RuleSet.from_spec(cfg.env.rules).upper_bonus_threshold
        self.scores: list[float] = []
        self.upper: list[bool] = []
        self.yahtzees: list[bool] = []
        self.best: tuple[int, float] = (0, -np.inf)  # `merit` of the best evaluation
        self.last_eval: dict[str, Any] | None = None
        self.next_eval = 0
        self.next_ckpt = 0
        self.restored: dict[str, Any] | None = None  # from a checkpoint's state file
        self.resumed = False  # continuing from a checkpoint (no warm-start evaluation)
        self.bar = None
        self.t0 = time.perf_counter()
        self.steps0 = 0
        # A 2-seat table (`yahtzee_agents.versus_env`): results, past selves, value warm-up.
        self.table = cfg.versus is not None
        self.results: list[int] = []
        self.next_snapshot = 0

    @property
    def steps(self) -> int:
        return int(self.model.num_timesteps)

    def passed(self, n: int) -> None:
        """The evaluation and checkpoint due at step ``n`` are done: move both past it."""
        t = self.cfg.train
        self.next_eval = (n // t.eval_interval + 1) * t.eval_interval if t.eval_interval else 0
        self.next_ckpt = (n // t.checkpoint_interval + 1) * t.checkpoint_interval

    def state(self) -> dict[str, Any]:
        state = {"next_eval": self.next_eval, "next_ckpt": self.next_ckpt}
        if self.table:
            state["next_snapshot"] = self.next_snapshot
        return state

    def _init_callback(self) -> None:
        t, n = self.cfg.train, self.steps
        self.next_eval = (n // t.eval_interval + 1) * t.eval_interval if t.eval_interval else 0
        self.next_ckpt = (n // t.checkpoint_interval + 1) * t.checkpoint_interval
        if self.table:  # the snapshot of step 0 is taken before the first game
            every = self.cfg.versus.snapshot_interval
            self.next_snapshot = (n // every + 1) * every
        if self.restored is not None:
            self.next_eval = self.restored["next_eval"]
            self.next_ckpt = self.restored["next_ckpt"]
            self.next_snapshot = self.restored.get("next_snapshot", self.next_snapshot)
        best_file = self.paths.best / "eval.json"
        if best_file.exists():  # a resumed run keeps competing with its earlier best
            self.best = merit(json.loads(best_file.read_text()))

    def _on_training_start(self) -> None:
        n = self.steps
        self.t0, self.steps0 = time.perf_counter(), n
        started = self.cfg.warm_start.teacher != "none" or self.cfg.policy.init is not None
        if n == 0 and not self.resumed and started:
            self.evaluate()  # the warm-started policy competes for "best" too
        if self.progress:
            from tqdm import tqdm

            self.bar = tqdm(
                total=self.cfg.train.total_timesteps,
                initial=n,
                unit="step",
                unit_scale=True,
                dynamic_ncols=True,
                desc=self.cfg.name,
            )

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
            if done and "episode" in info:
                self.scores.append(info["episode"]["r"])
                self.upper.append(info["upper_bonus"] > 0)
                self.yahtzees.append(info["scorecard"][Box.YAHTZEE] > 0)
                if "result" in info:
                    self.results.append(info["result"])
        if self.bar is not None:
            self.bar.update(self.steps - self.bar.n)
        return True

    def _on_rollout_start(self) -> None:
        # Between PPO updates: the weights evaluated and saved are the ones trained so
        # far, and the rollout buffer is empty, so a checkpoint here is exact.
        n, t = self.steps, self.cfg.train
        if t.eval_interval and n >= self.next_eval:
            self.evaluate()
            self.next_eval = (n // t.eval_interval + 1) * t.eval_interval
        if self.table and n >= self.next_snapshot:
            from yahtzee_agents.versus_env import take_snapshot

            take_snapshot(self.model, self.training_env, n)
            every = self.cfg.versus.snapshot_interval
            self.next_snapshot = (n // every + 1) * every
        if n >= self.next_ckpt:
            self.next_ckpt = (n // t.checkpoint_interval + 1) * t.checkpoint_interval
            self.checkpoint()
        reason = self.stop.requested() if self.stop is not None else None
        if reason is not None and n < t.total_timesteps:
            path = self.checkpoint()
            raise TrainingInterrupted(reason, n, path)

    def _on_rollout_end(self) -> None:
        # Before the update of this rollout: a scheduled entropy coefficient takes its value
        # at the current step (recomputed from the step count, so a resumed run agrees).
        ent = self.cfg.ppo.ent_coef
        if isinstance(ent, Schedule):
            self.model.ent_coef = ent.at(self.num_timesteps, self.cfg.train.total_timesteps)
            self.logger.record("train/ent_coef_scheduled", self.model.ent_coef)
        if self.table:
            # Value warm-up: the policy path learns nothing until `versus.value_warmup` steps
            # (no gradient reaches it, so Adam leaves it as it is); decided from the step count.
            learns = self.num_timesteps >= self.cfg.versus.value_warmup
            policy = self.model.policy
            for module in (policy.mlp_extractor.policy_net, policy.action_net):
                for param in module.parameters():
                    param.requires_grad_(learns)
            if self.results:
                results = np.array(self.results)
                self.logger.record("episode/win_rate", float(np.mean((results + 1) / 2)))
                self.results = []
        if self.scores:
            self.logger.record("episode/score", float(np.mean(self.scores)))
            self.logger.record("episode/upper_bonus_rate", float(np.mean(self.upper)))
            self.logger.record("episode/yahtzee_rate", float(np.mean(self.yahtzees)))
            self.scores, self.upper, self.yahtzees = [], [], []
        sps = (self.num_timesteps - self.steps0) / max(time.perf_counter() - self.t0, 1e-9)
        self.logger.record("time/sps_run", sps)

    def evaluate(self) -> dict[str, Any]:
        cfg = self.cfg
        if self.table:
            return self._record_eval(evaluate_table(self.model, cfg))
        policy = numpy_policy(
            self.model,
            cfg.name,
            cfg.env.canonical_holds,
            self.threshold,
            input_version=cfg.env.observation_version,
        )
        result = evaluate_policy(
            policy,
            games=cfg.train.eval_games,
            seed=cfg.train.eval_seed,
            rules=cfg.env.rules,
            regret="if-cached",
        )
        return self._record_eval(result)

    def _record_eval(self, result: dict[str, Any]) -> dict[str, Any]:
        self.last_eval = result
        if "win_rate" in result:  # at a table (`evaluate_table`)
            for key in ("win_rate", "win_ci95", "margin", "decisive_win_rate", "draw_rate"):
                self.logger.record(f"eval/{key}", result[key])
        else:
            self.logger.record("eval/mean_score", result["mean"])
            self.logger.record("eval/ci95", result["ci95"])
            self.logger.record("eval/upper_bonus_rate", result["upper_bonus_rate"])
            self.logger.record("eval/yahtzee_rate", result["yahtzee_rate"])
        if result.get("regret") is not None:
            self.logger.record("eval/regret_per_game", result["regret"]["mean"])
        _dump_only(self.logger, "eval/", self.steps)
        if self.bar is not None and "win_rate" in result:
            self.bar.set_postfix(win=f"{result['win_rate']:.3f}±{result['win_ci95']:.3f}")
        elif self.bar is not None:
            self.bar.set_postfix(eval=f"{result['mean']:.1f}±{result['ci95']:.1f}")
        brief = _brief(result)
        with open(self.paths.evals, "a") as f:
            f.write(json.dumps({"timesteps": self.steps, **brief}) + "\n")
        if merit(brief) > self.best:
            self.best = merit(brief)
            save_model_atomic(self.model, self.paths.best / "model.zip")
            atomic_write(
                self.paths.best / "eval.json",
                json.dumps({**brief, "timesteps": self.steps}, indent=2),
            )
        if self.on_eval is not None:
            self.on_eval(result, self.steps)
        return result

    def checkpoint(self) -> Path:
        """``ckpt_<steps>.zip`` and its state file (`yahtzee_agents.resume`); the last
        ``keep_checkpoints`` pairs are kept."""
        path = self.paths.checkpoints / f"{CHECKPOINT_PREFIX}{self.steps}.zip"
        save_state(state_path(path), self.model, self.training_env, self.state())
        save_model_atomic(self.model, path)  # after its state: a listed zip has one
        for old in self.paths.checkpoint_files()[: -self.cfg.train.keep_checkpoints]:
            old.unlink()
            state_path(old).unlink(missing_ok=True)
        return path

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _dump_only(logger: Any, prefix: str, step: int) -> None:
    """Write the values recorded under ``prefix`` at ``step`` now, and keep every other value
    for SB3's own dump: a dump between PPO updates must not write the last update's ``train/*``
    at this step (SB3 writes them once, at the end of the next rollout)."""
    kept = {
        key: (logger.name_to_value[key], logger.name_to_count.get(key))
        for key in list(logger.name_to_value)
        if not key.startswith(prefix)
    }
    excluded = {key: logger.name_to_excluded[key] for key in kept if key in logger.name_to_excluded}
    for key in kept:
        del logger.name_to_value[key]
        logger.name_to_count.pop(key, None)
        logger.name_to_excluded.pop(key, None)
    logger.dump(step)
    for key, (value, count) in kept.items():
        logger.name_to_value[key] = value
        if count is not None:
            logger.name_to_count[key] = count
    logger.name_to_excluded.update(excluded)


def merit(brief: dict[str, Any]) -> tuple[int, float]:
    """How good an evaluation (`_brief`) is, for ``best/``: at a table, the higher win rate;
    else the lower regret per game when it was measured (its 95% CI is about a tenth of the
    mean's: ±0.1 against ±1.8 points on 4,000 games, so a mean's luck does not pick the
    model), else the higher mean. Any evaluation with a regret ranks above any without."""
    if brief.get("win_rate") is not None:
        return (2, float(brief["win_rate"]))
    if brief.get("regret_per_game") is not None:
        return (1, -float(brief["regret_per_game"]))
    return (0, float(brief["mean"]))


def evaluate_table(model: Any, cfg: RunConfig) -> dict[str, Any]:
    """The learner at a 2-seat table against ``versus.eval_opponent``: ``train.eval_games``
    deals from seed ``train.eval_seed``, each played from both seats (the multi-player
    protocol's `play_rotated`): the win rate (draws 1/2) and the margin, each ± a normal 95%
    CI over deals, and the decisive-game figures (`decisive`)."""
    from yahtzee_env.analysis.multiplayer import _mean_ci, decisive, play_rotated
    from yahtzee_env.policies.resolve import resolve_policy

    rules = RuleSet.from_spec(cfg.env.rules)
    agent = numpy_policy(
        model,
        cfg.name,
        cfg.env.canonical_holds,
        rules.upper_bonus_threshold,
        input_version=cfg.env.observation_version,
    )
    opponent = resolve_policy(cfg.versus.eval_opponent, rules, 0)
    deals = cfg.train.eval_games
    points, margins, results = play_rotated(agent, opponent, 2, deals, cfg.train.eval_seed, rules)
    win, win_ci = _mean_ci(points)
    margin, margin_ci = _mean_ci(margins)
    return {
        "games": int(results.size),
        "deals": deals,
        "seed": cfg.train.eval_seed,
        "opponent": cfg.versus.eval_opponent,
        "win_rate": win,
        "win_ci95": win_ci,
        "margin": margin,
        "margin_ci95": margin_ci,
        **decisive(results),
    }


def _brief(result: dict[str, Any]) -> dict[str, Any]:
    if "win_rate" in result:
        return dict(result)
    keys = ("games", "seed", "mean", "ci95", "std", "median", "upper_bonus_rate", "yahtzee_rate")
    brief = {k: result[k] for k in keys if k in result}
    if result.get("regret") is not None:
        brief["regret_per_game"] = result["regret"]["mean"]
    return brief


# ------------------------------------------------------------------------------ entry point
def _keep_evals_until(path: Path, steps: int) -> None:
    """Drop evaluations logged after ``steps`` (a run killed after its last checkpoint
    repeats them when resumed)."""
    if not path.exists():
        return
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    kept = [line for line in lines if json.loads(line)["timesteps"] <= steps]
    if len(kept) != len(lines):
        atomic_write(path, "".join(line + "\n" for line in kept))


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


def _say_if_no_regret(cfg: RunConfig) -> None:
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


def train(
    cfg: RunConfig,
    run_dir: str | Path,
    *,
    resume: bool = False,
    progress: bool = True,
    argv: list[str] | None = None,
    on_eval: EvalHook | None = None,
    time_limit: float | None = None,
    handle_signals: bool = True,
) -> Path:
    """Train the run described by ``cfg`` into the folder ``run_dir`` (``runs/<name>``), or
    with ``resume=True`` continue it from its newest checkpoint up to
    ``cfg.train.total_timesteps``, which may be raised to extend a finished run.

    * A checkpoint holds every random state (`yahtzee_agents.resume`): a run stopped and
      resumed on the same machine repeats the uninterrupted one bit for bit.
    * SIGTERM and SIGINT (``handle_signals``), and ``time_limit`` seconds of wall time, stop
      the run at the next rollout boundary with a checkpoint, then raise
      `TrainingInterrupted`.
    * ``resume=True`` with no checkpoint says so, removes what the unfinished attempt left
      (`RunPaths.start_afresh`) and starts from the beginning.
    * A finished run resumed with nothing left to train is left untouched.

    ``on_eval(result, steps)`` is called after every evaluation. Returns the run folder."""
    import torch

    from yahtzee_agents.anchor import attach_anchor, model_class
    from yahtzee_agents.config import sb3_value
    from yahtzee_agents.distribution import install
    from yahtzee_agents.resume import load_state

    torch.set_num_threads(cfg.train.torch_threads)
    session_start = time.perf_counter()
    paths = RunPaths(Path(run_dir))
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
    env = make_env(cfg, seed=cfg.train.seed)
    restored = None
    started_from = None
    if ckpt is not None:
        total = cfg.train.total_timesteps
        schedules = {
            "learning_rate": sb3_value(cfg.ppo.learning_rate, total),
            "clip_range": sb3_value(cfg.ppo.clip_range, total),
        }
        # force_reset=False: keep the saved last observation (a reset would redraw the dice)
        model = model_class(cfg).load(
            ckpt, env=env, device="cpu", custom_objects=schedules, force_reset=False
        )
        attach_anchor(model, cfg)  # the anchor is rebuilt from policy.init, never saved
        install(model)
        model.tensorboard_log = str(paths.tb)
        if state_path(ckpt).exists():
            restored = load_state(state_path(ckpt), model, env)
        else:  # a checkpoint of an older version: no random state to restore
            print(f"{ckpt.name} has no state file: the continuation is not exact")
            env.seed(cfg.train.seed + model.num_timesteps)
            model._last_obs = None
        if total <= model.num_timesteps and finished_at(paths.root) == model.num_timesteps:
            env.close()
            print(
                f"{cfg.name} already finished at {model.num_timesteps} steps: nothing to do "
                "(extend it with --set train.total_timesteps=N)"
            )
            return paths.root
        _keep_evals_until(paths.evals, model.num_timesteps)
        print(f"resuming {cfg.name} from {ckpt.name} at {model.num_timesteps} steps")
    else:
        model = build_model(cfg, env, paths.tb)
        started_from = None
        if cfg.policy.init is not None:  # e.g. hard's weights, widened for the table's inputs
            from yahtzee_agents.warm_start import init_policy

            started_from = init_policy(model, cfg)
        if cfg.versus is not None:  # the pool's first past self: the policy at step 0
            from yahtzee_agents.versus_env import take_snapshot

            take_snapshot(model, env, 0)
    write_run_metadata(paths, cfg, argv if argv is not None else sys.argv)
    if ckpt is None and started_from is not None:
        atomic_write(paths.root / "init.json", json.dumps(started_from, indent=2) + "\n")
    _say_if_no_regret(cfg)
    stop = StopRequests(time_limit, session_start)
    if handle_signals:
        stop.install()
    try:
        if ckpt is None and cfg.warm_start.teacher != "none":
            from yahtzee_agents.warm_start import warm_start

            stats = warm_start(model, cfg)
            atomic_write(paths.root / "warm_start.json", json.dumps(stats, indent=2))
        callback = TrainingCallback(cfg, paths, progress, on_eval, stop)
        callback.restored, callback.resumed = restored, ckpt is not None
        remaining = cfg.train.total_timesteps - model.num_timesteps
        t0 = time.perf_counter()
        if remaining > 0:
            try:
                model.learn(
                    total_timesteps=remaining,
                    callback=callback,
                    reset_num_timesteps=ckpt is None,
                    tb_log_name="ppo",
                )
            except TrainingInterrupted:
                callback.on_training_end()
                model.logger.close()
                _record_session(paths, session_start, time.perf_counter() - t0, model)
                env.close()
                raise
        else:  # killed after its last checkpoint: evaluate and save as is, in the same TB run
            from stable_baselines3.common.utils import configure_logger

            model.set_logger(configure_logger(0, str(paths.tb), "ppo", reset_num_timesteps=False))
            callback.init_callback(model)
        elapsed = time.perf_counter() - t0
    finally:
        stop.uninstall()
    save_model_atomic(model, paths.final / "model.zip")
    result = callback.evaluate()  # the final weights (also a candidate for "best")
    callback.passed(model.num_timesteps)  # an extension does not evaluate this step again
    callback.checkpoint()
    atomic_write(
        paths.final / "eval.json",
        json.dumps(
            {
                **_brief(result),
                "timesteps": model.num_timesteps,
                "weights_sha256": weights_sha256(model),
                "train_seconds_this_session": elapsed,
            },
            indent=2,
        ),
    )
    _record_session(paths, session_start, elapsed, model)
    env.close()
    return paths.root


def _record_session(paths: RunPaths, session_start: float, ppo_seconds: float, model) -> None:
    with open(paths.root / "sessions.jsonl", "a") as f:
        record = {
            "wall_seconds": time.perf_counter() - session_start,  # warm start and evals too
            "ppo_seconds": ppo_seconds,
            "end_timesteps": model.num_timesteps,
        }
        f.write(json.dumps(record) + "\n")
