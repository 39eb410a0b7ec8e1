"""Training and evaluation agents for yahtzee-rl (the optional `train` extra: torch, SB3)."""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("yahtzee-rl")  # one distribution, one version
except _metadata.PackageNotFoundError:  # imported from a source tree that is not installed
    from yahtzee_env import __version__

__all__ = ["__version__"]
