"""`Yahtzee-v0` as a native vector env: N solitaire games as numpy arrays, no loop over games.

``gym.make_vec("Yahtzee-v0", num_envs=N)`` returns a `YahtzeeVectorEnv` (the registered
``vector_entry_point``). Each field of the game state is one array over the N games; a step
is a fixed sequence of table lookups. Scoring goes only through the rule set's tables
(`BoxScoring.context_batch`, ``legal``, ``points``, `BoxScoring.yahtzee_bonus_batch`,
`rules.next_yahtzee_state`); no scoring rule is written here.

Dice: a roll is one uniform integer ``r`` in ``[0, 6**5)`` mapped through the exact outcome
table of the keep, ``bisect_right(KEEP_CDF[keep], r)``, as in `engine.DiceRoller`. Batched,
that is ``searchsorted(flat_cdf, keep * 7776 + r, side="right") - keep * 252`` over the CDF rows
flattened with offsets; this module precomputes that map for every ``(keep, r)`` once
(`outcome_table`, 3.6 MB of uint8, about 50x faster per step than the search at N=4096).

Observations: `observation.encode_batch` builds them at reset and for terminal observations.
After a step only what can have changed is rebuilt, from the feature tables of
`yahtzee_env.observation` (dice and re-rolls and points on offer for every game, scorecard
entries for games that filled a box): about 3x cheaper than a full ``encode_batch`` at
N=4096. The tests check every step against ``encode_batch`` of the state.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from yahtzee_env.dice import (
    CANONICAL_HOLDS,
    DICE,
    FIRST_ROLL_KEEP,
    HOLD_TO_KEEP,
    KEEP_CDF,
    NUM_HOLDS,
    NUM_KEEPS,
    NUM_ROLLS,
    ROLL_OUTCOMES,
)
from yahtzee_env.engine import BOX_ACTION_OFFSET, NUM_ACTIONS, ROLLS_PER_TURN, IllegalActionError
from yahtzee_env.env import step_tables
from yahtzee_env.observation import (
    BONUS_INDEX,
    DICE_SLICE,
    OBS_SIZE,
    POINTS_SLICE,
    ROLLS_LEFT_SLICE,
    encode_batch,
    write_card,
)
from yahtzee_env.rules import (
    ALL_FILLED,
    BOX_NAMES,
    NUM_BOXES,
    NUM_FILLED_MASKS,
    NUM_UPPER,
    YAHTZEE_OPEN,
    YAHTZEE_POINTS,
    RuleSet,
    next_yahtzee_state,
)

OPEN = -1  # `info["scorecard"]` value of a box not filled yet


@lru_cache(maxsize=1)
def outcome_table() -> np.ndarray:
    """uint8 ``[462 * 7776]``: entry ``keep * 7776 + r`` is ``bisect_right(KEEP_CDF[keep], r)``."""
    counts = np.diff(KEEP_CDF, axis=1, prepend=0).ravel()  # outcomes per (keep, roll)
    rolls = np.tile(np.arange(NUM_ROLLS, dtype=np.uint8), NUM_KEEPS)
    table = np.repeat(rolls, counts)
    assert table.shape == (NUM_KEEPS * ROLL_OUTCOMES,)
    table.flags.writeable = False
    return table


class _VectorScoring:
    """Flat views of the rule set's tables (and of the single env's step rows), so that every
    lookup in a step is one `np.take` over the batch."""

    def __init__(self, rules: RuleSet) -> None:
        tables = rules.tables
        rows = step_tables(rules)
        self.tables = tables
        # Row lookups: mask [(has_rolls*7 + context)*8192 + filled], legal [context*8192 +
        # filled], scaled points [roll*2 + joker_values], points [(roll*2 + values)*13 + box].
        self.mask_rows = rows.mask.reshape(-1, NUM_ACTIONS)
        self.legal_f32_rows = rows.legal_f32.reshape(-1, NUM_BOXES)
        self.points_scaled_rows = rows.points_scaled.reshape(-1, NUM_BOXES)
        self.points_flat = tables.points.reshape(-1)
        # Full-width observation rows with only the dice and re-rolls entries set: [roll*3 + rl].
        dice_rolls = rows.dice_rolls.reshape(-1, rows.dice_rolls.shape[-1])
        self.turn_rows = np.zeros((len(dice_rolls), OBS_SIZE), dtype=np.float32)
        self.turn_rows[:, : dice_rolls.shape[1]] = dice_rolls
        # Outcome-table offset of the dice kept by each (roll, action): [roll*45 + action].
        # Box actions end the turn, so the next roll keeps nothing (a first roll).
        keep = np.full((NUM_ROLLS, NUM_ACTIONS), FIRST_ROLL_KEEP, dtype=np.intp)
        keep[:, :NUM_HOLDS] = HOLD_TO_KEEP
        self.keep_offsets = (keep * ROLL_OUTCOMES).reshape(-1)
        # Next yahtzee-box state, [state, box, scored > 0], from `rules.next_yahtzee_state`.
        nxt = np.array(
            [
                [
                    [next_yahtzee_state(s, b, p) for p in (0, YAHTZEE_POINTS)]
                    for b in range(NUM_BOXES)
                ]
                for s in range(3)
            ],
            dtype=np.intp,
        )
        self.next_yahtzee_flat = nxt.reshape(-1)
        self.threshold = rules.upper_bonus_threshold
        self.upper_bonus_value = rules.upper_bonus_value
        self.num_contexts = tables.legal.shape[0]


class YahtzeeVectorEnv(VectorEnv):
    """N independent games of `Yahtzee-v0` stepped together, with batched numpy state.

    Same rules, actions, observations and rewards as `yahtzee_env.env.YahtzeeEnv`; the
    difference is only in batching. ``gym.make_vec("Yahtzee-v0", num_envs=N,
    vectorization_mode="vector_entry_point", rules=..., canonical_holds=...)`` builds one.

    Spaces: ``single_action_space = Discrete(45)``, ``action_space = MultiDiscrete([45] * N)``;
    ``single_observation_space = Box(0, 1, (72,), float32)``, ``observation_space`` the same
    with a leading ``N`` axis.

    Autoreset: ``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``). The step that
    fills a game's thirteenth box returns its reward and ``terminations[i] = True`` together
    with the *first observation of the next game*; the terminal observation and info are in
    ``infos["final_obs"]`` (an object array of N entries: the ``float32[72]`` terminal
    observation where ``infos["_final_obs"]``, else None; Gymnasium's `SyncVectorEnv` format)
    and ``infos["final_info"]`` (a dict of ``[N, ...]`` arrays with the info keys below except
    ``action_mask``; read rows where ``infos["_final_info"]``, the other rows hold the running
    games' values). These keys are present only on steps where a game ended.

    Same-step is chosen because every observation then shows a live position with a non-empty
    action mask (next-step autoreset would hand a masked policy an all-False mask and spend a
    no-op step per game), and it is what Stable-Baselines3 expects (see
    `yahtzee_agents.vec_env.SB3VecEnv`). ``truncations`` is always False.

    ``infos`` (every step and reset; dict of arrays, rows are games):

    - ``"dice"`` int8 ``[N, 5]`` sorted; ``"rolls_left"`` ``[N]``;
    - ``"scorecard"`` int16 ``[N, 13]``: points per box in `BOX_NAMES` order, ``-1`` while open;
    - ``"upper_total"``, ``"upper_bonus"``, ``"yahtzee_bonus"``, ``"total"`` ``[N]``;
    - ``"action_mask"`` int8 ``[N, 45]`` (the same memory as `action_masks()`, read-only).

    Returned arrays are never modified afterwards: keep them without copying.

    Illegal actions raise `yahtzee_env.IllegalActionError` naming the env indices; no game
    changes. Randomness: ``self.np_random``, seeded by ``reset(seed=...)``; the same seed and
    actions give the same results.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int = 1,
        rules: str | RuleSet | None = "official",
        canonical_holds: bool = False,
        render_mode: str | None = None,
    ) -> None:
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if not isinstance(canonical_holds, bool):
            raise ValueError(f"canonical_holds must be a bool, got {canonical_holds!r}")
        if render_mode is not None:
            raise ValueError(
                f"YahtzeeVectorEnv does not render (render_mode={render_mode!r}); "
                "render a single Yahtzee-v0 env instead"
            )
        self.num_envs = int(num_envs)
        self.rules = RuleSet.from_spec(rules)
        self.canonical_holds = canonical_holds
        self.render_mode = None
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

        self._t = _VectorScoring(self.rules)
        self._outcomes = outcome_table()
        n = self.num_envs
        self._action_offsets = np.arange(n) * NUM_ACTIONS  # flat index of action 0 of a game
        self._box_offsets = np.arange(n) * NUM_BOXES  # flat index of box 0 of a game
        self._started = False
        # State, one array per field. Arrays handed out in infos are never modified afterwards:
        # a step builds new ones.
        self._roll = np.zeros(n, dtype=np.intp)
        self._rolls_left = np.zeros(n, dtype=np.intp)
        self._filled = np.zeros(n, dtype=np.intp)
        self._upper_total = np.zeros(n, dtype=np.int64)
        self._yahtzee_state = np.zeros(n, dtype=np.intp)
        self._yahtzee_bonus = np.zeros(n, dtype=np.int64)
        self._total = np.zeros(n, dtype=np.int64)
        self._scores = np.full((n, NUM_BOXES), OPEN, dtype=np.int16)
        # Derived from the state by `_observe`: joker values of the dice, masks, observation.
        self._values = np.zeros(n, dtype=np.intp)
        self._bonus = np.zeros(n, dtype=np.int64)
        self._mask = np.zeros((n, NUM_ACTIONS), dtype=bool)
        # The scorecard entries of the observation (zeros elsewhere); rewritten per filled box.
        self._card_obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self._obs = np.zeros((n, OBS_SIZE), dtype=np.float32)

    # ------------------------------------------------------------------------- Gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if options:
            raise ValueError(f"YahtzeeVectorEnv takes no reset options, got {sorted(options)}")
        n = self.num_envs
        self._roll = self._roll_dice(np.full(n, FIRST_ROLL_KEEP * ROLL_OUTCOMES, dtype=np.intp))
        self._rolls_left = np.full(n, ROLLS_PER_TURN - 1, dtype=np.intp)
        self._filled = np.zeros(n, dtype=np.intp)
        self._upper_total = np.zeros(n, dtype=np.int64)
        self._yahtzee_state = np.full(n, YAHTZEE_OPEN, dtype=np.intp)
        self._yahtzee_bonus = np.zeros(n, dtype=np.int64)
        self._total = np.zeros(n, dtype=np.int64)
        self._scores = np.full((n, NUM_BOXES), OPEN, dtype=np.int16)
        self._started = True
        self._observe(changed=None)
        return self._obs, self._infos()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise IllegalActionError("call reset() before step()")
        t = self._t
        actions = self._check_actions(actions)
        if not self._mask.reshape(-1).take(self._action_offsets + actions).all():
            self._raise_illegal(actions)
        roll, filled, ystate = self._roll, self._filled, self._yahtzee_state
        is_hold = actions < NUM_HOLDS
        fill = ~is_hold
        box = np.maximum(actions - BOX_ACTION_OFFSET, 0)  # 0 for holds, whose points are dropped

        # Fill boxes: points from the rule set's table, at the joker values `_observe` found.
        points = t.points_flat.take((roll * 2 + self._values) * NUM_BOXES + box) * fill
        bonus = self._bonus * fill
        filling = np.flatnonzero(fill)
        scores = self._scores.copy()
        scores.reshape(-1)[self._box_offsets[filling] + box[filling]] = points[filling]
        filled = filled | (fill << box)
        upper_before = self._upper_total
        upper_total = upper_before + points * (box < NUM_UPPER)
        rewards = points + bonus + self.rules.upper_bonus_gain(upper_before, upper_total)
        next_state = t.next_yahtzee_flat.take((ystate * NUM_BOXES + box) * 2 + (points > 0))
        ystate = np.where(fill, next_state, ystate)
        total = self._total + rewards
        yahtzee_bonus = self._yahtzee_bonus + bonus

        # Roll: the unkept dice after a hold, all five (the next turn's first roll) after a fill.
        new_roll = self._roll_dice(t.keep_offsets.take(roll * NUM_ACTIONS + actions))
        rolls_left = np.where(is_hold, self._rolls_left - 1, ROLLS_PER_TURN - 1)

        terminations = filled == ALL_FILLED
        infos: dict[str, Any] = {}
        if terminations.any():
            # The ended games' last state goes to `final_obs`/`final_info` (whole arrays, read
            # where `_final_info`); then same-step autoreset to a fresh scorecard (the fill has
            # already made the next game's first roll).
            infos["final_obs"] = self._final_obs(terminations, roll, upper_total, ystate)
            infos["final_info"] = {
                "dice": DICE.take(roll, axis=0),
                "rolls_left": np.zeros(self.num_envs, dtype=np.intp),
                "scorecard": scores,
                "upper_total": upper_total,
                "upper_bonus": (upper_total >= t.threshold) * t.upper_bonus_value,
                "yahtzee_bonus": yahtzee_bonus,
                "total": total,
            }
            infos["_final_obs"] = infos["_final_info"] = terminations
            done = np.flatnonzero(terminations)
            live = ~terminations
            filled = filled * live
            upper_total = upper_total * live
            ystate = np.where(live, ystate, YAHTZEE_OPEN)
            yahtzee_bonus = yahtzee_bonus * live
            total = total * live
            scores = scores.copy()  # final_info keeps the finished scorecards
            scores[done] = OPEN

        self._roll, self._rolls_left, self._filled = new_roll, rolls_left, filled
        self._upper_total, self._yahtzee_state = upper_total, ystate
        self._yahtzee_bonus, self._total, self._scores = yahtzee_bonus, total, scores
        self._observe(changed=filling)
        infos.update(self._infos())
        truncations = np.zeros(self.num_envs, dtype=bool)
        return self._obs, rewards.astype(np.float64), terminations, truncations, infos

    def action_masks(self) -> np.ndarray:
        """bool ``[N, 45]``: the legal actions of every game (never all False in a row)."""
        return self._mask

    # ------------------------------------------------------------------------- internals
    def _roll_dice(self, keep_offsets: np.ndarray) -> np.ndarray:
        """New rolls from ``keep * 7776`` per game (see the module docstring)."""
        r = self.np_random.integers(0, ROLL_OUTCOMES, size=self.num_envs, dtype=np.uint16)
        return self._outcomes.take(keep_offsets + r).astype(np.intp)

    def _observe(self, changed: np.ndarray | None) -> None:
        """Derive joker values, action masks and the observation of the current state.

        ``changed`` lists the games whose scorecard changed since the last call (None: all).
        The observation is `observation.encode_batch` of the state; after a step only the
        entries that can have changed are rewritten, from the same feature tables (the tests
        compare every step with `encode_batch`).
        """
        t = self._t
        roll, rolls_left, filled = self._roll, self._rolls_left, self._filled
        upper_total, ystate = self._upper_total, self._yahtzee_state
        context, values = t.tables.context_batch(roll, filled, ystate)
        legal_row = context * NUM_FILLED_MASKS + filled
        has_rolls = rolls_left > 0
        mask = t.mask_rows.take(has_rolls * (t.num_contexts * NUM_FILLED_MASKS) + legal_row, axis=0)
        if self.canonical_holds:
            mask[:, :NUM_HOLDS] &= CANONICAL_HOLDS.take(roll, axis=0)
        mask.flags.writeable = False
        self._values, self._mask = values, mask
        self._bonus = t.tables.yahtzee_bonus_batch(roll, ystate)  # earned if placed now
        bonus = self._bonus > 0
        if changed is None:
            legal = mask[:, BOX_ACTION_OFFSET:]
            points = t.tables.points[roll, values]
            obs = encode_batch(
                roll, rolls_left, filled, upper_total, ystate, legal, points, t.threshold, bonus
            )  # fmt: skip
            self._card_obs[...] = obs
            for turn_entries in (DICE_SLICE, ROLLS_LEFT_SLICE, POINTS_SLICE, BONUS_INDEX):
                self._card_obs[:, turn_entries] = 0.0
            self._obs = obs
            return
        # Games that filled a box: their scorecard entries.
        if len(changed):
            rows = np.zeros((len(changed), OBS_SIZE), dtype=np.float32)
            write_card(
                rows,
                filled.take(changed),
                upper_total.take(changed),
                ystate.take(changed),
                t.threshold,
            )
            self._card_obs[changed] = rows
        # Every game rolled: a fresh array of the dice and re-rolls entries, plus the scorecard
        # entries, plus the points on offer and the bonus flag. (Few, contiguous operations:
        # a strided write of [N, 39] costs as much as building the whole row.)
        obs = t.turn_rows.take(roll * ROLLS_PER_TURN + rolls_left, axis=0)
        obs += self._card_obs
        np.multiply(
            t.points_scaled_rows.take(roll * 2 + values, axis=0),
            t.legal_f32_rows.take(legal_row, axis=0),
            out=obs[:, POINTS_SLICE],
        )
        obs[:, BONUS_INDEX] = bonus
        self._obs = obs

    def _infos(self) -> dict[str, Any]:
        t = self._t
        return {
            "dice": DICE.take(self._roll, axis=0),
            "rolls_left": self._rolls_left,
            "scorecard": self._scores,
            "upper_total": self._upper_total,
            "upper_bonus": (self._upper_total >= t.threshold) * t.upper_bonus_value,
            "yahtzee_bonus": self._yahtzee_bonus,
            "total": self._total,
            "action_mask": self._mask.view(np.int8),
        }

    def _check_actions(self, actions: Any) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(
                f"expected {self.num_envs} actions (shape ({self.num_envs},)), "
                f"got shape {actions.shape}"
            )
        if actions.dtype.kind not in "iu":
            raise IllegalActionError(f"actions must be integers, got dtype {actions.dtype}")
        actions = actions.astype(np.intp, copy=False)
        if actions.min() < 0 or actions.max() >= NUM_ACTIONS:
            bad = np.flatnonzero((actions < 0) | (actions >= NUM_ACTIONS))
            raise IllegalActionError(
                f"actions out of range 0..{NUM_ACTIONS - 1} at env indices {_shorten(bad)}: "
                f"{_shorten(actions[bad])}. No game was changed."
            )
        return actions

    def _raise_illegal(self, actions: np.ndarray) -> None:
        ok = self._mask.reshape(-1).take(self._action_offsets + actions)
        bad = np.flatnonzero(~ok)
        details = []
        for i in bad[:5].tolist():
            a = int(actions[i])
            if a < NUM_HOLDS:
                why = "no re-rolls left" if self._rolls_left[i] == 0 else "not a canonical hold"
            else:
                name = BOX_NAMES[a - BOX_ACTION_OFFSET]
                is_filled = (int(self._filled[i]) >> (a - BOX_ACTION_OFFSET)) & 1
                why = f"box {name!r} " + ("is filled" if is_filled else "is not allowed now")
            details.append(f"env {i}: action {a}, {why}")
        more = f"; and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise IllegalActionError(
            f"illegal actions at env indices {_shorten(bad)} ({'; '.join(details)}{more}). "
            "No game was changed."
        )

    def _final_obs(
        self,
        terminations: np.ndarray,
        roll: np.ndarray,
        upper_total: np.ndarray,
        ystate: np.ndarray,
    ) -> np.ndarray:
        """Terminal observations: an object array, a ``float32[72]`` row for each game that
        ended, None for the others (the format of Gymnasium's own vector envs)."""
        done = np.flatnonzero(terminations)
        k = len(done)
        last_roll, last_state = roll.take(done), ystate.take(done)
        nothing_legal = np.zeros((k, NUM_BOXES), dtype=bool)
        rows = encode_batch(
            last_roll, np.zeros(k, dtype=np.intp), np.full(k, ALL_FILLED, dtype=np.intp),
            upper_total.take(done), last_state, nothing_legal, nothing_legal, self._t.threshold,
            self._t.tables.yahtzee_bonus_batch(last_roll, last_state) > 0,
        )  # fmt: skip
        final_obs = np.empty(self.num_envs, dtype=object)
        for i, row in zip(done.tolist(), rows, strict=True):
            final_obs[i] = row
        return final_obs


def _shorten(values: np.ndarray, limit: int = 10) -> str:
    items = ", ".join(str(v) for v in values[:limit].tolist())
    return f"[{items}{', ...' if len(values) > limit else ''}]"


__all__ = ["OPEN", "YahtzeeVectorEnv", "outcome_table"]
