"""Yahtzee for JAX (the optional ``jax`` extra: ``pip install "yahtzee-rl[jax]"``).

A pure-functional `Yahtzee-v0` in the shape of pgx: an explicit `State` pytree, ``init(key)``,
``step(state, action, key)``, ``observe(state)``, the legal-action mask and the observation in
the state, chance nodes (``step_deterministic``, ``chance_outcomes``, ``step_stochastic``),
`make` and `auto_reset`; and the same game behind gymnax's ``reset(key, params)`` /
``step(key, state, action, params)`` (`make_gymnax`). Every function can be `jax.jit`-compiled
and `jax.vmap`-ped::

    import jax
    import yahtzee_env.jax as yjax

    env = yjax.make("Yahtzee-v0")
    state = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 1024))
    state.observation                               # float32[1024, 72]

Nothing else in ``yahtzee_env`` imports this package, and it imports no Gymnasium module (the
core install needs numpy and gymnasium only). See docs/env.md, "JAX".
"""

from yahtzee_env.jax.env import (
    ENV_ID,
    OPEN,
    State,
    Yahtzee,
    auto_reset,
    draw_of,
    make,
    random_rollout,
    strategy_features,
)
from yahtzee_env.jax.gymnax_env import Box, Discrete, EnvParams, GymnaxYahtzee, make_gymnax

__all__ = [
    "ENV_ID",
    "OPEN",
    "Box",
    "Discrete",
    "EnvParams",
    "GymnaxYahtzee",
    "State",
    "Yahtzee",
    "auto_reset",
    "draw_of",
    "make",
    "make_gymnax",
    "random_rollout",
    "strategy_features",
]
