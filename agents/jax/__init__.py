"""The JAX engine (``train.engine: jax``): PPO end to end in JAX on `yahtzee_env.jax`, one
compiled program between two evaluations or checkpoints (the ``jax`` extra)::

    `ppo`   the network, the learner (rollouts, GAE, updates), its state for an exact resume,
            its throughput, and its ``train``, which writes the run folder through
            `yahtzee_agents.run` only
"""
