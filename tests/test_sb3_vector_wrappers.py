"""Gymnasium's vector observation wrappers and SB3 together (issue 21.6): `SB3VecEnv` takes a
next-step-autoreset chain (which `NormalizeObservation` needs) and gives SB3 its semantics;
the reset step is a forced move that counts in no episode."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")

from yahtzee_agents.sb3.vec_env import SB3VecEnv  # noqa: E402
from yahtzee_env.envs.vector import YahtzeeVectorEnv  # noqa: E402


def _chain(num_envs: int) -> gym.vector.VectorEnv:
    env = YahtzeeVectorEnv(num_envs, autoreset_mode=AutoresetMode.NEXT_STEP)
    env = gym.wrappers.vector.NormalizeObservation(env)
    return gym.wrappers.vector.TransformObservation(env, lambda o: np.clip(o, -5, 5))


def _random_games(env: SB3VecEnv, steps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    env.reset()
    ends = []
    for _ in range(steps):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, _, dones, infos = env.step(actions)
        ends += [infos[i] for i in np.flatnonzero(dones)]
    return ends


def test_next_step_chain_reports_whole_games() -> None:
    """Random play on the next-step chain (observations normalized): every game is reported
    with its return equal to its total; the reset steps are forced moves (one legal action)
    outside every episode."""
    env = SB3VecEnv(_chain(4), seed=0)
    ends = _random_games(env, 200, seed=0)
    assert len(ends) >= 8
    for info in ends:
        assert info["episode"]["r"] == info["total"]  # the reset step adds no reward
        assert 13 <= info["episode"]["l"] <= 39  # 13 fills and at most 26 re-rolls, no reset
        assert info["terminal_observation"].shape == (72,)
    env.reset()
    rng = np.random.default_rng(1)
    resets_seen = 0
    for _ in range(120):
        masks = env.action_masks()
        forced = masks.sum(axis=1) == 1
        resets_seen += int(forced[env._resetting].all() and env._resetting.any())
        assert forced[env._resetting].all() and masks[env._resetting, 0].all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, *_ = env.step(actions)
    assert resets_seen > 0
    assert np.abs(obs).max() <= 5.0 and obs.dtype == np.float32  # the wrappers' observation


def test_maskable_ppo_trains_through_normalize_observation() -> None:
    """End to end: MaskablePPO on YahtzeeVectorEnv(NEXT_STEP) -> NormalizeObservation ->
    TransformObservation -> SB3VecEnv; its episodes are whole games."""
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = SB3VecEnv(_chain(16), seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=256, n_epochs=1, seed=0)
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    assert len(model.ep_info_buffer) >= 16
    assert all(e["r"] > 0 and 13 <= e["l"] <= 39 for e in model.ep_info_buffer)
    # the wrappers saw every step: NormalizeObservation's running count grew with them
    normalize = env.venv.env
    assert isinstance(normalize, gym.wrappers.vector.NormalizeObservation)
    assert normalize.obs_rms.count > 2048


def test_other_autoreset_modes_are_refused() -> None:
    class Disabled(gym.vector.VectorWrapper):
        @property
        def metadata(self):
            return {**self.env.metadata, "autoreset_mode": AutoresetMode.DISABLED}

    with pytest.raises(ValueError, match="SAME_STEP or NEXT_STEP"):
        SB3VecEnv(Disabled(YahtzeeVectorEnv(2)))
