"""What every Yahtzee env does the same way: argument checks, action ids, raise-or-penalize,
render dispatch. Used by `Yahtzee-v0` (`yahtzee.py`), its vector env (`vector.py`),
`YahtzeeVs-v0` (`versus.py`) and the PettingZoo env (`multiplayer.py`).

The checks raise `ValueError` naming the argument (never ``assert``: they hold under
``python -O`` too).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import gymnasium as gym

from yahtzee_env.game.engine import IllegalActionError

IllegalActionPolicy = Literal["raise", "penalize"]
ILLEGAL_ACTION_POLICIES = ("raise", "penalize")

# Registered `max_episode_steps` of `Yahtzee-v0` and `YahtzeeVs-v0`: a legal game of the
# agent is at most 39 actions, so only a policy that keeps choosing illegal actions under
# ``illegal_action="penalize"`` is ever truncated (instead of looping forever).
MAX_EPISODE_STEPS = 1000


class UnsupportedRenderModeError(ValueError, TypeError):
    """An env was made with a ``render_mode`` it does not support.

    A `ValueError` (a bad value), and also a `TypeError` because Stable-Baselines3's
    `make_vec_env` first tries ``gym.make(env_id, render_mode="rgb_array")`` and retries
    without a render mode only when that raises `TypeError`.
    """


def check_render_mode(render_mode: str | None, metadata: dict[str, Any]) -> None:
    """Raise `UnsupportedRenderModeError` unless ``render_mode`` is None or in the metadata."""
    if render_mode is not None and render_mode not in metadata["render_modes"]:
        raise UnsupportedRenderModeError(
            f"render_mode must be None or one of {metadata['render_modes']}, got {render_mode!r}"
        )


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return value


def check_illegal_action(illegal_action: Any, illegal_penalty: Any) -> tuple[str, float]:
    """Validated ``(illegal_action, illegal_penalty)``: ``"raise"`` or ``"penalize"``, and a
    finite number <= 0."""
    if illegal_action not in ILLEGAL_ACTION_POLICIES:
        raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {illegal_action!r}")
    if (
        isinstance(illegal_penalty, bool)
        or not isinstance(illegal_penalty, (int, float))
        or not math.isfinite(illegal_penalty)
        or illegal_penalty > 0
    ):
        raise ValueError(f"illegal_penalty must be a finite number <= 0, got {illegal_penalty!r}")
    return str(illegal_action), float(illegal_penalty)


def check_positive_int(name: str, value: Any, *, allow_none: bool = False) -> int | None:
    """``value`` as an int >= 1 (bools refused); None passes when ``allow_none``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def apply_or_penalize(
    step: Callable[[int], Any], action: int, illegal_action: str
) -> tuple[Any, bool]:
    """``(step(action), False)``, or under ``"penalize"`` ``(None, True)`` when the rules
    refuse the action (`IllegalActionError`; the state is unchanged). Under ``"raise"`` the
    error propagates."""
    try:
        return step(action), False
    except IllegalActionError:
        if illegal_action == "raise":
            raise
        return None, True


def render(render_mode: str | None, draw: dict[str, Callable[[], Any]]) -> Any:
    """The Gymnasium ``render()`` contract: ``draw[mode]()`` for ``"ansi"`` and
    ``"rgb_array"``; for ``"human"`` the text is printed and None returned; with no render mode
    a warning and None."""
    if render_mode is None:
        gym.logger.warn(
            "You are calling render method without specifying any render mode. "
            f"Set render_mode to one of {sorted(draw)} or 'human' when making the env."
        )
        return None
    if render_mode == "human":
        print(draw["ansi"]())
        return None
    return draw[render_mode]()


__all__ = [
    "ILLEGAL_ACTION_POLICIES",
    "MAX_EPISODE_STEPS",
    "IllegalActionPolicy",
    "UnsupportedRenderModeError",
    "apply_or_penalize",
    "check_bool",
    "check_illegal_action",
    "check_positive_int",
    "check_render_mode",
    "render",
]
