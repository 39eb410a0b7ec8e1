"""The info dict of every env: one builder, fixed numeric types (no Gymnasium here).

`Yahtzee-v0`, its native vector env (every step and ``final_info``), `YahtzeeVs-v0` and the
PettingZoo `yahtzee_v0` all build their info with `make_info`, so the keys and dtypes are the
same everywhere. A single env gets numpy scalars and 1-d arrays; the vector env gets the same
dtypes with a leading ``[N]`` axis, exactly what Gymnasium's `SyncVectorEnv` /
`AsyncVectorEnv` build from single-env infos:

==================  ============  =====================================================
key                 dtype, shape  meaning
==================  ============  =====================================================
``dice``            int8 ``[5]``  the dice on the table, sorted ascending
``rolls_left``      int8          re-rolls left this turn (2, 1, 0)
``scorecard``       int16 ``[13]`` points per box in `BOX_NAMES` order, ``-1`` while open
``upper_total``     int16         points in the six upper boxes
``upper_bonus``     int32         the upper bonus earned (0 until the threshold is reached)
``yahtzee_bonus``   int32         points earned by Yahtzee bonuses
``total``           int32         the score so far, bonuses included
``action_mask``     int8 ``[45]`` 1 where the action is legal now (all 0 once the game is over)
==================  ============  =====================================================

`INFO_SPEC` holds this table as data; the tests check every env against it. Env-specific keys
come on top (``illegal_action``, the versus env's ``seat``/``totals``/``winners``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yahtzee_env.game.dice import DICE, NUM_DICE
from yahtzee_env.game.engine import NUM_ACTIONS
from yahtzee_env.game.rules import NUM_BOXES

OPEN = -1  # `info["scorecard"]` value of a box not filled yet

# key -> (dtype, shape of one game's value)
INFO_SPEC: dict[str, tuple[type[np.generic], tuple[int, ...]]] = {
    "dice": (np.int8, (NUM_DICE,)),
    "rolls_left": (np.int8, ()),
    "scorecard": (np.int16, (NUM_BOXES,)),
    "upper_total": (np.int16, ()),
    "upper_bonus": (np.int32, ()),
    "yahtzee_bonus": (np.int32, ()),
    "total": (np.int32, ()),
    "action_mask": (np.int8, (NUM_ACTIONS,)),
}


def make_info(
    *,
    roll: Any,
    rolls_left: Any,
    scorecard: Any,
    upper_total: Any,
    upper_bonus: Any,
    yahtzee_bonus: Any,
    total: Any,
    action_mask: Any,
) -> dict[str, Any]:
    """The info dict of one game (Python ints: numpy scalars and fresh arrays) or of N games
    (arrays with a leading axis; ``rolls_left`` an array tells which).

    ``roll`` is the roll index of the dice (`dice.DICE` row), ``scorecard`` int16 with
    `OPEN` (-1) for open boxes (`scorecard_array` makes one from an engine scorecard; the
    single-game form does not copy it), ``action_mask`` bool or int8. The values take the
    dtypes of `INFO_SPEC`. Batched, a bool mask is viewed as int8, not copied: the vector env
    never changes an array it has handed out.
    """
    if not isinstance(rolls_left, np.ndarray):  # one game: the single envs' hot path
        return {
            "dice": _DICE_ROWS[roll].copy(),
            # numpy scalars are immutable, so a cached one can be handed out many times
            "rolls_left": _INT8[rolls_left],
            "scorecard": np.asarray(scorecard, dtype=np.int16),
            "upper_total": _INT16[upper_total]
            if 0 <= upper_total < _CACHED
            else np.int16(upper_total),
            "upper_bonus": _INT32[upper_bonus]
            if 0 <= upper_bonus < _CACHED
            else np.int32(upper_bonus),
            "yahtzee_bonus": (
                _INT32[yahtzee_bonus] if 0 <= yahtzee_bonus < _CACHED else np.int32(yahtzee_bonus)
            ),
            "total": _INT32[total] if 0 <= total < _CACHED else np.int32(total),
            "action_mask": np.asarray(action_mask).astype(np.int8),  # a fresh copy
        }
    mask = np.asarray(action_mask)
    return {
        "dice": DICE.take(roll, axis=0),
        "rolls_left": rolls_left.astype(np.int8),
        "scorecard": np.asarray(scorecard).astype(np.int16, copy=False),
        "upper_total": np.asarray(upper_total).astype(np.int16),
        "upper_bonus": np.asarray(upper_bonus).astype(np.int32),
        "yahtzee_bonus": np.asarray(yahtzee_bonus).astype(np.int32),
        "total": np.asarray(total).astype(np.int32),
        "action_mask": mask.view(np.int8) if mask.dtype == np.bool_ else mask.astype(np.int8),
    }


_DICE_ROWS = list(DICE)  # row views of the dice table, one per roll index (copied on use)
# Scalars made once (building a numpy scalar costs more than the rest of a step's info).
_CACHED = 2048
_INT8 = [np.int8(r) for r in range(3)]
_INT16 = [np.int16(v) for v in range(_CACHED)]
_INT32 = [np.int32(v) for v in range(_CACHED)]


def scorecard_array(scores: list[int | None]) -> np.ndarray:
    """int16[13] of an engine `Scorecard.scores` list: the points, `OPEN` where None."""
    return np.array([OPEN if s is None else s for s in scores], dtype=np.int16)


def card_info(game: Any, seat: int, mask: np.ndarray | None) -> dict[str, Any]:
    """`make_info` for ``seat`` of an engine `Game`: the dice on the table and the seat's card.

    ``mask`` (bool[45]) is the seat's legal actions; None means none (not its turn, or over).
    """
    card = game.players[seat]
    return make_info(
        roll=game.roll,
        rolls_left=game.rolls_left,
        scorecard=scorecard_array(card.scores),
        upper_total=card.upper_total,
        upper_bonus=card.upper_bonus,
        yahtzee_bonus=card.yahtzee_bonus,
        total=card.total,
        action_mask=np.zeros(NUM_ACTIONS, dtype=np.int8) if mask is None else mask,
    )


__all__ = ["INFO_SPEC", "OPEN", "card_info", "make_info", "scorecard_array"]
