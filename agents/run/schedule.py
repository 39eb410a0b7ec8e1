"""A config value over env-steps, written once for every trainer (numpy, JAX, SB3).

A `Schedule` (`yahtzee_agents.config`) goes linearly from ``start`` (env-step 0) to ``end``
(env-step ``length``) and stays at ``end`` after. Each trainer takes it in its own form, all
from `scheduled`: a float at a step (the SB3 engine's entropy coefficient), an array under
``jax.jit`` (the JAX engine's learning rate, ``xp=jax.numpy``) and SB3's callable of its
progress (`StepSchedule`, for the learning rate and the clip range).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import Schedule


def scheduled(value: float | Schedule, step: Any, total_timesteps: int, xp: Any = None) -> Any:
    """``value`` (a constant or a ``Schedule``) at env-step ``step`` of a run of
    ``total_timesteps`` steps. ``xp``: None for Python floats, else an array module (``numpy``,
    ``jax.numpy``) whose ``clip`` takes ``step`` as an array (traced under ``jax.jit``)."""
    if not isinstance(value, Schedule):  # a constant
        return value if xp is None else xp.asarray(value, dtype=xp.float32)
    length = value.length(total_timesteps)
    if xp is None:
        done = min(max(step / length, 0.0), 1.0) if length > 0 else 1.0
        return value.start + (value.end - value.start) * done
    done = xp.clip(step / length, 0.0, 1.0) if length > 0 else xp.asarray(1.0)
    return value.start + (value.end - value.start) * done


@dataclass(frozen=True)
class StepSchedule:
    """The SB3 form of a `Schedule`: SB3 calls it with ``progress_remaining = 1 - n / total``
    (``total`` = the run's ``train.total_timesteps``, also when resumed or extended), which
    gives back the env-step ``n``; the value is the schedule's at ``n``. Picklable (SB3 saves
    it in its model file; a checkpoint written before it moved here names it
    ``yahtzee_agents.config.StepSchedule``, and the SB3 engine's resume replaces it unread)."""

    schedule: Schedule
    total_timesteps: int

    def __call__(self, progress_remaining: float) -> float:
        step = (1.0 - progress_remaining) * self.total_timesteps
        return scheduled(self.schedule, step, self.total_timesteps)


def sb3_value(value: float | Schedule, total_timesteps: int) -> float | StepSchedule:
    """What to give SB3 for a config value that may be a schedule: the constant, or its
    `StepSchedule`."""
    return StepSchedule(value, total_timesteps) if isinstance(value, Schedule) else value


__all__ = ["StepSchedule", "sb3_value", "scheduled"]
