"""Baseline policies: legal actions under every mask, greedy's choice, the heuristic's level,
batched == per-row, decoding, and the optimal adapter (a stand-in oracle, then a small solved
table)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from yahtzee_env.analysis.evaluation import play_games
from yahtzee_env.game.dice import CANONICAL_HOLDS, HOLD_TO_KEEP, NUM_ROLLS, roll_index
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS, Game, hold_action
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.game.rules import (
    IS_YAHTZEE,
    NUM_BOXES,
    PRESETS,
    YAHTZEE_0,
    YAHTZEE_50,
    YAHTZEE_OPEN,
    Box,
)
from yahtzee_env.policies.baselines import (
    POLICIES,
    BasePolicy,
    HeuristicPolicy,
    OptimalPolicy,
    Policy,
    decode,
    make_policy,
)

BUILT_IN = ("random", "greedy", "heuristic")
DETERMINISTIC = ("greedy", "heuristic")


def random_game(rng: np.random.Generator, rules: str = "official") -> Game:
    """A game in a random mid-game state: any filled boxes, upper total, yahtzee box, dice
    (a Yahtzee one time in five, for the joker rules), re-rolls left and hold masks."""
    game = Game(rules, canonical_holds=bool(rng.integers(2)))
    game.reset(rng)
    card = game.player
    card.filled = int(rng.integers(0, (1 << NUM_BOXES) - 1))  # at least one box open
    card.upper_total = int(rng.integers(0, 90)) if card.filled & 0b111111 else 0
    if card.filled >> Box.YAHTZEE & 1:
        card.yahtzee_state = int(rng.choice([YAHTZEE_50, YAHTZEE_0]))
    else:
        card.yahtzee_state = YAHTZEE_OPEN
    yahtzees = np.flatnonzero(IS_YAHTZEE)
    game.roll = int(rng.choice(yahtzees) if rng.random() < 0.2 else rng.integers(NUM_ROLLS))
    game.rolls_left = int(rng.integers(3))
    return game


def sample_states(n: int, seed: int, rules: str = "official"):
    rng = np.random.default_rng(seed)
    games = [random_game(rng, rules) for _ in range(n)]
    observations = np.stack([encode_seat(g) for g in games])
    masks = np.stack([g.legal_action_mask() for g in games])
    return games, observations, masks


@pytest.fixture(scope="module")
def states():
    return sample_states(300, seed=11)


# ------------------------------------------------------------------------------ protocol
def test_registry_and_protocol():
    assert set(POLICIES) == {"random", "greedy", "heuristic", "optimal"}
    for name in BUILT_IN:
        policy = make_policy(name, rules="official", seed=0)
        assert isinstance(policy, Policy)
    with pytest.raises(ValueError, match=r"unknown policy .nope.*heuristic"):
        make_policy("nope")


def test_base_policy_requires_one_method():
    with pytest.raises(TypeError, match="must override act or act_batch"):

        class Nothing(BasePolicy):
            pass

    class FirstLegal(BasePolicy):
        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask)[0])

    masks = np.zeros((2, NUM_ACTIONS), dtype=np.int8)
    masks[0, 40] = masks[1, 3] = 1
    assert FirstLegal().act_batch(np.zeros((2, 72)), masks).tolist() == [40, 3]


def test_empty_mask_is_an_error():
    with pytest.raises(ValueError, match="no legal action"):
        make_policy("greedy").act(np.zeros(72), np.zeros(NUM_ACTIONS, dtype=bool))


# ------------------------------------------------------------------------------ legality
@pytest.mark.parametrize("rules", sorted(PRESETS))
@pytest.mark.parametrize("name", BUILT_IN)
def test_actions_are_legal(name, rules):
    _, observations, masks = sample_states(120, seed=sorted(PRESETS).index(rules), rules=rules)
    policy = make_policy(name, rules=rules, seed=1)
    batch = policy.act_batch(observations, masks)
    assert batch.dtype == np.int64 and batch.shape == (len(masks),)
    assert masks[np.arange(len(masks)), batch].all()
    for obs, mask in zip(observations[:40], masks[:40].astype(np.int8), strict=True):
        action = policy.act(obs, mask)
        assert isinstance(action, int) and mask[action]


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_batched_equals_per_row(name, states):
    _, observations, masks = states
    policy = make_policy(name)
    per_row = [policy.act(o, m) for o, m in zip(observations, masks, strict=True)]
    assert policy.act_batch(observations, masks).tolist() == per_row


def test_random_is_seeded_and_uniform(states):
    _, observations, masks = states
    first = make_policy("random", seed=5).act_batch(observations, masks)
    assert (make_policy("random", seed=5).act_batch(observations, masks) == first).all()
    # One state, many draws: every legal action, and only those, about equally often.
    mask = np.zeros(NUM_ACTIONS, dtype=bool)
    mask[[0, 7, 33, 44]] = True
    policy = make_policy("random", seed=np.random.default_rng(0))
    draws = policy.act_batch(np.zeros((4000, 72)), np.tile(mask, (4000, 1)))
    counts = np.bincount(draws, minlength=NUM_ACTIONS)
    assert set(np.flatnonzero(counts)) == {0, 7, 33, 44}
    assert counts[mask].min() > 900


# ------------------------------------------------------------------------------ greedy
def test_greedy_never_holds_and_takes_the_most_points(states):
    games, observations, masks = states
    actions = make_policy("greedy").act_batch(observations, masks)
    assert (actions >= BOX_ACTION_OFFSET).all()
    for game, action in zip(games, actions, strict=True):
        legal, points = game.box_options()
        assert points[action - BOX_ACTION_OFFSET] == points[legal].max()


def test_greedy_tie_breaks_and_dump():
    def greedy_box(dice, filled_boxes):
        game = Game()
        game.reset(np.random.default_rng(0))
        for box in filled_boxes:
            game.player.filled |= 1 << box
        game.roll, game.rolls_left = roll_index(dice), 0
        action = make_policy("greedy").act(encode_seat(game), game.legal_action_mask())
        return Box(action - BOX_ACTION_OFFSET)

    # 3K = 4K = chance = 17: four of a kind goes first, chance last.
    assert greedy_box((4, 4, 4, 4, 1), [Box.FOURS]) == Box.FOUR_OF_A_KIND
    # Everything scores 0 but the yahtzee box and the large straight: dump the yahtzee box.
    dump = [b for b in Box if b not in (Box.YAHTZEE, Box.LARGE_STRAIGHT, Box.SIXES)]
    assert greedy_box((1, 1, 2, 3, 5), dump) == Box.YAHTZEE


# ------------------------------------------------------------------------------ heuristic
def test_heuristic_plays_a_decent_game():
    totals = play_games(make_policy("heuristic"), 200, seed=3, regret="no").scores
    assert totals.mean() > 190, totals.mean()


def heuristic_action(dice, rolls_left=2, filled_boxes=(), canonical=False):
    game = Game(canonical_holds=canonical)
    game.reset(np.random.default_rng(0))
    for box in filled_boxes:
        game.player.filled |= 1 << box
    game.roll, game.rolls_left = roll_index(dice), rolls_left
    return make_policy("heuristic").act(encode_seat(game), game.legal_action_mask())


@pytest.mark.parametrize(
    ("dice", "rolls_left", "filled", "expected"),
    [
        ((5, 5, 5, 5, 5), 2, (), BOX_ACTION_OFFSET + Box.YAHTZEE),
        ((2, 2, 3, 3, 3), 2, (), BOX_ACTION_OFFSET + Box.FULL_HOUSE),
        ((1, 2, 3, 4, 5), 2, (), BOX_ACTION_OFFSET + Box.LARGE_STRAIGHT),
        ((2, 3, 4, 5, 5), 2, (), hold_action([0, 1, 2, 3])),  # open-ended straight
        ((2, 3, 6, 6, 6), 2, (), hold_action([2, 3, 4])),  # three sixes
        ((1, 1, 1, 1, 2), 0, (), BOX_ACTION_OFFSET + Box.ACES),  # above par, not 4K
        # Last turns, nothing made: the zero goes to the yahtzee box, not to the sixes.
        (
            (1, 2, 3, 5, 5),
            0,
            [b for b in Box if b not in (Box.SIXES, Box.YAHTZEE)],
            BOX_ACTION_OFFSET + Box.YAHTZEE,
        ),
    ],
)
def test_heuristic_decisions(dice, rolls_left, filled, expected):
    assert heuristic_action(dice, rolls_left, filled) == expected


def test_heuristic_picks_a_legal_equivalent_hold_under_canonical_masks():
    game_roll = roll_index((2, 3, 4, 5, 5))
    action = heuristic_action((2, 3, 4, 5, 5), canonical=True)
    assert CANONICAL_HOLDS[game_roll, action]
    assert HOLD_TO_KEEP[game_roll, action] == HOLD_TO_KEEP[game_roll, hold_action([0, 1, 2, 3])]
    # Keep-all is not offered under canonical holds: a made hand is scored instead.
    assert heuristic_action((5, 5, 5, 5, 5), canonical=True) == BOX_ACTION_OFFSET + Box.YAHTZEE


@pytest.mark.parametrize("rules", sorted(PRESETS))
def test_heuristic_fast_best_values_match_the_exact_ones(rules):
    _, observations, _ = sample_states(60, seed=4, rules=rules)
    policy = HeuristicPolicy(rules)
    d = decode(observations, rules)
    terms = policy._state_terms(d)
    every_roll = np.broadcast_to(np.arange(NUM_ROLLS), (len(observations), NUM_ROLLS))
    exact = policy._box_values(d, terms, every_roll).max(axis=2)
    fast = policy._best_values(d, terms, exact[:, policy.yahtzee_rolls])
    np.testing.assert_array_equal(fast, exact)
    assert np.isfinite(fast).all()


# ------------------------------------------------------------------------------ decoding
@pytest.mark.parametrize("rules", ["official", "upper-first"])
def test_decode_recovers_the_state(rules):
    games, observations, _ = sample_states(100, seed=7, rules=rules)
    d = decode(observations, rules)
    for i, game in enumerate(games):
        card = game.player
        assert d.roll[i] == game.roll and tuple(d.dice[i]) == game.dice
        assert d.rolls_left[i] == game.rolls_left
        assert d.filled[i] == card.filled and d.boxes_filled[i] == card.filled.bit_count()
        assert d.upper_total[i] == min(card.upper_total, card.rules.upper_bonus_threshold)
        assert d.upper_bonus[i] == (card.upper_total >= card.rules.upper_bonus_threshold)
        assert d.yahtzee_state[i] == card.yahtzee_state
        legal, points = game.box_options()
        assert (d.points[i] == points * legal).all()
    single = decode(observations[0], rules)
    assert single.roll.shape == (1,) and single.roll[0] == d.roll[0]


# ------------------------------------------------------------------------------ optimal
class StandInOracle:
    """Stand-in for `OptimalOracle`: every action worth its id, box 12 (chance) illegal."""

    def __init__(self, table):
        self.table = table

    def action_values(self, observations):
        values = np.tile(np.arange(NUM_ACTIONS, dtype=np.float32), (len(observations), 1))
        values[:, -1] = -np.inf
        return values


def test_optimal_adapter_takes_the_best_legal_action(monkeypatch, states):
    _, observations, masks = states
    monkeypatch.setattr("yahtzee_env.solver.oracle.OptimalOracle", StandInOracle)
    actions = OptimalPolicy(table=object()).act_batch(observations, masks)
    # The best legal action by value; one the oracle calls illegal only if nothing else is.
    finite = masks.copy()
    finite[:, -1] = False
    expected = [np.flatnonzero(f).max() if f.any() else 44 for f in finite]
    assert actions.tolist() == expected


@pytest.fixture(scope="module")
def small_table():
    from yahtzee_env.solver.exact import solve

    return solve("no-joker-no-bonus")  # a few seconds


def test_optimal_policy_matches_the_solver(small_table):
    rules = "no-joker-no-bonus"
    rng = np.random.default_rng(9)
    games = [random_game(rng, rules) for _ in range(150)]
    # Only states the solver can reach (the table is NaN elsewhere).
    reachable = np.argwhere(~np.isnan(small_table.table[: (1 << NUM_BOXES) - 1]))
    for game, row in zip(games, rng.choice(reachable, size=len(games)), strict=True):
        card = game.player
        card.filled, card.upper_total, card.yahtzee_state = (int(x) for x in row)
    observations = np.stack([encode_seat(g) for g in games])
    masks = np.stack([g.legal_action_mask() for g in games])
    actions = OptimalPolicy(rules, table=small_table).act_batch(observations, masks)
    assert masks[np.arange(len(masks)), actions].all()
    for game, mask, action in zip(games, masks, actions, strict=True):
        card = game.player
        values = small_table.action_values(
            card.filled, card.upper_total, card.yahtzee_state, game.roll, game.rolls_left
        )
        assert values[action] == pytest.approx(values[mask].max(), abs=1e-4)


def test_optimal_without_solver_says_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "yahtzee_env.solver.exact", None)  # import fails
    with pytest.raises(ImportError, match=r"needs yahtzee_env\.solver"):
        make_policy("optimal")


def test_reseed_is_explicit():
    """Issue 9.6: policies are reseeded through `reseed`, not by swapping their attributes
    from outside; `reseeded` copies a stochastic policy and leaves the caller's alone."""
    from yahtzee_env.envs.vector import YahtzeeVectorEnv
    from yahtzee_env.policies.baselines import reseeded
    from yahtzee_env.policies.models import load_opponent

    env = YahtzeeVectorEnv(num_envs=64)
    obs, _ = env.reset(seed=0)
    masks = env.action_masks()
    policy = make_policy("random", seed=1)
    first = policy.act_batch(obs, masks)
    second = policy.act_batch(obs, masks)
    assert (first != second).any()
    policy.reseed(1)
    np.testing.assert_array_equal(policy.act_batch(obs, masks), first)
    copy = reseeded(policy, 1)
    assert copy is not policy and policy.stochastic
    np.testing.assert_array_equal(copy.act_batch(obs, masks), first)
    np.testing.assert_array_equal(policy.act_batch(obs, masks), second)  # its own stream
    for deterministic in (make_policy("greedy"), load_opponent("easy")):
        assert not getattr(deterministic, "stochastic", False)
        assert reseeded(deterministic, 5) is deterministic
