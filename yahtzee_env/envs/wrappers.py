"""Wrappers for `Yahtzee-v0`.

`DictObservation` gives the PettingZoo classic-style observation: a dict of the flat
observation vector and the legal-action mask, for policies that read the mask from the
observation rather than from ``action_masks()``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class DictObservation(gym.ObservationWrapper[dict[str, np.ndarray], Any, np.ndarray]):
    """``{"observation": Box(0, 1, (72,), float32), "action_mask": Box(0, 1, (45,), int8)}``.

    ``action_mask`` is the env's `action_masks()` at the time of the observation (all zeros
    after the last box). Everything else, ``action_masks()`` included, passes through.

    ```python
    env = DictObservation(gym.make("Yahtzee-v0"))
    obs, info = env.reset(seed=0)
    obs["observation"].shape, obs["action_mask"].dtype  # ((72,), dtype('int8'))
    ```
    """

    def __init__(self, env: gym.Env[np.ndarray, Any]) -> None:
        super().__init__(env)
        if not hasattr(env.unwrapped, "action_masks"):
            raise TypeError(f"DictObservation needs an env with action_masks(), got {env}")
        num_actions = int(env.action_space.n)  # type: ignore[attr-defined]
        self.observation_space = spaces.Dict(
            {
                "observation": env.observation_space,
                "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
            }
        )

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        mask = self.env.unwrapped.action_masks()  # type: ignore[attr-defined]
        return {"observation": observation, "action_mask": mask.astype(np.int8)}

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()  # type: ignore[attr-defined]
