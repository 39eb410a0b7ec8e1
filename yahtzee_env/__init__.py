"""Yahtzee as a reinforcement-learning benchmark.

Importing this package registers the Gymnasium ids (nothing heavy is imported until
`gymnasium.make`)::

    import gymnasium as gym
    import yahtzee_env  # noqa: F401  (or gym.make("yahtzee_env:Yahtzee-v0"))

    env = gym.make("Yahtzee-v0", rules="official")

Grade any agent by the benchmark protocol in one call (`yahtzee_env.benchmark`)::

    row = yahtzee_env.benchmark("hard")  # or a model file, or fn(obs, mask) -> actions

The rules engine (`yahtzee_env.engine`, `yahtzee_env.rules`, `yahtzee_env.dice`) does not
import Gymnasium.
"""

from __future__ import annotations

from yahtzee_env.engine import (
    NUM_ACTIONS,
    Game,
    IllegalActionError,
    Scorecard,
    box_action,
    hold_action,
)
from yahtzee_env.leaderboard import PROTOCOL, benchmark
from yahtzee_env.rules import BOX_NAMES, PRESETS, Box, RuleSet

__version__ = "0.1.0"

__all__ = [
    "BOX_NAMES",
    "NUM_ACTIONS",
    "PRESETS",
    "PROTOCOL",
    "Box",
    "Game",
    "IllegalActionError",
    "RuleSet",
    "Scorecard",
    "__version__",
    "benchmark",
    "box_action",
    "hold_action",
]


def _register() -> None:
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:  # the engine, solver and levels work without Gymnasium
        return
    from yahtzee_env.plumbing import MAX_EPISODE_STEPS  # a cap only illegal loops reach

    if "Yahtzee-v0" not in registry:
        register(
            id="Yahtzee-v0",
            entry_point="yahtzee_env.env:YahtzeeEnv",
            vector_entry_point="yahtzee_env.vector:YahtzeeVectorEnv",
            max_episode_steps=MAX_EPISODE_STEPS,
        )
    if "YahtzeeVs-v0" not in registry:
        register(
            id="YahtzeeVs-v0",
            entry_point="yahtzee_env.versus:YahtzeeVsEnv",
            max_episode_steps=MAX_EPISODE_STEPS,
        )


_register()
