"""The upper-bonus shaping potential, written once for every trainer (numpy, JAX).

Potential-based shaping (Ng et al. 1999) adds F = Phi(s') - Phi(s) to each reward, with Phi = 0
at the end of a game, so a game's shaped return is its score exactly and the optimal policy is
unchanged. ``env.shaping: upper-bonus`` pays the upper bonus in advance::

    Phi(s) = shaping_weight * bonus * min(upper total / threshold, 1)   while the bonus is open
    Phi(s) = 0                                                          once it is earned

read from the 72-float observation (`yahtzee_env.game.observation`: ``UPPER_INDEX`` holds
``min(upper / threshold, 1)``, ``UPPER_BONUS_INDEX`` whether the bonus is earned).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yahtzee_env.game.observation import UPPER_BONUS_INDEX, UPPER_INDEX


def potential_weight(env_cfg: Any, bonus_value: float) -> float:
    """Points of Phi per unit of upper progress: ``shaping_weight * bonus`` under
    ``shaping: upper-bonus``, else 0 (no shaping)."""
    if env_cfg.shaping != "upper-bonus":
        return 0.0
    return float(env_cfg.shaping_weight) * float(bonus_value)


def upper_bonus_potential(obs: Any, weight: float, xp: Any = np) -> Any:
    """Phi of each row of a batch of observations ``obs`` [N, 72] (``weight``: see
    `potential_weight`); ``xp`` is ``numpy`` or ``jax.numpy``."""
    earned = obs[:, UPPER_BONUS_INDEX] > 0.5
    return weight * xp.where(earned, 0.0, obs[:, UPPER_INDEX])


def shaped_rewards(
    rewards: Any, obs: Any, dones: Any, phi: Any, weight: float, scale: float, xp: Any = np
) -> tuple[Any, Any]:
    """``(rewards + Phi(s') - Phi(s)) * scale`` of one vector step, and the Phi to carry to the
    next: ``obs`` is each row after the step, ``phi`` each row's Phi before it; a finished
    game's next state is terminal (Phi 0), and so is the carried Phi of its row (the next game
    starts at Phi 0)."""
    after = upper_bonus_potential(obs, weight, xp)
    after = xp.where(dones, 0.0, after)
    return (rewards + after - phi) * scale, after
