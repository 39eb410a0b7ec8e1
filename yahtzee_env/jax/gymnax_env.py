"""`Yahtzee-v0` with gymnax's interface, for PureJaxRL-style trainers.

gymnax's contract (``gymnax.environments.environment.Environment``): ``reset(key, params) ->
(obs, state)``, ``step(key, state, action, params) -> (obs, state, reward, done, info)`` with
the new game started inside ``step`` where one ends, ``action_space(params)`` /
``observation_space(params)`` with ``.n`` / ``.shape``, and an ``EnvParams`` pytree of the
settings that may change without recompiling. This module only adapts `Yahtzee`; it needs
neither gymnax nor Gymnasium::

    from yahtzee_env.jax import make_gymnax

    env, params = make_gymnax("Yahtzee-v0")              # keywords as `Yahtzee`'s
    obs, state = env.reset(key, params)                  # float32[72]
    obs, state, reward, done, info = env.step(key, state, action, params)

One seat: the reward is the seat's points (or ``illegal_penalty``); a trainer that plays a
table (self-play, the win objective) uses `Yahtzee` itself. Gymnax envs have no action mask:
``info["legal_action_mask"]`` is the mask of the state handed back, for a trainer that masks.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from yahtzee_env.game.observation import INPUT_SIZES
from yahtzee_env.jax.env import ENV_ID, State, Yahtzee, make


class EnvParams(NamedTuple):
    """gymnax's ``EnvParams``: settings read at run time (traced, no recompile). The rules,
    the holds mode and the illegal-action rule pick tables and code: they are `Yahtzee`'s."""

    # Decisions before ``done`` (truncation); the env's own ``max_episode_steps`` still holds.
    max_steps_in_episode: int = 1000


class Discrete(NamedTuple):
    """gymnax's ``spaces.Discrete``: the actions ``0 .. n - 1``."""

    n: int
    shape: tuple[int, ...] = ()
    dtype: Any = jnp.int32

    def sample(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, self.shape, 0, self.n, dtype=self.dtype)

    def contains(self, x: jax.Array) -> jax.Array:
        return jnp.logical_and(x >= 0, x < self.n)


class Box(NamedTuple):
    """gymnax's ``spaces.Box``: float arrays of ``shape`` within ``[low, high]``."""

    low: float
    high: float
    shape: tuple[int, ...]
    dtype: Any = jnp.float32

    def sample(self, key: jax.Array) -> jax.Array:
        return jax.random.uniform(key, self.shape, self.dtype, self.low, self.high)

    def contains(self, x: jax.Array) -> jax.Array:
        return jnp.logical_and(jnp.all(x >= self.low), jnp.all(x <= self.high))


class GymnaxYahtzee:
    """A `Yahtzee` of one player behind gymnax's ``reset``/``step``.

    ``input_version`` 1 gives ``Yahtzee-v0``'s 72 floats, 2 the 86 of
    `Yahtzee.model_input` (the reward-only recipe's, hard's).
    """

    def __init__(self, env: Yahtzee | None = None, input_version: int = 1) -> None:
        env = Yahtzee() if env is None else env
        if env.num_players != 1 or env.table:
            raise ValueError(
                "the gymnax adapter plays one seat: num_players=1, table=False "
                f"(got num_players={env.num_players}, table={env.table}); play a table "
                "with Yahtzee itself"
            )
        if input_version not in (1, 2):
            raise ValueError(f"input_version must be 1 or 2, got {input_version!r}")
        self.env = env
        self.input_version = input_version

    @property
    def name(self) -> str:
        return ENV_ID

    @property
    def num_actions(self) -> int:
        return self.env.num_actions

    @property
    def default_params(self) -> EnvParams:
        return EnvParams(max_steps_in_episode=self.env.max_episode_steps)

    def action_space(self, params: EnvParams | None = None) -> Discrete:
        return Discrete(self.env.num_actions)

    def observation_space(self, params: EnvParams | None = None) -> Box:
        return Box(0.0 if self.input_version == 1 else -1.0, 1.0,
                   (INPUT_SIZES[self.input_version],))  # fmt: skip

    def get_obs(self, state: State) -> jax.Array:
        return self.env.model_input(state.observation, self.input_version)

    # ------------------------------------------------------------------ gymnax's four
    def reset_env(self, key: jax.Array, params: EnvParams) -> tuple[jax.Array, State]:
        state = self.env.init(key)
        return self.get_obs(state), state

    def step_env(
        self, key: jax.Array, state: State, action: jax.Array, params: EnvParams
    ) -> tuple[jax.Array, State, jax.Array, jax.Array, dict[str, jax.Array]]:
        state = self.env.step(state, action, key)
        truncated = state.truncated | (state.step_count >= params.max_steps_in_episode)
        done = state.terminated | truncated
        info = {"discount": 1.0 - state.terminated.astype(jnp.float32),
                "terminated": state.terminated, "truncated": truncated}  # fmt: skip
        return self.get_obs(state), state, state.rewards[0], done, info

    def reset(self, key: jax.Array, params: EnvParams | None = None) -> tuple[jax.Array, State]:
        return self.reset_env(key, self.default_params if params is None else params)

    def step(
        self, key: jax.Array, state: State, action: jax.Array, params: EnvParams | None = None
    ) -> tuple[jax.Array, State, jax.Array, jax.Array, dict[str, jax.Array]]:
        """One step; where the game ends, the state and observation handed back are a new
        game's (gymnax's auto-reset), the reward and ``done`` the finished step's."""
        params = self.default_params if params is None else params
        k_step, k_reset = jax.random.split(key)
        obs_step, state_step, reward, done, info = self.step_env(k_step, state, action, params)
        obs_reset, state_reset = self.reset_env(k_reset, params)
        state = jax.tree.map(lambda a, b: jnp.where(done, a, b), state_reset, state_step)
        obs = jnp.where(done, obs_reset, obs_step)
        info["legal_action_mask"] = state.legal_action_mask
        return obs, state, reward, done, info


def make_gymnax(
    env_id: str = ENV_ID, input_version: int = 1, **kwargs
) -> tuple[GymnaxYahtzee, EnvParams]:
    """``(env, env_params)`` as ``gymnax.make`` returns them; ``kwargs`` are `Yahtzee`'s."""
    env = GymnaxYahtzee(make(env_id, **kwargs), input_version)
    return env, env.default_params


__all__ = ["Box", "Discrete", "EnvParams", "GymnaxYahtzee", "make_gymnax"]
