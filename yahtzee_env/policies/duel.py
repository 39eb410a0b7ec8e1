"""The ``duelist`` level: a 2-player CPU that plays to win the table, not to score.

At a table of two (`act_table` / `act_batch_table`: it is given both scorecards), it plays
the exact solver's expected-score moves (`OptimalPolicy`) until the search window, and in
the window it maximises its probability of winning (a draw counts 1/2) exactly, by the
solver's own within-turn expectimax (the 252 rolls and 462 keeps) with win probabilities
in place of points at the end of its game:

* **its last turn** (one box open): against the opponent's known final total when the
  opponent has finished; when the opponent still has its last turn, against the exact
  distribution of that turn's points under an expected-score player (the solver's moves,
  propagated forward through the opponent's turn: `opponent_points`);
* **its second-to-last turn**, when it moves second (the opponent has one box left): each
  fill is worth the expectation, over the opponent's last-turn points, of its exact
  last-turn win probability against a known target (`last_turn_win`, cached per last-box
  state over every deficit, so each is solved once per process); when it moves first, the
  same over the opponent's last two turns' points (`opponent_two_turns`), its own last turn
  valued as if the opponent's final total were known by then (a relaxation);
* **its third-to-last turn** (``window = 3``, the shipped setting; ``window = 2`` stops at
  the second-to-last): each fill is worth the exact probability of
  winning if both players then play the solver's moves to the end (one step of policy
  improvement on the solver), from the exact distributions of both players' remaining
  points under the solver (`remaining_points`).

Outside that window it plays the solver's move, and inside it too unless another move wins
more often by more than `TIE_TOLERANCE`. Moves within `TIE_TOLERANCE` of the best count as
tied, and a tie goes to the solver's expected-score values (then boxes, then the lowest hold,
as `exact.best_of`): equal win probabilities computed along different paths differ in their
last bits from one BLAS or CPU to another, and a choice made on those bits would not replay
on another machine. Nothing is learned. The model of the opponent is the
expected-score optimum: against another opponent (hard) the search is exact for its
decisions but the opponent's distribution is an approximation.

At a table of three or four, and on a solitaire observation (`act` / `act_batch`: the
`Yahtzee-v0` 72 floats, no opponent in sight), it plays as ``hard`` does: the level's
weights are hard's network.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import numpy as np

from yahtzee_env.game.dice import FIRST_ROLL_KEEP, HOLD_TO_KEEP, KEEP_PROBS, NUM_HOLDS, NUM_ROLLS
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS
from yahtzee_env.game.observation import decode_batch
from yahtzee_env.game.rules import NUM_BOXES, RuleSet
from yahtzee_env.policies.baselines import BasePolicy, OptimalPolicy

TIE_TOLERANCE = 1e-9  # win probabilities closer than this are tied (float noise, not play)
_CACHE_LIMIT = 8_192  # plans (~33 KB each: one per turn state and both totals) kept at once
CARD_FIELDS = ("filled", "upper_total", "yahtzee_state", "total")  # `cards[..., i]`


_POPCOUNT = np.array([m.bit_count() for m in range(1 << NUM_BOXES)], dtype=np.int64)


def _popcount(mask: int) -> int:
    return int(mask).bit_count()


def turn_win_values(final: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The within-turn expectimax of any end value: ``final`` ``[252, N]`` (rolls in `DICE`
    order) is what each roll is worth with no re-roll left, per column. Returns the keep
    values ``[2, 462, N]`` (`KEEP_COUNTS` order; ``[k]``: k re-rolls left after the re-roll)
    and the turn-start values ``[N]``: the solver's recursion (`exact._keep_values`,
    `exact._best_sub_keep`), on win probabilities."""
    from yahtzee_env.solver.exact import (
        _FIRST_ROLL_PROBS,
        _KEEP_RANK,
        _ROLL_ORDER,
        _best_sub_keep,
        _keep_values,
    )

    values = np.ascontiguousarray(final[_ROLL_ORDER], dtype=np.float64)
    keeps = []
    for _ in range(2):
        k = _keep_values(values)
        keeps.append(k[_KEEP_RANK])
        values = _best_sub_keep(k)
    return np.stack(keeps), _FIRST_ROLL_PROBS @ values


class DuelPolicy(BasePolicy):
    """Plays to win a 2-player table (see the module docstring); ``hard`` plays elsewhere."""

    reads_table: ClassVar[bool] = True  # `act_table` wants every seat's scorecard
    window: int = 3  # boxes open at most for the search (2: the last two turns only)
    objective: ClassVar[str] = "win"
    stochastic: ClassVar[bool] = False
    plays_with: ClassVar[tuple[str, ...]] = (__name__,)  # a row's `model.code_sha256` hashes it

    def __init__(
        self, rules: RuleSet | str, hard: Any, name: str = "duelist", optimal: Any = None
    ) -> None:
        self.rules = RuleSet.from_spec(rules)
        self.hard = hard
        self.optimal = optimal if optimal is not None else OptimalPolicy(self.rules)
        self.values = self.optimal.oracle.table  # the solver's `OptimalValues`
        self.threshold = self.rules.upper_bonus_threshold
        self.name = name
        self.trained_rules = getattr(hard, "trained_rules", self.rules.name)
        self.manifest = None  # set by `yahtzee_env.policies.models.load_opponent`
        self._last: dict[tuple[int, int, int], np.ndarray] = {}
        self._points: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._plans: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray] | None] = {}
        self._fills: dict[tuple[int, int, int], tuple[np.ndarray, ...]] = {}
        # One search at a time: the web shares one player between tables (`shared_policy`)
        # and a cache cleared by one thread must not be read half-way by another.
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()  # the caches are a speed-up: not shipped to workers
        state["_last"], state["_points"], state["_plans"], state["_fills"] = {}, {}, {}, {}
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"DuelPolicy({self.name!r}, rules={self.rules.name!r})"

    # ----------------------------------------------------------------- solitaire: hard
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.hard.act(observation, action_mask))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.asarray(self.hard.act_batch(observations, action_masks), dtype=np.int64)

    # ----------------------------------------------------------------- at a table
    def act_table(self, observation: np.ndarray, action_mask: np.ndarray, cards: Any) -> int:
        """One move at a table: ``cards`` ``[seats, 4]`` (`CARD_FIELDS`), the mover's own
        first, then the others in seat order after it."""
        cards = np.asarray(cards, dtype=np.int64)[None]
        return int(
            self.act_batch_table(
                np.asarray(observation)[None], np.asarray(action_mask)[None], cards
            )[0]
        )

    def act_batch_table(
        self, observations: np.ndarray, action_masks: np.ndarray, cards: np.ndarray
    ) -> np.ndarray:
        """Moves for ``N`` tables: ``cards`` ``int [N, seats, 4]`` as in `act_table`."""
        cards = np.asarray(cards, dtype=np.int64)
        if cards.ndim != 3 or cards.shape[2] != len(CARD_FIELDS):
            raise ValueError(f"cards must be [N, seats, {len(CARD_FIELDS)}], got {cards.shape}")
        if cards.shape[1] != 2:  # three or four players: as hard does
            return self.act_batch(observations, action_masks)
        masks = np.array(action_masks, dtype=bool, ndmin=2)
        actions = np.asarray(self.optimal.act_batch(observations, masks), dtype=np.int64)
        state = decode_batch(np.atleast_2d(observations), self.threshold)
        open_me = NUM_BOXES - _POPCOUNT[state["filled"]]
        open_op = NUM_BOXES - _POPCOUNT[cards[:, 1, 0]]
        window = np.flatnonzero((open_me <= self.window) & (open_op >= open_me - 1))
        if window.size == 0:
            return actions
        keys = [
            (int(state["filled"][i]), int(state["upper"][i]), int(state["yahtzee_state"][i]),
             int(cards[i, 0, 3]), int(cards[i, 1, 0]),
             min(int(cards[i, 1, 1]), self.threshold), int(cards[i, 1, 2]), int(cards[i, 1, 3]))
            for i in window
        ]  # fmt: skip
        from yahtzee_env.solver.exact import best_of

        with self._lock:
            self._make_plans(keys)
            found = [
                self._action_values(key, int(state["roll"][i]), int(state["rolls_left"][i]))
                for i, key in zip(window, keys, strict=True)
            ]
        moved, tied = [], []
        for i, values in zip(window, found, strict=True):
            if values is None:
                continue
            values = np.where(masks[i], values, -np.inf)
            best = values >= values.max() - TIE_TOLERANCE
            if not best[actions[i]]:
                moved.append(i)
                tied.append(best)
        if moved:  # among the moves tied for the best win probability, the solver's favourite
            obs = np.atleast_2d(np.asarray(observations))[moved]
            scores = np.asarray(self.optimal.oracle.action_values(obs), np.float64)
            scores = np.where(np.isfinite(scores), scores, -1e18)
            actions[moved] = best_of(np.where(np.array(tied), scores, -np.inf))
        return actions

    # ----------------------------------------------------------------- the search
    def win_values(
        self,
        filled: int,
        upper: int,
        ystate: int,
        total: int,
        opponent: Any,
        roll: int,
        rolls_left: int,
    ) -> np.ndarray | None:
        """``[45]`` probability of winning (draws 1/2) after each action (-inf: illegal), or
        None outside the search window. ``opponent`` is its card (`CARD_FIELDS`)."""
        fo, uo, yo, to = (int(v) for v in opponent)
        t = self.threshold
        key = (filled, min(upper, t), ystate, total, fo, min(uo, t), yo, to)
        with self._lock:
            self._make_plans([key])
            return self._action_values(key, roll, rolls_left)

    def _action_values(self, key: tuple[int, ...], roll: int, rolls_left: int):
        plan = self._plans[key]
        if plan is None:
            return None
        keeps, boxes = plan
        out = np.full(NUM_ACTIONS, -np.inf)
        if rolls_left > 0:
            out[:NUM_HOLDS] = keeps[rolls_left - 1, HOLD_TO_KEEP[roll]]
        out[BOX_ACTION_OFFSET:] = boxes[roll]
        return out

    def _bound_caches(self) -> None:
        """A batch's start, the one place a cache is emptied (when past `_CACHE_LIMIT`): what a
        batch fills is filled once and kept until the batch is served."""
        for cache in (self._plans, self._points, self._fills, self._last):
            if len(cache) > _CACHE_LIMIT:
                cache.clear()

    def _make_plans(self, keys: list[tuple[int, ...]]) -> None:
        """Solve the turns of ``keys`` not solved yet, their expectimax in one batch."""
        self._bound_caches()
        missing = [k for k in dict.fromkeys(keys) if k not in self._plans]
        if not missing:
            return
        self._opponent_points_batch([(k[4], k[5], k[6]) for k in missing])  # one batch
        boxes = [self._box_wins(*k[:4], k[4:]) for k in missing]
        solved = [i for i, b in enumerate(boxes) if b is not None]
        if solved:
            finals = np.stack([boxes[i].max(axis=1) for i in solved], axis=1)  # [252, M]
            keeps, _ = turn_win_values(finals)
            for j, i in enumerate(solved):
                self._plans[missing[i]] = (keeps[:, :, j].copy(), boxes[i])
        for i, b in enumerate(boxes):
            if b is None:
                self._plans[missing[i]] = None

    def _box_wins(
        self, filled: int, upper: int, ystate: int, total: int, opponent: tuple[int, ...]
    ) -> np.ndarray | None:
        """``[252, 13]`` probability of winning after filling each box with each roll
        (-inf: illegal), or None outside the search window."""
        fo, uo, yo, to = opponent
        open_me, open_op = NUM_BOXES - _popcount(filled), NUM_BOXES - _popcount(fo)
        reward, legal, next_upper, next_y = self._fill_table(filled, upper, ystate)
        boxes = np.full(reward.shape, -np.inf)
        if open_me == 1 and open_op == 0:  # the opponent's total is final
            boxes[legal] = _win(reward[legal] - (to - total))
        elif open_me == 1 and open_op == 1:  # the opponent has its last turn to come
            points, probs = self.opponent_points(fo, uo, yo)
            margin = (total + reward[legal])[:, None] - (to + points)[None, :]
            boxes[legal] = _win(margin) @ probs
        elif open_me == 2 and open_op in (1, 2):  # second to last
            # moving second: the opponent's last turn; moving first: its last two turns, and
            # one's own last turn valued as if their total were known by then (a relaxation)
            if open_op == 1:
                points, probs = self.opponent_points(fo, uo, yo)
            else:
                points, probs = self.opponent_two_turns(fo, uo, yo)
            for b in np.flatnonzero(legal.any(axis=0)):
                other = next(c for c in range(NUM_BOXES) if not (filled >> c) & 1 and c != b)
                rows = np.flatnonzero(legal[:, b])
                states = next_upper[rows, b] * 3 + next_y[rows, b]
                for code in np.unique(states).tolist():
                    sel = rows[states == code]
                    last = self.last_turn_win(other, code // 3, code % 3)  # [D + 1]
                    deficit = (to + points)[None, :] - (total + reward[sel, b])[:, None]
                    boxes[sel, b] = _lookup(last, deficit) @ probs
        elif 3 <= open_me <= self.window and open_op in (open_me - 1, open_me):
            # earlier: each fill worth P(win) if both then play the solver's moves to the end
            # (one step of policy improvement on the solver, exact for that continuation)
            points, probs = self.remaining_points(fo, uo, yo)
            opp_cdf = np.concatenate([[0.0], np.cumsum(np.bincount(points, weights=probs))])
            opp_pmf = np.diff(opp_cdf)
            for b in np.flatnonzero(legal.any(axis=0)):
                rows = np.flatnonzero(legal[:, b])
                states = next_upper[rows, b] * 3 + next_y[rows, b]
                for code in np.unique(states).tolist():
                    sel = rows[states == code]
                    mine, p_mine = self.remaining_points(filled | (1 << b), code // 3, code % 3)
                    lead = (total + reward[sel, b])[:, None] + mine[None, :] - to  # [S, X]
                    boxes[sel, b] = _beats(lead, opp_cdf, opp_pmf) @ p_mine
        else:
            return None
        return boxes

    def remaining_points(self, filled: int, upper: int, ystate: int) -> tuple[np.ndarray, ...]:
        """(points, probabilities) of all the turns left from a turn-start state under the
        solver's moves: `opponent_points` (one box open), `opponent_two_turns` (two), and
        from three boxes on, the turn carried forward and each outcome's remaining points."""
        key = (filled, min(upper, self.threshold), ystate, 0)
        open_boxes = NUM_BOXES - _popcount(filled)
        if open_boxes == 1:
            return self.opponent_points(*key[:3])
        if open_boxes == 2:
            return self.opponent_two_turns(*key[:3])
        if key not in self._points:
            probs = self._forward_rolls([key[:3]])[0]
            reward, legal, next_upper, next_y = self._fill_table(*key[:3])
            box_values = self.values.box_values(filled, key[1], ystate, np.arange(NUM_ROLLS))
            box = np.where(legal, box_values, -np.inf).argmax(axis=1)
            rows = np.arange(NUM_ROLLS)
            outcome = np.stack(
                [box, reward[rows, box], next_upper[rows, box], next_y[rows, box]], axis=1
            )
            groups, inverse = np.unique(outcome, axis=0, return_inverse=True)
            mass = np.bincount(inverse.ravel(), weights=probs, minlength=len(groups))
            total = np.zeros(1)
            for (b, r, u, y), p in zip(groups.tolist(), mass.tolist(), strict=True):
                if p <= 0:
                    continue
                points, q = self.remaining_points(filled | (1 << b), u, y)
                shifted = points + r
                if shifted.max() >= total.size:
                    total = np.pad(total, (0, int(shifted.max()) + 1 - total.size))
                np.add.at(total, shifted, p * q)
            points = np.flatnonzero(total > 0)
            self._points[key] = (points, total[points] / total[points].sum())
        return self._points[key]

    def _fill_table(self, filled: int, upper: int, ystate: int) -> tuple[np.ndarray, ...]:
        """reward, legal, next (capped) upper total and next yahtzee state of every (roll,
        box) from a turn-start state, ``[252, 13]`` each: `BoxScoring.fill`, the engine's."""
        key = (filled, upper, ystate)
        if key not in self._fills:
            tables = self.rules.tables
            rolls = np.arange(NUM_ROLLS)
            f = np.full(NUM_ROLLS, filled, dtype=np.int64)
            y = np.full(NUM_ROLLS, ystate, dtype=np.int64)
            context, points_context = tables.context_batch(rolls, f, y)
            legal = tables.legal[context, f] & (((filled >> np.arange(NUM_BOXES)) & 1) == 0)
            fill = tables.fill(
                rolls[:, None], np.arange(NUM_BOXES)[None, :], points_context[:, None],
                np.full((NUM_ROLLS, 1), upper), y[:, None],
            )  # fmt: skip
            reward = np.broadcast_to(np.asarray(fill.reward, np.int64), legal.shape)
            nu = np.minimum(np.broadcast_to(fill.upper_total, legal.shape), self.threshold)
            ny = np.broadcast_to(fill.yahtzee_state, legal.shape)
            self._fills[key] = (reward, legal, np.asarray(nu, np.int64), np.asarray(ny, np.int64))
        return self._fills[key]

    def last_turn_win(self, box: int, upper: int, ystate: int) -> np.ndarray:
        """``[D + 1]``: the exact probability of winning (draws 1/2) of a last turn with only
        ``box`` open, needing more than ``d`` points to win (``d`` = the opponent's final
        total minus one's own before the turn), for d = 0..D, D the most the box can bring
        (0 beyond, 1 below 0: `_lookup`)."""
        key = (box, min(upper, self.threshold), ystate)
        if key not in self._last:
            filled = ((1 << NUM_BOXES) - 1) & ~(1 << box)
            reward, legal, _, _ = self._fill_table(filled, key[1], ystate)
            points = reward[:, box]
            deficits = np.arange(int(points[legal[:, box]].max()) + 1)
            final = _win(points[:, None] - deficits[None, :])  # [252, D + 1]
            final[~legal[:, box]] = -np.inf
            self._last[key] = turn_win_values(final)[1]
        return self._last[key]

    def opponent_points(self, filled: int, upper: int, ystate: int) -> tuple[np.ndarray, ...]:
        """(points, probabilities) of an expected-score player's last turn with one box
        open: the solver's keeps (ties to the lowest hold, as `OptimalPolicy`) carried
        forward through the turn's rolls, then the forced fill."""
        key = (filled, min(upper, self.threshold), ystate)
        self._opponent_points_batch([key])
        return self._points[key]

    def opponent_two_turns(self, filled: int, upper: int, ystate: int) -> tuple[np.ndarray, ...]:
        """(points, probabilities) of an expected-score player's last two turns (two boxes
        open): its second-to-last turn carried forward as in `opponent_points`, the solver's
        box at the last roll, then the last turn's points from the state it leaves."""
        key = (filled, min(upper, self.threshold), ystate, 2)
        if key not in self._points:
            probs = self._forward_rolls([key[:3]])[0]
            reward, legal, next_upper, next_y = self._fill_table(*key[:3])
            box_values = self.values.box_values(filled, key[1], ystate, np.arange(NUM_ROLLS))
            box = np.where(legal, box_values, -np.inf).argmax(axis=1)
            rows = np.arange(NUM_ROLLS)
            after = list(zip((filled | (1 << box)).tolist(), next_upper[rows, box].tolist(),
                             next_y[rows, box].tolist(), strict=True))  # fmt: skip
            self._opponent_points_batch(after)
            total = np.zeros(1)
            for roll in np.flatnonzero(probs > 0):
                points, p = self._points[after[roll]]
                shifted = points + reward[roll, box[roll]]
                if shifted.max() >= total.size:
                    total = np.pad(total, (0, int(shifted.max()) + 1 - total.size))
                np.add.at(total, shifted, probs[roll] * p)
            points = np.flatnonzero(total > 0)
            self._points[key] = (points, total[points] / total[points].sum())
        return self._points[key]

    def _forward_rolls(self, keys: list[tuple[int, int, int]]) -> np.ndarray:
        """``[M, 252]``: the distribution of the last roll of an expected-score player's turn
        from each turn-start state (the solver's keeps; ties to the lowest hold)."""
        f, u, y = (np.array(col, dtype=np.int64) for col in zip(*keys, strict=True))
        turn = self.values.turn_values(f, u, y)
        all_keeps = turn.unique_keep_values[turn.inverse]  # [M, 2, 462]
        probs = np.tile(KEEP_PROBS[FIRST_ROLL_KEEP].astype(np.float64), (len(keys), 1))
        rows = np.arange(len(keys))[:, None]
        for stage in (1, 0):
            holds = all_keeps[:, stage][rows[:, :, None], HOLD_TO_KEEP[None]]  # [M, 252, 32]
            keeps = HOLD_TO_KEEP[np.arange(NUM_ROLLS)[None], holds.argmax(axis=2)]  # [M, 252]
            mass = np.zeros((len(keys), KEEP_PROBS.shape[0]))
            np.add.at(mass, (np.broadcast_to(rows, keeps.shape), keeps), probs)
            probs = mass @ KEEP_PROBS
        return probs

    def _opponent_points_batch(self, keys: list[tuple[int, int, int]]) -> None:
        t = self.threshold
        wanted = [
            k for k in dict.fromkeys((f, min(u, t), y) for f, u, y in keys)
            if NUM_BOXES - _popcount(k[0]) == 1
        ]  # fmt: skip
        missing = [k for k in wanted if k not in self._points]
        if not missing:
            return
        probs = self._forward_rolls(missing)
        for m, key in enumerate(missing):
            box = next(b for b in range(NUM_BOXES) if not (key[0] >> b) & 1)
            reward = self._fill_table(*key)[0][:, box]
            weights = np.bincount(reward, weights=probs[m])
            points = np.flatnonzero(weights > 0)
            self._points[key] = (points, weights[points] / weights[points].sum())


def _win(margin: np.ndarray) -> np.ndarray:
    """1 where ahead, 1/2 level, 0 behind."""
    return (margin > 0) + 0.5 * (margin == 0)


def _beats(lead: np.ndarray, cdf: np.ndarray, pmf: np.ndarray) -> np.ndarray:
    """P(the opponent's remaining points < ``lead``) + 1/2 P(= ``lead``), at any leads:
    ``cdf[k]`` = P(points < k), ``pmf[k]`` = P(points = k)."""
    top = pmf.size
    inside = np.clip(lead, 0, top - 1)
    value = cdf[inside] + 0.5 * pmf[inside]
    return np.where(lead < 0, 0.0, np.where(lead >= top, 1.0, value))


def _lookup(last: np.ndarray, deficit: np.ndarray) -> np.ndarray:
    """`DuelPolicy.last_turn_win` at any deficits: won below 0, lost beyond the table."""
    top = last.size - 1
    inside = last[np.clip(deficit, 0, top)]
    return np.where(deficit < 0, 1.0, np.where(deficit > top, 0.0, inside))


__all__ = ["CARD_FIELDS", "DuelPolicy", "turn_win_values"]
