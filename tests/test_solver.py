"""The exact solver: published optimal scores, action values and regret, the cache, and a
brute-force cross-check of the within-turn recursion."""

from __future__ import annotations

import itertools
import os
from functools import cache

import numpy as np
import pytest

from yahtzee_env.game.dice import DICE, HOLD_TO_KEEP, KEEP_PROBS, NUM_ROLLS, roll_index
from yahtzee_env.game.engine import Scorecard, box_action
from yahtzee_env.game.rules import (
    ALL_FILLED,
    NUM_BOXES,
    NUM_UPPER,
    PRESETS,
    YAHTZEE_0,
    YAHTZEE_50,
    YAHTZEE_OPEN,
    Box,
    RuleSet,
    next_yahtzee_state,
)
from yahtzee_env.solver import exact as solver

# Published optimal expected final scores (solitaire, optimal play).
PUBLISHED = {
    "official": 254.5877,
    "free-joker": 254.5896,
    "no-joker": 253.9702,
    "no-joker-no-bonus": 245.8708,
}
TOLERANCE = 5e-4


@pytest.fixture(scope="module")
def progress_calls() -> list[tuple[int, int]]:
    return []


@pytest.fixture(scope="module")
def table(progress_calls) -> solver.OptimalValues:
    """The no-joker-no-bonus table, solved end to end (a few seconds)."""
    return solver.solve("no-joker-no-bonus", progress=lambda *a: progress_calls.append(a))


def sample_states(table: solver.OptimalValues, n: int, seed: int = 0):
    """``n`` random reachable turn-start states (not the full card) of ``table``."""
    reachable = np.argwhere(~np.isnan(table.table))
    reachable = reachable[reachable[:, 0] != ALL_FILLED]
    rows = np.random.default_rng(seed).choice(len(reachable), size=n, replace=False)
    return reachable[rows].T  # filled, upper, ystate


# --------------------------------------------------------------------------- published values
def test_no_joker_no_bonus_matches_published(table, progress_calls):
    assert abs(table.expected_score - PUBLISHED["no-joker-no-bonus"]) <= TOLERANCE
    assert table.value(0, 0, YAHTZEE_OPEN) == table.expected_score
    assert progress_calls == [(i, NUM_BOXES) for i in range(1, NUM_BOXES + 1)]


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["official", "free-joker", "no-joker"])
def test_presets_match_published(preset):
    assert abs(solver.solve(preset).expected_score - PUBLISHED[preset]) <= TOLERANCE


@pytest.mark.slow
def test_upper_first_is_solved_and_worse_than_official():
    value = solver.solve("upper-first").expected_score
    assert 150 < value < PUBLISHED["official"]


# --------------------------------------------------------------------------- table look-ups
def test_last_turn_chance_only(table):
    # Only chance open: the best expected sum of five dice with two re-rolls.
    value = table.value(ALL_FILLED & ~(1 << Box.CHANCE), 0, YAHTZEE_0)
    assert value == pytest.approx(23.33333, abs=1e-3)  # keep 5s and 6s, re-roll the rest


def test_raw_upper_total_is_capped(table):
    filled = 0b111111
    assert table.value(filled, 63, YAHTZEE_OPEN) == table.value(filled, 90, YAHTZEE_OPEN)


def test_invalid_states_raise(table):
    with pytest.raises(ValueError, match="yahtzee_state"):
        table.value(0, 0, YAHTZEE_50)  # yahtzee box open but "holds 50"
    with pytest.raises(ValueError, match="yahtzee_state"):
        table.value(1 << Box.YAHTZEE, 0, YAHTZEE_OPEN)
    with pytest.raises(ValueError, match="unreachable"):
        table.value(0, 5, YAHTZEE_OPEN)  # no upper box filled, yet a total of 5
    sixes_only = 1 << Box.SIXES
    with pytest.raises(ValueError, match="unreachable"):
        table.turn_values([sixes_only, sixes_only], [12, 13], YAHTZEE_OPEN)
    with pytest.raises(ValueError, match="unreachable"):
        table.box_values(sixes_only, 13, YAHTZEE_OPEN, 0)
    assert np.isnan(table.values(sixes_only, [12, 13], YAHTZEE_OPEN)).tolist() == [False, True]
    with pytest.raises(ValueError, match="full scorecard"):
        table.turn_values(ALL_FILLED, 0, YAHTZEE_50)


# --------------------------------------------------------------------------- actions
def test_action_values_agree_with_roll_values(table):
    filled, upper, ystate = sample_states(table, 300)
    turn = table.turn_values(filled, upper, ystate)
    np.testing.assert_allclose(turn.start_values, table.values(filled, upper, ystate), atol=2e-4)
    rolls = np.random.default_rng(1).integers(0, NUM_ROLLS, size=filled.size)
    roll_values = turn.roll_values
    for rolls_left in range(3):
        values = turn.action_values(rolls, rolls_left)
        assert values.shape == (filled.size, 45)
        np.testing.assert_array_equal(
            values.max(axis=1), roll_values[np.arange(filled.size), rolls_left, rolls]
        )
        assert np.isneginf(values[:, :32]).all() == (rolls_left == 0)
        best = turn.best_action(rolls, rolls_left)
        assert (solver.regret_of(values, best) == 0).all()
        if rolls_left == 1:  # keeping all five is worth exactly the best box: score instead
            assert (best != 31).all()


def test_scalar_api_and_regret_of_optimal_action_is_zero(table):
    roll = roll_index([1, 1, 2, 3, 5])
    values = table.action_values(0, 0, YAHTZEE_OPEN, roll, 2)
    assert values.shape == (45,)
    best = table.best_action(0, 0, YAHTZEE_OPEN, roll, 2)
    assert isinstance(best, int) and values[best] == values.max()
    assert table.regret(0, 0, YAHTZEE_OPEN, roll, 2, best) == 0.0
    # Scoring 12 in chance on the first roll of the game is a blunder.
    chance = box_action(Box.CHANCE)
    assert table.regret(0, 0, YAHTZEE_OPEN, roll, 2, chance) > 5.0
    assert table.regret(0, 0, YAHTZEE_OPEN, roll, 0, chance) > 0.0
    assert table.regret(0, 0, YAHTZEE_OPEN, roll, 0, 3) == np.inf  # no re-roll left
    # scalars broadcast against arrays
    several = table.action_values(0, 0, YAHTZEE_OPEN, [roll, roll_index([6] * 5)], 2)
    assert several.shape == (2, 45)
    np.testing.assert_array_equal(several[0], values)
    assert table.best_action(0, 0, YAHTZEE_OPEN, [roll, roll], [2, 0]).shape == (2,)


def test_hold_values_are_keep_expectations(table):
    # A hold is worth the mean, over the re-rolled dice, of the value one stage later.
    filled, upper, ystate = sample_states(table, 20, seed=2)
    turn = table.turn_values(filled, upper, ystate)
    roll_values = turn.roll_values
    rolls = np.random.default_rng(3).integers(0, NUM_ROLLS, size=filled.size)
    for rolls_left in (1, 2):
        values = turn.action_values(rolls, rolls_left)
        keeps = HOLD_TO_KEEP[rolls]  # [N, 32]
        expected = np.einsum("nhr,nr->nh", KEEP_PROBS[keeps], roll_values[:, rolls_left - 1])
        np.testing.assert_allclose(values[:, :32], expected, atol=1e-4)


def test_unique_arrays_and_box_values_give_the_action_values(table):
    """The layout `yahtzee_env.solver.oracle` relies on: keep values by `KEEP_COUNTS` index."""
    filled, upper, ystate = sample_states(table, 50, seed=6)
    filled = np.concatenate([filled, filled[:10]])  # repeated states are solved once
    upper, ystate = np.concatenate([upper, upper[:10]]), np.concatenate([ystate, ystate[:10]])
    turn = table.turn_values(filled, upper, ystate)
    assert turn.unique_keep_values.shape == (50, 2, 462)
    np.testing.assert_array_equal(turn.unique_roll_values[turn.inverse], turn.roll_values)
    rolls = np.random.default_rng(7).integers(0, NUM_ROLLS, size=filled.size)
    values = turn.action_values(rolls, 2)
    keeps = turn.unique_keep_values[turn.inverse]  # [N, 2, 462]
    np.testing.assert_array_equal(
        values[:, :32], keeps[np.arange(filled.size)[:, None], 1, HOLD_TO_KEEP[rolls]]
    )
    np.testing.assert_array_equal(values[:, 32:], table.box_values(filled, upper, ystate, rolls))
    assert table.box_values(0, 0, YAHTZEE_OPEN, rolls[0]).shape == (13,)


def test_box_values_match_the_engine():
    """Reward of a box action = what `Scorecard.place` adds; plus the next state's value."""
    rules = PRESETS["official"]
    rng = np.random.default_rng(4)
    fake = solver.OptimalValues(rules, rng.random((8192, 64, 3)).astype(np.float32) * 100)
    checked = 0
    for _ in range(400):
        filled = int(rng.integers(0, ALL_FILLED))
        ystate = int(rng.integers(1, 3)) if filled >> Box.YAHTZEE & 1 else YAHTZEE_OPEN
        upper = int(rng.integers(0, 80))
        face = int(rng.integers(1, 7))  # half the rolls are Yahtzees: joker and bonus cases
        roll = roll_index([face] * 5) if rng.random() < 0.5 else int(rng.integers(NUM_ROLLS))
        card = Scorecard(rules, filled=filled, upper_total=upper, yahtzee_state=ystate)
        card.scores = [0 if filled >> b & 1 else None for b in range(NUM_BOXES)]
        legal, _ = card.options(roll)
        values = fake._model.box_values(
            fake.table,
            np.array([roll]),
            np.array([filled]),
            np.array([min(upper, 63)]),
            np.array([ystate]),
        )[0]
        assert (np.isfinite(values) == legal).all()
        for box in np.flatnonzero(legal):
            trial = Scorecard(rules, filled=filled, upper_total=upper, yahtzee_state=ystate)
            trial.scores = list(card.scores)
            gained = trial.place(int(box), roll)
            nxt = fake.table[trial.filled, min(trial.upper_total, 63), trial.yahtzee_state]
            assert values[box] == pytest.approx(gained + nxt, abs=1e-4)
            checked += 1
    assert checked > 500


@pytest.mark.parametrize("preset", list(PRESETS))
def test_fused_final_roll_values_equal_box_fills_over_every_card(preset):
    """`final_roll_values` fuses `BoxScoring.fill` per point value; `box_values` calls it.

    Every set of filled boxes with every yahtzee-box state it allows, each at two upper
    totals (one drawn near the threshold, where the bonus is won or lost, one anywhere),
    every roll: the two agree bit for bit."""
    rules = PRESETS[preset]
    threshold = rules.upper_bonus_threshold
    rng = np.random.default_rng(6)
    table = (rng.random((8192, threshold + 1, 3)) * 200).astype(np.float32)
    model = solver._TurnModel(rules)
    masks = np.arange(ALL_FILLED)  # a full card has no fill left
    has_y = (masks >> Box.YAHTZEE & 1).astype(bool)
    filled = np.concatenate([masks[~has_y], masks[has_y], masks[has_y]])
    ystate = np.concatenate(
        [np.full((~has_y).sum(), YAHTZEE_OPEN), np.full(has_y.sum(), 1), np.full(has_y.sum(), 2)]
    )
    filled, ystate = np.tile(filled, 2), np.tile(ystate, 2)
    upper = np.concatenate(
        [
            rng.integers(max(threshold - 30, 0), threshold + 1, size=filled.size // 2),
            rng.integers(0, threshold + 1, size=filled.size // 2),
        ]
    )
    for chunk in np.array_split(np.arange(filled.size), 16):
        f, u, y = filled[chunk], upper[chunk], ystate[chunk]
        fast = model.final_roll_values(table, f, u, y)[solver._ROLL_RANK]
        general = model.box_values(
            table,
            np.repeat(np.arange(NUM_ROLLS), f.size),
            np.tile(f, NUM_ROLLS),
            np.tile(u, NUM_ROLLS),
            np.tile(y, NUM_ROLLS),
        ).max(axis=1)
        np.testing.assert_array_equal(fast, general.reshape(NUM_ROLLS, f.size))


# --------------------------------------------------------------------------- brute force
def brute_force_turn(rules: RuleSet, filled: int, upper: int, ystate: int, next_value):
    """Values of one turn by plain recursion over dice tuples, independent of the solver.

    ``next_value(filled, upper, ystate)`` gives turn-start values of the next states.
    Returns (value before the first roll, {rolls_left: {sorted dice: value}}).
    """
    tables = rules.tables
    index = {tuple(int(d) for d in dice): i for i, dice in enumerate(DICE)}

    def place(dice: tuple[int, ...]) -> float:
        roll = index[dice]
        legal, points = tables.options(roll, filled, ystate)
        best = -np.inf
        for box in np.flatnonzero(legal):
            gained = int(points[box]) + tables.yahtzee_bonus(roll, ystate)
            new_upper = upper
            if box < NUM_UPPER:
                new_upper = upper + int(points[box])
                if upper < rules.upper_bonus_threshold <= new_upper:
                    gained += rules.upper_bonus_value
            new_y = next_yahtzee_state(ystate, int(box), int(points[box]))
            best = max(best, gained + next_value(filled | 1 << int(box), new_upper, new_y))
        return best

    values = {0: {dice: place(dice) for dice in index}}

    for rolls_left in (1, 2):
        below = values[rolls_left - 1]

        @cache
        def keep(kept: tuple[int, ...], below=below) -> float:
            outcomes = itertools.product(range(1, 7), repeat=5 - len(kept))
            total = [below[tuple(sorted(kept + o))] for o in outcomes]
            return sum(total) / len(total)

        values[rolls_left] = {
            dice: max(keep(tuple(dice[i] for i in range(5) if hold >> i & 1)) for hold in range(32))
            for dice in index
        }
    first = [values[2][tuple(sorted(o))] for o in itertools.product(range(1, 7), repeat=5)]
    return sum(first) / len(first), values


@pytest.mark.parametrize(
    ("preset", "open_boxes", "upper", "ystate"),
    [
        # fours and the yahtzee box open; 12 in fours reaches the upper bonus
        ("official", (Box.FOURS, Box.YAHTZEE), 51, YAHTZEE_OPEN),
        # full house and sixes open, yahtzee box holds 50: joker and Yahtzee bonus in play
        ("official", (Box.FULL_HOUSE, Box.SIXES), 45, YAHTZEE_50),
        ("free-joker", (Box.FULL_HOUSE, Box.SIXES), 45, YAHTZEE_50),
        ("upper-first", (Box.SIXES, Box.LARGE_STRAIGHT), 45, YAHTZEE_0),
    ],
)
def test_within_turn_matches_brute_force(preset, open_boxes, upper, ystate):
    """Two boxes open: the last turn by brute force, then this turn against the solver."""
    rules = PRESETS[preset]
    filled = ALL_FILLED
    for box in open_boxes:
        filled &= ~(1 << box)
    cap = rules.upper_bonus_threshold

    memo: dict[tuple[int, int, int], float] = {}

    def last_turn(f: int, u: int, y: int) -> float:
        key = (f, min(u, cap), y)
        if key not in memo:
            memo[key] = 0.0 if f == ALL_FILLED else brute_force_turn(rules, *key, lambda *_: 0.0)[0]
        return memo[key]

    expected_start, expected = brute_force_turn(rules, filled, upper, ystate, last_turn)
    # A table that holds only the brute-force values of the next states.
    table = np.full((8192, cap + 1, 3), np.nan, dtype=np.float32)
    for key, value in memo.items():
        table[key] = value
    solved = solver.OptimalValues(rules, table)
    turn = solved.turn_values(filled, upper, ystate)
    assert turn.start_values[0] == pytest.approx(expected_start, abs=1e-3)
    roll_values = turn.roll_values[0]
    for rolls_left in range(3):
        for dice, value in expected[rolls_left].items():
            assert roll_values[rolls_left, roll_index(dice)] == pytest.approx(value, abs=1e-3)


# --------------------------------------------------------------------------- cache
@pytest.fixture
def fake_solve(monkeypatch, table):
    """Replace the solve by the module's table (matching rules), counting calls."""
    calls = []

    def fake(rules=None, progress=None, **_):
        rules = RuleSet.from_spec(rules)
        calls.append(rules)
        if rules == table.rules:
            return table
        return solver.OptimalValues(rules, np.array(table.table))

    monkeypatch.setattr(solver, "solve", fake)
    return calls


def test_cache_round_trip(tmp_path, table, fake_solve):
    loaded = solver.load_or_solve("no-joker-no-bonus", cache_dir=tmp_path)
    assert len(fake_solve) == 1
    again = solver.load_or_solve("no-joker-no-bonus", cache_dir=tmp_path)
    assert len(fake_solve) == 1  # served from the cache
    np.testing.assert_array_equal(again.table, table.table)
    assert again.rules == table.rules and loaded.expected_score == again.expected_score
    assert [p.name for p in tmp_path.iterdir()] == [solver.cache_path(table.rules, tmp_path).name]


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "empty"])
def test_damaged_cache_is_rebuilt(tmp_path, table, fake_solve, damage):
    path = solver.save_table(table, solver.cache_path(table.rules, tmp_path))
    raw = bytearray(path.read_bytes())
    if damage == "flip":
        raw[-100] ^= 0xFF
    elif damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "garbage":
        raw[:40] = b"x" * 40
    else:
        raw = bytearray()
    path.write_bytes(bytes(raw))
    with pytest.raises(solver.CacheError):
        solver.load_table(path, table.rules)
    with pytest.warns(RuntimeWarning, match="rebuilding"):
        rebuilt = solver.load_or_solve(table.rules, cache_dir=tmp_path)
    assert len(fake_solve) == 1
    np.testing.assert_array_equal(rebuilt.table, table.table)
    np.testing.assert_array_equal(solver.load_table(path, table.rules).table, table.table)


def test_other_rules_file_is_rebuilt(tmp_path, table, fake_solve):
    official = PRESETS["official"]
    other = solver.OptimalValues(official, np.array(table.table))
    path = solver.cache_path(table.rules, tmp_path)
    solver.save_table(other, path)  # an official table under the no-joker-no-bonus name
    with pytest.raises(solver.CacheError, match="other rules"):
        solver.load_table(path, table.rules)
    with pytest.warns(RuntimeWarning, match="rebuilding"):
        solver.load_or_solve(table.rules, cache_dir=tmp_path)
    assert fake_solve == [table.rules]
    assert solver.load_table(path, table.rules).rules == table.rules


def test_cache_location(monkeypatch, tmp_path):
    monkeypatch.delenv("YAHTZEE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert solver.default_cache_dir() == tmp_path / "xdg" / "yahtzee-rl"
    monkeypatch.setenv("YAHTZEE_CACHE_DIR", str(tmp_path / "env"))
    assert solver.default_cache_dir() == tmp_path / "env"
    assert solver.cache_path("official").parent == tmp_path / "env"
    assert solver.cache_path("official", tmp_path / "arg").parent == tmp_path / "arg"
    names = {solver.cache_path(p, tmp_path).name for p in PRESETS}
    assert len(names) == len(PRESETS)
    custom = RuleSet(upper_bonus_value=50)
    assert "custom" in solver.cache_path(custom, tmp_path).name


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path, table):
    path = solver.cache_path(table.rules, tmp_path)
    solver.save_table(table, path)
    solver.save_table(table, path)  # replaces in place
    assert os.listdir(tmp_path) == [path.name]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'"dtype": "<f4"', b'"dtype": ">f4"'),  # issue 8.11: read back as 3.8e32 before
        (b'"expected_score": 2', b'"expected_score": 9'),  # caught by the checksum alone
        (b'"format_version": 2', b'"format_version": 1'),
    ],
)
def test_edited_cache_header_is_refused_and_rebuilt(tmp_path, table, fake_solve, old, new):
    path = solver.save_table(table, solver.cache_path(table.rules, tmp_path))
    raw = path.read_bytes()
    assert raw.count(old) == 1
    path.write_bytes(raw.replace(old, new))  # same length: only the header's content changed
    with pytest.raises(solver.CacheError):
        solver.load_table(path, table.rules)
    with pytest.warns(RuntimeWarning, match="rebuilding"):
        rebuilt = solver.load_or_solve(table.rules, cache_dir=tmp_path)
    assert rebuilt.expected_score == pytest.approx(table.expected_score, abs=1e-3)
    assert solver.load_table(path, table.rules).expected_score < 300


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and /dev/zero (POSIX)")
def test_cache_that_is_not_a_regular_file_is_refused(tmp_path, table):
    fifo = tmp_path / "fifo.bin"
    os.mkfifo(fifo)  # opening it for reading would block forever
    with pytest.raises(solver.CacheError, match="not a regular file"):
        solver.load_table(fifo, table.rules)
    with pytest.raises(solver.CacheError, match="not a regular file"):
        solver.load_table("/dev/zero", table.rules)
