"""Exact optimal solitaire Yahtzee: backward induction over turn-start states, in numpy.

A turn starts in a state ``(filled, upper, yahtzee_state)``: the 13-bit mask of filled boxes,
the upper-section total capped at the bonus threshold, and what the yahtzee box holds (see
`yahtzee_env.game.rules`). `solve` computes the expected remaining score (future points, bonuses
included) of every reachable state under optimal play, for any `RuleSet`; `OptimalValues` looks
the values up and evaluates the actions of a turn; `load_or_solve` keeps the table in a cache.

Within a turn the solver walks the roll/keep graph of `yahtzee_env.game.dice` backwards::

    V0[roll]  best box for the roll (rolls_left = 0): reward + value of the next turn start
    K0[keep]  mean over the re-rolled dice of V0      (keep of 5 dice = the roll itself)
    V1[roll]  best keep of the roll: max of K0 over its sub-keeps (holding all is K0[roll])
    K1, V2    the same once more (rolls_left = 2)
    value     mean of V2 over the first roll of all five dice

``K[keep]`` is computed one die at a time (the mean over the 6 faces of ``K[keep + face]``)
and the best sub-keep recursively (``max(K[k], best over k minus one die)``), so a state
costs a few thousand operations instead of a dense 252 x 462 product. States are solved a
layer at a time (every mask with the same number of filled boxes, with all their reachable
upper totals), in chunks of states along the last array axis.

Scoring, legality and the joker rules come only from ``rules.tables`` (`BoxScoring`). A
box's outcome is `BoxScoring.fill`, the engine's and the vector env's own (`box_values`);
`final_roll_values` fuses the same arithmetic per point value for speed, and a test holds the
two equal over every card.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from yahtzee_env.fileio import UnsafeFileError, atomic_write, read_regular_file
from yahtzee_env.game.dice import (
    FIRST_ROLL_KEEP,
    HOLD_TO_KEEP,
    KEEP_COUNTS,
    KEEP_PROBS,
    KEEP_SIZE,
    NUM_DICE,
    NUM_FACES,
    NUM_HOLDS,
    NUM_KEEPS,
    NUM_ROLLS,
    keep_index,
)
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS, ROLLS_PER_TURN
from yahtzee_env.game.rules import (
    ALL_FILLED,
    IS_YAHTZEE,
    NUM_BOXES,
    NUM_FILLED_MASKS,
    NUM_UPPER,
    PRESETS,
    UPPER_MASK,
    YAHTZEE_0,
    YAHTZEE_50,
    YAHTZEE_OPEN,
    Box,
    RuleSet,
)

__all__ = [
    "FORMAT_VERSION",
    "CacheError",
    "OptimalValues",
    "TurnValues",
    "best_of",
    "cache_path",
    "default_cache_dir",
    "load_or_solve",
    "load_table",
    "regret_of",
    "save_table",
    "solve",
]

FORMAT_VERSION = 2  # 2: the checksum covers the header too (issue 8.11)
NUM_YSTATES = 3
YAHTZEE_BIT = 1 << Box.YAHTZEE
CHUNK_STATES = 512  # states per vectorised block: the keep arrays stay cache-sized

ProgressCallback = Callable[[int, int], None]


# --------------------------------------------------------------------------- keep graph
def _keep_graph() -> tuple[np.ndarray, list[int], list[np.ndarray], list[np.ndarray]]:
    """The keeps in the solver's internal order, with their children and parents.

    Internally keeps are sorted by (size, number of distinct faces), so that within a size
    the keeps with ``d`` distinct faces (hence ``d`` distinct parents: one die fewer) are a
    contiguous run and the best-sub-keep recursion gathers no padding. The 252 keeps of five
    dice are the rolls, so internal arrays over rolls use the same order (``_ROLL_ORDER``).

    Returns ``order`` (internal index -> `KEEP_COUNTS` index), the start of each size, and
    per size the children (internal indices of keep + face f, ``[n, 6]``) and the parents
    grouped by distinct-face count: a list of ``(start, stop, [stop - start, d])`` runs.
    """
    counts = KEEP_COUNTS.astype(np.int64)
    distinct = (counts > 0).sum(axis=1)
    order = np.lexsort((np.arange(NUM_KEEPS), distinct, KEEP_SIZE))
    rank = np.empty(NUM_KEEPS, dtype=np.intp)
    rank[order] = np.arange(NUM_KEEPS)
    sizes = KEEP_SIZE[order].astype(np.int64)
    starts = [int(s) for s in np.searchsorted(sizes, np.arange(NUM_DICE + 2))]
    eye = np.eye(NUM_FACES, dtype=np.int64)
    children = [
        np.array(
            [[rank[keep_index(counts[k] + eye[f])] for f in range(NUM_FACES)] for k in order[a:b]],
            dtype=np.intp,
        )
        for a, b in pairwise(starts[: NUM_DICE + 1])
    ]
    parents = []
    for i in range(NUM_KEEPS):
        c = counts[order[i]]
        parents.append([rank[keep_index(c - eye[f])] for f in range(NUM_FACES) if c[f] > 0])
    runs: list[list[tuple[int, int, np.ndarray]]] = [[]]
    for size in range(1, NUM_DICE + 1):
        size_runs = []
        lo = starts[size]
        while lo < starts[size + 1]:
            hi = lo
            while hi < starts[size + 1] and len(parents[hi]) == len(parents[lo]):
                hi += 1
            size_runs.append((lo, hi, np.array(parents[lo:hi], dtype=np.intp)))
            lo = hi
        runs.append(size_runs)
    return order, starts, children, runs


_KEEP_ORDER, _SIZE_STARTS, _CHILDREN, _PARENT_RUNS = _keep_graph()
_ROLL_OFFSET = _SIZE_STARTS[NUM_DICE]
assert NUM_KEEPS - _ROLL_OFFSET == NUM_ROLLS
_ROLL_ORDER = _KEEP_ORDER[_ROLL_OFFSET:] - _ROLL_OFFSET  # internal roll -> `DICE` index
_ROLL_RANK = np.argsort(_ROLL_ORDER)  # `DICE` index -> internal roll
_KEEP_RANK = np.argsort(_KEEP_ORDER)
_FIRST_ROLL_PROBS = KEEP_PROBS[FIRST_ROLL_KEEP, _ROLL_ORDER]  # float64[252], internal order


def _keep_values(roll_values: np.ndarray) -> np.ndarray:
    """``[462, N]`` expected value of each keep, re-rolling the rest, given ``[252, N]``.

    Internal order (see `_keep_graph`) for both.
    """
    out = np.empty((NUM_KEEPS, roll_values.shape[1]), dtype=roll_values.dtype)
    out[_ROLL_OFFSET:] = roll_values
    sixth = roll_values.dtype.type(1.0 / NUM_FACES)
    for size in range(NUM_DICE - 1, -1, -1):
        children = _CHILDREN[size]
        block = out[_SIZE_STARTS[size] : _SIZE_STARTS[size + 1]]
        np.add(out[children[:, 0]], out[children[:, 1]], out=block)
        for f in range(2, NUM_FACES):
            block += out[children[:, f]]
        block *= sixth
    return out


def _best_sub_keep(keep_values: np.ndarray) -> np.ndarray:
    """``[252, N]`` best keep value over the sub-keeps of each roll (holding all included)."""
    best = np.empty_like(keep_values)
    best[0] = keep_values[0]
    for size in range(1, NUM_DICE + 1):
        for lo, hi, parents in _PARENT_RUNS[size]:
            block = best[lo:hi]
            np.maximum(keep_values[lo:hi], best[parents[:, 0]], out=block)
            for j in range(1, parents.shape[1]):
                np.maximum(block, best[parents[:, j]], out=block)
    return best[_ROLL_OFFSET:]


# --------------------------------------------------------------------------- rule model
class _TurnModel:
    """The rule-dependent tables of the within-turn computation, built once per rule set.

    Everything about scoring is read from ``rules.tables``. The next turn-start state after
    filling box ``b`` depends on the points only through their value, so the fast path
    groups each box's points by value: ``values[b]`` (every value the box can score, in any
    points context) and ``codes[b][roll]`` (the index of the roll's natural points there,
    rolls in internal order).
    """

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.tables = rules.tables
        self.threshold = rules.upper_bonus_threshold
        points = self.tables.points.astype(np.int64)  # [252, 2, 13]
        # The only rolls whose legal boxes, points or bonus can differ from the natural ones.
        self.yahtzee_rolls = np.flatnonzero(IS_YAHTZEE)
        self.yahtzee_rows = _ROLL_RANK[self.yahtzee_rolls]  # their internal positions
        self.values: list[np.ndarray] = []
        self.codes: list[np.ndarray] = []
        self.yahtzee_codes: list[np.ndarray] = []  # [6, 2]: per points context
        for b in range(NUM_BOXES):
            values = np.unique(points[:, :, b])
            self.values.append(values)
            self.codes.append(np.searchsorted(values, points[_ROLL_ORDER, 0, b]))
            self.yahtzee_codes.append(np.searchsorted(values, points[self.yahtzee_rolls, :, b]))
        self.reachable_upper = self._reachable_upper()

    def _reachable_upper(self) -> np.ndarray:
        """``bool[64, T + 1]``: capped upper totals reachable with each set of upper boxes."""
        reach = np.zeros((1 << NUM_UPPER, self.threshold + 1), dtype=bool)
        reach[0, 0] = True
        for mask in range(1, 1 << NUM_UPPER):
            box = (mask & -mask).bit_length() - 1
            before = np.flatnonzero(reach[mask & ~(1 << box)])
            points = np.unique(self.tables.points[:, :, box])
            reach[mask, np.minimum(before[:, None] + points[None, :], self.threshold)] = True
        return reach

    # ----------------------------------------------------------------------- box actions
    def box_values(
        self,
        table: np.ndarray,
        rolls: np.ndarray,
        filled: np.ndarray,
        upper: np.ndarray,
        ystate: np.ndarray,
    ) -> np.ndarray:
        """``[M, 13]`` reward + next turn-start value of each box (-inf if illegal).

        The general path for any roll (`DICE` indices), joker contexts and Yahtzee bonus
        included. ``upper`` must already be capped at the threshold. The float arithmetic is
        the same as in `final_roll_values` (one rounding: exact integer reward + table
        value), so a box's value here equals the solver's bit for bit.
        """
        tables = self.tables
        context, points_context = tables.context_batch(rolls, filled, ystate)
        legal = tables.legal[context, filled]  # [M, 13]
        boxes = np.arange(NUM_BOXES)
        fill = tables.fill(
            rolls[:, None], boxes, points_context[:, None], upper[:, None], ystate[:, None]
        )
        nxt = table[
            filled[:, None] | (1 << boxes),
            np.minimum(fill.upper_total, self.threshold),
            fill.yahtzee_state,
        ]
        out = fill.reward.astype(table.dtype) + nxt
        out[~legal] = -np.inf
        return out

    # ----------------------------------------------------------------------- roll values
    def final_roll_values(
        self, table: np.ndarray, filled: np.ndarray, upper: np.ndarray, ystate: np.ndarray
    ) -> np.ndarray:
        """``[252, N]`` value of each roll (internal order) with no re-roll left: best box.

        Per box, the value of filling it with each possible point value (``[J, N]``) is
        gathered over the rolls (ordinary rolls: natural points, legality ``legal[0]``, no
        bonus). The six Yahtzees take their legality, points context and bonus from
        ``tables.context_batch`` and ``yahtzee_bonus``, as in `box_values`.
        """
        tables = self.tables
        n = filled.shape[0]
        cols = np.arange(n)
        legal = tables.legal[0, filled]  # [N, 13]
        ys = self.yahtzee_rolls
        y_context, y_points = tables.context_batch(ys[:, None], filled[None, :], ystate[None, :])
        y_legal = tables.legal[y_context, filled[None, :]]  # [6, N, 13]
        y_bonus = tables.yahtzee_bonus(ys[:, None], ystate[None, :])  # [6, N]
        y_best = np.full((ys.size, n), -np.inf, dtype=table.dtype)
        out = np.empty((NUM_ROLLS, n), dtype=table.dtype)
        tmp = np.empty_like(out)
        first = True
        for b in range(NUM_BOXES):
            open_b = legal[:, b]
            y_open = y_legal[:, :, b]
            if not (open_b.any() or y_open.any()):
                continue
            values = self.values[b][:, None]  # [J, 1]
            if b < NUM_UPPER:
                raw = upper[None, :] + values  # [J, N]
                reward = values + self.rules.upper_bonus_gain(upper[None, :], raw)
                next_upper = np.minimum(raw, self.threshold)
            else:
                reward = np.broadcast_to(values, (values.shape[0], n))
                next_upper = upper[None, :]
            nxt = table[
                (filled | (1 << b))[None, :],
                next_upper,
                tables.next_yahtzee_state[ystate, b, (values > 0) * 1],
            ]
            # the Yahtzees: their own points context, bonus and legality
            code = self.yahtzee_codes[b][np.arange(ys.size)[:, None], y_points]  # [6, N]
            y_val = (reward[code, cols] + y_bonus).astype(table.dtype) + nxt[code, cols]
            np.maximum(y_best, np.where(y_open, y_val, -np.inf), out=y_best)
            # the ordinary rolls
            if not open_b.any():
                continue
            fut = reward.astype(table.dtype) + nxt
            fut[:, ~open_b] = -np.inf
            if first:
                np.take(fut, self.codes[b], axis=0, out=out)
                first = False
            else:
                np.take(fut, self.codes[b], axis=0, out=tmp)
                np.maximum(out, tmp, out=out)
        if first:  # no ordinary roll can be placed (a full card): nothing to gain
            out.fill(-np.inf)
        out[self.yahtzee_rows] = y_best
        return out

    def turn_start_values(
        self, table: np.ndarray, filled: np.ndarray, upper: np.ndarray, ystate: np.ndarray
    ) -> np.ndarray:
        """``[N]`` expected remaining score at the start of a turn (before the first roll)."""
        values = self.final_roll_values(table, filled, upper, ystate)
        for _ in range(ROLLS_PER_TURN - 1):
            values = _best_sub_keep(_keep_values(values))
        return _FIRST_ROLL_PROBS.astype(values.dtype) @ values


# --------------------------------------------------------------------------- solve
def _layer_states(model: _TurnModel, num_filled: int) -> tuple[np.ndarray, ...]:
    """(filled, upper, ystate) of every reachable state with ``num_filled`` boxes filled."""
    masks = np.arange(NUM_FILLED_MASKS)
    popcount = ((masks[:, None] >> np.arange(NUM_BOXES)) & 1).sum(axis=1)
    masks = masks[popcount == num_filled]
    which, upper = np.nonzero(model.reachable_upper[masks & UPPER_MASK])
    filled = masks[which]
    has_y = (filled & YAHTZEE_BIT) != 0
    filled = np.concatenate([filled[~has_y], filled[has_y], filled[has_y]])
    upper = np.concatenate([upper[~has_y], upper[has_y], upper[has_y]])
    ystate = np.concatenate(
        [
            np.full((~has_y).sum(), YAHTZEE_OPEN),
            np.full(has_y.sum(), YAHTZEE_50),
            np.full(has_y.sum(), YAHTZEE_0),
        ]
    )
    # Upper boxes major: a block of consecutive states then mostly shares its filled upper
    # boxes, and `final_roll_values` skips a box that no state of the block may fill.
    order = np.lexsort((ystate, upper, filled >> NUM_UPPER, filled & UPPER_MASK))
    return filled[order], upper[order], ystate[order]


def solve(
    rules: RuleSet | str | None = None,
    progress: ProgressCallback | None = None,
    *,
    chunk: int = CHUNK_STATES,
) -> OptimalValues:
    """Solve ``rules`` exactly: the optimal expected remaining score of every turn start.

    The backward induction runs in float64 (float32 would drift by ~2e-4 over the 13
    layers); the returned table is stored as float32, which is exact to ~1e-5 per entry.

    Args:
        rules: a `RuleSet`, a preset name, or None for the official rules.
        progress: called as ``progress(done_layers, total_layers)`` after each of the 13
            layers (the states with 12, 11, ..., 0 boxes filled).
        chunk: states per vectorised block (memory ~ 20 KB per state).
    """
    rules = RuleSet.from_spec(rules)
    model = _TurnModel(rules)
    table = np.full(
        (NUM_FILLED_MASKS, rules.upper_bonus_threshold + 1, NUM_YSTATES), np.nan, dtype=np.float64
    )
    table[ALL_FILLED] = 0.0
    total = NUM_BOXES
    for done, num_filled in enumerate(range(NUM_BOXES - 1, -1, -1), start=1):
        filled, upper, ystate = _layer_states(model, num_filled)
        for lo in range(0, filled.size, chunk):
            f, u, y = filled[lo : lo + chunk], upper[lo : lo + chunk], ystate[lo : lo + chunk]
            table[f, u, y] = model.turn_start_values(table, f, u, y)
        if progress is not None:
            progress(done, total)
    return OptimalValues(rules, table.astype(np.float32), _model=model)


# --------------------------------------------------------------------------- table API
_HOLD_KEEP_RANK = _KEEP_RANK[HOLD_TO_KEEP]  # [252, 32] internal keep of each hold


@dataclass(frozen=True, eq=False)
class TurnValues:
    """Within-turn values of a batch of ``N`` turn-start states (`OptimalValues.turn_values`).

    Valid for the whole turn of each state (until a box is filled). Distinct states are
    solved once: state ``i`` is column ``inverse[i]`` of the internal arrays, which hold
    ~4.7 KB (float32) per distinct state.

    Attributes:
        filled, upper, ystate: the ``[N]`` states (``upper`` capped at the threshold).
        inverse: ``[N]`` column of each state in the internal arrays.
    """

    table: OptimalValues
    filled: np.ndarray
    upper: np.ndarray
    ystate: np.ndarray
    inverse: np.ndarray
    # [2, 462, U], internal keep order: [k, keep] = value of re-rolling the dice outside
    # ``keep`` when k re-rolls remain after that; a five-dice keep is the roll with k left.
    _keep_values: np.ndarray
    _start_roll_values: np.ndarray  # [252, U], internal roll order: rolls_left = 2

    @property
    def roll_values(self) -> np.ndarray:
        """``[N, 3, 252]``: ``[i, k, roll]`` = value of ``roll`` with ``k`` re-rolls left.

        The value includes every reward still to come in the game from that point.
        """
        return self.unique_roll_values[self.inverse]

    @property
    def unique_roll_values(self) -> np.ndarray:
        """``[U, 3, 252]`` `roll_values` of the distinct states (state ``i``: ``inverse[i]``)."""
        stages = np.concatenate(
            [self._keep_values[:, _ROLL_OFFSET:], self._start_roll_values[None]], axis=0
        )  # [3, 252, U]
        return stages[:, _ROLL_RANK].transpose(2, 0, 1)

    @property
    def unique_keep_values(self) -> np.ndarray:
        """``[U, 2, 462]`` keep values of the distinct states (state ``i``: ``inverse[i]``).

        ``[u, k, keep]`` is the expected value of re-rolling the dice outside ``keep`` (a
        `KEEP_COUNTS` index) with ``k`` re-rolls left after that re-roll. A hold action
        ``h`` at ``rolls_left`` is worth ``[u, rolls_left - 1, HOLD_TO_KEEP[roll, h]]``.
        """
        return self._keep_values[:, _KEEP_RANK].transpose(2, 0, 1)

    @property
    def start_values(self) -> np.ndarray:
        """``[N]`` expected remaining score before the first roll (= `OptimalValues.values`)."""
        return (_FIRST_ROLL_PROBS @ self._start_roll_values)[self.inverse]

    def action_values(
        self, roll: ArrayLike, rolls_left: ArrayLike, rows: ArrayLike | None = None
    ) -> np.ndarray:
        """``[M, 45]`` value of every action (-inf if illegal) with ``roll`` on the table.

        A hold action is worth the expected value after re-rolling the other dice; a box
        action its reward (points + Yahtzee bonus + upper bonus) plus the value of the next
        turn start. ``roll`` (`DICE` index) and ``rolls_left`` are scalars or ``[M]``;
        ``rows`` (default: all ``N`` states) picks the states they belong to.
        """
        idx = np.arange(self.inverse.size) if rows is None else np.asarray(rows, dtype=np.intp)
        idx = idx.ravel()
        roll = np.broadcast_to(np.asarray(roll, dtype=np.intp), idx.shape)
        rolls_left = np.broadcast_to(np.asarray(rolls_left, dtype=np.intp), idx.shape)
        if ((roll < 0) | (roll >= NUM_ROLLS)).any():
            raise ValueError(f"roll must be in 0..{NUM_ROLLS - 1}")
        if ((rolls_left < 0) | (rolls_left >= ROLLS_PER_TURN)).any():
            raise ValueError(f"rolls_left must be in 0..{ROLLS_PER_TURN - 1}")
        out = np.full((idx.size, NUM_ACTIONS), -np.inf, dtype=self._keep_values.dtype)
        can_hold = rolls_left > 0
        if can_hold.any():
            stage = rolls_left[can_hold, None] - 1
            keeps = _HOLD_KEEP_RANK[roll[can_hold]]  # [H, 32]
            column = self.inverse[idx[can_hold], None]
            out[can_hold, :NUM_HOLDS] = self._keep_values[stage, keeps, column]
        out[:, BOX_ACTION_OFFSET:] = self.table._box_values(
            self.filled[idx], self.upper[idx], self.ystate[idx], roll
        )
        return out

    def best_action(
        self, roll: ArrayLike, rolls_left: ArrayLike, rows: ArrayLike | None = None
    ) -> np.ndarray:
        """``[M]`` optimal action with ``roll`` on the table (ties: see `best_of`)."""
        return best_of(self.action_values(roll, rolls_left, rows))


class OptimalValues:
    """The optimal values of a rule set: look-ups, within-turn values and action values.

    ``table[filled, upper, ystate]`` (float, NaN where unreachable) is the expected remaining
    score under optimal play from the start of a turn: the points and bonuses still to come.
    ``upper`` is the upper-section total capped at ``rules.upper_bonus_threshold``; inputs
    may pass the raw total, it is capped here. ``ystate`` must be 0 (open) while the yahtzee
    box is open, and 1 (holds 50) or 2 (holds 0) once it is filled. Only reachable states
    are solved: an upper total that the filled upper boxes cannot make (5 with only sixes
    filled) has no value; `values` gives NaN there and the other methods raise ValueError.

    Actions follow `yahtzee_env.game.engine`: 0..31 hold masks over the sorted dice, 32 + b fills
    box b. Every method takes scalars or arrays that broadcast together (batched forms).
    """

    def __init__(self, rules: RuleSet, table: np.ndarray, *, _model: _TurnModel | None = None):
        expected = (NUM_FILLED_MASKS, rules.upper_bonus_threshold + 1, NUM_YSTATES)
        if table.shape != expected:
            raise ValueError(f"table shape {table.shape} does not match the rules: {expected}")
        self.rules = rules
        self.table = table
        self.table.flags.writeable = False
        self._model = _model if _model is not None else _TurnModel(rules)

    # ----------------------------------------------------------------------- turn starts
    @property
    def expected_score(self) -> float:
        """Expected final score of a whole game under optimal play (the empty card)."""
        return float(self.table[0, 0, YAHTZEE_OPEN])

    def _states(
        self, filled: ArrayLike, upper: ArrayLike, ystate: ArrayLike, *, reachable: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validated, flattened states with ``upper`` capped; ValueError on a bad one (and,
        with ``reachable``, on an upper total the filled upper boxes cannot make)."""
        filled, upper, ystate = np.broadcast_arrays(
            np.asarray(filled, dtype=np.intp),
            np.asarray(upper, dtype=np.intp),
            np.asarray(ystate, dtype=np.intp),
        )
        filled, upper, ystate = filled.ravel(), upper.ravel(), ystate.ravel()
        if ((filled < 0) | (filled >= NUM_FILLED_MASKS)).any():
            raise ValueError(f"filled must be a 13-bit mask (0..{NUM_FILLED_MASKS - 1})")
        if (upper < 0).any():
            raise ValueError("upper total must be >= 0")
        has_y = (filled & YAHTZEE_BIT) != 0
        valid_y = np.where(has_y, (ystate == YAHTZEE_50) | (ystate == YAHTZEE_0), ystate == 0)
        if not valid_y.all():
            raise ValueError(
                "yahtzee_state must be 0 (open) while the yahtzee box is open and 1 (50) or "
                "2 (0) once it is filled"
            )
        upper = np.minimum(upper, self.rules.upper_bonus_threshold)
        if reachable:
            ok = self._model.reachable_upper[filled & UPPER_MASK, upper]
            if not ok.all():
                i = int(np.flatnonzero(~ok)[0])
                raise ValueError(
                    f"unreachable state: upper total {upper[i]} cannot be made with the upper "
                    f"boxes filled in {int(filled[i]):#015b} (only reachable states are solved)"
                )
        return filled, upper, ystate

    def value(self, filled: int, upper_total: int, yahtzee_state: int) -> float:
        """Expected remaining score from the start of a turn in this state.

        Raises ValueError for an invalid or unreachable state.
        """
        f, u, y = self._states(filled, upper_total, yahtzee_state)
        return float(self.table[f[0], u[0], y[0]])

    def values(
        self, filled: ArrayLike, upper_total: ArrayLike, yahtzee_state: ArrayLike
    ) -> np.ndarray:
        """Batched `value`: ``[N]``, NaN for unreachable states instead of an error."""
        f, u, y = self._states(filled, upper_total, yahtzee_state, reachable=False)
        return self.table[f, u, y]

    # ----------------------------------------------------------------------- within a turn
    def box_values(
        self,
        filled: ArrayLike,
        upper_total: ArrayLike,
        yahtzee_state: ArrayLike,
        roll: ArrayLike,
    ) -> np.ndarray:
        """``[..., 13]`` value of filling each box with ``roll`` (a `DICE` index): the reward
        (points + Yahtzee bonus + upper bonus) plus the value of the next turn start; -inf
        where the rules close the box. The box-action part of `action_values`; it does not
        depend on the re-rolls left.
        """
        arrays = np.broadcast_arrays(
            *(np.asarray(a) for a in (filled, upper_total, yahtzee_state, roll))
        )
        f, u, y = self._states(*arrays[:3])
        out = self._box_values(f, u, y, arrays[3].ravel())
        return out.reshape(*arrays[0].shape, NUM_BOXES)

    def _box_values(self, f: np.ndarray, u: np.ndarray, y: np.ndarray, roll) -> np.ndarray:
        roll = np.asarray(roll, dtype=np.intp)
        if ((roll < 0) | (roll >= NUM_ROLLS)).any():
            raise ValueError(f"roll must be in 0..{NUM_ROLLS - 1}")
        return self._model.box_values(self.table, roll, f, u, y)

    def turn_values(
        self, filled: ArrayLike, upper_total: ArrayLike, yahtzee_state: ArrayLike
    ) -> TurnValues:
        """Within-turn values of ``[N]`` turn-start states (the batched engine of evaluation).

        Work and memory are per distinct state (~7 us and 4.7 KB each); for very large
        batches call it on slices. Use ``TurnValues.action_values`` for each decision.
        """
        f, u, y = self._states(filled, upper_total, yahtzee_state)
        if (f == ALL_FILLED).any():
            raise ValueError("a full scorecard has no turn left to play")
        keys = (f * (self.rules.upper_bonus_threshold + 1) + u) * NUM_YSTATES + y
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        n = first.size
        keeps = np.empty((ROLLS_PER_TURN - 1, NUM_KEEPS, n), dtype=self.table.dtype)
        start = np.empty((NUM_ROLLS, n), dtype=self.table.dtype)
        for lo in range(0, n, CHUNK_STATES):
            sel = first[lo : lo + CHUNK_STATES]
            cols = slice(lo, lo + sel.size)
            values = self._model.final_roll_values(self.table, f[sel], u[sel], y[sel])
            for k in range(ROLLS_PER_TURN - 1):
                keeps[k, :, cols] = _keep_values(values)
                values = _best_sub_keep(keeps[k, :, cols])
            start[:, cols] = values
        return TurnValues(self, f, u, y, inverse.ravel(), keeps, start)

    def action_values(
        self,
        filled: ArrayLike,
        upper_total: ArrayLike,
        yahtzee_state: ArrayLike,
        roll: ArrayLike,
        rolls_left: ArrayLike,
    ) -> np.ndarray:
        """Value of every action: ``float[45]`` for scalars, ``[..., 45]`` for arrays.

        -inf marks illegal actions (holds when no re-roll is left, boxes the rules close).
        For several decisions of the same turns, call `turn_values` once and use
        ``TurnValues.action_values``.
        """
        arrays = np.broadcast_arrays(
            *(np.asarray(a) for a in (filled, upper_total, yahtzee_state, roll, rolls_left))
        )
        f, u, y, r, k = (a.ravel() for a in arrays)
        out = self.turn_values(f, u, y).action_values(r, k)
        return out.reshape(*arrays[0].shape, NUM_ACTIONS)

    def best_action(
        self,
        filled: ArrayLike,
        upper_total: ArrayLike,
        yahtzee_state: ArrayLike,
        roll: ArrayLike,
        rolls_left: ArrayLike,
    ) -> int | np.ndarray:
        """The optimal action: an int for scalars, else an array; ties as in `best_of`."""
        av = self.action_values(filled, upper_total, yahtzee_state, roll, rolls_left)
        best = best_of(av)
        return int(best) if np.ndim(best) == 0 else best

    def regret(
        self,
        filled: ArrayLike,
        upper_total: ArrayLike,
        yahtzee_state: ArrayLike,
        roll: ArrayLike,
        rolls_left: ArrayLike,
        action: ArrayLike,
    ) -> float | np.ndarray:
        """Expected points lost by ``action``: max action value - its value (0 for the best).

        +inf for an illegal action. Scalar or ``[N]`` like the inputs.
        """
        av = self.action_values(filled, upper_total, yahtzee_state, roll, rolls_left)
        return regret_of(av, action)


def best_of(action_values: ArrayLike) -> np.ndarray:
    """Argmax of ``[..., 45]`` action values; ties go to box actions, then the lowest hold.

    Holding all five dice (31) with one re-roll left is worth exactly the best box, so the
    tie-break makes the optimal player score instead of wasting the roll.
    """
    av = np.asarray(action_values)
    order = np.r_[BOX_ACTION_OFFSET:NUM_ACTIONS, 0:BOX_ACTION_OFFSET]
    return order[np.argmax(av[..., order], axis=-1)]


def regret_of(action_values: ArrayLike, action: ArrayLike) -> float | np.ndarray:
    """``max - value of action`` over ``[..., 45]`` action values (+inf if illegal)."""
    av = np.asarray(action_values)
    taken = np.take_along_axis(av, np.asarray(action, dtype=np.intp)[..., None], axis=-1)[..., 0]
    out = av.max(axis=-1) - taken
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------------- cache
_MAGIC = b"YAHTZEE-RL-SOLVER\n"


class CacheError(ValueError):
    """A cache file that cannot be used: corrupt, truncated, another version or other rules."""


def default_cache_dir() -> Path:
    """``$YAHTZEE_CACHE_DIR``, else ``$XDG_CACHE_HOME/yahtzee-rl``, else ``~/.cache/yahtzee-rl``."""
    env = os.environ.get("YAHTZEE_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "yahtzee-rl"


def _rules_json(rules: RuleSet) -> str:
    return json.dumps(rules.to_dict(), sort_keys=True)


def cache_path(
    rules: RuleSet | str | None = None, cache_dir: str | os.PathLike | None = None
) -> Path:
    """The cache file of ``rules``: ``<cache_dir>/solver-v<version>-<name>-<hash>.bin``."""
    rules = RuleSet.from_spec(rules)
    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    digest = hashlib.sha256(_rules_json(rules).encode()).hexdigest()[:12]
    name = rules.name if rules.name in PRESETS else "custom"
    return directory / f"solver-v{FORMAT_VERSION}-{name}-{digest}.bin"


_TABLE_DTYPE = "<f4"  # the one payload type of a cache file: little-endian float32
_MAX_HEADER_BYTES = 1 << 16


def _expected_header(rules: RuleSet) -> dict[str, Any]:
    """Every header field but the checksum and the expected score, as `save_table` writes it
    for ``rules``; `load_table` accepts no other values."""
    shape = [NUM_FILLED_MASKS, rules.upper_bonus_threshold + 1, NUM_YSTATES]
    header = {
        "format_version": FORMAT_VERSION,
        "rules": rules.to_dict(),
        "dtype": _TABLE_DTYPE,
        "shape": shape,
        "payload_bytes": int(np.dtype(_TABLE_DTYPE).itemsize * np.prod(shape)),
    }
    return json.loads(json.dumps(header))  # as it reads back from the file (lists, not tuples)


def _checksum(header: dict[str, Any], data: bytes) -> str:
    """sha256 over the header (without its ``sha256`` field, keys sorted) and the payload:
    a changed byte anywhere in the file, header included, is caught."""
    fields = {k: v for k, v in header.items() if k != "sha256"}
    digest = hashlib.sha256(json.dumps(fields, sort_keys=True).encode())
    digest.update(data)
    return digest.hexdigest()


def save_table(table: OptimalValues, path: str | os.PathLike) -> Path:
    """Write ``table`` atomically: magic line, header length, JSON header, raw payload.

    The header's ``sha256`` covers the header's other fields and the payload."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = np.ascontiguousarray(table.table, dtype=_TABLE_DTYPE)
    data = payload.tobytes()
    header = {**_expected_header(table.rules), "expected_score": table.expected_score}
    header["sha256"] = _checksum(header, data)
    head = json.dumps(header, sort_keys=True).encode()
    atomic_write(path, _MAGIC + len(head).to_bytes(8, "little") + head + data)
    return path


def load_table(path: str | os.PathLike, rules: RuleSet | str | None = None) -> OptimalValues:
    """Read a table written by `save_table`; raise `CacheError` unless it is intact.

    Checks the magic; that the header equals the one `save_table` writes for ``rules``
    (format version, rules, dtype ``<f4``, shape, payload size), field for field; and the
    sha256 over header and payload. Reads at most the size that file must have, and only a
    regular file.
    """
    rules = RuleSet.from_spec(rules)
    expected = _expected_header(rules)
    limit = len(_MAGIC) + 8 + _MAX_HEADER_BYTES + expected["payload_bytes"]
    try:
        raw = read_regular_file(path, limit)
    except UnsafeFileError as exc:
        raise CacheError(str(exc)) from exc
    if not raw.startswith(_MAGIC):
        raise CacheError(f"{path}: not a solver table")
    pos = len(_MAGIC)
    if len(raw) < pos + 8:
        raise CacheError(f"{path}: truncated header")
    size = int.from_bytes(raw[pos : pos + 8], "little")
    pos += 8
    if size > _MAX_HEADER_BYTES or len(raw) < pos + size:
        raise CacheError(f"{path}: truncated or oversized header")
    try:
        header = json.loads(raw[pos : pos + size].decode())
        if not isinstance(header, dict):
            raise TypeError("not a JSON object")
        checksum = header["sha256"]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise CacheError(f"{path}: corrupt header ({exc})") from exc
    if header.get("format_version") != FORMAT_VERSION:
        raise CacheError(
            f"{path}: format version {header.get('format_version')!r}, expected {FORMAT_VERSION}"
        )
    if header.get("rules") != expected["rules"]:
        raise CacheError(
            f"{path}: table of other rules {header.get('rules')}, expected {rules.to_dict()}"
        )
    for key, value in expected.items():
        if header.get(key) != value:
            raise CacheError(f"{path}: header {key} is {header.get(key)!r}, expected {value!r}")
    data = raw[pos + size :]
    if len(data) != expected["payload_bytes"]:
        raise CacheError(
            f"{path}: payload is {len(data)} bytes, expected {expected['payload_bytes']}"
        )
    if _checksum(header, data) != checksum:
        raise CacheError(f"{path}: checksum mismatch")
    table = np.frombuffer(data, dtype=_TABLE_DTYPE).reshape(expected["shape"])
    return OptimalValues(rules, table.astype(np.float32))


def load_or_solve(
    rules: RuleSet | str | None = None,
    cache_dir: str | os.PathLike | None = None,
    progress: ProgressCallback | None = None,
) -> OptimalValues:
    """The table of ``rules`` from the cache, solving (and caching) it if needed.

    A missing file is solved silently; a corrupt, truncated, other-version or other-rules
    file is reported with a `RuntimeWarning`, solved again and replaced. If the cache cannot
    be written, the table is still returned (with a warning).
    """
    rules = RuleSet.from_spec(rules)
    path = cache_path(rules, cache_dir)
    if path.exists():
        try:
            return load_table(path, rules)
        except (CacheError, OSError) as exc:
            warnings.warn(f"rebuilding the solver cache: {exc}", RuntimeWarning, stacklevel=2)
    table = solve(rules, progress=progress)
    try:
        save_table(table, path)
    except OSError as exc:
        warnings.warn(
            f"could not write the solver cache {path}: {exc}", RuntimeWarning, stacklevel=2
        )
    return table
