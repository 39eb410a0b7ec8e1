"""Scoring rules against the rulebooks: table-driven cases, every joker branch of every preset,
and an exhaustive comparison with an independent scorer written here from the rulebook."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest

from yahtzee_env.game.dice import DICE, NUM_ROLLS, roll_index
from yahtzee_env.game.engine import IllegalActionError, Scorecard
from yahtzee_env.game.rules import (
    BOX_NAMES,
    NUM_BOXES,
    NUM_UPPER,
    POINTS_JOKER,
    POINTS_NATURAL,
    PRESETS,
    YAHTZEE_0,
    YAHTZEE_50,
    YAHTZEE_OPEN,
    Box,
    RuleSet,
)

UPPER = list(range(NUM_UPPER))
LOWER = list(range(NUM_UPPER, NUM_BOXES))


# ------------------------------------------------------------------ independent scorer
def rulebook_score(dice: list[int], box: int) -> int:
    """What ``dice`` score in ``box``, straight from the rulebook (no joker rule)."""
    counts = Counter(dice)
    total = sum(dice)
    faces = set(dice)
    if box < NUM_UPPER:
        face = box + 1
        return face * counts[face]
    if box == Box.THREE_OF_A_KIND:
        return total if max(counts.values()) >= 3 else 0
    if box == Box.FOUR_OF_A_KIND:
        return total if max(counts.values()) >= 4 else 0
    if box == Box.FULL_HOUSE:
        return 25 if sorted(counts.values()) == [2, 3] else 0
    if box == Box.SMALL_STRAIGHT:
        runs = ({1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6})
        return 30 if any(run <= faces for run in runs) else 0
    if box == Box.LARGE_STRAIGHT:
        return 40 if faces in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) else 0
    if box == Box.YAHTZEE:
        return 50 if len(faces) == 1 else 0
    return total  # chance


def rulebook_joker_score(dice: list[int], box: int) -> int:
    """Joker values: a Yahtzee used as a joker fills the lower boxes at full value."""
    if len(set(dice)) == 1:
        joker = {Box.FULL_HOUSE: 25, Box.SMALL_STRAIGHT: 30, Box.LARGE_STRAIGHT: 40}
        if box in joker:
            return joker[box]
    return rulebook_score(dice, box)


def rulebook_options(
    dice: list[int], filled: set[int], yahtzee_box: int | None, rules: RuleSet
) -> tuple[dict[int, int], int]:
    """({legal box: points}, Yahtzee bonus) of placing ``dice``, from the rulebook text.

    ``yahtzee_box`` is None while the yahtzee box is open, else the points it holds.
    """
    is_yahtzee = len(set(dice)) == 1
    open_boxes = [b for b in range(NUM_BOXES) if b not in filled]
    if rules.upper_first and not set(UPPER) <= filled:
        open_boxes = [b for b in open_boxes if b < NUM_UPPER]
    bonus = 0
    if is_yahtzee and yahtzee_box == 50 and rules.yahtzee_bonus:
        bonus = rules.yahtzee_bonus_value
    if not is_yahtzee or yahtzee_box is None or rules.joker == "none":
        return {b: rulebook_score(dice, b) for b in open_boxes}, bonus
    own = dice[0] - 1
    if rules.joker == "free":
        joker = own in filled  # joker values only once the face's upper box is filled
        score = rulebook_joker_score if joker else rulebook_score
        return {b: score(dice, b) for b in open_boxes}, bonus
    # forced: own upper box if open; else an open lower box at joker value; else 0 upper.
    if own in open_boxes:
        return {own: rulebook_score(dice, own)}, bonus
    lower = [b for b in open_boxes if b >= NUM_UPPER]
    if lower:
        return {b: rulebook_joker_score(dice, b) for b in lower}, bonus
    return {b: rulebook_score(dice, b) for b in open_boxes}, bonus


def filled_mask(boxes) -> int:
    mask = 0
    for b in boxes:
        mask |= 1 << b
    return mask


def options(rules: RuleSet, dice, filled_boxes=(), yahtzee_state=YAHTZEE_OPEN):
    """{legal box: points} and the bonus from the package's tables."""
    roll = roll_index(dice)
    legal, points = rules.tables.options(roll, filled_mask(filled_boxes), yahtzee_state)
    bonus = rules.tables.yahtzee_bonus(roll, yahtzee_state)
    return {int(b): int(points[b]) for b in np.flatnonzero(legal)}, bonus


OFFICIAL = PRESETS["official"]


# ------------------------------------------------------------------ rulebook cases
@pytest.mark.parametrize(
    ("dice", "expected"),
    [
        # the rulebook's worked example: 3,3,3,5,5
        (
            [3, 3, 3, 5, 5],
            {"threes": 9, "fives": 10, "three_of_a_kind": 19, "full_house": 25, "chance": 19},
        ),
        ([1, 2, 3, 4, 5], {"large_straight": 40, "small_straight": 30, "chance": 15, "aces": 1}),
        ([2, 3, 4, 5, 6], {"large_straight": 40, "small_straight": 30, "sixes": 6}),
        ([2, 3, 4, 5, 3], {"small_straight": 30, "large_straight": 0, "threes": 6}),
        ([1, 1, 2, 3, 4], {"small_straight": 30, "large_straight": 0, "aces": 2}),
        ([3, 4, 5, 6, 6], {"small_straight": 30, "large_straight": 0, "sixes": 12}),
        ([1, 2, 3, 5, 6], {"small_straight": 0, "large_straight": 0, "chance": 17}),
        ([3, 3, 3, 4, 6], {"three_of_a_kind": 19, "four_of_a_kind": 0, "full_house": 0}),
        ([5, 5, 5, 5, 1], {"four_of_a_kind": 21, "three_of_a_kind": 21, "fives": 20}),
        ([5, 5, 4, 4, 5], {"full_house": 25, "fives": 15, "fours": 8}),
        ([3, 3, 3, 3, 3], {"yahtzee": 50, "full_house": 0, "four_of_a_kind": 15, "threes": 15}),
        ([6, 6, 6, 6, 6], {"yahtzee": 50, "sixes": 30, "chance": 30, "large_straight": 0}),
        ([3, 3, 2, 5, 1], {"threes": 6, "twos": 2, "fives": 5, "aces": 1, "fours": 0}),
    ],
)
def test_rulebook_examples(dice, expected):
    got, bonus = options(OFFICIAL, dice)
    assert bonus == 0
    assert set(got) == set(range(NUM_BOXES))  # empty scorecard: every box is open
    for name, points in expected.items():
        assert got[BOX_NAMES.index(name)] == points, name


def test_box_order_and_names():
    assert [b.name.lower() for b in Box] == list(BOX_NAMES)
    assert len(BOX_NAMES) == NUM_BOXES == 13


# ------------------------------------------------------------------ bonuses through Scorecard
def place_all(card: Scorecard, placements) -> list[int]:
    return [card.place(BOX_NAMES.index(name), roll_index(dice)) for name, dice in placements]


def test_second_yahtzee_with_50_earns_100_and_follows_joker_rule():
    card = Scorecard(OFFICIAL)
    gains = place_all(card, [("yahtzee", [4] * 5)])
    assert gains == [50] and card.yahtzee_state == YAHTZEE_50
    # Second Yahtzee of fours: the fours box is open, so the forced joker rule puts it there.
    legal, _ = card.options(roll_index([4] * 5))
    assert np.flatnonzero(legal).tolist() == [Box.FOURS]
    with pytest.raises(IllegalActionError, match="joker rule"):
        card.place(Box.CHANCE, roll_index([4] * 5))
    assert card.place(Box.FOURS, roll_index([4] * 5)) == 20 + 100
    # Third Yahtzee of fours: fours filled, so any open lower box at joker value.
    assert card.place(Box.LARGE_STRAIGHT, roll_index([4] * 5)) == 40 + 100
    assert card.yahtzee_bonus == 200
    assert card.total == 50 + 20 + 40 + 200


def test_yahtzee_box_scratched_gives_no_bonus():
    card = Scorecard(OFFICIAL)
    assert place_all(card, [("yahtzee", [1, 2, 3, 4, 6])]) == [0]
    assert card.yahtzee_state == YAHTZEE_0
    assert card.place(Box.SIXES, roll_index([6] * 5)) == 30  # own upper box, no bonus
    assert card.place(Box.FULL_HOUSE, roll_index([6] * 5)) == 25  # joker still applies
    assert card.yahtzee_bonus == 0


def test_upper_62_earns_no_bonus_and_63_does():
    card = Scorecard(OFFICIAL)
    for box, dice in enumerate([[1, 1, 2, 3, 4], [2, 2, 2, 1, 3], [3, 3, 3, 1, 2],
                                [4, 4, 4, 1, 2], [5, 5, 5, 1, 2]]):  # fmt: skip
        card.place(box, roll_index(dice))
    assert card.upper_total == 44  # two aces instead of three
    assert card.place(Box.SIXES, roll_index([6, 6, 6, 1, 2])) == 18  # 62: no bonus
    assert card.upper_total == 62 and card.upper_bonus == 0
    card = Scorecard(OFFICIAL)  # three of each face: 3 + 6 + 9 + 12 + 15 + 18 = 63
    for box, dice in enumerate([[1, 1, 1, 2, 3], [2, 2, 2, 1, 3], [3, 3, 3, 1, 2],
                                [4, 4, 4, 1, 2], [5, 5, 5, 1, 2]]):  # fmt: skip
        card.place(box, roll_index(dice))
    assert card.place(Box.SIXES, roll_index([6, 6, 6, 1, 2])) == 18 + 35  # exactly 63
    assert card.upper_total == 63 and card.upper_bonus == 35 and card.total == 63 + 35


# ------------------------------------------------------------------ joker branches
FIVE_FOURS = [4, 4, 4, 4, 4]
FOURS = Box.FOURS


@pytest.mark.parametrize("preset", ["official", "upper-first"])
@pytest.mark.parametrize("yahtzee_state", [YAHTZEE_50, YAHTZEE_0])
def test_forced_joker_branches(preset, yahtzee_state):
    rules = PRESETS[preset]
    bonus = 100 if yahtzee_state == YAHTZEE_50 else 0
    y = Box.YAHTZEE
    # 1. own upper box open: only it, at its natural value.
    got, got_bonus = options(rules, FIVE_FOURS, [y, Box.ACES], yahtzee_state)
    assert got == {FOURS: 20} and got_bonus == bonus
    if preset == "official":
        # 2. own upper box filled: only open lower boxes, at joker values.
        got, _ = options(rules, FIVE_FOURS, [y, FOURS], yahtzee_state)
        assert got == {
            Box.THREE_OF_A_KIND: 20,
            Box.FOUR_OF_A_KIND: 20,
            Box.FULL_HOUSE: 25,
            Box.SMALL_STRAIGHT: 30,
            Box.LARGE_STRAIGHT: 40,
            Box.CHANCE: 20,
        }
    else:
        # upper-first: the lower section is closed until the upper one is full, so a forced
        # joker with its own upper box filled goes (for 0) into another open upper box.
        got, _ = options(rules, FIVE_FOURS, [y, FOURS], yahtzee_state)
        assert got == {b: 0 for b in UPPER if b != FOURS}
        got, _ = options(rules, FIVE_FOURS, [y, *UPPER], yahtzee_state)
        assert got[Box.FULL_HOUSE] == 25 and got[Box.LARGE_STRAIGHT] == 40
        assert set(got) == set(LOWER) - {Box.YAHTZEE}
    # 3. own upper box and every lower box filled: 0 in an open upper box.
    got, got_bonus = options(rules, FIVE_FOURS, [*LOWER, FOURS], yahtzee_state)
    assert got == {b: 0 for b in UPPER if b != FOURS} and got_bonus == bonus


@pytest.mark.parametrize("yahtzee_state", [YAHTZEE_50, YAHTZEE_0])
def test_free_joker_branches(yahtzee_state):
    rules = PRESETS["free-joker"]
    # Own upper box open: any open box, natural values (full house 0).
    got, _ = options(rules, FIVE_FOURS, [Box.YAHTZEE], yahtzee_state)
    assert set(got) == set(range(NUM_BOXES)) - {Box.YAHTZEE}
    assert got[FOURS] == 20 and got[Box.FULL_HOUSE] == 0 and got[Box.LARGE_STRAIGHT] == 0
    assert got[Box.ACES] == 0 and got[Box.CHANCE] == 20
    # Own upper box filled: any open box, joker values in the lower section.
    got, bonus = options(rules, FIVE_FOURS, [Box.YAHTZEE, FOURS], yahtzee_state)
    assert set(got) == set(range(NUM_BOXES)) - {Box.YAHTZEE, FOURS}
    assert got[Box.FULL_HOUSE] == 25 and got[Box.SMALL_STRAIGHT] == 30
    assert got[Box.LARGE_STRAIGHT] == 40 and got[Box.ACES] == 0
    assert bonus == (100 if yahtzee_state == YAHTZEE_50 else 0)


@pytest.mark.parametrize("preset", ["no-joker", "no-joker-no-bonus"])
def test_no_joker_branches(preset):
    rules = PRESETS[preset]
    for filled in ([Box.YAHTZEE], [Box.YAHTZEE, FOURS], [Box.YAHTZEE, *UPPER]):
        got, bonus = options(rules, FIVE_FOURS, filled, YAHTZEE_50)
        assert set(got) == set(range(NUM_BOXES)) - set(filled)
        assert got.get(Box.FULL_HOUSE) == 0 and got.get(Box.SMALL_STRAIGHT) == 0
        assert got.get(Box.LARGE_STRAIGHT) == 0 and got.get(Box.CHANCE) == 20
        assert bonus == (100 if preset == "no-joker" else 0)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_yahtzee_box_open_means_no_joker(preset):
    rules = PRESETS[preset]
    got, bonus = options(rules, FIVE_FOURS, [FOURS], YAHTZEE_OPEN)
    assert bonus == 0
    assert got.get(Box.FULL_HOUSE, 0) == 0
    if not rules.upper_first:
        assert got[Box.YAHTZEE] == 50


def test_upper_first_closes_lower_section_until_upper_is_full():
    rules = PRESETS["upper-first"]
    got, _ = options(rules, [3, 3, 3, 5, 5])
    assert set(got) == set(UPPER)
    got, _ = options(rules, [3, 3, 3, 5, 5], UPPER[:5])
    assert set(got) == {Box.SIXES}
    got, _ = options(rules, [3, 3, 3, 5, 5], UPPER)
    assert set(got) == set(LOWER) and got[Box.FULL_HOUSE] == 25


def test_why_illegal_names_the_reason_and_is_none_when_legal():
    roll = roll_index([3, 3, 3, 5, 5])
    card = Scorecard(PRESETS["upper-first"])
    assert card.why_illegal(Box.FULL_HOUSE, roll) == (
        "box 'full_house' is closed until the upper section is full; open: aces, twos, threes, "
        "fours, fives, sixes"
    )
    assert card.why_illegal(Box.THREES, roll) is None
    card.place(Box.THREES, roll)
    assert card.why_illegal(Box.THREES, roll) == "box 'threes' is already filled (with 9)"


# ------------------------------------------------------------------ exhaustive checks
def test_every_roll_and_box_natural_and_joker_values():
    points = OFFICIAL.tables.points
    for roll in range(NUM_ROLLS):
        dice = DICE[roll].tolist()
        assert dice == sorted(dice)
        for box in range(NUM_BOXES):
            assert points[roll, POINTS_NATURAL, box] == rulebook_score(dice, box), (dice, box)
            assert points[roll, POINTS_JOKER, box] == rulebook_joker_score(dice, box), (dice, box)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_options_match_rulebook_on_random_states(preset):
    """Legal boxes, points and bonus for every roll on random scorecards, all joker states."""
    rules = PRESETS[preset]
    rng = np.random.default_rng(len(preset))
    yahtzee_rolls = [r for r in range(NUM_ROLLS) if len(set(DICE[r].tolist())) == 1]
    for _ in range(150):
        filled = {b for b in range(NUM_BOXES) if rng.random() < rng.random()}
        if len(filled) == NUM_BOXES:
            filled.discard(int(rng.integers(NUM_BOXES)))
        states = [YAHTZEE_OPEN]
        if Box.YAHTZEE in filled:
            states = [YAHTZEE_50, YAHTZEE_0]
        rolls = [*yahtzee_rolls, *rng.integers(0, NUM_ROLLS, 6).tolist()]
        for state in states:
            held = {YAHTZEE_OPEN: None, YAHTZEE_50: 50, YAHTZEE_0: 0}[state]
            for roll in rolls:
                dice = DICE[roll].tolist()
                want = rulebook_options(dice, filled, held, rules)
                assert options(rules, dice, sorted(filled), state) == want, (dice, filled, state)


# ------------------------------------------------------------------ RuleSet
@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"joker": "sometimes"}, "joker"),
        ({"joker": 1}, "joker"),
        ({"yahtzee_bonus": 1}, "yahtzee_bonus"),
        ({"yahtzee_bonus_value": 0}, "yahtzee_bonus_value"),
        ({"yahtzee_bonus_value": 1.5}, "yahtzee_bonus_value"),
        ({"upper_first": "yes"}, "upper_first"),
        ({"upper_bonus_threshold": 0}, "upper_bonus_threshold"),
        ({"upper_bonus_threshold": 106}, "upper_bonus_threshold"),
        ({"upper_bonus_threshold": True}, "upper_bonus_threshold"),
        ({"upper_bonus_value": -1}, "upper_bonus_value"),
        ({"yahtzee_bonus": False, "yahtzee_bonus_value": 50}, "yahtzee_bonus_value"),
        ({"upper_bonus_value": 1001}, "upper_bonus_value"),  # issue 8.14: overflowed int16
        ({"upper_bonus_value": 10**30}, "upper_bonus_value"),
        ({"yahtzee_bonus_value": 30_000}, "yahtzee_bonus_value"),
    ],
)
def test_ruleset_validation_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=rf"RuleSet\.{field}\b"):
        RuleSet(**kwargs)


def test_ruleset_presets_and_specs():
    assert RuleSet.from_spec(None) == RuleSet() == PRESETS["official"]
    assert RuleSet.from_spec("free-joker").joker == "free"
    custom = RuleSet(upper_bonus_threshold=60)
    assert RuleSet.from_spec(custom) is custom
    assert custom.name == "upper_bonus_threshold=60"
    for name, preset in PRESETS.items():
        assert preset.name == name
        assert RuleSet(**preset.to_dict()) == preset
    with pytest.raises(ValueError, match="presets are: official"):
        RuleSet.from_spec("house-rules")
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRESETS["official"].joker = "free"  # type: ignore[misc]


def test_custom_upper_bonus_rules():
    rules = RuleSet(upper_bonus_threshold=10, upper_bonus_value=7)
    card = Scorecard(rules)
    assert card.place(Box.SIXES, roll_index([6, 6, 1, 2, 3])) == 12 + 7
    assert card.upper_bonus == 7 and card.total == 19


def test_the_largest_bonuses_allowed_fit_int16():
    """Issue 8.14: with the largest allowed bonuses, the best game there is (thirteen
    Yahtzees: each face in its upper box, sixes in the lower boxes at joker values) totals
    `MAX_TOTAL`, which int16 holds (the vector env's scorecards and totals)."""
    from yahtzee_env.game.rules import MAX_BONUS_VALUE, MAX_TOTAL

    rules = RuleSet(upper_bonus_value=MAX_BONUS_VALUE, yahtzee_bonus_value=MAX_BONUS_VALUE)
    card = Scorecard(rules)
    card.place(Box.YAHTZEE, roll_index([6] * 5))
    for face in range(1, 7):
        card.place(face - 1, roll_index([face] * 5))
    for box in range(6, 13):
        if box != Box.YAHTZEE:
            card.place(box, roll_index([6] * 5))
    assert card.complete
    assert card.yahtzee_bonus == 12 * MAX_BONUS_VALUE and card.upper_bonus == MAX_BONUS_VALUE
    assert card.total == MAX_TOTAL <= np.iinfo(np.int16).max


@pytest.mark.parametrize("preset", ["official", "no-joker-no-bonus"])
def test_fill_is_one_function_for_one_card_and_for_arrays(preset):
    """`BoxScoring.fill` on Python ints (the engine) equals it on arrays (the vector env, the
    solver), for every roll, box, points context and yahtzee state, around the threshold."""
    rules = PRESETS[preset]
    tables = rules.tables
    t = rules.upper_bonus_threshold
    grid = np.stack(
        np.meshgrid(
            np.arange(NUM_ROLLS),
            np.arange(NUM_BOXES),
            [0, 1],
            [0, 1, 2],
            [0, t - 1, t, t + 5],
            indexing="ij",
        ),
        axis=-1,
    ).reshape(-1, 5)
    roll, box, values, ystate, upper = grid.T
    batch = tables.fill(roll, box, values, upper, ystate)
    rng = np.random.default_rng(0)
    for row in rng.choice(len(grid), size=3000, replace=False):
        roll, box, values, ystate, upper = (int(v) for v in grid[row])
        one = tables.fill(roll, box, values, upper, ystate)
        assert tuple(int(v) for v in one) == tuple(int(col[row]) for col in batch)
        points = int(tables.points[roll, values, box])
        assert int(one.points) == points
        bonus = tables.yahtzee_bonus(roll, ystate)
        assert int(one.bonus) == bonus
        gain = rules.upper_bonus_value if box < NUM_UPPER and upper < t <= upper + points else 0
        assert int(one.reward) == points + bonus + gain
        if box == Box.YAHTZEE:
            assert int(one.yahtzee_state) == (YAHTZEE_50 if points else YAHTZEE_0)
        else:
            assert int(one.yahtzee_state) == ystate
        assert int(one.upper_total) == upper + (points if box < NUM_UPPER else 0)
