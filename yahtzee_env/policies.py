"""Baseline policies over the `Yahtzee-v0` observation: ``random``, ``greedy``, ``heuristic``,
``optimal``. Numpy only.

A policy sees exactly what an agent sees, the 72-float observation and the bool[45] action
mask, and must return a legal action for that mask (which may allow every hold or only the
canonical ones). Action ids are those of `yahtzee_env.engine`: 0..31 hold the sorted dice of
the set bits, 32 + b fills box b::

    policy = make_policy("heuristic", rules="official")
    action = policy.act(observation, action_mask)            # one state -> int
    actions = policy.act_batch(observations, action_masks)   # [N, 72], [N, 45] -> int64[N]

`decode` turns observations back into game terms (roll index, rolls left, filled boxes, ...)
using the slices of `yahtzee_env.observation`; `play_games` measures a policy over seeded games
of `yahtzee_env.engine.Game`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from yahtzee_env.dice import COUNTS, FIRST_ROLL_KEEP, HOLD_TO_KEEP, KEEP_PROBS, NUM_ROLLS
from yahtzee_env.engine import BOX_ACTION_OFFSET, NUM_ACTIONS, Game
from yahtzee_env.observation import (
    BONUS_INDEX,
    DICE_SLICE,
    OBS_SIZE,
    OPEN_SLICE,
    POINTS_SCALE,
    POINTS_SLICE,
    PROGRESS_INDEX,
    ROLLS_LEFT_SLICE,
    UPPER_SLICE,
    YAHTZEE_BOX_SLICE,
    encode_seat,
)
from yahtzee_env.rules import (
    NUM_BOXES,
    NUM_UPPER,
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
    "play_games",
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
# Dense lookup from the base-6 code of face counts to the roll index in `DICE`.
_COUNT_CODE_WEIGHTS = 6 ** np.arange(6)
_ROLL_OF_CODE = np.full(6**6, -1, dtype=np.int64)
_ROLL_OF_CODE[COUNTS.astype(np.int64) @ _COUNT_CODE_WEIGHTS] = np.arange(NUM_ROLLS)
_BOX_BITS = 1 << np.arange(NUM_BOXES)


@dataclass(frozen=True)
class DecodedObservation:
    """An observation in game terms. Every field has the observation's leading shape."""

    roll: np.ndarray  # int64: index into `yahtzee_env.dice.DICE`
    dice: np.ndarray  # int64 [..., 5]: the sorted dice, faces 1..6
    counts: np.ndarray  # int64 [..., 6]: how many aces .. sixes
    rolls_left: np.ndarray  # int64: re-rolls left this turn, 0..2
    open_boxes: np.ndarray  # bool [..., 13]
    filled: np.ndarray  # int64: 13-bit filled mask (bit b: box b filled)
    points: np.ndarray  # int64 [..., 13]: points of the dice in each box, 0 where not legal
    upper_total: np.ndarray  # int64: upper total, capped at the threshold
    upper_bonus: np.ndarray  # bool: upper bonus earned
    yahtzee_state: np.ndarray  # int64: YAHTZEE_OPEN / YAHTZEE_50 / YAHTZEE_0
    yahtzee_bonus: np.ndarray  # bool: the dice earn a Yahtzee bonus wherever placed
    boxes_filled: np.ndarray  # int64: 0..13


def decode(observation: np.ndarray, rules: RulesLike = None) -> DecodedObservation:
    """Decode one observation [72] or a batch [..., 72] (layout: `yahtzee_env.observation`).

    The observation carries the upper total only as ``total / threshold`` capped at 1, so
    ``upper_total`` is exact below the threshold of ``rules`` and equal to it once reached.
    """
    obs = np.asarray(observation, dtype=np.float64)
    if obs.shape[-1:] != (OBS_SIZE,):
        raise ValueError(f"observations must end in a {OBS_SIZE} axis, got {obs.shape}")
    threshold = RuleSet.from_spec(rules).upper_bonus_threshold
    dice_part = obs[..., DICE_SLICE]
    dice = dice_part[..., :30].reshape(*obs.shape[:-1], 5, 6).argmax(axis=-1) + 1
    counts = np.rint(dice_part[..., 30:36] * 5).astype(np.int64)
    open_boxes = obs[..., OPEN_SLICE] > 0.5
    upper = obs[..., UPPER_SLICE]
    return DecodedObservation(
        roll=_ROLL_OF_CODE[counts @ _COUNT_CODE_WEIGHTS],
        dice=dice.astype(np.int64),
        counts=counts,
        rolls_left=obs[..., ROLLS_LEFT_SLICE].argmax(axis=-1),
        open_boxes=open_boxes,
        filled=(~open_boxes).astype(np.int64) @ _BOX_BITS,
        points=np.rint(obs[..., POINTS_SLICE] * POINTS_SCALE).astype(np.int64),
        upper_total=np.rint(upper[..., 0] * threshold).astype(np.int64),
        upper_bonus=upper[..., 1] > 0.5,
        yahtzee_state=obs[..., YAHTZEE_BOX_SLICE].argmax(axis=-1),
        yahtzee_bonus=obs[..., BONUS_INDEX] > 0.5,
        boxes_filled=np.rint(obs[..., PROGRESS_INDEX] * NUM_BOXES).astype(np.int64),
    )


# ------------------------------------------------------------------------------ random
class RandomPolicy(BasePolicy):
    """Uniform over the legal actions (holds and boxes alike), from a seeded generator."""

    def __init__(self, rules: RulesLike = None, seed: SeedLike = None) -> None:
        self.rules = RuleSet.from_spec(rules)
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = _check_masks(action_masks)
        # The argmax of i.i.d. uniforms over the legal actions is uniform among them.
        return _masked_argmax(self.rng.random(masks.shape), masks)


# ------------------------------------------------------------------------------ greedy
def _single_roll_box_values(rules: RuleSet) -> np.ndarray:
    """float[13]: expected points of one fresh roll of five dice in each box."""
    return KEEP_PROBS[FIRST_ROLL_KEEP] @ rules.tables.points[:, 0].astype(np.float64)


class GreedyPolicy(BasePolicy):
    """Never re-rolls; fills the legal box with the most points for the dice on the table.

    Ties, and the all-zero case (the dump), go to the box least valuable to a player who never
    re-rolls: the lowest expected points of one fresh roll (`_single_roll_box_values`), i.e.
    yahtzee, four of a kind, aces, full house, large straight, twos, ... and chance last.
    (A Yahtzee bonus is earned wherever the dice go, so it does not change the choice.)
    """

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
def _logistic(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # 1 / (1 + exp(-x)), without overflow


class HeuristicPolicy(BasePolicy):
    """A human-like strategy: rules of thumb for what each box is worth, and the best hold
    for them over the rest of the turn.

    Boxes are valued ``points + bonus - par``: the points now, plus what the upper bonus
    gains or loses, minus the box's *par* — what an open box is expected to bring later in
    the game (`PAR_START` with twelve turns to go, shrinking towards `PAR_END`, its worth
    when its one turn is spent on it, as turns run out). So three of a face in the upper
    section is on par; 0 goes where the least is lost (aces, or the yahtzee box late, or four
    of a kind); a full house or straight is taken when it beats its par. The upper bonus is
    chased through an estimated chance of reaching the threshold if every open upper box
    scores about ``UPPER_COUNT`` dice of its face; a filled yahtzee box holding 50 is worth
    ``YAHTZEE_BONUS_RATE`` x bonus per remaining turn.

    Holds: each of the 32 holds is valued by the expected best box value after the re-rolls
    left (exact over the turn with the `yahtzee_env.dice` keep tables), and a hold is taken
    only if it beats filling a box now. Everything is table lookups and matrix products over
    the 252 rolls, so `act_batch` is vectorised over rows.
    """

    # box order of BOX_NAMES: aces..sixes, 3K, 4K, full house, small/large straight, yahtzee,
    # chance. PAR_START ~ average scores of good play; PAR_END ~ one dedicated turn.
    PAR_START = np.array(
        [2.0, 5.3, 8.6, 12.2, 15.7, 19.2, 21.7, 13.1, 22.6, 29.5, 32.7, 16.9, 22.0]
    )
    PAR_END = np.array([2.1, 4.2, 6.3, 8.4, 10.5, 12.6, 15.0, 5.0, 9.0, 18.0, 10.6, 2.3, 23.3])
    UPPER_COUNT = 2.8  # dice of its face an open upper box is expected to score
    UPPER_SPREAD = 1.1  # their standard deviation, in dice
    YAHTZEE_BONUS_RATE = 0.02
    LOOKAHEAD = 2

    def __init__(self, rules: RulesLike = None, seed: SeedLike = None) -> None:
        self.rules = RuleSet.from_spec(rules)
        self.tables = self.rules.tables
        self.threshold = self.rules.upper_bonus_threshold
        self.bonus_value = float(self.rules.upper_bonus_value)
        self.yahtzee_bonus = float(self.tables.bonus_value)
        faces = np.arange(1, NUM_UPPER + 1, dtype=np.float64)
        self.upper_mean = self.UPPER_COUNT * faces
        self.upper_var = (self.UPPER_SPREAD * faces) ** 2
        self.upper_points = faces[:, None] * np.arange(6)  # [face box, count] -> points
        self.rolls = np.arange(NUM_ROLLS)
        self.keep_probs_t = np.ascontiguousarray(KEEP_PROBS.T)  # [252 rolls, 462 keeps]
        self.roll_counts = COUNTS[:, :NUM_UPPER].astype(np.int64)  # [252, 6]
        self.upper_boxes = np.arange(NUM_UPPER)[None, :]

    # --------------------------------------------------------------------- box values
    def _bonus_chance(self, upper: np.ndarray, open_upper: np.ndarray) -> np.ndarray:
        """Estimated chance of the upper bonus; ``open_upper`` is bool [..., 6]."""
        need = self.threshold - upper
        mean = open_upper @ self.upper_mean
        std = np.sqrt(open_upper @ self.upper_var) + 1e-9
        chance = _logistic(1.7 * (mean - need) / std)
        reachable = open_upper @ (5 * np.arange(1, 7)) >= need
        return np.where(need <= 0, 1.0, np.where(reachable, chance, 0.0))

    def _box_values(self, d: DecodedObservation) -> np.ndarray:
        """float[N, 252, 13]: value of filling each box with each roll (-inf where illegal)."""
        filled = d.filled[:, None]
        ystate = d.yahtzee_state[:, None]
        ctx, joker = self.tables.context_batch(self.rolls[None], filled, ystate)  # [N, 252]
        legal = self.tables.legal[ctx, filled]  # [N, 252, 13]
        points = self.tables.points[self.rolls[None], joker].astype(np.float64)

        future_turns = np.maximum(NUM_BOXES - d.boxes_filled - 1, 0)
        w = np.clip((future_turns - 1) / 11.0, 0.0, 1.0)[:, None]
        par = self.PAR_END + w * (self.PAR_START - self.PAR_END)  # [N, 13]
        delta = -par

        # Upper boxes: par plus the change in the chance of the bonus, per count 0..5.
        open_upper = d.open_boxes[:, :NUM_UPPER]
        after_open = open_upper[:, None, :] & ~np.eye(NUM_UPPER, dtype=bool)  # [N, box, face]
        after_upper = d.upper_total[:, None, None] + self.upper_points[None]  # [N, box, count]
        chance = self._bonus_chance(after_upper, after_open[:, :, None, :].astype(np.float64))
        upper_delta = delta[:, :NUM_UPPER, None] + self.bonus_value * chance  # [N, 6, 6]
        # [N, 252, 6]: by each roll's count of each face
        upper_values = upper_delta[:, self.upper_boxes, self.roll_counts]
        values = points + delta[:, None, :]
        values[:, :, :NUM_UPPER] = points[:, :, :NUM_UPPER] + upper_values
        # Yahtzee box: 50 there keeps the Yahtzee bonus alive for the turns left.
        bonus_life = self.YAHTZEE_BONUS_RATE * self.yahtzee_bonus * future_turns
        values[:, :, Box.YAHTZEE] += np.where(points[:, :, Box.YAHTZEE] > 0, bonus_life[:, None], 0)
        # A Yahtzee bonus is earned wherever the dice go.
        values += self.tables.yahtzee_bonus_batch(self.rolls[None], ystate)[:, :, None]
        return np.where(legal, values, -np.inf)

    # --------------------------------------------------------------------- actions
    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = _check_masks(action_masks)
        d = decode(observations, self.rules)
        box_values = self._box_values(d)  # [N, 252, 13]
        best_box = box_values.max(axis=2)  # [N, 252]: value of the dice with no roll left
        rows = np.arange(len(masks))
        values = np.full(masks.shape, -np.inf)
        values[:, BOX_ACTION_OFFSET:] = box_values[rows, d.roll]
        hold_keeps = HOLD_TO_KEEP[d.roll].astype(np.int64)  # [N, 32]
        rerolls = d.rolls_left > 0
        if rerolls.any():
            # Expected value of each keep with one roll left, then (if two) with two.
            keep_value = best_box[rerolls] @ self.keep_probs_t  # [M, 462]
            two = d.rolls_left[rerolls] == 2
            if two.any() and self.LOOKAHEAD >= 2:
                one_left = np.take_along_axis(
                    keep_value[two][:, None, :], HOLD_TO_KEEP[None].astype(np.int64), axis=2
                )  # [K, 252, 32]
                keep_value[two] = one_left.max(axis=2) @ self.keep_probs_t
            hold_values = np.take_along_axis(keep_value, hold_keeps[rerolls], axis=1)
            # Prefer filling a box when a hold is only as good (keep-all, or a sure thing).
            values[rerolls, :BOX_ACTION_OFFSET] = hold_values - 1e-9
        fallback = np.where(np.isfinite(values), values, -1e18)  # legal in the mask only
        return _masked_argmax(fallback, masks)


# ------------------------------------------------------------------------------ optimal
class OptimalPolicy(BasePolicy):
    """The exact optimal strategy from `yahtzee_env.solver` (solved or loaded on first use).

    Uses ``table.action_values`` (values of the 45 actions) when the table has it, so the
    best *legal* action is taken under any mask; otherwise ``table.best_action``, with a hold
    the mask forbids replaced by a legal hold of the same kept dice, and keep-all by what the
    solver would do with the same dice and one roll fewer.
    """

    def __init__(self, rules: RulesLike = None, seed: SeedLike = None, table=None) -> None:
        self.rules = RuleSet.from_spec(rules)
        if table is None:
            try:
                from yahtzee_env.solver import load_or_solve
            except ImportError as err:
                raise ImportError(
                    "the 'optimal' policy needs yahtzee_env.solver.load_or_solve, which could "
                    f"not be imported ({err}); use 'heuristic', 'greedy' or 'random' instead"
                ) from err
            table = load_or_solve(self.rules)
        self.table = table

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = _check_masks(action_masks)
        d = decode(observations, self.rules)
        state = (d.filled, d.upper_total, d.yahtzee_state, d.roll)
        if hasattr(self.table, "action_values"):
            values = np.asarray(self.table.action_values(*state, d.rolls_left), dtype=np.float64)
            return _masked_argmax(values.reshape(masks.shape), masks)
        actions = np.empty(len(masks), dtype=np.int64)
        for i, mask in enumerate(masks):
            filled, upper, ystate, roll = (int(x[i]) for x in state)
            rolls_left = int(d.rolls_left[i])
            action = int(self.table.best_action(filled, upper, ystate, roll, rolls_left))
            while action == BOX_ACTION_OFFSET - 1 and not mask[action] and rolls_left > 1:
                rolls_left -= 1  # keep-all: the same dice, one roll fewer
                action = int(self.table.best_action(filled, upper, ystate, roll, rolls_left))
            if action < BOX_ACTION_OFFSET and not mask[action]:
                same_keep = HOLD_TO_KEEP[roll] == HOLD_TO_KEEP[roll, action]
                candidates = np.flatnonzero(same_keep & mask[:BOX_ACTION_OFFSET])
                if len(candidates) == 0:
                    raise ValueError(f"the mask allows no hold equivalent to action {action}")
                action = int(candidates[0])
            actions[i] = action
        return actions


# ------------------------------------------------------------------------------ registry
POLICIES: dict[str, Callable[..., BasePolicy]] = {
    "random": RandomPolicy,
    "greedy": GreedyPolicy,
    "heuristic": HeuristicPolicy,
    "optimal": OptimalPolicy,  # imports yahtzee_env.solver only when built
}


def make_policy(name: str, rules: RulesLike = None, seed: SeedLike = None) -> BasePolicy:
    """A built-in policy by name (see `POLICIES`) for ``rules``, seeded where random."""
    try:
        factory = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose one of: {', '.join(POLICIES)}") from None
    return factory(rules=rules, seed=seed)


# ------------------------------------------------------------------------------ measuring
def play_games(
    policy: Policy,
    num_games: int,
    *,
    rules: RulesLike = None,
    seed: int = 0,
    canonical_holds: bool = False,
) -> np.ndarray:
    """int64[num_games]: final totals of one-player games played by ``policy``.

    Game ``i`` rolls its dice from child ``i`` of ``SeedSequence(seed)``, so a game's dice do
    not depend on how many games are played; the games advance together through `act_batch`.
    """
    games = [Game(rules, canonical_holds=canonical_holds) for _ in range(num_games)]
    for game, child in zip(games, np.random.SeedSequence(seed).spawn(num_games), strict=True):
        game.reset(np.random.default_rng(child))
    active = list(games)
    while active:
        observations = np.stack([encode_seat(g) for g in active])
        masks = np.stack([g.legal_action_mask() for g in active])
        for game, action in zip(active, policy.act_batch(observations, masks), strict=True):
            game.step(int(action))
        active = [g for g in active if not g.over]
    return np.array([g.players[0].total for g in games], dtype=np.int64)
