"""The best chance of passing a known score: one card played to beat a target, every target at once.

A player who knew the other card's final total ``b`` before the game would not maximise their
expected score: they would maximise the chance of finishing above ``b``. `solve_targets`
computes that chance exactly for every ``b`` in ``0..max_need`` by backward induction over
``(turn-start state, need)``, where ``need`` is the target less the points scored so far:

    W(s, need) = max over the turn's decisions of  E[ W(s', need - reward) ]
    W(end, need) = 1 if need < 0, ``tie`` if need == 0, else 0

so ``W(start, b)`` is the best probability of a final total above ``b`` (a total equal to
``b`` counts ``tie``: 1/2 matches the multi-player protocol's draw). Since ``need`` only falls
as points are scored, a target at most ``max_need`` never needs a larger one, so the table is
exact for every target it covers; a larger target is worth at most ``W(start, max_need)``.

Averaged over the other player's total ``B`` (its distribution under score-optimal play),
``E[W(start, B)]`` is the clairvoyant ceiling: no policy facing a score-optimal opponent wins
more often, since seeing the other card's end in advance is at least as good as watching it
grow (docs/win-level.md).

The within-turn walk is the solver's (`yahtzee_env.solver.exact`): the same keep graph, the
same box rewards and next states (`_TurnModel`), with a vector of needs in place of one
expected value per state, so a state costs ``max_need + 1`` times the solver's work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from yahtzee_env.game.dice import NUM_ROLLS
from yahtzee_env.game.engine import ROLLS_PER_TURN
from yahtzee_env.game.rules import ALL_FILLED, NUM_BOXES, NUM_UPPER, YAHTZEE_OPEN, RuleSet
from yahtzee_env.solver.exact import (
    _FIRST_ROLL_PROBS,
    NUM_YSTATES,
    _best_sub_keep,
    _keep_values,
    _layer_states,
    _TurnModel,
)

__all__ = ["TargetValues", "solve_targets"]

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class TargetValues:
    """``start[b]``: the best probability of a final total above ``b`` (ties count ``tie``),
    for ``b`` in ``0..max_need``, from the first turn of ``rules``."""

    rules: RuleSet
    max_need: int
    tie: float
    start: np.ndarray  # float64 [max_need + 1]

    def beat(self, target: int) -> float:
        """The best chance against a known total ``target`` (a target above ``max_need`` is
        refused: its value is only bounded, by ``start[max_need]``)."""
        if not 0 <= target <= self.max_need:
            raise ValueError(f"target must be in 0..{self.max_need}, got {target}")
        return float(self.start[target])


def _max_reward(model: _TurnModel) -> int:
    """The most one filled box can add: its points, the upper bonus and a Yahtzee bonus."""
    rules = model.rules
    yahtzee_bonus = int(
        np.max(
            model.tables.yahtzee_bonus(
                model.yahtzee_rolls[:, None], np.arange(NUM_YSTATES)[None, :]
            )
        )
    )
    points = max(int(v.max()) for v in model.values)
    return points + int(rules.upper_bonus_value) + yahtzee_bonus


class _Table:
    """``W`` of the turn-start states over the needs ``-R..max_need`` (``R``: the largest
    reward of one box, so every ``need - reward`` lands inside), float32: one row per state
    of the layers solved (``layers`` of them, from the last turn back) and of the ended
    game."""

    def __init__(self, model: _TurnModel, max_need: int, tie: float, layers: int) -> None:
        self.model, self.max_need = model, max_need
        self.uppers = model.threshold + 1
        self.offset = _max_reward(model)
        self.layers = [
            _layer_states(model, n) for n in range(NUM_BOXES - 1, NUM_BOXES - 1 - layers, -1)
        ]
        ended = self._flat(
            ALL_FILLED, np.arange(self.uppers)[:, None], np.arange(NUM_YSTATES)[None, :]
        ).ravel()
        flats = [ended] + [self._flat(*states) for states in self.layers]
        self.row = np.full((1 << NUM_BOXES) * self.uppers * NUM_YSTATES, -1, dtype=np.int64)
        self.row[np.concatenate(flats)] = np.arange(sum(f.size for f in flats))
        self.values = np.zeros((self.row.max() + 1, self.offset + max_need + 1), np.float32)
        self.values[:, : self.offset] = 1.0  # need < 0: already past the target
        self.values[self.row[ended], self.offset] = tie  # the game over with exactly the target
        # [row, first need index, need]: a row's window starting at any shift, as a view
        self.windows = np.lib.stride_tricks.sliding_window_view(self.values, max_need + 1, axis=1)

    def _flat(self, filled, upper, ystate):
        return (np.asarray(filled) * self.uppers + upper) * NUM_YSTATES + ystate

    def flat(self, filled, upper, ystate) -> np.ndarray:
        """The rows of states ``(filled, upper, ystate)`` (arrays broadcast together)."""
        return self.row[self._flat(filled, upper, ystate)]

    def needs(self, filled: int, upper: int, ystate: int) -> np.ndarray:
        """``[max_need + 1]`` W of one state for the needs ``0..max_need`` (float64)."""
        row = int(self.flat(filled, upper, ystate))
        if row < 0:
            raise ValueError(f"state {(filled, upper, ystate)} is not in the solved layers")
        return self.values[row, self.offset :].astype(np.float64)

    def after(self, flat_next: np.ndarray, reward: np.ndarray) -> np.ndarray:
        """``[..., max_need + 1]``: W of the next states with every need less ``reward``."""
        return self.windows[flat_next, self.offset - reward]


def _final_roll_values(
    table: _Table, filled: np.ndarray, upper: np.ndarray, ystate: np.ndarray
) -> np.ndarray:
    """``[252, S, needs]``: each roll's best box (no re-roll left), as
    `_TurnModel.final_roll_values` with a need axis: a box's value is the next state's W at
    the need less the box's reward."""
    model = table.model
    tables, rules = model.tables, model.rules
    s = filled.size
    cols = np.arange(s)
    needs = table.max_need + 1
    legal = tables.legal[0, filled]  # [S, 13]
    ys = model.yahtzee_rolls
    y_context, y_points = tables.context_batch(ys[:, None], filled[None, :], ystate[None, :])
    y_legal = tables.legal[y_context, filled[None, :]]  # [6, S, 13]
    y_bonus = tables.yahtzee_bonus(ys[:, None], ystate[None, :])  # [6, S]
    y_best = np.full((ys.size, s, needs), -np.inf, dtype=np.float32)
    out = np.full((NUM_ROLLS, s, needs), -np.inf, dtype=np.float32)
    tmp = np.empty_like(out)
    for b in range(NUM_BOXES):
        open_b = legal[:, b]
        y_open = y_legal[:, :, b]
        if not (open_b.any() or y_open.any()):
            continue
        values = model.values[b][:, None]  # [J, 1]
        if b < NUM_UPPER:
            raw = upper[None, :] + values  # [J, S]
            reward = values + rules.upper_bonus_gain(upper[None, :], raw)
            next_upper = np.minimum(raw, model.threshold)
        else:
            reward = np.broadcast_to(values, (values.shape[0], s))
            next_upper = np.broadcast_to(upper[None, :], (values.shape[0], s))
        next_y = tables.next_yahtzee_state[ystate[None, :], b, (values > 0) * 1]  # [J, S]
        flat_next = table.flat((filled | (1 << b))[None, :], next_upper, next_y)  # [J, S]
        code = model.yahtzee_codes[b][np.arange(ys.size)[:, None], y_points]  # [6, S]
        y_val = table.after(flat_next[code, cols], reward[code, cols] + y_bonus)  # [6, S, n]
        y_val[~y_open] = -np.inf
        np.maximum(y_best, y_val, out=y_best)
        if not open_b.any():
            continue
        fut = table.after(flat_next, reward)  # [J, S, needs]
        fut[:, ~open_b] = -np.inf
        np.take(fut, model.codes[b], axis=0, out=tmp)
        np.maximum(out, tmp, out=out)
    out[model.yahtzee_rows] = y_best
    return out


def _turn_start(table: _Table, filled, upper, ystate) -> np.ndarray:
    """``[S, needs]``: W at the start of the turn of each state."""
    s = filled.size
    values = _final_roll_values(table, filled, upper, ystate).reshape(NUM_ROLLS, -1)
    for _ in range(ROLLS_PER_TURN - 1):
        values = _best_sub_keep(_keep_values(values))
    start = _FIRST_ROLL_PROBS.astype(np.float32) @ values
    return start.reshape(s, table.max_need + 1)


def solve_targets(
    rules: RuleSet | str | None = None,
    max_need: int = 450,
    *,
    tie: float = 0.5,
    chunk: int = 4,
    progress: ProgressCallback | None = None,
) -> TargetValues:
    """W(start, b) for every target ``b`` in ``0..max_need`` (see the module's docstring).

    Memory: 536,320 states (official rules) x ``max_need + R + 1`` float32: about 1.5 GB
    at 450 (R = 250). Time: about an hour on one core at 450.
    """
    rules = RuleSet.from_spec(rules)
    table = _solve(rules, max_need, tie=tie, chunk=chunk, progress=progress)
    return TargetValues(rules, max_need, tie, table.needs(0, 0, YAHTZEE_OPEN))


def _solve(
    rules: RuleSet,
    max_need: int,
    *,
    tie: float = 0.5,
    chunk: int = 4,
    progress: ProgressCallback | None = None,
    layers: int = NUM_BOXES,
) -> _Table:
    """The table of W over the last ``layers`` turns (all 13: every turn start)."""
    if max_need < 0:
        raise ValueError(f"max_need must be >= 0, got {max_need}")
    if not 0.0 <= tie <= 1.0:
        raise ValueError(f"tie must be in [0, 1], got {tie}")
    table = _Table(_TurnModel(rules), max_need, tie, layers)
    for done, (filled, upper, ystate) in enumerate(table.layers, 1):
        for lo in range(0, filled.size, chunk):
            f, u, y = filled[lo : lo + chunk], upper[lo : lo + chunk], ystate[lo : lo + chunk]
            table.values[table.flat(f, u, y), table.offset :] = _turn_start(table, f, u, y)
        if progress is not None:
            progress(done, layers)
    return table
