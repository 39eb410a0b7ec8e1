"""The run: what every trainer writes through (RL Zoo's ``ExperimentManager``).

One owner for each fact a training run shares, whichever engine trains it::

    folder.py     the run folder's shape: paths, config.yaml, command.txt, meta.json (with
                  what the agent knew), evals.jsonl, best/ and final/, checkpoint names,
                  sessions.jsonl, the checks before a resume, stop requests, the final result
    schedule.py   a config value over env-steps (the learning-rate schedule), numpy or JAX
    shaping.py    the upper-bonus shaping potential, numpy or JAX

The engines (``train.engine``): `yahtzee_agents.train` (SB3 MaskablePPO, torch) and
`yahtzee_agents.ppo_jax` (PPO in JAX); `train` picks one. Nothing of the package is imported
here at module level, so that `yahtzee_agents.config` can use `schedule` without a cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ENGINES = ("sb3", "jax")


def train(cfg: Any, run_dir: str | Path, **options: Any) -> Path:
    """Train ``cfg`` into ``run_dir`` with the engine its ``train.engine`` names (the options
    of `yahtzee_agents.train.train`: ``resume``, ``progress``, ``argv``, ``on_eval``,
    ``time_limit``, ``handle_signals``). Returns the run folder."""
    if cfg.train.engine == "jax":
        from yahtzee_agents.ppo_jax import train as engine
    else:
        from yahtzee_agents.train import train as engine
    return engine(cfg, run_dir, **options)


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
