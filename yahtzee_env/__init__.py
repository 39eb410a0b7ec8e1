"""Yahtzee as a reinforcement-learning benchmark.

Importing this package registers the Gymnasium ids (nothing heavy is imported until
`gymnasium.make`)::

    import gymnasium as gym
    import yahtzee_env  # noqa: F401  (or gym.make("yahtzee_env:Yahtzee-v0"))

    env = gym.make("Yahtzee-v0", rules="official")

The folders are the layers, lowest first: `game` (the pure engine: no Gymnasium), `solver`,
`policies`, `envs`, `analysis`, `play` (the terminal), `web` and `commands` (the CLI). The
names a user needs most are importable from here::

    from yahtzee_env import RuleSet, load_opponent, resolve_policy, evaluate_policy

Grade any agent by the benchmark protocol in one call::

    row = yahtzee_env.benchmark("hard")  # or a model file, or fn(obs, mask) -> actions
"""

from __future__ import annotations

from yahtzee_env.game.engine import (
    NUM_ACTIONS,
    Game,
    IllegalActionError,
    Scorecard,
    box_action,
    hold_action,
)
from yahtzee_env.game.rules import BOX_NAMES, PRESETS, Box, RuleSet

__version__ = "0.2.0"

ENV_IDS = ("Yahtzee-v0", "YahtzeeVs-v0")
"""The Gymnasium ids this package registers (the PettingZoo env is
`yahtzee_env.envs.multiplayer.env`)."""

# Imported on first use, so that `import yahtzee_env` stays light: name -> its module.
_LAZY = {
    "load_opponent": "yahtzee_env.policies.models",
    "LEVELS": "yahtzee_env.policies.models",
    "ModelFormatError": "yahtzee_env.policies.models",
    "make_policy": "yahtzee_env.policies.baselines",
    "POLICIES": "yahtzee_env.policies.baselines",
    "resolve_policy": "yahtzee_env.policies.resolve",
    "evaluate_policy": "yahtzee_env.analysis.evaluation",
    "benchmark": "yahtzee_env.analysis.leaderboard",
    "PROTOCOL": "yahtzee_env.analysis.leaderboard",
}

__all__ = [
    "BOX_NAMES",
    "ENV_IDS",
    "LEVELS",
    "NUM_ACTIONS",
    "POLICIES",
    "PRESETS",
    "PROTOCOL",
    "Box",
    "Game",
    "IllegalActionError",
    "ModelFormatError",
    "RuleSet",
    "Scorecard",
    "__version__",
    "benchmark",
    "box_action",
    "evaluate_policy",
    "hold_action",
    "load_opponent",
    "make_policy",
    "resolve_policy",
]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'yahtzee_env' has no attribute {name!r}")


def _register() -> None:
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:  # the engine, solver and levels work without Gymnasium
        return
    from yahtzee_env.envs.checks import MAX_EPISODE_STEPS  # a cap only illegal loops reach

    if "Yahtzee-v0" not in registry:
        register(
            id="Yahtzee-v0",
            entry_point="yahtzee_env.envs.yahtzee:YahtzeeEnv",
            vector_entry_point="yahtzee_env.envs.vector:YahtzeeVectorEnv",
            max_episode_steps=MAX_EPISODE_STEPS,
        )
    if "YahtzeeVs-v0" not in registry:
        register(
            id="YahtzeeVs-v0",
            entry_point="yahtzee_env.envs.versus:YahtzeeVsEnv",
            max_episode_steps=MAX_EPISODE_STEPS,
        )


_register()
