"""Properties over random games (hypothesis draws the seeds, rules and options).

For the single env: rewards sum to ``info["total"]``; every game fills 13 boxes; no turn has
more than 3 rolls; the mask is never empty before the end and is exactly what ``step``
accepts (every masked-out action raises and changes nothing; every masked-in action is
accepted by a copy of the game). For the vector env: the same invariants per game.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yahtzee_env.envs.vector import YahtzeeVectorEnv
from yahtzee_env.envs.yahtzee import YahtzeeEnv
from yahtzee_env.game.engine import NUM_ACTIONS, IllegalActionError
from yahtzee_env.game.rules import ALL_FILLED, PRESETS

PROPERTY_SETTINGS = settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
seeds = st.integers(min_value=0, max_value=2**32 - 1)
presets = st.sampled_from(sorted(PRESETS))


def game_copy(env: YahtzeeEnv):
    """A deep copy of the env's engine game, sharing the (immutable) rule tables."""
    game = env._game
    return copy.deepcopy(game, memo={id(game.rules): game.rules})


@PROPERTY_SETTINGS
@given(seed=seeds, preset=presets, canonical=st.booleans(), check_every=st.integers(1, 4))
def test_random_games_single_env(seed, preset, canonical, check_every):
    env = YahtzeeEnv(rules=preset, canonical_holds=canonical)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    total_reward = 0.0
    rolls_this_turn = 1
    boxes = 0
    for step in range(100):
        mask = env.action_masks()
        assert mask.any(), "empty mask before the end"
        assert np.array_equal(info["action_mask"], mask)
        if step % check_every == 0:
            state = (tuple(info["dice"].tolist()), info["rolls_left"], info["total"], obs.copy())
            for action in np.flatnonzero(~mask).tolist():
                with pytest.raises(IllegalActionError):
                    env.step(action)
                assert (env._game.dice, env._game.rolls_left) == state[:2]
                assert np.array_equal(env.action_masks(), mask)
            for action in np.flatnonzero(mask).tolist():
                game_copy(env).step(action)  # accepted, on a copy
        action = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        total_reward += reward
        assert total_reward == info["total"]
        if action >= 32:
            boxes += 1
            rolls_this_turn = 1
        else:
            rolls_this_turn += 1
            assert rolls_this_turn <= 3
        if terminated:
            break
    assert terminated and boxes == 13
    assert env._game.players[0].filled == ALL_FILLED
    assert (info["scorecard"] >= 0).all()
    assert not env.action_masks().any()


@settings(max_examples=8, derandomize=True, deadline=None)
@given(seed=seeds, preset=presets, canonical=st.booleans())
def test_random_games_vector_env(seed, preset, canonical):
    n = 16
    env = YahtzeeVectorEnv(num_envs=n, rules=preset, canonical_holds=canonical)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    returns = np.zeros(n)
    boxes = np.zeros(n, dtype=int)
    rolls = np.ones(n, dtype=int)
    games = 0
    for _ in range(120):
        masks = env.action_masks()
        assert masks.any(axis=1).all()
        actions = np.where(masks, rng.random((n, NUM_ACTIONS)), -1).argmax(axis=1)
        _, rewards, terms, truncs, infos = env.step(actions)
        assert not truncs.any()
        returns += rewards
        fill = actions >= 32
        boxes += fill
        rolls = np.where(fill, 1, rolls + 1)
        assert (rolls <= 3).all()
        running = ~terms
        assert np.array_equal(returns[running], infos["total"][running])
        if terms.any():
            done = np.flatnonzero(terms)
            assert (boxes[done] == 13).all()
            assert np.array_equal(returns[done], infos["final_info"]["total"][done])
            assert (infos["final_info"]["scorecard"][done] >= 0).all()
            returns[done] = 0
            boxes[done] = 0
            games += len(done)
    assert games >= n
