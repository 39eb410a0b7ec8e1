"""The reward-only recipe: its config checks, the v2 network input and the shaping wrapper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from yahtzee_env.envs.vector import YahtzeeVectorEnv
from yahtzee_env.game.observation import (
    INPUT_SIZES,
    OBS_SIZE,
    STRATEGY_SIZE,
    model_input,
    strategy_features,
)

ROOT = Path(__file__).resolve().parents[1]


def _random_states(n_steps: int = 200, num_envs: int = 64, seed: int = 0) -> np.ndarray:
    env = YahtzeeVectorEnv(num_envs=num_envs)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen = [obs.copy()]
    for _ in range(n_steps):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, *_ = env.step(actions)
        seen.append(obs.copy())
    return np.concatenate(seen)


def test_strategy_features_follow_the_rules() -> None:
    obs = _random_states()
    feats = strategy_features(obs)
    assert feats.shape == (len(obs), STRATEGY_SIZE) and feats.dtype == np.float32
    assert np.all(np.abs(feats) <= 1.0)
    counts = np.rint(obs[:, 30:36] * 5)
    np.testing.assert_array_equal(np.argmax(feats[:, 4:9], axis=1) + 1, counts.max(axis=1))
    # A large straight shows a run of four and of five; a Yahtzee shows neither.
    large = (counts.max(axis=1) == 1) & ((counts[:, 0] == 0) | (counts[:, 5] == 0))
    assert large.any()
    assert feats[large, 9].all() and feats[large, 10].all()
    assert not feats[counts.max(axis=1) == 5, 9].any()
    # The bonus is reachable while the upper total plus five of each open face reaches 63.
    upper = np.rint(np.minimum(obs[:, 65], 1.0) * 63).astype(int)
    open_faces = (obs[:, 39:45] > 0.5) @ np.arange(1, 7)
    np.testing.assert_array_equal(feats[:, 2] > 0.5, upper + 5 * open_faces >= 63)


@pytest.mark.parametrize("threshold", [63, 50])
def test_one_observation_gets_the_batch_numbers_bit_for_bit(threshold) -> None:
    """The one-row path (a CPU seat's decision, `_strategy_row`, plain Python) gives exactly
    the batch's float32 numbers on every state of 64 random games, so a level decides the
    same alone as in a batch."""
    obs = _random_states(n_steps=400)  # 64 games played out: every kind of state
    batch = strategy_features(obs, threshold)
    rows = np.concatenate([strategy_features(o, threshold) for o in obs])
    assert rows.dtype == np.float32 and rows.shape == batch.shape
    np.testing.assert_array_equal(rows.view(np.uint32), batch.view(np.uint32))
    assert len(np.unique(batch, axis=0)) > 500  # the states cover many feature values


def test_model_input_versions() -> None:
    obs = _random_states(n_steps=10)
    assert model_input(obs, 1) is obs
    v2 = model_input(obs, 2)
    assert v2.shape == (len(obs), INPUT_SIZES[2]) and INPUT_SIZES[2] == OBS_SIZE + STRATEGY_SIZE
    np.testing.assert_array_equal(v2[:, :OBS_SIZE], obs)
    with pytest.raises(ValueError, match="unknown model input version 4"):
        model_input(obs, 4)
    with pytest.raises(ValueError, match="input version 3 reads a 2-seat table observation"):
        model_input(obs, 3)  # the table's version wants the 21 table floats too


def test_a_no_teacher_config_refuses_a_teacher() -> None:
    pytest.importorskip("yaml")
    from yahtzee_agents.config import ConfigError, load_config

    cfg = load_config(ROOT / "configs" / "ppo.yaml")
    assert cfg.teacher == "none" and cfg.warm_start.teacher == "none"
    for teacher in ("optimal", "heuristic"):
        with pytest.raises(ConfigError, match=r"^warm_start\.teacher: the config's teacher is"):
            load_config(ROOT / "configs" / "ppo.yaml", [f"warm_start.teacher={teacher}"])
    with pytest.raises(ConfigError, match=r"^env\.observation_version"):
        load_config(ROOT / "configs" / "ppo.yaml", ["env.observation_version=7"])
    with pytest.raises(ConfigError, match=r"^env\.shaping:"):
        load_config(ROOT / "configs" / "ppo.yaml", ["env.shaping=solver"])


def test_an_older_config_with_reward_only_is_read_as_teacher_none(tmp_path) -> None:
    """Run folders written before the rename say ``reward_only: true``: the same config."""
    pytest.importorskip("yaml")
    from yahtzee_agents.config import ConfigError, load_config

    text = (ROOT / "configs" / "ppo.yaml").read_text()
    assert "\nteacher: none\n" in text
    old = tmp_path / "old.yaml"
    old.write_text(text.replace("\nteacher: none\n", "\nreward_only: true\n"))
    assert load_config(old) == load_config(ROOT / "configs" / "ppo.yaml")
    with pytest.raises(ConfigError, match=r"^warm_start\.teacher: the config's teacher is"):
        load_config(old, ["warm_start.teacher=optimal"])
    old.write_text(text.replace("\nteacher: none\n", "\nreward_only: false\n"))
    assert load_config(old).teacher is None
    old.write_text(text.replace("\nteacher: none\n", "\nreward_only: true\nteacher: none\n"))
    with pytest.raises(ConfigError, match=r"^reward_only: an older name"):
        load_config(old)


def test_shaped_return_is_the_score() -> None:
    """Potential-based shaping: per game, the shaped rewards sum to the score exactly, and
    the shaping pays upper points in advance."""
    pytest.importorskip("stable_baselines3")
    from yahtzee_agents.config import load_config
    from yahtzee_agents.sb3.train import make_env

    small = ["env.num_envs=32", "env.reward_scale=1.0", "ppo.batch_size=1024"]
    cfg = load_config(ROOT / "configs" / "ppo.yaml", small)
    env = make_env(cfg, seed=5)
    obs = env.reset()
    assert obs.shape == (32, INPUT_SIZES[2])
    rng = np.random.default_rng(5)
    shaped = np.zeros(32)
    results, differs = [], False
    while len(results) < 100:
        masks = np.stack(env.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        assert obs.shape == (32, INPUT_SIZES[2])
        shaped += rewards
        for i in np.flatnonzero(dones):
            results.append((shaped[i], infos[i]["episode"]["r"]))
            assert infos[i]["terminal_observation"].shape == (INPUT_SIZES[2],)
            shaped[i] = 0.0
    for total, score in results:
        assert total == pytest.approx(score, abs=1e-3)
    # Not the identity: the same games, step by step, differ from the raw rewards.
    shaped_env, raw_env = (
        make_env(load_config(ROOT / "configs" / "ppo.yaml", [*small, extra]), seed=6)
        for extra in ("env.shaping=upper-bonus", "env.shaping=none")
    )
    shaped_env.reset()
    raw_env.reset()
    for _ in range(60):
        masks = np.stack(raw_env.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, r_shaped, *_ = shaped_env.step(actions)
        _, r_raw, *_ = raw_env.step(actions)
        differs |= bool(np.abs(r_shaped - r_raw).max() > 1e-6)
    assert differs
