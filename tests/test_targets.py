"""The target solver (`yahtzee_env.solver.targets`) against a brute force of its own.

The last turn of a card with one box open is small enough to enumerate: every hold of every
roll, every re-roll of the other dice. The brute force below shares no code with the solver
(no keep graph, no scoring tables): it rolls Python tuples.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest

from yahtzee_env.game.rules import ALL_FILLED, YAHTZEE_0, YAHTZEE_50, YAHTZEE_OPEN, Box, RuleSet
from yahtzee_env.solver import targets

MAX_NEED = 60


@pytest.fixture(scope="module")
def last_turn():
    return targets._solve(RuleSet.from_spec("official"), MAX_NEED, tie=0.5, layers=1)


def brute_force(reward, need: int, tie: float) -> float:
    """The best chance that ``reward(final dice)`` beats ``need`` (ties count ``tie``)."""

    def end(dice) -> float:
        r = reward(dice)
        return 1.0 if r > need else tie if r == need else 0.0

    @cache
    def mean_after(kept: tuple, rolls_left: int) -> float:
        n = 5 - len(kept)
        total = 0.0
        for faces in itertools.product(range(1, 7), repeat=n):
            total += best(tuple(sorted(kept + faces)), rolls_left)
        return total / 6**n

    @cache
    def best(dice: tuple, rolls_left: int) -> float:
        value = end(dice)
        if rolls_left == 0:
            return value
        for size in range(5):
            for kept in set(itertools.combinations(dice, size)):
                value = max(value, mean_after(kept, rolls_left - 1))
        return value

    return mean_after((), 2)


@pytest.mark.parametrize("need", [0, 17, 23, 29, MAX_NEED])
def test_only_chance_open_matches_the_brute_force(last_turn, need):
    # The Yahtzee box holds 0: no bonus, a Yahtzee is a joker worth its sum in Chance.
    filled = ALL_FILLED & ~(1 << Box.CHANCE)
    got = last_turn.needs(filled, 63, YAHTZEE_0)[need]
    assert got == pytest.approx(brute_force(sum, need, 0.5), abs=2e-6)


@pytest.mark.parametrize("need", [0, 49, 50, 51])
def test_only_the_yahtzee_box_open_matches_the_brute_force(last_turn, need):
    filled = ALL_FILLED & ~(1 << Box.YAHTZEE)
    got = last_turn.needs(filled, 63, YAHTZEE_OPEN)[need]
    want = brute_force(lambda d: 50 if len(set(d)) == 1 else 0, need, 0.5)
    assert got == pytest.approx(want, abs=2e-6)
    if 0 < need < 50:  # the classic figure: a Yahtzee in three rolls, 4.60%
        assert got == pytest.approx(0.046029, abs=1e-6)


def test_values_are_chances_that_fall_as_the_need_grows(last_turn):
    values = last_turn.values[:, last_turn.offset :]
    assert np.all((values >= 0) & (values <= 1 + 1e-6))
    assert np.all(np.diff(values, axis=1) <= 1e-6)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="max_need"):
        targets._solve(RuleSet.from_spec("official"), -1)
    with pytest.raises(ValueError, match="tie"):
        targets._solve(RuleSet.from_spec("official"), 10, tie=2.0)


@pytest.mark.parametrize("need", [23, 24, 47, 58, 59])
def test_only_sixes_open_with_the_upper_bonus_at_stake_matches_the_brute_force(last_turn, need):
    # 40 in the upper boxes: four sixes (24) reach 63 and add the 35-point bonus.
    filled = ALL_FILLED & ~(1 << Box.SIXES)

    def reward(dice):
        points = 6 * dice.count(6)
        return points + (35 if 40 + points >= 63 else 0)

    got = last_turn.needs(filled, 40, YAHTZEE_0)[need]
    assert got == pytest.approx(brute_force(reward, need, 0.5), abs=2e-6)


@pytest.mark.parametrize("need", [29, 30, 60])
def test_a_yahtzee_bonus_counts_in_the_last_turn(last_turn, need):
    # The Yahtzee box holds 50: another Yahtzee adds 100 and, as a joker, its sum in Chance.
    filled = ALL_FILLED & ~(1 << Box.CHANCE)

    def reward(dice):
        return sum(dice) + (100 if len(set(dice)) == 1 else 0)

    got = last_turn.needs(filled, 63, YAHTZEE_50)[need]
    assert got == pytest.approx(brute_force(reward, need, 0.5), abs=2e-6)
