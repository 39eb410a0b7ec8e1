"""Optimal action values for batches of `Yahtzee-v0` observations.

`OptimalOracle` answers "what is every action worth here?" from the observation alone
(the observation shows the whole solitaire state: dice, re-rolls left, filled boxes, capped
upper total, yahtzee box). It is the engine of the ``optimal`` policy and of regret grading.
A turn's keep values are computed once, when the turn's state is first seen, and cached
for its later decisions.
"""

from __future__ import annotations

import numpy as np

from yahtzee_env.game.dice import HOLD_TO_KEEP, NUM_HOLDS, NUM_KEEPS
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS
from yahtzee_env.game.observation import decode_batch
from yahtzee_env.solver.exact import NUM_YSTATES, OptimalValues


class OptimalOracle:
    """Batched optimal action values with a per-turn cache (``max_states`` turn states)."""

    def __init__(self, table: OptimalValues, max_states: int = 20_000) -> None:
        self.table = table
        self.threshold = table.rules.upper_bonus_threshold
        self.max_states = max_states
        self._slots: dict[int, int] = {}
        self._keep_values = np.empty((0, 2, NUM_KEEPS), np.float32)  # grown on first use

    def __getstate__(self) -> dict:
        # The cache is a speed-up, not state: don't ship it to worker processes.
        state = self.__dict__.copy()
        state["_slots"], state["_keep_values"] = {}, np.empty((0, 2, NUM_KEEPS), np.float32)
        return state

    def _slots_for(self, filled, upper, ystate) -> np.ndarray:
        """Cache slot of each state's keep values, solving the turns not seen yet."""
        keys = ((filled * (self.threshold + 1) + upper) * NUM_YSTATES + ystate).tolist()
        get = self._slots.get
        slots = np.fromiter((get(k, -1) for k in keys), dtype=np.int64, count=len(keys))
        missing = np.flatnonzero(slots < 0)
        if missing.size == 0:
            return slots
        if len(self._slots) + missing.size > self.max_states:
            self._slots.clear()  # full: start over with this batch's states
            missing = np.arange(len(keys))
        new_keys, first = np.unique(np.asarray(keys)[missing], return_index=True)
        rows = missing[first]
        tv = self.table.turn_values(filled[rows], upper[rows], ystate[rows])
        base = len(self._slots)
        if base + rows.size > len(self._keep_values):  # grow (a batch may exceed max_states)
            grown = np.empty((max(base + rows.size, self.max_states), 2, NUM_KEEPS), np.float32)
            grown[:base] = self._keep_values[:base]
            self._keep_values = grown
        self._keep_values[base : base + rows.size] = tv.unique_keep_values[tv.inverse]
        self._slots.update(zip(new_keys.tolist(), range(base, base + rows.size), strict=True))
        return np.fromiter((self._slots[k] for k in keys), dtype=np.int64, count=len(keys))

    def action_values(self, observations: np.ndarray) -> np.ndarray:
        """``[N, 45]`` expected final-score-to-go of every action (-inf where illegal)."""
        s = decode_batch(observations, self.threshold)
        roll, rolls_left = s["roll"], s["rolls_left"]
        filled, upper, ystate = s["filled"], s["upper"], s["yahtzee_state"]
        out = np.full((roll.size, NUM_ACTIONS), -np.inf, dtype=np.float32)
        holds = np.flatnonzero(rolls_left > 0)
        if holds.size:
            slots = self._slots_for(filled[holds], upper[holds], ystate[holds])
            stage = rolls_left[holds] - 1
            keeps = HOLD_TO_KEEP[roll[holds]].astype(np.intp)
            out[holds, :NUM_HOLDS] = self._keep_values[slots[:, None], stage[:, None], keeps]
        out[:, BOX_ACTION_OFFSET:] = self.table.box_values(filled, upper, ystate, roll)
        return out
