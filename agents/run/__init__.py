"""The run wing: what every trainer writes through (RL Zoo's ``ExperimentManager``), below
both engines (`yahtzee_agents.sb3`, `yahtzee_agents.jax`), which write no file of a run
themselves. One owner for each fact a training run shares, whichever engine trains it::

    `folder`      the run folder's shape: paths, config.yaml, command.txt, meta.json (with
                  what the agent knew), evals.jsonl, best/ and final/, the models and
                  checkpoints (names, state files, pruning), sessions.jsonl, the checks before
                  a resume, stop requests, the final result: every file of a run is written here
    `schedule`    a config value over env-steps (the learning-rate schedule): numpy, JAX, SB3
    `shaping`     the upper-bonus shaping potential, numpy or JAX
    `provenance`  what a run ran on (versions, CPU, kernels), for meta.json
    `tracking`    the run's TensorBoard scalars mirrored to Weights & Biases (RUN_DIR/wandb/)

It imports only the config (`yahtzee_agents.config`) and ``yahtzee_env``; `yahtzee_agents.train`
picks the engine. ``tests/test_run_wing.py`` holds the wing: no run file is written outside it.
"""
