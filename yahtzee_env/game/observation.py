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

Network inputs (``INPUT_SIZES``): a model reads `model_input(obs, version)`. Version 1 is the
observation itself; version 2 appends ``STRATEGY_SIZE`` features computed from the observation
by the rules alone (`strategy_features`), for the reward-only recipe. Version 3
(``TABLE_INPUT_VERSION``) is a seat's view of a 2-seat table: version 2 of its own 72 floats,
then the table's 21 floats (`write_table`: its own total, the other card), read from the
table observation ``[N, 93]`` of `YahtzeeVs-v0` (`yahtzee_env.envs.seat_view.encode_table`).

`encode` builds one vector for one scorecard and roll (the engine can do it for any seat of a
multi-player game); `encode_batch` builds the same rows for arrays of states (the vector env).
Both only concatenate rows of the tables below, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from yahtzee_env.game.dice import COUNTS, DICE, NUM_DICE, NUM_ROLLS, roll_index_from_counts
from yahtzee_env.game.rules import NUM_BOXES, NUM_FILLED_MASKS, UPPER_BONUS_THRESHOLD

OBS_VERSION = 1
OBS_SIZE = 72
POINTS_SCALE = 50.0

DICE_SLICE = slice(0, 36)
COUNTS_SLICE = slice(30, 36)
ROLLS_LEFT_SLICE = slice(36, 39)
OPEN_SLICE = slice(39, 52)
POINTS_SLICE = slice(52, 65)
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


@dataclass(frozen=True)
class CardLayout:
    """Where the scorecard features sit in a row (the observation, or a table's opponent
    block): box open flags (13), upper total / threshold capped at 1, upper bonus earned,
    yahtzee box one-hot (3), boxes filled / 13."""

    open: slice
    upper: int
    upper_bonus: int
    yahtzee_box: slice
    progress: int


OBS_CARD = CardLayout(OPEN_SLICE, UPPER_INDEX, UPPER_BONUS_INDEX, YAHTZEE_BOX_SLICE, PROGRESS_INDEX)
# The observation's columns [39, 72) hold every scorecard feature (and the turn's points and
# bonus flag in between): `OBS_CARD` relative to that span, for writing just those columns.
CARD_SPAN = slice(OPEN_SLICE.start, OBS_SIZE)
_S = CARD_SPAN.start
OBS_CARD_IN_SPAN = CardLayout(
    slice(OPEN_SLICE.start - _S, OPEN_SLICE.stop - _S),
    UPPER_INDEX - _S,
    UPPER_BONUS_INDEX - _S,
    slice(YAHTZEE_BOX_SLICE.start - _S, YAHTZEE_BOX_SLICE.stop - _S),
    PROGRESS_INDEX - _S,
)


def write_card(
    out: np.ndarray,
    filled: int | np.ndarray,
    upper_total: int | np.ndarray,
    yahtzee_state: int | np.ndarray,
    threshold: int,
    layout: CardLayout = OBS_CARD,
) -> None:
    """Write the scorecard features of one row ``out[...]`` (int arguments) or of rows
    ``out[N, ...]`` (int arrays) at ``layout``: the one writer of these features."""
    if isinstance(upper_total, (int, np.integer)):  # one row: plain Python is faster
        out[layout.open] = OPEN_FEATURES[filled]
        out[layout.upper] = min(upper_total / threshold, 1.0)
        out[layout.upper_bonus] = upper_total >= threshold
        out[layout.yahtzee_box] = YAHTZEE_BOX_FEATURES[yahtzee_state]
        out[layout.progress] = PROGRESS_FEATURES[filled]
        return
    out[:, layout.open] = OPEN_FEATURES.take(filled, axis=0)
    np.minimum(upper_total / threshold, 1.0, out=out[:, layout.upper], casting="unsafe")
    out[:, layout.upper_bonus] = upper_total >= threshold
    out[:, layout.yahtzee_box] = YAHTZEE_BOX_FEATURES.take(yahtzee_state, axis=0)
    out[:, layout.progress] = PROGRESS_FEATURES.take(filled)


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
    obs[POINTS_SLICE] = points * legal / POINTS_SCALE
    obs[BONUS_INDEX] = bonus
    write_card(obs, filled, upper_total, yahtzee_state, threshold)
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
    np.multiply(points, legal, out=obs[:, POINTS_SLICE], casting="unsafe")
    obs[:, POINTS_SLICE] /= POINTS_SCALE
    obs[:, BONUS_INDEX] = bonus
    write_card(obs, filled, upper_total, yahtzee_state, threshold)
    return obs


# ------------------------------------------------------------------ network input, version 2
_FACES = np.arange(1, 7, dtype=np.float32)
STRATEGY_SIZE = 14
# The table floats of one seat's view (`write_table`): its own total, then one block per other
# seat (its card as `CardLayout` places it, and its total). Totals read min(total / 500, 1).
TABLE_TOTAL_SCALE = 500.0
OPPONENT_SIZE = 20
OPP_CARD = CardLayout(slice(0, 13), 13, 14, slice(15, 18), 18)
OPP_TOTAL = 19
TABLE_INPUT_VERSION = 3
TABLE_INPUT_SEATS = 2  # version 3 reads a table of two
TABLE_SIZE = 1 + OPPONENT_SIZE * (TABLE_INPUT_SEATS - 1)  # 21 floats after the own 72
INPUT_SIZES = {
    1: OBS_SIZE,
    2: OBS_SIZE + STRATEGY_SIZE,
    TABLE_INPUT_VERSION: OBS_SIZE + STRATEGY_SIZE + TABLE_SIZE,
}


def strategy_features(obs: np.ndarray, threshold: int = UPPER_BONUS_THRESHOLD) -> np.ndarray:
    """Rules-only features of observations ``[N, 72]`` (the upper-bonus race and the dice's
    patterns), ``float32[N, STRATEGY_SIZE]``, each in [-1, 1]::

        [0]     upper surplus over par: (upper total - 3 x the faces of the filled upper
                boxes) / 21, clipped (par = three of each face makes the bonus exactly)
        [1]     par margin: (upper total + 3 x the faces of the open upper boxes - threshold)
                / 21, clipped (> 0: three of a kind in every open upper box makes the bonus)
        [2]     the bonus is still reachable (five of a kind in every open upper box)
        [3]     reach slack: (upper total + 5 x open faces - threshold) / 42, clipped
        [4:9)   most dice of one face, one-hot (1 .. 5)
        [9]     the dice hold a run of four;  [10] a run of five;  [11] a full-house pattern
        [12]    open lower boxes / 7;  [13] the best points on offer now / 50
    """
    obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
    n = len(obs)
    if n == 1:  # one decision (a CPU seat's): the same numbers, without numpy's per-call cost
        return _strategy_row(obs[0].tolist(), threshold)
    out = np.zeros((n, STRATEGY_SIZE), dtype=np.float32)
    upper = np.rint(np.minimum(obs[:, UPPER_INDEX], 1.0) * threshold)  # the integer total
    open_upper = obs[:, OPEN_SLICE][:, :6]
    filled_faces = (1.0 - open_upper) @ _FACES
    open_faces = open_upper @ _FACES
    out[:, 0] = np.clip((upper - 3 * filled_faces) / 21.0, -1, 1)
    out[:, 1] = np.clip((upper + 3 * open_faces - threshold) / 21.0, -1, 1)
    reach = upper + 5 * open_faces - threshold
    out[:, 2] = reach >= 0
    out[:, 3] = np.clip(reach / 42.0, -1, 1)
    counts = np.rint(obs[:, COUNTS_SLICE] * NUM_DICE)
    most = counts.max(axis=1).astype(np.int64)
    out[np.arange(n), 4 + np.clip(most, 1, 5) - 1] = 1.0
    present = counts > 0
    run4 = (present[:, 0:3] & present[:, 1:4] & present[:, 2:5] & present[:, 3:6]).any(axis=1)
    out[:, 9] = run4
    out[:, 10] = (present[:, 0:5].all(axis=1)) | (present[:, 1:6].all(axis=1))
    out[:, 11] = (counts == 3).any(axis=1) & (counts == 2).any(axis=1)
    out[:, 12] = obs[:, OPEN_SLICE][:, 6:].sum(axis=1) / 7.0
    out[:, 13] = obs[:, POINTS_SLICE].max(axis=1)
    return out


def _clip(x: float) -> float:
    return -1.0 if x < -1.0 else 1.0 if x > 1.0 else x


def _strategy_row(row: list[float], threshold: int) -> np.ndarray:
    """`strategy_features` of one observation (a list of its 72 float32 values), in plain
    Python: bit for bit the batch's numbers (`tests/test_reward_only.py` checks it on every
    state of many games). The sums are of small integers, exact in both; a quotient of two
    integers computed in float64 and rounded once to float32 is float32's own quotient."""
    upper = round(min(row[UPPER_INDEX], 1.0) * threshold)  # round: half to even, as np.rint
    open_flags = row[OPEN_SLICE]
    upper_flags = open_flags[:6]
    open_faces = sum(face * flag for face, flag in enumerate(upper_flags, 1))
    filled_faces = sum(face * (1.0 - flag) for face, flag in enumerate(upper_flags, 1))
    counts = [round(c * NUM_DICE) for c in row[COUNTS_SLICE]]
    reach = upper + 5 * open_faces - threshold
    most = min(max(max(counts), 1), 5)
    present = [c > 0 for c in counts]
    out = [
        _clip((upper - 3 * filled_faces) / 21.0),
        _clip((upper + 3 * open_faces - threshold) / 21.0),
        float(reach >= 0),
        _clip(reach / 42.0),
        *(float(most == k) for k in range(1, 6)),
        float(any(all(present[i : i + 4]) for i in range(3))),
        float(all(present[0:5]) or all(present[1:6])),
        float(3 in counts and 2 in counts),
        sum(open_flags[6:]) / 7.0,
        max(row[POINTS_SLICE]),
    ]
    return np.array([out], dtype=np.float32)


def model_input(
    obs: np.ndarray, version: int = 1, threshold: int = UPPER_BONUS_THRESHOLD
) -> np.ndarray:
    """What a model of input ``version`` reads for observations ``[N, 72]``."""
    if version == 1:
        return obs
    if version == 2:
        obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        return np.concatenate([obs, strategy_features(obs, threshold)], axis=1)
    if version == TABLE_INPUT_VERSION:  # the table observation [N, 72 + 21] of two seats
        obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        if obs.shape[1] != OBS_SIZE + TABLE_SIZE:
            raise ValueError(
                f"input version {TABLE_INPUT_VERSION} reads a 2-seat table observation of "
                f"{OBS_SIZE + TABLE_SIZE} floats (YahtzeeVs-v0, one opponent), got {obs.shape[1]}"
            )
        own = obs[:, :OBS_SIZE]
        return np.concatenate([own, strategy_features(own, threshold), obs[:, OBS_SIZE:]], axis=1)
    raise ValueError(f"unknown model input version {version!r} (known: {sorted(INPUT_SIZES)})")


def decode_rolls(obs: np.ndarray) -> np.ndarray:
    """Roll indices (into `yahtzee_env.game.dice.DICE`) of observations ``[N, 72]``; -1 where a row
    does not show five dice."""
    counts = np.rint(np.atleast_2d(obs)[:, COUNTS_SLICE] * NUM_DICE).astype(np.int64)
    return roll_index_from_counts(counts)


_ROLL_OF_COUNTS = {tuple(int(c) for c in counts): i for i, counts in enumerate(COUNTS)}


def decode_roll(row: list[float]) -> int:
    """`decode_rolls` of one observation (a list of its 72 values), in plain Python: the roll's
    index, or -1 where it does not show five dice (a CPU seat's decision, without numpy's
    per-call cost)."""
    # round: half to even, as np.rint
    return _ROLL_OF_COUNTS.get(tuple(round(v * NUM_DICE) for v in row[COUNTS_SLICE]), -1)


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


def write_table(out: np.ndarray, cards, threshold: int) -> None:
    """The table floats of one seat's view: ``out[0]`` its own total / 500 (capped at 1), then
    per other seat ``k`` (in seat order after it) a block of `OPPONENT_SIZE`: its card at
    `OPP_CARD` and its total / 500 at `OPP_TOTAL`. ``cards`` are (filled mask, upper total,
    yahtzee box state, total) per seat, the viewer's own first (`cpu.table_cards`): one table
    (a sequence of tuples, ``out`` 1-D, plain Python) or ``int [N, seats, 4]`` (``out``
    ``[N, ...]``). The one writer of these floats (`YahtzeeVs-v0`, the table-reading models)."""
    if out.ndim == 1:
        out[0] = min(cards[0][3] / TABLE_TOTAL_SCALE, 1.0)
        for k in range(1, len(cards)):
            filled, upper, ystate, total = (int(v) for v in cards[k])
            block = out[1 + OPPONENT_SIZE * (k - 1) : 1 + OPPONENT_SIZE * k]
            write_card(block, filled, upper, ystate, threshold, OPP_CARD)
            block[OPP_TOTAL] = min(total / TABLE_TOTAL_SCALE, 1.0)
        return
    cards = np.asarray(cards, dtype=np.int64)
    np.minimum(cards[:, 0, 3] / TABLE_TOTAL_SCALE, 1.0, out=out[:, 0], casting="unsafe")
    for k in range(1, cards.shape[1]):
        block = out[:, 1 + OPPONENT_SIZE * (k - 1) : 1 + OPPONENT_SIZE * k]
        card = cards[:, k]
        write_card(block, card[:, 0], card[:, 1], card[:, 2], threshold, OPP_CARD)
        np.minimum(card[:, 3] / TABLE_TOTAL_SCALE, 1.0, out=block[:, OPP_TOTAL], casting="unsafe")


def table_input(observations: np.ndarray, cards, threshold: int) -> np.ndarray:
    """The table observation ``float32 [N, 72 + 20 * seats - 19]`` of ``N`` seats: their own
    `Yahtzee-v0` rows ``observations [N, 72]`` and the table's cards (`write_table`)."""
    obs = np.atleast_2d(np.asarray(observations, dtype=np.float32))
    cards = np.asarray(cards, dtype=np.int64).reshape(obs.shape[0], -1, 4)
    out = np.empty((obs.shape[0], OBS_SIZE + 1 + OPPONENT_SIZE * (cards.shape[1] - 1)), np.float32)
    out[:, :OBS_SIZE] = obs
    write_table(out[:, OBS_SIZE:], cards, threshold)
    return out


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
