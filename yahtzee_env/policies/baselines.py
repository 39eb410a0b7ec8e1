"""Baseline policies over the `Yahtzee-v0` observation: ``random``, ``greedy``, ``heuristic``,
``optimal``. Numpy only.

A policy sees exactly what an agent sees, the 72-float observation and the bool[45] action
mask, and must return a legal action for that mask (which may allow every hold or only the
canonical ones). Action ids are those of `yahtzee_env.game.engine`: 0..31 hold the sorted dice of
the set bits, 32 + b fills box b::

    policy = make_policy("heuristic", rules="official")
    action = policy.act(observation, action_mask)            # one state -> int
    actions = policy.act_batch(observations, action_masks)   # [N, 72], [N, 45] -> int64[N]

`decode` turns observations back into game terms (roll index, rolls left, filled boxes, ...)
using the slices of `yahtzee_env.game.observation`. To measure a policy, use
`yahtzee_env.analysis.evaluation.evaluate_policy`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from yahtzee_env.game.dice import COUNTS, DICE, FIRST_ROLL_KEEP, HOLD_TO_KEEP, KEEP_PROBS
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS
from yahtzee_env.game.observation import (
    BONUS_INDEX,
    OBS_SIZE,
    OPEN_SLICE,
    POINTS_SCALE,
    POINTS_SLICE,
    UPPER_BONUS_INDEX,
    decode_batch,
)
from yahtzee_env.game.rules import (
    BOX_NAMES,
    IS_YAHTZEE,
    NUM_BOXES,
    NUM_UPPER,
    POINTS_NATURAL,
    YAHTZEE_POINTS,
    Box,
    RuleSet,
)

__all__ = [
    "POLICIES",
    "BasePolicy",
    "DecodedObservation",
    "GreedyPolicy",
    "HeuristicPolicy",
    "OptimalPolicy",
    "Policy",
    "RandomPolicy",
    "decode",
    "make_policy",
    "reseeded",
]

SeedLike = int | np.random.Generator | None
RulesLike = RuleSet | str | None


# ------------------------------------------------------------------------------ protocol
@runtime_checkable
class Policy(Protocol):
    """Chooses actions from `Yahtzee-v0` observations and action masks."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """One legal action id for one observation [72] and mask [45]."""
        ...

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """int64[N]: one legal action per row of observations [N, 72] and masks [N, 45]."""
        ...


def reseeded(policy: Any, seed: int) -> Any:
    """``policy`` to play from ``seed`` on: a copy reseeded with its ``reseed(seed)`` when
    it is ``stochastic`` (the caller's object is not changed), else the policy itself. The
    evaluation harness gives each chunk its own stream this way, so results do not depend
    on the number of workers or on what the policy did before."""
    if getattr(policy, "stochastic", False):
        policy = copy.copy(policy)
        policy.reseed(seed)
    return policy


class BasePolicy:
    """Implements `act` with `act_batch` or the other way round: override at least one."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        observations = np.asarray(observation)[None]
        return int(self.act_batch(observations, np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.array(
            [self.act(o, m) for o, m in zip(observations, action_masks, strict=True)],
            dtype=np.int64,
        )

    stochastic: ClassVar[bool] = False
    """True when `act` draws random numbers (then `reseed` restarts their stream)."""

    def reseed(self, seed: SeedLike) -> None:
        """Restart the policy's random stream from ``seed`` (no-op for deterministic ones)."""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.act is BasePolicy.act and cls.act_batch is BasePolicy.act_batch:
            raise TypeError(f"{cls.__name__} must override act or act_batch")


def _check_masks(action_masks: np.ndarray) -> np.ndarray:
    masks = np.asarray(action_masks, dtype=bool)
    if masks.ndim != 2 or masks.shape[1] != NUM_ACTIONS:
        raise ValueError(f"action masks must have shape [N, {NUM_ACTIONS}], got {masks.shape}")
    empty = ~masks.any(axis=1)
    if empty.any():
        raise ValueError(f"no legal action in row(s) {np.flatnonzero(empty).tolist()}")
    return masks


def _masked_argmax(values: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """int64[N]: the highest-valued legal action per row (first one on ties)."""
    return np.where(masks, values, -np.inf).argmax(axis=1).astype(np.int64)


# ------------------------------------------------------------------------------ decoding
@dataclass(frozen=True)
class DecodedObservation:
    """A batch of observations in game terms: every field is an array over the batch."""

    roll: np.ndarray  # int64 [N]: index into `yahtzee_env.game.dice.DICE`
    dice: np.ndarray  # int8 [N, 5]: the sorted dice, faces 1..6
    rolls_left: np.ndarray  # int64 [N]: re-rolls left this turn, 0..2
    open_boxes: np.ndarray  # bool [N, 13]
    filled: np.ndarray  # int64 [N]: 13-bit filled mask (bit b: box b filled)
    boxes_filled: np.ndarray  # int64 [N]: 0..13
    points: np.ndarray  # int64 [N, 13]: points of the dice in each box, 0 where not legal
    upper_total: np.ndarray  # int64 [N]: upper total, capped at the threshold
    upper_bonus: np.ndarray  # bool [N]: upper bonus earned
    yahtzee_state: np.ndarray  # int64 [N]: YAHTZEE_OPEN / YAHTZEE_50 / YAHTZEE_0
    yahtzee_bonus: np.ndarray  # bool [N]: the dice earn a Yahtzee bonus wherever placed

    def take(self, rows: np.ndarray) -> DecodedObservation:
        """The rows ``rows`` (indices or a bool mask) of the batch."""
        return DecodedObservation(**{f.name: getattr(self, f.name)[rows] for f in fields(self)})


def decode(observations: np.ndarray, rules: RulesLike = None) -> DecodedObservation:
    """Decode observations [N, 72] (or one, [72], as a batch of one) into game terms.

    The state itself comes from `yahtzee_env.game.observation.decode_batch`; the rest is read off
    the slices of the layout. The observation carries the upper total only as ``total /
    threshold`` capped at 1, so ``upper_total`` is exact below the threshold of ``rules`` and
    equal to it once reached.
    """
    obs = np.atleast_2d(np.asarray(observations))
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"observations must have shape [N, {OBS_SIZE}], got {obs.shape}")
    state = decode_batch(obs, RuleSet.from_spec(rules).upper_bonus_threshold)
    open_boxes = obs[:, OPEN_SLICE] > 0.5
    return DecodedObservation(
        roll=state["roll"],
        dice=DICE[state["roll"]],
        rolls_left=state["rolls_left"],
        open_boxes=open_boxes,
        filled=state["filled"],
        boxes_filled=NUM_BOXES - open_boxes.sum(axis=1),
        points=np.rint(obs[:, POINTS_SLICE] * POINTS_SCALE).astype(np.int64),
        upper_total=state["upper"],
        upper_bonus=obs[:, UPPER_BONUS_INDEX] > 0.5,
        yahtzee_state=state["yahtzee_state"],
        yahtzee_bonus=obs[:, BONUS_INDEX] > 0.5,
    )


# ------------------------------------------------------------------------------ random
class RandomPolicy(BasePolicy):
    """Uniform over the legal actions (holds and boxes alike), from a seeded generator."""

    knew: ClassVar[dict[str, str]] = {
        "observation": "raw 72 floats (it reads only the mask)",
        "reward": "none (nothing learned)",
        "actions": "all 32 holds",
        "model": "none",
        "teacher": "none",
    }

    def __init__(self, rules: RulesLike = None, seed: SeedLike = None) -> None:
        self.rules = RuleSet.from_spec(rules)
        self.rng = np.random.default_rng(seed)

    stochastic: ClassVar[bool] = True

    def reseed(self, seed: SeedLike) -> None:
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = _check_masks(action_masks)
        # The argmax of i.i.d. uniforms over the legal actions is uniform among them.
        return _masked_argmax(self.rng.random(masks.shape), masks)


# ------------------------------------------------------------------------------ greedy
def _single_roll_box_values(rules: RuleSet) -> np.ndarray:
    """float[13]: expected points of one fresh roll of five dice in each box."""
    return KEEP_PROBS[FIRST_ROLL_KEEP] @ rules.tables.points[:, POINTS_NATURAL].astype(np.float64)


class GreedyPolicy(BasePolicy):
    """Never re-rolls; fills the legal box with the most points for the dice on the table.

    Ties, and the all-zero case (the dump), go to the box least valuable to a player who never
    re-rolls: the lowest expected points of one fresh roll (`_single_roll_box_values`), i.e.
    yahtzee, four of a kind, aces, full house, large straight, twos, ... and chance last.
    (A Yahtzee bonus is earned wherever the dice go, so it does not change the choice.)
    """

    knew: ClassVar[dict[str, str]] = {
        "observation": "raw 72 floats",
        "reward": "none (hand-made: the most points now)",
        "actions": "all 32 holds (it never holds)",
        "model": "none",
        "teacher": "none",
    }

    def __init__(self, rules: RulesLike = None, seed: SeedLike = None) -> None:
        self.rules = RuleSet.from_spec(rules)
        order = np.argsort(_single_roll_box_values(self.rules), kind="stable")
        # rank[b]: larger for the boxes given up first; below 1 so it only breaks ties.
        rank = np.empty(NUM_BOXES)
        rank[order] = np.arange(NUM_BOXES, 0, -1)
        self.tie_break = rank / (NUM_BOXES + 1)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = _check_masks(action_masks)
        points = np.rint(np.asarray(observations)[:, POINTS_SLICE] * POINTS_SCALE)
        values = np.zeros(masks.shape)
        values[:, BOX_ACTION_OFFSET:] = points + self.tie_break
        values[:, :BOX_ACTION_OFFSET] = -1.0  # holds only if no box is legal (never in play)
        return _masked_argmax(values, masks)


# ------------------------------------------------------------------------------ heuristic
class HeuristicPolicy(BasePolicy):
    """A human-like strategy: simple rules of thumb for what a box is worth, and the hold
    that does best by them over the rest of the turn.

    Filling box b with the dice on the table is worth:

    * its points now, plus the upper bonus if this box reaches the threshold;
    * in the upper section, while the bonus is still open and reachable, ``UPPER_PAR_WEIGHT``
      x (points - 3 x face) more: aim for three of each face, chase the bonus;
    * a 0 in the yahtzee box costs the chance of rolling a Yahtzee in the turns left
      (``YAHTZEE_RATE`` a turn), so it is kept early and dumped late; a 50 there is worth
      ``YAHTZEE_RATE`` x the Yahtzee bonus per turn left;
    * minus a small cost for giving up the box, growing along `GIVE_UP_ORDER`, which mostly
      decides between equals: a zero goes to aces, then four of a kind, large straight, ...;
      equal points go to three of a kind rather than chance.

    Holds: each of the 32 holds is valued by the expected best box value after the re-rolls
    left (exact over the turn, from the keep tables of `yahtzee_env.game.dice`); a hold is taken
    only if it beats filling a box now. All of it is table lookups and matrix products over
    the 252 rolls, so `act_batch` is vectorised over rows.
    """

    knew: ClassVar[dict[str, str]] = {
        "observation": "raw 72 floats",
        "reward": "none (hand-made rules of thumb)",
        "actions": "all 32 holds",
        "model": "exact rules model (each hold's expectation over the rest of the turn)",
        "teacher": "none",
    }

    # Cheapest box to give up first; the cost grows by GIVE_UP_STEP along the list.
    GIVE_UP_ORDER = (
        "aces",
        "four_of_a_kind",
        "large_straight",
        "full_house",
        "twos",
        "yahtzee",  # replaced by its own cost, above
        "threes",
        "small_straight",
        "fours",
        "three_of_a_kind",
        "fives",
        "sixes",
        "chance",
    )
    GIVE_UP_STEP = 0.5
    UPPER_PAR_WEIGHT = 1.5
    YAHTZEE_RATE = 0.034  # a Yahtzee about one turn in thirty

    def __init__(self, rules: RulesLike = None, seed: SeedLike = None) -> None:
        self.rules = RuleSet.from_spec(rules)
        self.tables = self.rules.tables
        self.threshold = self.rules.upper_bonus_threshold
        self.upper_bonus = float(self.rules.upper_bonus_value)
        self.yahtzee_bonus = float(self.tables.bonus_value)
        self.give_up_cost = np.array(
            [self.GIVE_UP_STEP * self.GIVE_UP_ORDER.index(name) for name in BOX_NAMES]
        )
        faces = np.arange(1, NUM_UPPER + 1)
        self.upper_max = 5 * faces  # [box]: the most it can score
        self.upper_points = faces[:, None] * np.arange(6)  # [box, count]: points
        self.upper_base = self.upper_points - self.give_up_cost[:NUM_UPPER, None]
        self.upper_par = self.UPPER_PAR_WEIGHT * (self.upper_points - 3 * faces[:, None])
        # Upper box b with c dice of its face is entry 6 * b + c of a [box, count] table.
        self.count_index = np.arange(NUM_UPPER) * 6 + COUNTS[:, :NUM_UPPER].astype(np.int64)
        # Only the six Yahtzees can be jokers: every other roll scores its natural points.
        self.yahtzee_rolls = np.flatnonzero(IS_YAHTZEE)
        self.lower_points = self.tables.points[:, POINTS_NATURAL, NUM_UPPER:].astype(np.float64)
        self.keep_probs_t = np.ascontiguousarray(KEEP_PROBS.T)  # [252 rolls, 462 keeps]
        self.hold_to_keep = HOLD_TO_KEEP.astype(np.int64)  # [252 rolls, 32 holds]
        # The distinct keeps of each roll, flattened roll after roll (4368 of 252 x 32 holds).
        sub_keeps = [np.unique(row) for row in self.hold_to_keep]
        self.sub_keeps = np.concatenate(sub_keeps)
        self.sub_keep_starts = np.cumsum([0] + [len(k) for k in sub_keeps[:-1]])

    # --------------------------------------------------------------------- box values
    def _state_terms(self, d: DecodedObservation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per row: what filling each box adds to its points [N, 13]; upper box values by
        count of its face, points included, flattened [N, 36] (see ``count_index``); the
        worth of a 50 in the yahtzee box beyond its points [N]."""
        n = len(d.filled)
        future_turns = np.maximum(NUM_BOXES - d.boxes_filled - 1, 0)  # after this one
        delta = np.repeat(-self.give_up_cost[None], n, axis=0)  # [N, 13]
        yahtzee_chance = 1.0 - (1.0 - self.YAHTZEE_RATE) ** future_turns
        delta[:, Box.YAHTZEE] = -YAHTZEE_POINTS * yahtzee_chance
        # Upper boxes: the bonus when reached, and three of each while it is in play.
        open_upper = (d.filled[:, None] >> np.arange(NUM_UPPER) & 1) == 0  # [N, 6]
        earned = d.upper_total >= self.threshold
        in_play = ~earned & (d.upper_total + open_upper @ self.upper_max >= self.threshold)
        reaches = ~earned[:, None, None] & (
            d.upper_total[:, None, None] + self.upper_points >= self.threshold
        )  # [N, box, count]
        upper = (
            self.upper_base
            + self.upper_bonus * reaches
            + np.where(in_play[:, None, None], self.upper_par, 0.0)
        )
        # A 50 in the yahtzee box keeps the Yahtzee bonus alive for the turns left.
        bonus_life = self.YAHTZEE_RATE * self.yahtzee_bonus * future_turns
        return delta, upper.reshape(n, NUM_UPPER * 6), bonus_life

    def _box_values(self, d: DecodedObservation, terms, rolls: np.ndarray) -> np.ndarray:
        """float[N, R, 13]: value of filling each box with rolls [N, R] (-inf where illegal)."""
        delta, upper, bonus_life = terms
        filled = d.filled[:, None]
        ystate = d.yahtzee_state[:, None]
        ctx, joker = self.tables.context_batch(rolls, filled, ystate)  # [N, R]
        legal = self.tables.legal[ctx, filled]  # [N, R, 13]
        points = self.tables.points[rolls, joker]  # [N, R, 13]
        values = points + delta[:, None, :]
        rows = np.arange(len(rolls))[:, None, None]
        values[..., :NUM_UPPER] = upper[rows, self.count_index[rolls]]
        is_fifty = points[..., Box.YAHTZEE] > 0
        values[..., Box.YAHTZEE] += np.where(is_fifty, bonus_life[:, None], 0.0)
        # A Yahtzee bonus is earned wherever the dice go.
        values += self.tables.yahtzee_bonus(rolls, ystate)[..., None]
        return np.where(legal, values, -np.inf)

    def _best_values(self, d: DecodedObservation, terms, yahtzee_best: np.ndarray) -> np.ndarray:
        """float[N, 252]: the best box value of every roll, i.e. `_box_values` of all rolls
        maxed over boxes, computed fast; ``yahtzee_best`` [N, 6] is that of the six Yahtzees."""
        delta, upper, _ = terms
        legal = self.tables.legal[0, d.filled]  # [N, 13]: no joker outside the six Yahtzees
        lower_delta = np.where(legal[:, NUM_UPPER:], delta[:, NUM_UPPER:], -np.inf)
        best = (self.lower_points + lower_delta[:, None, :]).max(axis=2)
        upper = np.where(legal[:, :NUM_UPPER].repeat(6, axis=1), upper, -np.inf)
        np.maximum(best, upper[:, self.count_index].max(axis=2), out=best)
        best[:, self.yahtzee_rolls] = yahtzee_best
        return best

    # --------------------------------------------------------------------- actions
    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = _check_masks(action_masks)
        d = decode(observations, self.rules)
        terms = self._state_terms(d)
        # The box values of the dice on the table, and of the six Yahtzees (joker rules).
        rolls = np.empty((len(masks), 1 + len(self.yahtzee_rolls)), dtype=np.int64)
        rolls[:, 0] = d.roll
        rolls[:, 1:] = self.yahtzee_rolls
        box_values = self._box_values(d, terms, rolls)  # [N, 7, 13]
        values = np.full(masks.shape, -np.inf)
        values[:, BOX_ACTION_OFFSET:] = box_values[:, 0]
        rerolls = np.flatnonzero(d.rolls_left > 0)
        if len(rerolls):
            r = d.take(rerolls)
            yahtzee_best = box_values[rerolls, 1:].max(axis=2)
            # Expected best box value of each keep with one roll left, then with two.
            best = self._best_values(r, tuple(t[rerolls] for t in terms), yahtzee_best)
            keep_value = best @ self.keep_probs_t  # [M, 462]
            two = r.rolls_left == 2
            if two.any():
                by_roll = np.maximum.reduceat(
                    keep_value[two][:, self.sub_keeps], self.sub_keep_starts, axis=1
                )  # [K, 252]: the best keep of each roll with one roll left
                keep_value[two] = by_roll @ self.keep_probs_t
            hold_values = np.take_along_axis(keep_value, self.hold_to_keep[r.roll], axis=1)
            # Prefer filling a box when a hold is only as good (keep-all, or a sure thing).
            values[rerolls, :BOX_ACTION_OFFSET] = hold_values - 1e-9
        fallback = np.where(np.isfinite(values), values, -1e18)  # legal in the mask only
        return _masked_argmax(fallback, masks)


# ------------------------------------------------------------------------------ optimal
class OptimalPolicy(BasePolicy):
    """The exact optimal strategy: the best legal action by the action values of
    `yahtzee_env.solver.oracle.OptimalOracle` over the solver table of ``rules`` (loaded from the
    cache or solved on first use by `yahtzee_env.solver.exact.load_or_solve`, unless ``table`` is
    given). Ties go to filling a box, then to the lowest hold (`yahtzee_env.solver.exact.best_of`),
    so a mask with only canonical holds gets the canonical one of the best keep.
    """

    knew: ClassVar[dict[str, str]] = {
        "observation": "raw state",
        "reward": "none (solved exactly, nothing learned)",
        "actions": "all 32 holds",
        "model": "exact rules model (backward induction over every state)",
        "teacher": "none",
    }

    def __init__(self, rules: RulesLike = None, seed: SeedLike = None, table=None) -> None:
        self.rules = RuleSet.from_spec(rules)
        try:
            from yahtzee_env.solver.exact import best_of, load_or_solve
            from yahtzee_env.solver.oracle import OptimalOracle
        except ImportError as err:
            raise ImportError(
                "the 'optimal' policy needs yahtzee_env.solver.exact and .oracle, which "
                f"could not be imported ({err}); use 'heuristic', 'greedy' or 'random' instead"
            ) from err
        self._best_of = best_of
        self.oracle = OptimalOracle(load_or_solve(self.rules) if table is None else table)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = _check_masks(action_masks)
        values = np.asarray(self.oracle.action_values(np.atleast_2d(observations)), np.float64)
        values = np.where(np.isfinite(values), values, -1e18)  # the mask has the last word
        return self._best_of(np.where(masks, values, -np.inf)).astype(np.int64)


# ------------------------------------------------------------------------------ registry
POLICIES: dict[str, Callable[..., BasePolicy]] = {
    "random": RandomPolicy,
    "greedy": GreedyPolicy,
    "heuristic": HeuristicPolicy,
    "optimal": OptimalPolicy,  # imports yahtzee_env.solver.exact only when built
}


def make_policy(name: str, rules: RulesLike = None, seed: SeedLike = None) -> BasePolicy:
    """A built-in policy by name (see `POLICIES`) for ``rules``.

    ``seed`` (an int or a `numpy.random.Generator`) seeds the random policies; the
    deterministic ones accept and ignore it, so every entry is built the same way.
    """
    try:
        factory = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose one of: {', '.join(POLICIES)}") from None
    return factory(rules=rules, seed=seed)
