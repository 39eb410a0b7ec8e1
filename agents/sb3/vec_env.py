"""Stable-Baselines3 adapter for the native `Yahtzee-v0` vector env.

`SB3VecEnv` wraps a `yahtzee_env.envs.vector.YahtzeeVectorEnv` (N games as numpy arrays) in SB3's
`VecEnv` interface, so that PPO / sb3-contrib `MaskablePPO` train on it directly::

    from sb3_contrib import MaskablePPO
    from yahtzee_agents.sb3.vec_env import SB3VecEnv

    env = SB3VecEnv(num_envs=256, rules="official", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64).learn(100_000)

SB3 semantics: ``step`` returns ``(obs, rewards float32[N], dones bool[N], infos list[dict])``
and a finished game is reset in the same step (the vector env's same-step autoreset), its
last observation in ``infos[i]["terminal_observation"]``. Episode statistics are built in:
``infos[i]["episode"] = {"r": return, "l": length, "t": seconds}`` at the end of each game, as
SB3's `Monitor` gives, so SB3's logger reports ``rollout/ep_rew_mean`` without `VecMonitor`
(wrapping in `VecMonitor` also works; its statistics replace these). The other keys of a
finished game's info are its final ``total``, ``scorecard`` (int16[13], box order of
`BOX_NAMES`), ``upper_total``, ``upper_bonus``, ``yahtzee_bonus``, ``dice`` and
``rolls_left``; the infos of running games are empty unless ``info_keys`` names keys of the
vector env's infos to copy (one dict entry per game per step: costly for large N).

Masks: ``env_method("action_masks")`` returns one ``bool[45]`` row per game, so
`sb3_contrib.common.maskable.utils.get_action_masks(env)` works. The wrapped vector env may be a
Gymnasium vector wrapper around a `YahtzeeVectorEnv` (e.g. ``RecordEpisodeStatistics``): the
masks are found through ``.unwrapped``.

Monitor: the built-in episode statistics are what SB3's `Monitor` records, so
``env_is_wrapped(Monitor)`` answers True (SB3's `evaluate_policy` then trusts ``info["episode"]``
and does not warn).

Importing this module imports SB3 (the ``train`` extra); `yahtzee_env` itself never does.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from yahtzee_env.envs.vector import YahtzeeVectorEnv
from yahtzee_env.game.observation import INPUT_SIZES, model_input
from yahtzee_env.game.rules import RuleSet

from ..run.shaping import shaped_rewards, upper_bonus_potential


class SB3VecEnv(VecEnv):
    """SB3 `VecEnv` over a `YahtzeeVectorEnv` (one is built from the keyword arguments if
    ``venv`` is None).

    Args:
        venv: the vector env to wrap: a `YahtzeeVectorEnv`, or a Gymnasium vector wrapper of
            one. Same-step autoreset is what SB3 expects; next-step autoreset (Gymnasium's
            default, which its vector observation wrappers such as `NormalizeObservation`
            need) is accepted too, see below.
        num_envs, rules, canonical_holds: passed to `YahtzeeVectorEnv` when ``venv`` is None.
        seed: seed for the first ``reset()`` (same as calling ``seed(seed)`` first).
        info_keys: keys of the vector env's infos to copy into every game's info dict.

    Next-step autoreset: the step that ends a game is reported to SB3 as usual (``done``, the
    last observation in ``infos[i]["terminal_observation"]``, the final info); SB3 then picks
    an action for the observation it was given, and at that next step the env resets the game
    instead. That reset step is a forced move: `action_masks` allows one action, its reward
    is 0 and it counts in no episode's return or length. So a PPO rollout holds one such step
    per game (~1/40 of the samples), which adds nothing to the policy's gradient (a single
    legal action has log-probability 0) and is never bootstrapped from (the step before it
    is a ``done``); its value target only trains the value of the finished card.

    Seeding: all games share one generator (the vector env's ``np_random``); ``seed(s)``
    seeds it at the next ``reset()`` and returns ``[s] * num_envs``.
    """

    def __init__(
        self,
        venv: YahtzeeVectorEnv | gym.vector.VectorWrapper | None = None,
        *,
        num_envs: int = 8,
        rules: str | RuleSet | None = "official",
        canonical_holds: bool = False,
        seed: int | None = None,
        info_keys: Sequence[str] = (),
    ) -> None:
        if venv is None:
            venv = YahtzeeVectorEnv(num_envs=num_envs, rules=rules, canonical_holds=canonical_holds)
        mode = venv.metadata.get("autoreset_mode")
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise ValueError(
                "SB3VecEnv needs a vector env with AutoresetMode.SAME_STEP or NEXT_STEP, got "
                f"{mode!r}"
            )
        self.next_step = mode == AutoresetMode.NEXT_STEP
        # NEXT_STEP: the games that ended last step and reset at this one (a forced move)
        self._resetting = np.zeros(venv.num_envs, dtype=bool)
        if not isinstance(venv.unwrapped, YahtzeeVectorEnv):
            raise TypeError(
                f"SB3VecEnv wraps a YahtzeeVectorEnv (or a vector wrapper of one), got {venv!r}"
            )
        self.venv = venv
        self.info_keys = tuple(info_keys)
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._pending_seed = seed
        self._actions: np.ndarray | None = None
        n = self.num_envs
        self._episode_returns = np.zeros(n, dtype=np.float64)
        self._episode_lengths = np.zeros(n, dtype=np.int64)
        self._episode_starts = np.full(n, time.perf_counter())

    # ------------------------------------------------------------------------- VecEnv API
    def reset(self) -> VecEnvObs:
        obs, infos = self.venv.reset(seed=self._pending_seed)
        self._pending_seed = None
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = self._per_env_infos(infos)
        self._episode_returns[:] = 0.0
        self._episode_lengths[:] = 0
        self._episode_starts[:] = time.perf_counter()
        self._resetting[:] = False
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async()")
        actions, self._actions = self._actions, None
        obs, rewards, terminations, truncations, infos = self.venv.step(actions)
        dones = terminations | truncations
        if self.next_step:  # the reset step of a game that ended is not part of the next one
            rewards = np.where(self._resetting, 0.0, rewards)
            self._episode_returns[self._resetting] = 0.0
            self._episode_lengths[self._resetting] = -1
            self._episode_starts[self._resetting] = time.perf_counter()
            self._resetting = dones.copy()
        self._episode_returns += rewards
        self._episode_lengths += 1
        per_env = self._per_env_infos(infos)
        if dones.any():
            now = time.perf_counter()
            if self.next_step:  # the last observation and info are the step's own
                final_obs, final_info = obs, infos
            else:
                final_obs, final_info = infos["final_obs"], infos["final_info"]
            for i in np.flatnonzero(dones).tolist():
                info = per_env[i]
                info.update({key: value[i] for key, value in final_info.items() if key[0] != "_"})
                info["terminal_observation"] = final_obs[i]
                info["TimeLimit.truncated"] = bool(truncations[i] and not terminations[i])
                info["episode"] = {
                    "r": float(self._episode_returns[i]),
                    "l": int(self._episode_lengths[i]),
                    "t": round(float(now - self._episode_starts[i]), 6),
                }
            self._episode_returns[dones] = 0.0
            self._episode_lengths[dones] = 0
            self._episode_starts[dones] = now
        return obs, rewards.astype(np.float32), dones, per_env

    def close(self) -> None:
        self.venv.close()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        if seed is None:
            # As SB3's own VecEnvs: drawn from the global generator that set_random_seed seeds.
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))  # noqa: NPY002
        self._pending_seed = seed
        return [seed] * self.num_envs

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The vector env's attribute, once per game (attributes are shared by all games)."""
        target = self.venv if hasattr(self.venv, attr_name) else self.venv.unwrapped
        value = getattr(target, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of the vector env; only for all games at once."""
        if len(self._indices(indices)) != self.num_envs:
            raise ValueError("attributes are shared by all games: set them for all indices")
        target = self.venv if hasattr(self.venv, attr_name) else self.venv.unwrapped
        setattr(target, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """``"action_masks"``: one ``bool[45]`` row per game. No other per-game methods."""
        if method_name != "action_masks":
            raise AttributeError(
                f"SB3VecEnv has no per-game method {method_name!r} (only 'action_masks'); "
                "use get_attr/set_attr or the wrapped vector env (.venv)"
            )
        masks = self.action_masks(*method_args, **method_kwargs)
        return [masks[i] for i in self._indices(indices)]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        """True for SB3's `Monitor` (and its base classes): the episode statistics of
        ``info["episode"]`` are built in (see the module docstring)."""
        from stable_baselines3.common.monitor import Monitor

        wrapped = isinstance(wrapper_class, type) and issubclass(Monitor, wrapper_class)
        return [wrapped for _ in self._indices(indices)]

    def action_masks(self, dtype: Any = bool) -> np.ndarray:
        """``[N, 45]`` (the same as stacking ``env_method("action_masks")``), bool by default.

        Under NEXT_STEP autoreset a game that ended last step allows one action only (0; the
        env ignores it and resets the game): a masked policy then has a single choice, so that
        step adds nothing to the policy gradient or the entropy (log-probability 0)."""
        masks = self.venv.unwrapped.action_masks(dtype)
        if self.next_step and self._resetting.any():
            masks = np.array(masks)
            masks[self._resetting] = 0
            masks[self._resetting, 0] = 1
        return masks

    # ------------------------------------------------------------------------- internals
    def _indices(self, indices: VecEnvIndices) -> list[int]:
        selected: Iterable[int] = self._get_indices(indices)
        return list(selected)

    def _per_env_infos(self, infos: dict[str, Any]) -> list[dict[str, Any]]:
        if not self.info_keys:
            return [{} for _ in range(self.num_envs)]
        columns = [(key, infos[key]) for key in self.info_keys]
        return [{key: column[i] for key, column in columns} for i in range(self.num_envs)]


class LearningView(VecEnvWrapper):
    """The vector env as the learner sees it: observations turned into the network's input
    (`observation.model_input` of ``observation_version``), rewards plus the potential-based
    shaping term F = Phi(s') - Phi(s) (Phi = 0 at the end of a game), times ``reward_scale``.

    Phi(s) = shaping_weight * upper bonus * min(upper total / threshold, 1) while the bonus is
    not earned (0 once it is): the bonus is paid in advance as the upper total grows, and paid
    back at the end of a game that misses it. A game's shaped return is its score exactly
    (Phi = 0 at the start and at the end), so the optimal policy is unchanged.
    """

    def __init__(
        self,
        venv: VecEnv,
        *,
        rules: RuleSet,
        observation_version: int = 1,
        reward_scale: float = 1.0,
        shaping_weight: float = 0.0,
    ) -> None:
        space = spaces.Box(-1.0, 1.0, (INPUT_SIZES[observation_version],), np.float32)
        super().__init__(venv, observation_space=space)
        self.version = observation_version
        self.threshold = rules.upper_bonus_threshold
        self.reward_scale = reward_scale
        self.bonus_weight = shaping_weight * rules.upper_bonus_value
        self.phi = np.zeros(venv.num_envs)

    def _potential(self, obs: np.ndarray) -> np.ndarray:
        return upper_bonus_potential(obs, self.bonus_weight)

    def _view(self, obs: np.ndarray) -> np.ndarray:
        return model_input(obs, self.version, self.threshold)

    def reset(self) -> VecEnvObs:
        obs = self.venv.reset()
        self.phi = self._potential(obs)
        return self._view(obs)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        # A finished game's row shows the next game's start (same-step autoreset, Phi = 0) or
        # its last card (next-step; the reset step that follows starts from Phi = 0).
        shaped, self.phi = shaped_rewards(
            rewards, obs, dones, self.phi, self.bonus_weight, self.reward_scale
        )
        if self.version != 1 and dones.any():  # one batched call for the step's finished games
            ended = np.flatnonzero(dones).tolist()
            views = self._view(np.stack([infos[i]["terminal_observation"] for i in ended]))
            for i, view in zip(ended, views, strict=True):
                infos[i]["terminal_observation"] = view
        return self._view(obs), shaped.astype(np.float32), dones, infos
