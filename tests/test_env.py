"""`Yahtzee-v0` (single player): Gymnasium API, checker, determinism, pickling, rendering,
illegal actions, info and observation contents."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import yahtzee_env
from yahtzee_env.envs.wrappers import DictObservation
from yahtzee_env.envs.yahtzee import UnsupportedRenderModeError, YahtzeeEnv
from yahtzee_env.game.dice import CANONICAL_HOLDS, roll_index
from yahtzee_env.game.engine import IllegalActionError, box_action, hold_action
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.game.rules import BOX_NAMES, PRESETS, Box


def play_random(env, seed: int, policy_seed: int | None = None, check=None):
    """Play one game with uniformly random legal actions; return (actions, rewards, infos)."""
    rng = np.random.default_rng(seed if policy_seed is None else policy_seed)
    obs, info = env.reset(seed=seed)
    actions, rewards, infos, observations = [], [], [info], [obs]
    terminated = False
    while not terminated:
        action = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        actions.append(action)
        rewards.append(reward)
        infos.append(info)
        observations.append(obs)
        if check is not None:
            check(env, obs, info)
    return actions, rewards, infos, observations


# ------------------------------------------------------------------ registration, checkers
def test_make_after_import():
    env = gym.make("Yahtzee-v0")
    assert isinstance(env.unwrapped, YahtzeeEnv)
    assert env.spec is not None and env.spec.id == "Yahtzee-v0"


def test_make_with_module_prefix_without_importing_package():
    code = (
        "import sys, gymnasium as gym\n"
        "assert 'yahtzee_env' not in sys.modules\n"
        "env = gym.make('yahtzee_env:Yahtzee-v0', rules='free-joker')\n"
        "obs, info = env.reset(seed=0)\n"
        "assert obs.shape == (72,) and env.unwrapped.rules.joker == 'free'\n"
        "print(type(env.unwrapped).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "YahtzeeEnv"


@pytest.mark.parametrize("render_mode", [None, "ansi"])
def test_gymnasium_check_env_without_warnings(render_mode):
    env = gym.make("Yahtzee-v0", render_mode=render_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("canonical_holds", [False, True])
def test_check_env_every_variant(preset, canonical_holds):
    # random actions may be illegal under these variants: penalize rather than raise
    env = YahtzeeEnv(rules=preset, canonical_holds=canonical_holds, illegal_action="penalize")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)


def test_stable_baselines3_check_env():
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_checker.check_env(YahtzeeEnv(illegal_action="penalize"))


def test_stable_baselines3_make_vec_env():
    """SB3's make_vec_env tries render_mode="rgb_array" first and falls back on TypeError."""
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium notes the unsupported render_mode first
        vec = env_util.make_vec_env("Yahtzee-v0", n_envs=2, seed=0)
    try:
        assert vec.num_envs == 2
        obs = vec.reset()
        assert obs.shape == (2, 72)
        for _ in range(5):
            masks = np.stack(vec.env_method("action_masks"))
            actions = np.array([np.flatnonzero(m)[0] for m in masks])
            obs, rewards, _dones, infos = vec.step(actions)
            assert obs.shape == (2, 72) and rewards.shape == (2,) and len(infos) == 2
    finally:
        vec.close()


def test_unsupported_render_mode_is_a_value_and_type_error():
    for error in (UnsupportedRenderModeError, ValueError, TypeError):
        with pytest.raises(error, match="render_mode"):
            YahtzeeEnv(render_mode="video")
    assert issubclass(UnsupportedRenderModeError, ValueError)
    assert issubclass(UnsupportedRenderModeError, TypeError)


def test_action_masks_is_a_writable_copy():
    env = YahtzeeEnv()
    env.reset(seed=0)
    mask = env.action_masks()
    assert mask.flags.writeable and mask.dtype == bool
    expected = mask.copy()
    mask[:] = ~mask  # the caller's array: changing it changes nothing in the env
    assert np.array_equal(env.action_masks(), expected)
    env.step(hold_action([0]))
    mask = env.action_masks()
    mask[:] = False
    assert env.action_masks().any()


def test_maskable_ppo_predict_without_non_writable_warning():
    """torch warns when it wraps a read-only array: `action_masks()` must not be one."""
    torch = pytest.importorskip("torch")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = YahtzeeEnv()
    obs, _ = env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.as_tensor(env.action_masks()).dtype == torch.bool
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert not [w for w in caught if "not writable" in str(w.message)]
    assert env.action_masks()[int(action)]


def test_spaces():
    env = YahtzeeEnv()
    assert env.action_space == gym.spaces.Discrete(45)
    assert env.observation_space.shape == (72,) and env.observation_space.dtype == np.float32
    assert env.observation_space.low.min() == 0 and env.observation_space.high.max() == 1


# ------------------------------------------------------------------ episodes
def test_random_game_rewards_info_and_observations():
    def check(env, obs, info):
        game = env.unwrapped._game
        assert np.array_equal(obs, encode_seat(game))  # incremental updates == encode
        mask = env.unwrapped.action_masks()
        assert mask.dtype == bool and mask.shape == (45,)
        assert info["action_mask"].dtype == np.int8 and np.array_equal(info["action_mask"], mask)
        assert tuple(info["dice"].tolist()) == game.dice and info["rolls_left"] == game.rolls_left
        card = game.players[0]
        assert info["scorecard"].tolist() == [-1 if s is None else s for s in card.scores]
        assert info["upper_total"] == card.upper_total
        assert info["upper_bonus"] == card.upper_bonus
        assert info["yahtzee_bonus"] == card.yahtzee_bonus
        assert info["total"] == card.total

    env = gym.make("Yahtzee-v0")
    for seed in range(4):
        actions, rewards, infos, _ = play_random(env, seed, check=check)
        assert sum(rewards) == infos[-1]["total"]
        assert sum(a >= 32 for a in actions) == 13
        assert (infos[-1]["scorecard"] >= 0).all()
        assert not infos[-1]["action_mask"].any()
        assert infos[0]["rolls_left"] == 2 and infos[0]["total"] == 0
        assert all(isinstance(r, float) for r in rewards)


def test_reset_info_and_dice():
    env = YahtzeeEnv()
    obs, info = env.reset(seed=3)
    assert set(info) == {
        "dice",
        "rolls_left",
        "scorecard",
        "upper_total",
        "upper_bonus",
        "yahtzee_bonus",
        "total",
        "action_mask",
    }
    assert info["dice"].dtype == np.int8 and info["dice"].tolist() == sorted(info["dice"])
    assert all(1 <= d <= 6 for d in info["dice"].tolist())
    assert info["scorecard"].dtype == np.int16 and info["scorecard"].tolist() == [-1] * 13
    assert len(BOX_NAMES) == 13
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    assert info["action_mask"].all()


def test_rolls_left_counts_down_and_turn_restarts():
    env = YahtzeeEnv()
    _, info = env.reset(seed=0)
    assert info["rolls_left"] == 2
    _, _, _, _, info = env.step(hold_action([0, 1]))
    assert info["rolls_left"] == 1
    _, _, _, _, info = env.step(31)
    assert info["rolls_left"] == 0
    assert not info["action_mask"][:32].any()
    _, _, _, _, info = env.step(box_action(Box.CHANCE))
    assert info["rolls_left"] == 2 and info["scorecard"][Box.CHANCE] == info["total"] > 0


def test_same_seed_same_trajectory_and_reset_reseeds():
    a, b = gym.make("Yahtzee-v0"), gym.make("Yahtzee-v0")
    run_a = play_random(a, seed=21)
    run_b = play_random(b, seed=21)
    assert run_a[0] == run_b[0] and run_a[1] == run_b[1]
    assert all(np.array_equal(x, y) for x, y in zip(run_a[3], run_b[3], strict=True))
    assert [i["dice"].tolist() for i in run_a[2]] == [i["dice"].tolist() for i in run_b[2]]
    other = play_random(a, seed=22)
    assert [i["dice"].tolist() for i in other[2]] != [i["dice"].tolist() for i in run_a[2]]


@pytest.mark.parametrize("copier", [pickle.loads, copy.deepcopy])
def test_pickle_mid_game_continues_identically(copier):
    env = YahtzeeEnv(rules="free-joker", render_mode="ansi")
    env.reset(seed=5)
    for action in [hold_action([0]), box_action(Box.CHANCE), 31, 31]:
        env.step(action)
    twin = copier(pickle.dumps(env)) if copier is pickle.loads else copier(env)
    assert twin.render() == env.render()
    rng = np.random.default_rng(0)
    while True:
        assert np.array_equal(env.action_masks(), twin.action_masks())
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        step_a, step_b = env.step(action), twin.step(action)
        assert np.array_equal(step_a[0], step_b[0])
        assert step_a[1:4] == step_b[1:4]
        assert np.array_equal(step_a[4]["dice"], step_b[4]["dice"])
        assert step_a[4]["total"] == step_b[4]["total"]
        if step_a[2]:
            break


# ------------------------------------------------------------------ rendering
def test_render_ansi_and_human(capsys):
    env = gym.make("Yahtzee-v0", render_mode="ansi")
    _, info = env.reset(seed=1)
    text = env.render()
    assert isinstance(text, str)
    assert "dice: " + " ".join(f"[{d}]" for d in info["dice"]) in text
    assert all(name in text for name in BOX_NAMES) and "total" in text
    env.step(box_action(Box.CHANCE))
    assert f"chance{'':<10}{sum(info['dice']):>4}" in env.render()

    human = gym.make("Yahtzee-v0", render_mode="human")
    human.reset(seed=1)
    assert human.render() is None
    assert "dice: " in capsys.readouterr().out


def test_render_without_mode_warns():
    env = YahtzeeEnv()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


# ------------------------------------------------------------------ illegal actions
def force_state(env: YahtzeeEnv, dice) -> None:
    """Put ``dice`` on the table (test helper; re-derives the mask and observation)."""
    env._game.roll = roll_index(dice)
    env._dice_view[...] = env._tables.dice_rolls[env._game.roll, env._game.rolls_left]
    env._update_mask()


def test_illegal_action_raises_and_changes_nothing():
    env = YahtzeeEnv()
    env.reset(seed=2)
    env.step(box_action(Box.CHANCE))
    env.step(31)
    env.step(31)
    before = (env._game.roll, env._game.rolls_left, env.action_masks().copy())
    for action, message in [(3, "no rolls are left"), (box_action(Box.CHANCE), "filled")]:
        with pytest.raises(IllegalActionError, match=message):
            env.step(action)
        assert (env._game.roll, env._game.rolls_left) == before[:2]
        assert np.array_equal(env.action_masks(), before[2])
    for action in [45, -1]:
        with pytest.raises(IllegalActionError):
            env.step(action)
    with pytest.raises(IllegalActionError, match="not an action id"):
        env.step(1.5)


def test_joker_rule_illegal_box():
    env = YahtzeeEnv()
    env.reset(seed=0)
    force_state(env, [6, 6, 6, 6, 6])
    _, reward, *_ = env.step(box_action(Box.YAHTZEE))
    assert reward == 50
    force_state(env, [6, 6, 6, 6, 6])
    mask = env.action_masks()
    assert np.flatnonzero(mask[32:]).tolist() == [Box.SIXES]  # forced joker: sixes only
    with pytest.raises(IllegalActionError, match="joker"):
        env.step(box_action(Box.CHANCE))
    _, reward, _, _, info = env.step(box_action(Box.SIXES))
    assert reward == 30 + 100 and info["yahtzee_bonus"] == 100


def test_penalize_mode():
    env = YahtzeeEnv(illegal_action="penalize", illegal_penalty=-2.5)
    obs, info = env.reset(seed=4)
    env.step(box_action(Box.ACES))
    obs, _, _, _, info = env.step(31)
    obs2, reward, terminated, truncated, info2 = env.step(box_action(Box.ACES))
    assert reward == -2.5 and not terminated and not truncated
    assert info2["illegal_action"] is True
    assert np.array_equal(obs, obs2) and np.array_equal(info2["dice"], info["dice"])
    assert info2["total"] == info["total"] and info2["rolls_left"] == info["rolls_left"]
    _, _, _, _, info3 = env.step(hold_action([0]))
    assert "illegal_action" not in info3
    with pytest.raises(IllegalActionError):
        env.step(45)  # not an action id: raises even when penalizing
    default = YahtzeeEnv(illegal_action="penalize")
    default.reset(seed=0)
    default.step(box_action(Box.ACES))
    assert default.step(box_action(Box.ACES))[1] == -1.0


def test_step_after_end_raises_even_when_penalizing():
    env = YahtzeeEnv(illegal_action="penalize")
    env.reset(seed=0)
    terminated = False
    for box in range(13):
        *_, terminated, _, _ = env.step(box_action(box))
    assert terminated
    with pytest.raises(IllegalActionError, match="over"):
        env.step(box_action(0))


def test_step_before_reset_raises():
    with pytest.raises(IllegalActionError, match="reset"):
        YahtzeeEnv().step(0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rules": "house"}, "unknown rules"),
        ({"render_mode": "video"}, "render_mode"),
        ({"canonical_holds": 1}, "canonical_holds"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"illegal_penalty": 1.0}, "illegal_penalty"),
        ({"illegal_penalty": float("nan")}, "illegal_penalty"),
        ({"illegal_penalty": "bad"}, "illegal_penalty"),
    ],
)
def test_kwargs_are_validated(kwargs, match):
    with pytest.raises(ValueError, match=match):
        YahtzeeEnv(**kwargs)


def test_make_passes_kwargs():
    with pytest.raises(ValueError, match="illegal_action"):
        gym.make("Yahtzee-v0", illegal_action="ignore")
    env = gym.make("Yahtzee-v0", rules="no-joker", canonical_holds=True)
    assert env.unwrapped.rules == PRESETS["no-joker"] and env.unwrapped.canonical_holds


def test_reset_options_rejected():
    with pytest.raises(ValueError, match="no reset options"):
        YahtzeeEnv().reset(options={"first": 1})


def test_numpy_and_0d_actions_accepted():
    env = YahtzeeEnv()
    env.reset(seed=0)
    env.step(np.int64(3))
    env.step(np.array(5))
    _, reward, *_ = env.step(np.int32(box_action(Box.CHANCE)))
    assert reward > 0


# ------------------------------------------------------------------ variants and wrappers
def test_canonical_holds_mask():
    env = YahtzeeEnv(canonical_holds=True)
    _, info = env.reset(seed=8)
    roll = roll_index(info["dice"])
    assert np.array_equal(env.action_masks()[:32], CANONICAL_HOLDS[roll])
    force_state(env, [2, 2, 2, 5, 6])
    with pytest.raises(IllegalActionError, match="canonical"):
        env.step(hold_action([1, 2]))


def test_rules_kwarg_upper_first():
    env = gym.make("Yahtzee-v0", rules=PRESETS["upper-first"])
    _, info = env.reset(seed=0)
    assert info["action_mask"][32:38].all() and not info["action_mask"][38:].any()


def test_dict_observation_wrapper():
    env = DictObservation(gym.make("Yahtzee-v0"))
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert set(obs) == {"observation", "action_mask"} and obs["action_mask"].dtype == np.int8
    rng = np.random.default_rng(0)
    terminated = False
    while not terminated:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, _, terminated, _, info = env.step(action)
        assert env.observation_space.contains(obs)
        assert np.array_equal(obs["action_mask"], info["action_mask"])
    assert not obs["action_mask"].any()
    assert np.array_equal(env.action_masks(), env.unwrapped.action_masks())


def test_package_exports():
    assert yahtzee_env.NUM_ACTIONS == 45
    assert "Yahtzee-v0" in gym.registry
