"""`yahtzee_v0` (PettingZoo AEC): the library checkers, rewards, infos, observation layout and
seating."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from yahtzee_env.analysis.tournament import play_game
from yahtzee_env.envs import multiplayer, seat_view
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, IllegalActionError
from yahtzee_env.game.observation import OBS_SIZE, encode_seat
from yahtzee_env.game.rules import BOX_NAMES
from yahtzee_env.policies.baselines import make_policy

INFO_KEYS = {
    "dice",
    "rolls_left",
    "scorecard",
    "upper_total",
    "upper_bonus",
    "yahtzee_bonus",
    "total",
    "action_mask",
}
# api_test warns about every Dict observation of an env not on its own list of classic envs
# (tictactoe, chess, ...); the Dict {"observation", "action_mask"} is the classic convention.
DICT_OBS_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be",
)


def play_out(aec, seed: int, policy_seed: int = 0, check=None):
    """Random legal actions to the end; returns the unwrapped env."""
    rng = np.random.default_rng(policy_seed)
    aec.reset(seed=seed)
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, info = aec.last()
        if check is not None:
            check(aec, agent, obs, reward, terminated, info)
        if terminated or truncated:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        aec.step(action)
    return aec.unwrapped


@pytest.mark.parametrize("num_players", [2, 4])
def test_api_test(num_players):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(multiplayer.env(num_players=num_players), num_cycles=60)
    unexpected = [
        str(w.message) for w in caught if not str(w.message).startswith(DICT_OBS_WARNINGS)
    ]
    assert unexpected == []


@pytest.mark.parametrize("num_players", [2, 4])
def test_seed_test(num_players):
    seed_test(lambda: multiplayer.env(num_players=num_players, first_player="roll"), num_cycles=60)


def test_win_rewards_function():
    assert multiplayer.win_rewards([200, 150]) == [1.0, -1.0]
    assert multiplayer.win_rewards([150, 150]) == [0.0, 0.0]
    assert multiplayer.win_rewards([90, 200, 120, 5]) == [-1.0, 1.0, -1.0, -1.0]
    assert multiplayer.win_rewards([200, 90, 200, 5]) == [0.0, -1.0, 0.0, -1.0]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_win_rewards_and_final_infos(num_players):
    env = multiplayer.env(num_players=num_players, reward="win")
    finals = {}

    def check(aec, agent, obs, reward, terminated, info):
        assert set(info) == INFO_KEYS
        if terminated:
            finals[agent] = (reward, info["total"])

    raw = play_out(env, seed=10 + num_players, check=check)
    assert raw.game.over
    totals = raw.game.totals()
    expected = multiplayer.win_rewards(totals)
    assert set(finals) == set(raw.possible_agents)
    for seat, agent in enumerate(raw.possible_agents):
        reward, total = finals[agent]
        assert total == totals[seat]
        assert reward == expected[seat]


def test_score_rewards_sum_to_totals():
    env = multiplayer.env(num_players=3, reward="score")
    returns = dict.fromkeys(env.possible_agents, 0.0)

    def check(aec, agent, obs, reward, terminated, info):
        returns[agent] += reward

    raw = play_out(env, seed=5, check=check)
    assert [returns[a] for a in raw.possible_agents] == [float(t) for t in raw.game.totals()]


def test_every_agent_has_infos_and_masks_at_every_step():
    aec = multiplayer.raw_env(num_players=3)
    aec.reset(seed=1)
    rng = np.random.default_rng(1)
    while not aec.game.over:
        mover = aec.agent_selection
        for agent in aec.agents:
            info = aec.infos[agent]
            assert set(info) == INFO_KEYS
            assert tuple(info["dice"].tolist()) == aec.game.dice
            assert info["rolls_left"] == aec.game.rolls_left
            obs = aec.observe(agent)
            assert np.array_equal(obs["action_mask"], info["action_mask"])
            if agent == mover:
                assert obs["action_mask"].any()
                assert np.array_equal(obs["action_mask"].astype(bool), aec.game.legal_action_mask())
            else:
                assert not obs["action_mask"].any()
        aec.step(int(rng.choice(np.flatnonzero(aec.observe(mover)["action_mask"]))))
    for agent in aec.agents:
        assert not aec.observe(agent)["action_mask"].any()
        assert aec.infos[agent]["total"] == aec.game.players[aec._seats[agent]].total


def test_observation_layout():
    aec = multiplayer.raw_env(num_players=4)
    aec.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(60):  # into the game: scorecards differ
        mover = aec.agent_selection
        aec.step(int(rng.choice(np.flatnonzero(aec.observe(mover)["action_mask"]))))
    game = aec.game
    assert multiplayer.observation_size(4) == 133 and multiplayer.observation_size(2) == 93
    for seat, agent in enumerate(aec.possible_agents):
        obs = aec.observe(agent)["observation"]
        assert obs.dtype == np.float32 and obs.shape == (133,)
        assert obs.min() >= 0.0 and obs.max() <= 1.0
        assert np.array_equal(obs[:OBS_SIZE], encode_seat(game, seat))
        assert np.array_equal(aec.single_observation(agent), obs[:OBS_SIZE])
        assert obs[seat_view.OWN_TOTAL_INDEX] == np.float32(game.players[seat].total / 500)
        for k in range(3):
            card = game.players[(seat + 1 + k) % 4]
            block = obs[73 + 20 * k : 93 + 20 * k]
            open_flags = [s is None for s in card.scores]
            assert block[:13].tolist() == open_flags
            assert block[18] == np.float32(card.filled.bit_count() / 13)
            assert block[19] == np.float32(min(card.total / 500, 1.0))
            assert block[15 + card.yahtzee_state] == 1.0


def test_first_player_options():
    aec = multiplayer.raw_env(num_players=3, first_player=2)
    aec.reset(seed=0)
    assert aec.agent_selection == "player_2" and aec.game.current == 2
    firsts = set()
    for seed in range(30):
        aec = multiplayer.raw_env(num_players=3, first_player="roll")
        aec.reset(seed=seed)
        firsts.add(aec.agent_selection)
        again = multiplayer.raw_env(num_players=3, first_player="roll")
        again.reset(seed=seed)
        assert again.agent_selection == aec.agent_selection
    assert firsts == {"player_0", "player_1", "player_2"}
    with pytest.raises(ValueError, match="first_player"):
        multiplayer.raw_env(num_players=2, first_player=2)
    with pytest.raises(ValueError, match="num_players"):
        multiplayer.raw_env(num_players=5)
    with pytest.raises(ValueError, match="reward"):
        multiplayer.raw_env(reward="points")


def test_illegal_action_ends_game_with_penalty():
    env = multiplayer.env(num_players=2)
    env.reset(seed=0)
    agent = env.agent_selection
    # Fill chance, then try to fill it again on the next own turn: illegal.
    env.step(BOX_ACTION_OFFSET + BOX_NAMES.index("chance"))
    other = env.agent_selection
    env.step(BOX_ACTION_OFFSET + BOX_NAMES.index("chance"))
    assert env.agent_selection == agent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(BOX_ACTION_OFFSET + BOX_NAMES.index("chance"))
    assert all(env.terminations.values())
    rewards = {}
    for a in env.agent_iter():
        _, reward, terminated, _, _ = env.last()
        assert terminated
        rewards[a] = reward
        env.step(None)
    assert rewards == {agent: -1.0, other: 0.0}


def test_cpu_policies_play_the_same_as_on_the_engine():
    """A policy acting on `single_observation` in the AEC env plays exactly the game that
    `tournament.play_game` plays on the engine with the same seed."""
    heuristic, greedy = make_policy("heuristic"), make_policy("greedy")
    policies = [heuristic, greedy]
    aec = multiplayer.raw_env(num_players=2, reward="score")
    aec.reset(seed=11)
    while not aec.game.over:
        agent = aec.agent_selection
        mask = aec.observe(agent)["action_mask"]
        aec.step(policies[aec._seats[agent]].act(aec.single_observation(agent), mask))
    reference = play_game(policies, "official", np.random.default_rng(11), first=0)
    assert aec.game.totals() == reference


def test_render_ansi():
    aec = multiplayer.raw_env(num_players=2, render_mode="ansi")
    aec.reset(seed=0)
    text = aec.render()
    assert "player_0" in text and "player_1" in text and "chance" in text
    assert "\x1b[" not in text


def test_raw_env_illegal_action_changes_nothing():
    """The raw env (no TerminateIllegalWrapper) raises on an illegal move and leaves every
    piece of state as it was, the rewards included."""
    chance = BOX_ACTION_OFFSET + BOX_NAMES.index("chance")
    aec = multiplayer.raw_env(num_players=2, reward="score")
    aec.reset(seed=3)
    aec.step(chance)  # player_0 fills chance
    aec.step(chance)  # player_1 fills chance: rewards {player_0: 0, player_1: its points}
    agent = aec.agent_selection
    assert agent == "player_0" and aec.rewards["player_1"] > 0
    before = (
        dict(aec.rewards),
        dict(aec._cumulative_rewards),
        dict(aec.terminations),
        aec.agent_selection,
        aec.game.roll,
        aec.game.rolls_left,
        aec.game.totals(),
        aec.observe(agent)["observation"].copy(),
    )
    with pytest.raises(IllegalActionError):
        aec.step(chance)  # already filled
    after = (
        dict(aec.rewards),
        dict(aec._cumulative_rewards),
        dict(aec.terminations),
        aec.agent_selection,
        aec.game.roll,
        aec.game.rolls_left,
        aec.game.totals(),
        aec.observe(agent)["observation"],
    )
    assert after[:-1] == before[:-1] and np.array_equal(after[-1], before[-1])
    aec.step(BOX_ACTION_OFFSET + BOX_NAMES.index("aces"))  # the game goes on
    assert aec.agent_selection == "player_1"


def test_table_module_is_shared():
    """The layout lives in `yahtzee_env.envs.seat_view`; `multiplayer` re-exports the same
    objects."""
    for name in ("encode_table", "observation_size", "win_rewards", "MAX_PLAYERS"):
        assert getattr(multiplayer, name) is getattr(seat_view, name)
    assert (
        seat_view.observation_size(3)
        == seat_view.OPPONENTS_START + 2 * seat_view.OPPONENT_SIZE
        == 113
    )


def test_no_compatibility_re_exports():
    """Issue 9.6: the layout constants live in `yahtzee_env.envs.seat_view` only."""
    assert multiplayer.__all__ == ["CheckActionWrapper", "env", "raw_env"]
    for name in ("OPP_OPEN", "OWN_TOTAL_INDEX", "TOTAL_SCALE", "OPPONENT_SIZE"):
        assert hasattr(seat_view, name) and not hasattr(multiplayer, name)
