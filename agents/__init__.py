"""Training and evaluation agents for yahtzee-rl (the optional `train` extra: torch, SB3).

Three wings, the run below both engines: ``run/`` writes every file of a training run (with
the schedule and the shaping potential), ``sb3/`` (MaskablePPO in torch) and ``jax/`` (PPO in
JAX) train and hand it what to write; ``train.py`` picks the engine a config names. The
package's own imports are relative: its folder is ``agents/``, its name ``yahtzee_agents``.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("yahtzee-rl")  # one distribution, one version
except _metadata.PackageNotFoundError:  # imported from a source tree that is not installed
    from yahtzee_env import __version__

__all__ = ["__version__"]
