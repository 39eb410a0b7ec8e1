"""The game engine: turns, rolls, holds, illegal actions, dice statistics, players, matches."""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
import pytest

from yahtzee_env.game.dice import (
    CANONICAL_HOLDS,
    DICE,
    FIRST_ROLL_KEEP,
    HOLD_TO_KEEP,
    KEEP_COUNTS,
    KEEP_PROBS,
    NUM_ROLLS,
    ROLL_OUTCOMES,
    keep_index,
    roll_index,
)
from yahtzee_env.game.engine import (
    KEEP_ALL,
    NUM_ACTIONS,
    DiceRoller,
    Game,
    IllegalActionError,
    box_action,
    describe_action,
    hold_action,
    roll_for_first_player,
)
from yahtzee_env.game.match import match_is_decided, match_winners
from yahtzee_env.game.rules import ALL_FILLED, BOX_NAMES, Box


class ScriptedRoller:
    """Stands in for `DiceRoller`: hands out given rolls, checking each is reachable."""

    def __init__(self, rolls) -> None:
        self.rolls = [roll_index(r) if not isinstance(r, int) else r for r in rolls]

    def roll(self, keep: int = FIRST_ROLL_KEEP) -> int:
        roll = self.rolls.pop(0)
        assert KEEP_PROBS[keep, roll] > 0, "scripted roll does not contain the kept dice"
        return roll


def scripted_game(first_roll, later_rolls, rules="official", num_players=1) -> Game:
    game = Game(rules, num_players=num_players)
    game.reset(np.random.default_rng(0))
    game.roll = roll_index(first_roll)
    game.roller = ScriptedRoller(later_rolls)
    return game


def snapshot(game: Game):
    return (
        game.roll,
        game.rolls_left,
        game.current,
        game.turns_taken,
        game.over,
        [(p.filled, list(p.scores), p.upper_total, p.yahtzee_state) for p in game.players],
    )


def test_reset_rolls_the_first_roll():
    game = Game()
    game.reset(np.random.default_rng(1))
    assert game.rolls_left == 2 and not game.over
    assert len(game.dice) == 5 and list(game.dice) == sorted(game.dice)
    mask = game.legal_action_mask()
    assert mask.dtype == bool and mask.shape == (NUM_ACTIONS,) and mask.all()


def test_turn_of_holds_then_fill():
    game = scripted_game([2, 3, 3, 5, 6], [[3, 3, 3, 4, 1], [3, 3, 3, 3, 1]])
    # keep the two threes (sorted positions 1 and 2)
    assert game.step(hold_action([1, 2])) == 0
    assert game.dice == (1, 3, 3, 3, 4) and game.rolls_left == 1
    assert game.step(hold_action([1, 2, 3])) == 0
    assert game.rolls_left == 0
    mask = game.legal_action_mask()
    assert not mask[:32].any() and mask[32:].all()
    with pytest.raises(IllegalActionError, match="no rolls are left"):
        game.step(hold_action([0]))
    game.roller = ScriptedRoller([[1, 1, 2, 2, 2]])
    assert game.step(box_action(Box.FOUR_OF_A_KIND)) == 13
    assert game.turns_taken == 1 and game.rolls_left == 2 and game.dice == (1, 1, 2, 2, 2)


def test_keep_all_spends_a_roll_and_keeps_the_dice():
    game = Game()
    game.reset(np.random.default_rng(3))
    before = game.dice
    game.step(KEEP_ALL)
    assert game.dice == before and game.rolls_left == 1


@pytest.mark.parametrize("seed", range(5))
def test_holds_keep_the_held_dice(seed):
    rng = np.random.default_rng(seed)
    game = Game()
    game.reset(np.random.default_rng(seed + 100))
    for _ in range(200):
        if game.over:
            break
        if game.rolls_left:
            hold = int(rng.integers(32))
            held = Counter(d for i, d in enumerate(game.dice) if hold >> i & 1)
            game.step(hold)
            assert not held - Counter(game.dice)
        else:
            game.step(box_action(int(np.flatnonzero(game.box_options()[0])[0])))


def test_illegal_actions_raise_and_change_nothing():
    game = scripted_game([3, 3, 3, 5, 5], [[1, 2, 3, 4, 6]])
    game.step(box_action(Box.FULL_HOUSE))
    state = snapshot(game)
    for action, message in [
        (box_action(Box.FULL_HOUSE), "already filled"),
        (NUM_ACTIONS, "not an action id"),
        (-1, "not an action id"),
        (3.0, "not an action id"),
    ]:
        with pytest.raises(IllegalActionError, match=message):
            game.step(action)
        assert snapshot(game) == state


def test_game_ends_after_13_fills_and_totals():
    game = Game()
    game.reset(np.random.default_rng(7))
    total = 0
    for box in range(13):
        assert not game.over
        total += game.step(box_action(box))
    assert game.over and game.players[0].filled == ALL_FILLED
    assert total == game.players[0].total == game.totals()[0]
    assert not game.legal_action_mask().any()
    with pytest.raises(IllegalActionError, match="game is over"):
        game.step(box_action(0))


def test_canonical_holds():
    game = Game(canonical_holds=True)
    game.reset(np.random.default_rng(0))
    game.roll = roll_index([2, 2, 2, 5, 6])
    mask = game.legal_action_mask()
    assert (mask[:32] == CANONICAL_HOLDS[game.roll]).all() and not mask[KEEP_ALL]
    # holding dice 0,1 and dice 1,2 of 2,2,2,5,6 keep the same multiset: one is canonical
    assert mask[hold_action([0, 1])] != mask[hold_action([1, 2])]
    with pytest.raises(IllegalActionError, match="canonical"):
        game.step(KEEP_ALL)
    # every distinct keep (but keep-all) has exactly one canonical hold
    for roll in range(NUM_ROLLS):
        keeps = {int(HOLD_TO_KEEP[roll, h]) for h in range(32) if h != KEEP_ALL}
        canon = [int(HOLD_TO_KEEP[roll, h]) for h in np.flatnonzero(CANONICAL_HOLDS[roll])]
        assert sorted(canon) == sorted(keeps - {int(HOLD_TO_KEEP[roll, KEEP_ALL])})


def test_describe_and_action_helpers():
    assert describe_action(hold_action([0, 2])) == "hold[0,2]"
    assert describe_action(box_action(Box.CHANCE)) == "box:chance"
    assert describe_action(99) == "<invalid action 99>"
    assert [box_action(b) for b in range(13)] == list(range(32, 45))
    with pytest.raises(ValueError, match="out of range"):
        hold_action([5])


# ------------------------------------------------------------------ dice statistics
def test_dice_tables():
    assert DICE.shape == (252, 5) and KEEP_COUNTS.shape == (462, 6)
    assert np.allclose(KEEP_PROBS.sum(axis=1), 1.0)
    assert KEEP_PROBS[keep_index([0, 0, 0, 0, 0, 5])][roll_index([6] * 5)] == 1.0
    # a first roll of five distinct faces 1-5: 5! / 6**5
    assert KEEP_PROBS[FIRST_ROLL_KEEP, roll_index([1, 2, 3, 4, 5])] == pytest.approx(120 / 7776)


def test_first_roll_faces_are_uniform():
    roller = DiceRoller(np.random.default_rng(11))
    faces = Counter()
    n = 20_000
    for _ in range(n):
        faces.update(DICE[roller.roll()].tolist())
    expected = 5 * n / 6
    chi2 = sum((faces[f] - expected) ** 2 / expected for f in range(1, 7))
    assert chi2 < 25.0  # 5 degrees of freedom: p < 1e-4 to fail by chance


def test_keep_outcomes_match_exact_probabilities():
    roller = DiceRoller(np.random.default_rng(12))
    keep = keep_index([0, 0, 2, 0, 0, 0])  # two threes kept, three dice re-rolled
    n = 30_000
    counts = np.bincount([roller.roll(keep) for _ in range(n)], minlength=NUM_ROLLS)
    probs = KEEP_PROBS[keep]
    support = probs > 0
    assert counts[~support].sum() == 0
    expected = n * probs[support]
    chi2 = ((counts[support] - expected) ** 2 / expected).sum()
    dof = support.sum() - 1
    assert chi2 < dof + 6 * np.sqrt(2 * dof)


def test_roller_is_deterministic_and_uses_exact_cdf():
    a = DiceRoller(np.random.default_rng(5))
    b = DiceRoller(np.random.default_rng(5))
    assert [a.roll() for _ in range(1000)] == [b.roll() for _ in range(1000)]
    assert ROLL_OUTCOMES == 7776


# ------------------------------------------------------------------ players and matches
def test_two_players_alternate_whole_turns():
    game = Game(num_players=2)
    game.reset(np.random.default_rng(0), first=1)
    assert game.current == 1
    game.step(hold_action([0]))
    assert game.current == 1  # holds do not pass the turn
    game.step(box_action(Box.CHANCE))
    assert game.current == 0 and game.rolls_left == 2
    while not game.over:
        game.step(box_action(int(np.flatnonzero(game.box_options()[0])[0])))
    assert all(p.filled == ALL_FILLED for p in game.players)
    assert game.turns_taken == 26
    assert set(game.winners()) <= {0, 1}
    with pytest.raises(ValueError, match="first player"):
        game.reset(np.random.default_rng(0), first=2)
    with pytest.raises(ValueError, match="num_players"):
        Game(num_players=0)


def test_roll_for_first_player_is_a_valid_seat():
    seats = Counter(roll_for_first_player(3, np.random.default_rng(s)) for s in range(300))
    assert set(seats) == {0, 1, 2}


@pytest.mark.parametrize(
    ("games", "wins", "winners", "decided"),
    [
        ([[200, 150], [210, 100], [220, 90]], (3, 0), (0,), True),
        ([[200, 150], [100, 210]], (1, 1), (1,), False),  # tied on wins: more points lead
        ([[200, 200], [200, 200], [200, 200], [200, 200], [201, 200]], (1, 0), (0,), True),
        ([[150, 200], [210, 100], [100, 101], [300, 100], [100, 250]], (2, 3), (1,), True),
        ([[100, 100]] * 4 + [[150, 160]], (0, 1), (1,), True),
    ],
)
def test_match_winners(games, wins, winners, decided):
    result = match_winners(games)
    assert result.wins == wins and result.winners == winners
    assert match_is_decided(games) == decided


def test_match_tie_on_wins_broken_by_points():
    games = [[200, 100], [100, 150], [120, 120], [90, 91], [300, 100]]
    result = match_winners(games)
    assert result.wins == (2, 2) and result.points == (810, 561) and result.winners == (0,)


def test_deepcopy_of_a_game_continues_identically():
    game = Game()
    game.reset(np.random.default_rng(9))
    game.step(3)
    twin = copy.deepcopy(game)
    for action in [box_action(Box.CHANCE), 7, 31, box_action(Box.ACES)]:
        assert game.step(action) == twin.step(action)
        assert snapshot(game) == snapshot(twin)
    assert BOX_NAMES[0] == "aces"


def test_engine_modules_do_not_import_gymnasium():
    """The rules engine, the solver and the numpy levels run without Gymnasium."""
    import subprocess
    import sys

    code = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'gymnasium':
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
import numpy as np
from yahtzee_env.game.engine import Game
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.policies.models import load_opponent
from yahtzee_env.solver.exact import solve
game = Game()
game.reset(np.random.default_rng(0))
hard = load_opponent('hard')
while not game.over:
    game.step(hard.act(encode_seat(game), game.legal_action_mask()))
assert 'gymnasium' not in sys.modules
print(game.totals()[0])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 0
