"""A rule set's step rows: the legal-action masks and observation rows one step looks up.

The rows every stepping env reads (`Yahtzee-v0`, the vector env, `yahtzee_env.jax`), built once
per rule set from the rules' tables (`RuleSet.tables`) and the observation's feature tables. They
live in the engine's room because they are the engine's facts (which actions are legal, what the
dice would score), not any adapter's: the Gymnasium envs and the JAX env import them from here.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from yahtzee_env.game.dice import NUM_HOLDS
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS, ROLLS_PER_TURN
from yahtzee_env.game.observation import DICE_FEATURES, POINTS_SCALE, ROLLS_LEFT_FEATURES
from yahtzee_env.game.rules import RuleSet


class StepRows:
    """Per-rule-set lookup rows that make a step a handful of indexing operations.

    ``mask[has_rolls, context, filled]`` is the bool[45] legal-action row (read-only, so it can
    be handed out without copying).
    ``points_scaled[roll, joker_values] * legal_f32[context, filled]`` is the observation's
    points row (a float32 product: several times cheaper than float32 times bool).
    ``dice_rolls[roll, rolls_left]`` is obs[0:39]: the dice features and re-rolls one-hot.
    """

    def __init__(self, rules: RuleSet) -> None:
        tables = rules.tables
        legal = tables.legal  # [7, 8192, 13]
        mask = np.zeros((2, *legal.shape[:2], NUM_ACTIONS), dtype=bool)
        mask[1, :, :, :NUM_HOLDS] = True
        mask[:, :, :, BOX_ACTION_OFFSET:] = legal
        mask.flags.writeable = False
        self.mask = mask
        self.legal_f32 = legal.astype(np.float32)
        self.points_scaled = (tables.points / POINTS_SCALE).astype(np.float32)
        self.dice_rolls = np.concatenate(
            [
                np.repeat(DICE_FEATURES[:, None, :], ROLLS_PER_TURN, axis=1),
                np.broadcast_to(
                    ROLLS_LEFT_FEATURES, (len(DICE_FEATURES), *ROLLS_LEFT_FEATURES.shape)
                ),
            ],
            axis=2,
        )
        for table in (self.legal_f32, self.points_scaled, self.dice_rolls):
            table.flags.writeable = False


@lru_cache(maxsize=16)
def step_tables(rules: RuleSet) -> StepRows:
    """The `StepRows` of a rule set, built once per process (about 10 MB each)."""
    return StepRows(rules)


__all__ = ["StepRows", "step_tables"]
