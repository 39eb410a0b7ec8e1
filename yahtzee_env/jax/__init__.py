"""Yahtzee for JAX (the optional ``jax`` extra: ``pip install "yahtzee-rl[jax]"``).

A pure-functional `Yahtzee-v0` in the style of pgx: an explicit `State` pytree, ``init(key)``,
``step(state, action, key)``, ``observe(state)``, the legal-action mask in the state, and
chance nodes (``step_deterministic``, ``chance_outcomes``, ``step_stochastic``). Every function
can be `jax.jit`-compiled and `jax.vmap`-ped::

    import jax
    from yahtzee_env.jax import Yahtzee

    env = Yahtzee("official")
    state = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 1024))
    obs = jax.vmap(env.observe)(state)          # float32[1024, 72]

Nothing else in ``yahtzee_env`` imports this package (the core install needs numpy and
gymnasium only). See docs/env.md, "JAX".
"""

from yahtzee_env.jax.env import OPEN, State, Yahtzee, draw_of, random_rollout, strategy_features

__all__ = ["OPEN", "State", "Yahtzee", "draw_of", "random_rollout", "strategy_features"]
