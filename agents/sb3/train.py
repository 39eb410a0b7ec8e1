"""The SB3 engine (``train.engine: sb3``): train a MaskablePPO agent from a `RunConfig` into a
run folder ``runs/<name>/``, written through `yahtzee_agents.run` (its shape and every file of
it, the schedule, the shaping potential): this engine writes no file itself.

Its models are SB3's ``model.zip`` (``best/``, ``final/``, ``checkpoints/ckpt_<steps>.zip``
beside each checkpoint's state file, `resume`); TensorBoard logs go to ``tb/``. `train`
resumes from the newest checkpoint when ``resume=True``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from yahtzee_env.game.rules import Box, RuleSet

from ..config import RunConfig, Schedule
from ..export import numpy_policy
from ..run import folder
from ..run.folder import EvalHook, RunPaths, StopRequests, TrainingInterrupted
from ..run.schedule import sb3_value, scheduled
from ..run.shaping import potential_weight
from .resume import training_state

ENGINE = "sb3"


def libraries() -> dict[str, str | None]:
    """The engine's libraries, as ``meta.json`` names them."""
    from ..run.provenance import library_versions

    versions = library_versions()
    return {
        "torch": versions.get("torch"),
        "stable_baselines3": versions.get("stable-baselines3"),
        "sb3_contrib": versions.get("sb3-contrib"),
    }


# ------------------------------------------------------------------------------ env and model
def make_env(cfg: RunConfig, seed: int):
    """The native vector env behind the SB3 adapter, as the network sees it: model input of
    ``env.observation_version``, rewards shaped (``env.shaping``) and scaled for learning.
    ``YahtzeeVs-v0``: the 2-seat tables of `versus_env`."""
    if cfg.env.id == "YahtzeeVs-v0":
        from .versus_env import make_table_env

        return make_table_env(cfg, seed)
    from yahtzee_env.envs.vector import YahtzeeVectorEnv

    from .vec_env import LearningView, SB3VecEnv

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
        shaping_weight=potential_weight(cfg.env, 1.0),  # times the bonus, in LearningView
    )


def build_model(cfg: RunConfig, env: Any, tb_dir: Path | None):
    import torch.nn as nn

    from .anchor import attach_anchor, model_class
    from .distribution import install

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
        ent_coef=scheduled(p.ent_coef, 0, cfg.train.total_timesteps),
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


def load_checkpoint(cfg: RunConfig, ckpt: Path, env: Any):
    """The model of a checkpoint, as a resume continues it: the config's schedules (SB3 saves
    them pickled; ``lr_schedule`` too, which SB3 rebuilds from ``learning_rate``: a checkpoint
    written before `StepSchedule` moved to `yahtzee_agents.run.schedule` names its old
    module), the saved last observation kept (a reset would redraw the dice), the anchor
    rebuilt from ``policy.init`` (never saved) and the lean distribution installed."""
    from .anchor import attach_anchor, model_class
    from .distribution import install

    total = cfg.train.total_timesteps
    learning_rate = sb3_value(cfg.ppo.learning_rate, total)
    schedules = {
        "learning_rate": learning_rate,
        "lr_schedule": learning_rate,
        "clip_range": sb3_value(cfg.ppo.clip_range, total),
    }
    model = model_class(cfg).load(
        ckpt, env=env, device="cpu", custom_objects=schedules, force_reset=False
    )
    attach_anchor(model, cfg)
    return install(model)


# ------------------------------------------------------------------------------ callback
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
        # A 2-seat table (`versus_env`): results, past selves, value warm-up.
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
        self.best = folder.best_merit(self.paths)  # a resumed run competes with its best

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
            from .versus_env import take_snapshot

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
            total = self.cfg.train.total_timesteps
            self.model.ent_coef = scheduled(ent, self.num_timesteps, total)
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
        result = folder.evaluate(policy, cfg)
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
        self.best = folder.record_evaluation(
            self.paths, self.steps, result, self.best, ENGINE, self.model
        )
        if self.on_eval is not None:
            self.on_eval(result, self.steps)
        return result

    def checkpoint(self) -> Path:
        """``ckpt_<steps>.zip`` and its state file (`resume`); the last ``keep_checkpoints``
        pairs are kept."""
        state = training_state(self.model, self.training_env, self.state())
        keep = self.cfg.train.keep_checkpoints
        return folder.write_checkpoint(self.paths, self.steps, ENGINE, self.model, state, keep)

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


# ------------------------------------------------------------------------------ entry point
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
    """Train ``cfg`` into ``run_dir`` with MaskablePPO, or continue it (``resume``): the options
    and what they do are `yahtzee_agents.train.train`'s. A checkpoint is taken between two
    rollouts (the rollout buffer is empty there), holding every random state (`resume`), and
    so are the stops."""
    import torch

    from .resume import load_state

    torch.set_num_threads(cfg.train.torch_threads)
    session_start = time.perf_counter()
    paths = RunPaths(Path(run_dir))
    ckpt = folder.open_run(cfg, paths, resume)
    env = make_env(cfg, seed=cfg.train.seed)
    restored = None
    started_from = None
    if ckpt is not None:
        total = cfg.train.total_timesteps
        model = load_checkpoint(cfg, ckpt, env)
        model.tensorboard_log = str(paths.tb)
        if paths.state_of(ckpt).exists():
            restored = load_state(paths.state_of(ckpt), model, env)
        else:  # a checkpoint of an older version: no random state to restore
            print(f"{ckpt.name} has no state file: the continuation is not exact")
            env.seed(cfg.train.seed + model.num_timesteps)
            model._last_obs = None
        done = folder.finished_at(paths.root) == model.num_timesteps
        if total <= model.num_timesteps and done:
            env.close()
            print(
                f"{cfg.name} already finished at {model.num_timesteps} steps: nothing to do "
                "(extend it with --set train.total_timesteps=N)"
            )
            return paths.root
        folder.keep_evals_until(paths, model.num_timesteps)
        print(f"resuming {cfg.name} from {ckpt.name} at {model.num_timesteps} steps")
    else:
        model = build_model(cfg, env, paths.tb)
        started_from = None
        if cfg.policy.init is not None:  # e.g. hard's weights, widened for the table's inputs
            from .warm_start import init_policy

            started_from = init_policy(model, cfg)
    folder.write_run_metadata(paths, cfg, argv if argv is not None else sys.argv, libraries())
    if ckpt is None and started_from is not None:
        folder.record_init(paths, started_from)
    folder.say_if_no_regret(cfg)
    stop = StopRequests(time_limit, session_start)
    if handle_signals:
        stop.install()
    try:
        if ckpt is None and cfg.warm_start.teacher != "none":
            from .warm_start import warm_start

            folder.record_warm_start(paths, warm_start(model, cfg))
        if ckpt is None and cfg.versus is not None:  # the pool's first past self: step 0's
            from .versus_env import take_snapshot  # policy (after a warm start, if any)

            take_snapshot(model, env, 0)
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
                folder.record_session(
                    paths, session_start, time.perf_counter() - t0, model.num_timesteps
                )
                env.close()
                raise
        else:  # killed after its last checkpoint: evaluate and save as is, in the same TB run
            from stable_baselines3.common.utils import configure_logger

            model.set_logger(configure_logger(0, str(paths.tb), "ppo", reset_num_timesteps=False))
            callback.init_callback(model)
        elapsed = time.perf_counter() - t0
    finally:
        stop.uninstall()
    folder.write_model(paths.model_in(paths.final, ENGINE), model)
    result = callback.evaluate()  # the final weights (also a candidate for "best")
    callback.passed(model.num_timesteps)  # an extension does not evaluate this step again
    callback.checkpoint()
    folder.write_final(
        paths,
        result,
        model.num_timesteps,
        weights_sha256=weights_sha256(model),
        train_seconds_this_session=elapsed,
    )
    folder.record_session(paths, session_start, elapsed, model.num_timesteps)
    env.close()
    return paths.root
