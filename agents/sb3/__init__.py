"""The SB3 engine (``train.engine: sb3``): MaskablePPO in torch on the native vector env (the
``train`` extra). It writes the run folder through `yahtzee_agents.run` only::

    `train`          `train`, the callback (evaluations, checkpoints, stops), the model's build
    `vec_env`        the native vector env as SB3's `VecEnv`, and the view the network learns
                     from (input version, shaping, reward scale)
    `versus_env`     `YahtzeeVs-v0` at two seats, batched, with a pool of past selves
    `resume`         everything random or positional a run carries between two rollouts (the
                     arrays of a checkpoint's state file)
    `warm_start`     supervised pre-training from a teacher, and ``policy.init``'s weights
    `anchor`         MaskablePPO held near the network it started from (``ppo.anchor_kl``)
    `distribution`   the masked categorical distribution with the work it needs only
    `bench`          its training throughput (env-steps a second, end to end)
"""
