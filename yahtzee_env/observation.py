"""The `Yahtzee-v0` observation: a flat float32 vector, built from lookup tables.

Layout (``OBS_VERSION = 1``, ``OBS_SIZE = 72``), all values in [0, 1]::

    [ 0:30)  sorted dice, one-hot: die i (ascending) has face f  -> index 6*i + (f-1)
    [30:36)  face counts / 5 (aces .. sixes)
    [36:39)  re-rolls left, one-hot (0, 1, 2)
    [39:52)  box open (1) or filled (0), box order of `BOX_NAMES`
    [52:65)  points the dice on the table would score in each box / 50 (0 where not legal now;
             joker values applied; Yahtzee bonus not included)
    [65]     upper total / upper-bonus threshold, capped at 1
    [66]     upper bonus earned (1/0)
    [67:70)  yahtzee box: open / holds 50 / holds 0, one-hot
    [70]     the dice on the table earn a Yahtzee bonus if placed (1/0)
    [71]     boxes filled / 13

`encode` builds one vector for one scorecard and roll (the engine can do it for any seat of a
multi-player game); `encode_batch` builds the same rows for arrays of states (the vector env).
Both only concatenate rows of the tables below, so they cannot drift apart.
"""

from __future__ import annotations

import numpy as np

from yahtzee_env.dice import COUNTS, DICE, NUM_DICE, NUM_ROLLS, roll_index_from_counts
from yahtzee_env.rules import NUM_BOXES, NUM_FILLED_MASKS

OBS_VERSION = 1
OBS_SIZE = 72
POINTS_SCALE = 50.0

DICE_SLICE = slice(0, 36)
COUNTS_SLICE = slice(30, 36)
ROLLS_LEFT_SLICE = slice(36, 39)
OPEN_SLICE = slice(39, 52)
POINTS_SLICE = slice(52, 65)
UPPER_SLICE = slice(65, 67)
UPPER_INDEX = 65  # upper total / threshold, capped at 1
UPPER_BONUS_INDEX = 66  # upper bonus earned
YAHTZEE_BOX_SLICE = slice(67, 70)
BONUS_INDEX = 70
PROGRESS_INDEX = 71


def _dice_features() -> np.ndarray:
    onehot = (DICE[:, :, None] == np.arange(1, 7)).reshape(NUM_ROLLS, 30)
    return np.concatenate([onehot, COUNTS / NUM_DICE], axis=1).astype(np.float32)


DICE_FEATURES = _dice_features()  # [252, 36]
ROLLS_LEFT_FEATURES = np.eye(3, dtype=np.float32)  # [3, 3]
_filled_bits = (np.arange(NUM_FILLED_MASKS)[:, None] >> np.arange(NUM_BOXES)) & 1
OPEN_FEATURES = (1 - _filled_bits).astype(np.float32)  # [8192, 13]
PROGRESS_FEATURES = (_filled_bits.sum(axis=1) / NUM_BOXES).astype(np.float32)  # [8192]
YAHTZEE_BOX_FEATURES = np.eye(3, dtype=np.float32)  # [3, 3]
for _t in (
    DICE_FEATURES,
    ROLLS_LEFT_FEATURES,
    OPEN_FEATURES,
    PROGRESS_FEATURES,
    YAHTZEE_BOX_FEATURES,
):
    _t.flags.writeable = False


def encode(
    roll: int,
    rolls_left: int,
    filled: int,
    upper_total: int,
    yahtzee_state: int,
    legal: np.ndarray,
    points: np.ndarray,
    threshold: int,
    bonus: bool,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """One observation (see the module docstring). ``legal``/``points`` from `options`."""
    obs = np.empty(OBS_SIZE, dtype=np.float32) if out is None else out
    obs[DICE_SLICE] = DICE_FEATURES[roll]
    obs[ROLLS_LEFT_SLICE] = ROLLS_LEFT_FEATURES[rolls_left]
    obs[OPEN_SLICE] = OPEN_FEATURES[filled]
    obs[POINTS_SLICE] = points * legal / POINTS_SCALE
    obs[UPPER_INDEX] = min(upper_total / threshold, 1.0)
    obs[UPPER_BONUS_INDEX] = upper_total >= threshold
    obs[YAHTZEE_BOX_SLICE] = YAHTZEE_BOX_FEATURES[yahtzee_state]
    obs[BONUS_INDEX] = bonus
    obs[PROGRESS_INDEX] = PROGRESS_FEATURES[filled]
    return obs


def encode_batch(
    roll: np.ndarray,
    rolls_left: np.ndarray,
    filled: np.ndarray,
    upper_total: np.ndarray,
    yahtzee_state: np.ndarray,
    legal: np.ndarray,
    points: np.ndarray,
    threshold: int,
    bonus: np.ndarray,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """`encode` over arrays: every argument has a leading batch axis ([N] or [N, 13])."""
    n = len(roll)
    obs = np.empty((n, OBS_SIZE), dtype=np.float32) if out is None else out
    obs[:, DICE_SLICE] = DICE_FEATURES[roll]
    obs[:, ROLLS_LEFT_SLICE] = ROLLS_LEFT_FEATURES[rolls_left]
    obs[:, OPEN_SLICE] = OPEN_FEATURES[filled]
    np.multiply(points, legal, out=obs[:, POINTS_SLICE], casting="unsafe")
    obs[:, POINTS_SLICE] /= POINTS_SCALE
    np.minimum(upper_total / threshold, 1.0, out=obs[:, UPPER_INDEX], casting="unsafe")
    obs[:, UPPER_BONUS_INDEX] = upper_total >= threshold
    obs[:, YAHTZEE_BOX_SLICE] = YAHTZEE_BOX_FEATURES[yahtzee_state]
    obs[:, BONUS_INDEX] = bonus
    obs[:, PROGRESS_INDEX] = PROGRESS_FEATURES[filled]
    return obs


def decode_rolls(obs: np.ndarray) -> np.ndarray:
    """Roll indices (into `yahtzee_env.dice.DICE`) of observations ``[N, 72]``; -1 where a row
    does not show five dice."""
    counts = np.rint(np.atleast_2d(obs)[:, COUNTS_SLICE] * NUM_DICE).astype(np.int64)
    return roll_index_from_counts(counts)


def decode_batch(obs: np.ndarray, threshold: int) -> dict[str, np.ndarray]:
    """The game state an observation shows: ``roll``, ``rolls_left``, ``filled``, ``upper``
    (capped at ``threshold``) and ``yahtzee_state``, each an int64 array over the batch."""
    obs = np.atleast_2d(obs)
    open_boxes = obs[:, OPEN_SLICE] > 0.5
    return {
        "roll": decode_rolls(obs),
        "rolls_left": np.argmax(obs[:, ROLLS_LEFT_SLICE], axis=1),
        "filled": (~open_boxes).astype(np.int64) @ (1 << np.arange(NUM_BOXES)),
        "upper": np.rint(obs[:, UPPER_INDEX].astype(np.float64) * threshold).astype(np.int64),
        "yahtzee_state": np.argmax(obs[:, YAHTZEE_BOX_SLICE], axis=1),
    }


def encode_seat(game, seat: int | None = None) -> np.ndarray:
    """The `Yahtzee-v0` observation of ``seat`` (default: the player to move) in a `Game`.

    The dice on the table are shown to every seat; re-rolls left are those of the turn.
    """
    card = game.players[game.current if seat is None else seat]
    legal, points = card.options(game.roll)
    bonus = card.rules.tables.yahtzee_bonus(game.roll, card.yahtzee_state) > 0
    return encode(
        game.roll,
        game.rolls_left,
        card.filled,
        card.upper_total,
        card.yahtzee_state,
        legal,
        points,
        card.rules.upper_bonus_threshold,
        bonus,
    )
