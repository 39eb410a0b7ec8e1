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

from yahtzee_env.dice import DICE, NUM_DICE
from yahtzee_env.engine import NUM_ACTIONS
from yahtzee_env.rules import NUM_BOXES

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
    """The info dict of one game (scalars) or of N games (arrays with a leading axis).

    ``roll`` is the roll index of the dice (`dice.DICE` row), ``scorecard`` int16 with
    `OPEN` (-1) for open boxes (`scorecard_array` makes one from an engine scorecard),
    ``action_mask`` bool or int8. The values are cast to the dtypes of `INFO_SPEC`; a bool
    mask is viewed as int8, not copied, so an array handed out must not be changed later.
    """
    mask = np.asarray(action_mask)
    return {
        "dice": DICE.take(roll, axis=0),  # a fresh array (never a view of the table)
        "rolls_left": _cast(rolls_left, np.int8),
        "scorecard": _cast(scorecard, np.int16),
        "upper_total": _cast(upper_total, np.int16),
        "upper_bonus": _cast(upper_bonus, np.int32),
        "yahtzee_bonus": _cast(yahtzee_bonus, np.int32),
        "total": _cast(total, np.int32),
        "action_mask": mask.view(np.int8) if mask.dtype == np.bool_ else mask.astype(np.int8),
    }


def _cast(value: Any, dtype: type[np.generic]) -> Any:
    """A numpy scalar for a Python number, else the array in ``dtype`` (no copy if it is)."""
    if isinstance(value, np.ndarray):
        return value.astype(dtype, copy=False)
    return dtype(value)


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
