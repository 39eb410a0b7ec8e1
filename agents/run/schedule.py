"""A config value over env-steps, written once for every trainer (numpy, JAX).

A `yahtzee_agents.config.Schedule` goes linearly from ``start`` (env-step 0) to ``end``
(env-step ``length``) and stays at ``end`` after. SB3 reads it through
`yahtzee_agents.config.StepSchedule`, the JAX trainer inside its compiled update with
``xp=jax.numpy``: both call `scheduled`.
"""

from __future__ import annotations

from typing import Any


def scheduled(value: Any, step: Any, total_timesteps: int, xp: Any = None) -> Any:
    """``value`` (a constant or a ``Schedule``) at env-step ``step`` of a run of
    ``total_timesteps`` steps. ``xp``: None for Python floats, else an array module (``numpy``,
    ``jax.numpy``) whose ``clip`` takes ``step`` as an array (traced under ``jax.jit``)."""
    if not hasattr(value, "start"):  # a constant
        return value if xp is None else xp.asarray(value, dtype=xp.float32)
    length = value.length(total_timesteps)
    if xp is None:
        done = min(max(step / length, 0.0), 1.0) if length > 0 else 1.0
        return value.start + (value.end - value.start) * done
    done = xp.clip(step / length, 0.0, 1.0) if length > 0 else xp.asarray(1.0)
    return value.start + (value.end - value.start) * done


__all__ = ["scheduled"]
