"""Train a run with the engine its config names (``train.engine``), RL Zoo's one entry point:

    sb3   `yahtzee_agents.sb3.train`: MaskablePPO in torch on the native vector env
    jax   `yahtzee_agents.jax.ppo`: PPO in JAX on `yahtzee_env.jax`, one compiled program

Both write the run folder of `yahtzee_agents.run` and nothing else. Nothing heavy is imported
here: an engine's libraries are imported when it trains (`missing_engine_module` checks them
first).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .config import RunConfig

ENGINES = ("sb3", "jax")

EvalHook = Callable[[dict[str, Any], int], None]
"""Called with every evaluation's result and the step count (e.g. a sweep reports to Tune)."""


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

    * A checkpoint holds every random state: a run stopped and resumed on the same machine
      repeats the uninterrupted one bit for bit.
    * SIGTERM and SIGINT (``handle_signals``), and ``time_limit`` seconds of wall time, stop
      the run at the next point where a checkpoint is exact, write one, then raise
      `yahtzee_agents.run.folder.TrainingInterrupted`.
    * ``resume=True`` with no checkpoint says so, removes what the unfinished attempt left
      (`yahtzee_agents.run.folder.RunPaths.start_afresh`) and starts from the beginning.
    * A finished run resumed with nothing left to train is left untouched.

    ``on_eval(result, steps)`` is called after every evaluation; ``argv`` is the command
    recorded in ``command.txt`` (default ``sys.argv``). Returns the run folder."""
    if cfg.train.engine == "jax":
        from .jax.ppo import train as engine
    else:
        from .sb3.train import train as engine
    return engine(
        cfg,
        run_dir,
        resume=resume,
        progress=progress,
        argv=argv,
        on_eval=on_eval,
        time_limit=time_limit,
        handle_signals=handle_signals,
    )


def throughput(cfg: RunConfig, timesteps: int) -> dict[str, Any]:
    """PPO env-steps a second of the engine ``cfg`` names, end to end (rollouts and updates;
    no evaluation, checkpoint or warm start), for at least ``timesteps`` env-steps:
    ``steps``, ``seconds``, ``steps_per_s`` and ``start_s``, what comes before the timed steps
    (jax: tracing and XLA compilation; sb3: the model built and one warm-up rollout)."""
    if cfg.train.engine == "jax":
        from .jax.ppo import throughput as jax_throughput

        result = jax_throughput(cfg, timesteps, seed=cfg.train.seed)
        return {**result, "start_s": result["compile_s"]}
    from .sb3.bench import bench_config

    result = bench_config(cfg, timesteps)
    return {key: result[key] for key in ("steps", "seconds", "start_s")} | {
        "steps_per_s": result["steps_per_second"]
    }


def missing_engine_module(engine: str) -> str | None:
    """The first module an engine needs that is not installed (or blocked), else None:
    checked up front, because the engines import them lazily, deep inside training."""
    import importlib.util

    needs = {
        "sb3": ("yahtzee_agents", "torch", "stable_baselines3", "sb3_contrib", "yaml", "tqdm"),
        "jax": ("yahtzee_agents", "jax", "optax", "yaml"),
    }[engine]
    for name in needs:
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except ValueError:  # in sys.modules as None: import blocked
            return name
    return None
