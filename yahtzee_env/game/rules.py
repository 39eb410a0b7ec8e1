"""The scorecard and the rules: box order, rule variants (`RuleSet`) and scoring tables.

This module is the one place where a box is scored. Scores are looked up in tables built
once per rule set over the 252 sorted rolls (`yahtzee_env.game.dice`), so the engine, the vector
env and the solver all score a roll the same way, with no branches over dice at run time.

Boxes, in the order used everywhere (box ``b`` is action ``32 + b``)::

    0 aces   1 twos   2 threes   3 fours   4 fives   5 sixes            (upper section)
    6 three_of_a_kind  7 four_of_a_kind  8 full_house  9 small_straight
    10 large_straight  11 yahtzee  12 chance                            (lower section)

A set of filled boxes is a 13-bit integer ``filled`` (bit ``b`` set: box ``b`` is filled).
The yahtzee box has three states (``YAHTZEE_OPEN``, ``YAHTZEE_50``, ``YAHTZEE_0``) because the
Yahtzee bonus and the joker rules depend on what it holds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from functools import cache
from typing import Any, Literal, NamedTuple

import numpy as np

from yahtzee_env.game.dice import COUNTS, DICE, NUM_ROLLS

BOX_NAMES: tuple[str, ...] = (
    "aces",
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "three_of_a_kind",
    "four_of_a_kind",
    "full_house",
    "small_straight",
    "large_straight",
    "yahtzee",
    "chance",
)


class Box(IntEnum):
    ACES = 0
    TWOS = 1
    THREES = 2
    FOURS = 3
    FIVES = 4
    SIXES = 5
    THREE_OF_A_KIND = 6
    FOUR_OF_A_KIND = 7
    FULL_HOUSE = 8
    SMALL_STRAIGHT = 9
    LARGE_STRAIGHT = 10
    YAHTZEE = 11
    CHANCE = 12


NUM_BOXES = 13
NUM_UPPER = 6
UPPER_MASK = (1 << NUM_UPPER) - 1  # bits of the six upper boxes
ALL_FILLED = (1 << NUM_BOXES) - 1
NUM_FILLED_MASKS = 1 << NUM_BOXES  # 8192
MAX_UPPER_TOTAL = 5 * sum(range(1, 7))  # 105: five of each face in every upper box

YAHTZEE_OPEN, YAHTZEE_50, YAHTZEE_0 = 0, 1, 2

UPPER_BONUS_THRESHOLD = 63  # the official rules' upper-bonus threshold (`RuleSet`'s default)

FULL_HOUSE_POINTS = 25
SMALL_STRAIGHT_POINTS = 30
LARGE_STRAIGHT_POINTS = 40
YAHTZEE_POINTS = 50

JokerRule = Literal["forced", "free", "none"]


# --------------------------------------------------------------------------- natural scores
def _natural_scores() -> np.ndarray:
    """``[252, 13]`` points each roll scores in each box, no joker rule applied."""
    counts = COUNTS.astype(np.int16)
    total = DICE.astype(np.int16).sum(axis=1)
    most = counts.max(axis=1)
    present = counts > 0
    runs4 = [present[:, a : a + 4].all(axis=1) for a in range(3)]  # 1-4, 2-5, 3-6
    runs5 = [present[:, a : a + 5].all(axis=1) for a in range(2)]  # 1-5, 2-6
    scores = np.zeros((NUM_ROLLS, NUM_BOXES), dtype=np.int16)
    scores[:, :NUM_UPPER] = counts * np.arange(1, 7, dtype=np.int16)
    scores[:, Box.THREE_OF_A_KIND] = np.where(most >= 3, total, 0)
    scores[:, Box.FOUR_OF_A_KIND] = np.where(most >= 4, total, 0)
    ranked = np.sort(counts, axis=1)
    full_house = (ranked[:, -1] == 3) & (ranked[:, -2] == 2)  # three of one, two of another
    scores[:, Box.FULL_HOUSE] = np.where(full_house, FULL_HOUSE_POINTS, 0)
    scores[:, Box.SMALL_STRAIGHT] = np.where(np.any(runs4, axis=0), SMALL_STRAIGHT_POINTS, 0)
    scores[:, Box.LARGE_STRAIGHT] = np.where(np.any(runs5, axis=0), LARGE_STRAIGHT_POINTS, 0)
    scores[:, Box.YAHTZEE] = np.where(most == 5, YAHTZEE_POINTS, 0)
    scores[:, Box.CHANCE] = total
    return scores


NATURAL_SCORES = _natural_scores()
NATURAL_SCORES.flags.writeable = False
IS_YAHTZEE = COUNTS.max(axis=1) == 5
YAHTZEE_FACE = np.where(IS_YAHTZEE, DICE[:, 0] - 1, -1).astype(np.int8)  # 0..5, or -1


# --------------------------------------------------------------------------- rule sets
# The bonus values are bounded so that every total fits the int16 scorecards of the vector
# env: at most 12 further Yahtzees (one per other turn) earn the Yahtzee bonus.
MAX_BONUS_VALUE = 1000
MAX_BOX_POINTS_TOTAL = int(NATURAL_SCORES.max(axis=0).sum())  # 340: every box at its best
MAX_TOTAL = MAX_BOX_POINTS_TOTAL + MAX_BONUS_VALUE + (NUM_BOXES - 1) * MAX_BONUS_VALUE
# 13,340 <= 32,767 (tests/test_rules.py checks it on a played card).


@dataclass(frozen=True)
class RuleSet:
    """Immutable, validated rule variant. Use a preset name with `RuleSet.from_spec`.

    Attributes:
        joker: what a Yahtzee rolled when the yahtzee box is already filled may do.
            ``"forced"`` (official): it must go in its face's upper box if open; else in any
            open lower box at full value (full house 25, straights 30/40, 3K/4K/chance the
            sum); else 0 in an open upper box. ``"free"``: it may go in any open box; joker
            values apply in the lower section only when its face's upper box is filled too.
            ``"none"``: five alike is only what it is (0 in full house and the straights).
        yahtzee_bonus: +``yahtzee_bonus_value`` for every further Yahtzee while the yahtzee
            box holds 50 (never when it holds 0).
        upper_first: the lower boxes stay closed until the six upper boxes are filled.
        upper_bonus_threshold, upper_bonus_value: the upper bonus (35 at 63 by default).
    """

    joker: JokerRule = "forced"
    yahtzee_bonus: bool = True
    yahtzee_bonus_value: int = 100
    upper_first: bool = False
    upper_bonus_threshold: int = UPPER_BONUS_THRESHOLD
    upper_bonus_value: int = 35

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            expected = {"joker": str, "yahtzee_bonus": bool, "upper_first": bool}.get(
                field.name, int
            )
            if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise ValueError(f"RuleSet.{field.name} must be {expected.__name__}, got {value!r}")
        if self.joker not in ("forced", "free", "none"):
            raise ValueError(
                f"RuleSet.joker must be 'forced', 'free' or 'none', got {self.joker!r}"
            )
        if not 1 <= self.upper_bonus_threshold <= MAX_UPPER_TOTAL:
            raise ValueError(
                f"RuleSet.upper_bonus_threshold must be in 1..{MAX_UPPER_TOTAL} "
                f"(the most the upper section can hold), got {self.upper_bonus_threshold}"
            )
        if not 0 <= self.upper_bonus_value <= MAX_BONUS_VALUE:
            raise ValueError(
                f"RuleSet.upper_bonus_value must be in 0..{MAX_BONUS_VALUE} (so that every "
                f"total fits int16), got {self.upper_bonus_value}"
            )
        if not 0 < self.yahtzee_bonus_value <= MAX_BONUS_VALUE:
            raise ValueError(
                f"RuleSet.yahtzee_bonus_value must be in 1..{MAX_BONUS_VALUE} (so that every "
                f"total fits int16), got {self.yahtzee_bonus_value}"
            )
        if not self.yahtzee_bonus and self.yahtzee_bonus_value != 100:
            raise ValueError(
                "RuleSet.yahtzee_bonus_value is set but RuleSet.yahtzee_bonus is False: "
                "a bonus value without the bonus is a contradiction"
            )

    # ----------------------------------------------------------------------- construction
    @classmethod
    def from_spec(cls, spec: str | RuleSet | None) -> RuleSet:
        """A `RuleSet` from a preset name (see `PRESETS`), a `RuleSet`, or None (official)."""
        if spec is None:
            return PRESETS["official"]
        if isinstance(spec, RuleSet):
            return spec
        if isinstance(spec, str) and spec in PRESETS:
            return PRESETS[spec]
        raise ValueError(f"unknown rules {spec!r}; presets are: {', '.join(PRESETS)}")

    @property
    def name(self) -> str:
        """The preset name if this is a preset, else a description of the fields."""
        for name, preset in PRESETS.items():
            if preset == self:
                return name
        return ",".join(
            f"{f.name}={getattr(self, f.name)}"
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != f.default
        )

    def upper_bonus(self, upper_total):
        """The upper bonus earned at ``upper_total`` (its value at or over the threshold, else
        0). Ints or arrays."""
        return (upper_total >= self.upper_bonus_threshold) * self.upper_bonus_value

    def upper_bonus_gain(self, before, after):
        """The upper bonus a fill earns: its value when the upper total goes from ``before``
        (under the threshold) to ``after`` (at or over it), else 0. Ints or arrays."""
        threshold = self.upper_bonus_threshold
        return ((before < threshold) & (after >= threshold)) * self.upper_bonus_value

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)

    # ----------------------------------------------------------------------- tables
    @property
    def tables(self) -> BoxScoring:
        """The scoring tables of these rules (built once per distinct rule set, shared)."""
        return _scoring_tables(self)


PRESETS: dict[str, RuleSet] = {
    "official": RuleSet(),
    "free-joker": RuleSet(joker="free"),
    "no-joker": RuleSet(joker="none"),
    "no-joker-no-bonus": RuleSet(joker="none", yahtzee_bonus=False),
    "upper-first": RuleSet(upper_first=True),
}


# --------------------------------------------------------------------------- scoring
# Points context: 0 natural scoring; 1 joker values (lower boxes at full value).
POINTS_NATURAL, POINTS_JOKER = 0, 1


class BoxScoring:
    """Legal boxes and points of every (roll, filled boxes, yahtzee-box state), as tables.

    ``legal[context, filled]`` is the bool[13] set of boxes that may be filled, where
    ``context`` is 0 for an ordinary roll and ``1 + face`` for a Yahtzee of that face rolled
    while the yahtzee box is filled (the joker situation; see `RuleSet.joker`).
    ``points[roll, joker_values]`` is what the roll scores in each box.
    """

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        filled = np.arange(NUM_FILLED_MASKS)[:, None]
        is_filled = ((filled >> np.arange(NUM_BOXES)) & 1).astype(bool)  # [8192, 13]
        is_open = ~is_filled
        upper_full = (filled[:, 0] & UPPER_MASK) == UPPER_MASK
        allowed = is_open.copy()
        if rules.upper_first:
            allowed[~upper_full, NUM_UPPER:] = False

        legal = np.zeros((7, NUM_FILLED_MASKS, NUM_BOXES), dtype=bool)
        legal[0] = allowed
        lower = np.zeros(NUM_BOXES, dtype=bool)
        lower[NUM_UPPER:] = True
        for face in range(6):
            if rules.joker == "forced":
                own_upper_open = is_open[:, face]
                lower_choices = allowed & lower
                any_lower = lower_choices.any(axis=1)
                forced = np.where(any_lower[:, None], lower_choices, allowed & ~lower)
                only_own = np.zeros(NUM_BOXES, dtype=bool)
                only_own[face] = True
                legal[1 + face] = np.where(own_upper_open[:, None], only_own, forced)
            else:  # "free" and "none": any allowed box
                legal[1 + face] = allowed
        self.legal = legal
        self.legal.flags.writeable = False

        points = np.repeat(NATURAL_SCORES[:, None, :], 2, axis=1).copy()  # [252, 2, 13]
        rows = np.flatnonzero(IS_YAHTZEE)
        points[rows, POINTS_JOKER, Box.FULL_HOUSE] = FULL_HOUSE_POINTS
        points[rows, POINTS_JOKER, Box.SMALL_STRAIGHT] = SMALL_STRAIGHT_POINTS
        points[rows, POINTS_JOKER, Box.LARGE_STRAIGHT] = LARGE_STRAIGHT_POINTS
        self.points = points
        self.points.flags.writeable = False
        self.bonus_value = rules.yahtzee_bonus_value if rules.yahtzee_bonus else 0
        self.next_yahtzee_state = np.array(  # [state, box, scored > 0]: `next_yahtzee_state`
            [
                [
                    [next_yahtzee_state(s, b, p) for p in (0, YAHTZEE_POINTS)]
                    for b in range(NUM_BOXES)
                ]
                for s in range(3)
            ],
            dtype=np.intp,
        )
        self.next_yahtzee_state.flags.writeable = False
        # `fill`'s flat lookups: points [(roll*2 + values)*13 + box] (int64: it adds totals),
        # is-Yahtzee [roll], next state [(state*13 + box)*2 + scored]. As arrays for arrays of
        # fills (flat indexing is several times faster than 3-d fancy indexing), as lists for
        # one fill (Python ints: numpy scalar arithmetic would cost microseconds a step).
        flat = (
            points.astype(np.int64).reshape(-1),
            IS_YAHTZEE,
            self.next_yahtzee_state.reshape(-1),
        )
        self._fill_lookups = {True: flat, False: tuple(a.tolist() for a in flat)}

    # Both forms below are the whole joker logic: which context and which points apply.
    def context(self, roll: int, filled: int, yahtzee_state: int) -> tuple[int, int]:
        """(legal-table context, points context) for one roll."""
        face = int(YAHTZEE_FACE[roll])
        if face < 0 or yahtzee_state == YAHTZEE_OPEN or self.rules.joker == "none":
            return 0, POINTS_NATURAL
        if self.rules.joker == "forced" or (filled >> face) & 1:
            return 1 + face, POINTS_JOKER
        return 1 + face, POINTS_NATURAL  # free joker, own upper box still open

    def context_batch(
        self, rolls: np.ndarray, filled: np.ndarray, yahtzee_state: np.ndarray, xp: Any = np
    ) -> tuple[np.ndarray, np.ndarray]:
        """`context` over arrays of rolls and states (any matching shapes). ``xp`` is the
        array library (numpy; ``jax.numpy`` for traced arrays: `yahtzee_env.jax`)."""
        face = xp.asarray(YAHTZEE_FACE)[rolls].astype(int)
        joker = (face >= 0) & (yahtzee_state != YAHTZEE_OPEN) & (self.rules.joker != "none")
        if self.rules.joker == "forced":
            values = joker
        else:
            values = joker & (((filled >> xp.maximum(face, 0)) & 1) == 1)
        return xp.where(joker, 1 + face, 0), values.astype(int)

    def options(self, roll: int, filled: int, yahtzee_state: int) -> tuple[np.ndarray, np.ndarray]:
        """(legal bool[13], points int16[13]) of placing ``roll``, bonus not included."""
        ctx, values = self.context(roll, filled, yahtzee_state)
        return self.legal[ctx, filled], self.points[roll, values]

    def flat_lookups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`fill`'s flat lookups as numpy arrays (points, is-Yahtzee, next yahtzee-box state),
        for another array library to convert once and pass back as ``lookups``."""
        return self._fill_lookups[True]

    def fill(self, roll, box, values, upper_total, yahtzee_state, *, lookups=None) -> Fill:
        """Fill ``box`` with ``roll``: the one place where a fill's outcome is put together.

        ``values`` is the points context (`context` / `context_batch`); ``upper_total`` and
        ``yahtzee_state`` are the scorecard's before the fill. Ints (the engine: one fill) or
        arrays of matching shapes (the vector env, the solver). Legality is the caller's: see
        ``legal``. The solver's fused inner loop (`exact.final_roll_values`) is held equal to
        this function by ``tests/test_solver.py``. ``lookups``: `flat_lookups` as another
        array library's arrays (the JAX env's), used instead of the numpy ones.
        """
        if lookups is not None:
            return self._fill(*lookups, roll, box, values, upper_total, yahtzee_state)
        arrays = (
            isinstance(roll, np.ndarray)
            or isinstance(box, np.ndarray)
            or isinstance(values, np.ndarray)
            or isinstance(upper_total, np.ndarray)
            or isinstance(yahtzee_state, np.ndarray)
        )
        return self._fill(
            *self._fill_lookups[arrays], roll, box, values, upper_total, yahtzee_state
        )

    def _fill(self, points_of, is_yahtzee, next_state, roll, box, values, upper_total,
              yahtzee_state) -> Fill:  # fmt: skip
        points = points_of[(roll * 2 + values) * NUM_BOXES + box]
        bonus = self._bonus(is_yahtzee, roll, yahtzee_state)
        after = upper_total + points * (box < NUM_UPPER)
        scored = points > 0
        return Fill(
            points,
            bonus,
            points + bonus + self.rules.upper_bonus_gain(upper_total, after),
            after,
            next_state[(yahtzee_state * NUM_BOXES + box) * 2 + scored],
        )

    def yahtzee_bonus(self, roll, yahtzee_state, *, lookups=None):
        """The bonus a roll earns wherever it is placed (0 unless a further Yahtzee). Ints or
        arrays of matching shapes, like `fill` (and its ``lookups``)."""
        if lookups is None:
            arrays = isinstance(roll, np.ndarray) or isinstance(yahtzee_state, np.ndarray)
            lookups = self._fill_lookups[arrays]
        return self._bonus(lookups[1], roll, yahtzee_state)

    def _bonus(self, is_yahtzee, roll, yahtzee_state):
        # The Yahtzee-bonus rule, once: `fill` and `yahtzee_bonus` pass their lookup.
        return (is_yahtzee[roll] & (yahtzee_state == YAHTZEE_50)) * self.bonus_value


class Fill(NamedTuple):
    """What filling a box does (`BoxScoring.fill`); ints or arrays, like its inputs."""

    points: Any  # the box's score
    bonus: Any  # the Yahtzee bonus earned (0 unless a further Yahtzee)
    reward: Any  # added to the total: points + Yahtzee bonus + upper bonus reached now
    upper_total: Any  # the upper-section total after the fill (uncapped)
    yahtzee_state: Any  # the yahtzee-box state after the fill


@cache
def _scoring_tables(rules: RuleSet) -> BoxScoring:
    return BoxScoring(rules)


def next_yahtzee_state(yahtzee_state: int, box: int, points: int) -> int:
    """The yahtzee-box state after filling ``box`` with ``points``."""
    if box != Box.YAHTZEE:
        return yahtzee_state
    return YAHTZEE_50 if points > 0 else YAHTZEE_0
