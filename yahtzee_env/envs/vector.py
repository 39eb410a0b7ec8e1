"""`Yahtzee-v0` as a native vector env: N solitaire games as numpy arrays, no loop over games.

``gym.make_vec("Yahtzee-v0", num_envs=N)`` returns a `YahtzeeVectorEnv` (the registered
``vector_entry_point``). Each field of the game state is one array over the N games; a step
is a fixed sequence of table lookups. Scoring goes only through the rule set's tables
(`BoxScoring.context_batch`, ``legal``, ``points``, `BoxScoring.yahtzee_bonus`) and a
fill through `BoxScoring.fill`, the engine's own; no scoring rule is written here.

Dice: a roll is one uniform integer ``r`` in ``[0, 6**5)`` mapped through the exact outcome
table of the keep, ``bisect_right(KEEP_CDF[keep], r)``, as in `engine.DiceRoller`. Batched,
that is ``searchsorted(flat_cdf, keep * 7776 + r, side="right") - keep * 252`` over the CDF rows
flattened with offsets; this module precomputes that map for every ``(keep, r)`` once
(`outcome_table`, 3.6 MB of uint8, about 50x faster per step than the search at N=4096).
With ``duplicate=True`` the dice are dealt instead (`yahtzee_env.game.fair_dice`): game ``k``
of slot ``i`` rolls from the seed ``batch_seed(key, i, k)``, ``key`` 32 bytes drawn at reset,
each roll by the game's turn and roll, not by step; two envs reset with the same seed deal
the same dice to the same slot's games however they are played (common random numbers).

Observations: `observation.encode_batch` builds them at reset and for terminal observations.
After a step only what can have changed is rebuilt, from the feature tables of
`yahtzee_env.game.observation` (dice and re-rolls and points on offer for every game, scorecard
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

from yahtzee_env.envs.checks import (
    IllegalActionPolicy,
    check_bool,
    check_illegal_action,
    check_positive_int,
    check_render_mode,
    render,
)
from yahtzee_env.envs.info import OPEN, make_info
from yahtzee_env.game.dice import (
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
from yahtzee_env.game.engine import (
    BOX_ACTION_OFFSET,
    NUM_ACTIONS,
    ROLLS_PER_TURN,
    IllegalActionError,
)
from yahtzee_env.game.fair_dice import SEED_BYTES, batch_seed, dealt_rolls, faces_table
from yahtzee_env.game.observation import (
    BONUS_INDEX,
    CARD_SPAN,
    DICE_SLICE,
    OBS_CARD_IN_SPAN,
    OBS_SIZE,
    POINTS_SLICE,
    ROLLS_LEFT_SLICE,
    encode_batch,
    write_card,
)
from yahtzee_env.game.render import CardView, render_card_rgb, render_card_text
from yahtzee_env.game.rules import (
    ALL_FILLED,
    BOX_NAMES,
    NUM_BOXES,
    NUM_FILLED_MASKS,
    YAHTZEE_OPEN,
    RuleSet,
)
from yahtzee_env.game.step_tables import step_tables


def roll_draws(rng: np.random.Generator, size: int) -> np.ndarray:
    """uint16 ``[size]``: one uniform ``r`` in ``[0, 6**5)`` per game, the step's dice (one
    draw per game per step, whatever the game does). The benchmark's dice digest
    (`yahtzee_env.analysis.protocol.dice_digest`) hashes these draws, so it is this call."""
    return rng.integers(0, ROLL_OUTCOMES, size=size, dtype=np.uint16)


@lru_cache(maxsize=1)
def outcome_table() -> np.ndarray:
    """uint8 ``[462 * 7776]``: entry ``keep * 7776 + r`` is ``bisect_right(KEEP_CDF[keep], r)``."""
    counts = np.diff(KEEP_CDF, axis=1, prepend=0).ravel()  # outcomes per (keep, roll)
    rolls = np.tile(np.arange(NUM_ROLLS, dtype=np.uint8), NUM_KEEPS)
    table = np.repeat(rolls, counts)
    assert table.shape == (NUM_KEEPS * ROLL_OUTCOMES,)
    table.flags.writeable = False
    return table


_TURNS = np.array([bin(f).count("1") for f in range(NUM_FILLED_MASKS)], dtype=np.intp)


class _VectorScoring:
    """Flat views of the rule set's tables (and of the single env's step rows), so that every
    lookup in a step is one `np.take` over the batch."""

    def __init__(self, rules: RuleSet) -> None:
        tables = rules.tables
        rows = step_tables(rules)
        self.tables = tables
        # Row lookups: mask [(has_rolls*7 + context)*8192 + filled], legal [context*8192 +
        # filled], scaled points [roll*2 + joker_values].
        self.mask_rows = rows.mask.reshape(-1, NUM_ACTIONS)
        self.legal_f32_rows = rows.legal_f32.reshape(-1, NUM_BOXES)
        self.points_scaled_rows = rows.points_scaled.reshape(-1, NUM_BOXES)
        # Full-width observation rows with only the dice and re-rolls entries set: [roll*3 + rl].
        dice_rolls = rows.dice_rolls.reshape(-1, rows.dice_rolls.shape[-1])
        self.turn_rows = np.zeros((len(dice_rolls), OBS_SIZE), dtype=np.float32)
        self.turn_rows[:, : dice_rolls.shape[1]] = dice_rolls
        # Outcome-table offset of the dice kept by each (roll, action): [roll*45 + action].
        # Box actions end the turn, so the next roll keeps nothing (a first roll).
        keep = np.full((NUM_ROLLS, NUM_ACTIONS), FIRST_ROLL_KEEP, dtype=np.intp)
        keep[:, :NUM_HOLDS] = HOLD_TO_KEEP
        self.keep_offsets = (keep * ROLL_OUTCOMES).reshape(-1)
        self.threshold = rules.upper_bonus_threshold
        self.num_contexts = tables.legal.shape[0]


class YahtzeeVectorEnv(VectorEnv):
    """N independent games of `Yahtzee-v0` stepped together, with batched numpy state.

    Same rules, actions, observations, rewards, infos and keyword arguments as
    `yahtzee_env.envs.yahtzee.YahtzeeEnv`; the difference is only in batching. ``gym.make_vec(
    "Yahtzee-v0", num_envs=N, vectorization_mode="vector_entry_point", rules=...,
    canonical_holds=..., illegal_action=..., illegal_penalty=..., render_mode=...,
    autoreset_mode=...)`` builds one (``max_episode_steps`` comes from the registration, 1000,
    or from the call).

    Spaces: ``single_action_space = Discrete(45)``, ``action_space = MultiDiscrete([45] * N)``;
    ``single_observation_space = Box(0, 1, (72,), float32)``, ``observation_space`` the same
    with a leading ``N`` axis.

    Autoreset (``autoreset_mode``, also in ``metadata["autoreset_mode"]``):

    - ``AutoresetMode.SAME_STEP`` (default): the step that ends a game returns its reward and
      ``terminations[i]`` (or ``truncations[i]``) together with the *first observation of the
      next game*; the last observation and info of the ended game are in
      ``infos["final_obs"]`` (an object array of N entries: the ``float32[72]`` observation
      where ``infos["_final_obs"]``, else None) and ``infos["final_info"]`` (the info dict
      with ``[N, ...]`` arrays and ``_key`` masks, read rows where ``infos["_final_info"]``),
      as Gymnasium's `SyncVectorEnv` gives them. These keys are present only on steps where a
      game ended. Every observation shows a live position with a usable mask, and it is what
      Stable-Baselines3 expects (`yahtzee_agents.sb3.vec_env.SB3VecEnv`).
    - ``AutoresetMode.NEXT_STEP`` (Gymnasium's default, needed by its vector observation
      wrappers): the step that ends a game returns its last observation; the next step ignores
      that game's action and returns the first observation of a new game with reward 0. Until
      then the ended game's mask (``action_masks()`` and ``infos["action_mask"]``) is all
      True, not all False: a masked policy can still sample the action that will be ignored,
      so the mask is never all False, whether the game is live or waiting for its reset.

    Truncation: a game is truncated after ``max_episode_steps`` steps (None: never); no legal
    game reaches the registered 1000 (a game is at most 39 actions).

    Duplicate dice (``duplicate=True``): each game's dice are dealt by turn and roll from its
    own seed (the module docstring), so envs reset with the same seed give the same slot the
    same dice whatever their policies hold: policies compared on them differ by skill only.

    ``infos`` (every step and reset): the keys of `yahtzee_env.envs.info` with a leading ``[N]``
    axis and the same dtypes as the single env (``dice`` int8 ``[N, 5]``, ``scorecard``
    int16 ``[N, 13]`` with ``-1`` while open, ...), each with its ``_key`` mask (all True), as
    `SyncVectorEnv` builds from single envs. Under ``illegal_action="penalize"`` a step with
    penalized games also has ``illegal_action`` (bool ``[N]``) and ``_illegal_action`` (the
    penalized games). Returned arrays are never modified afterwards: keep them without
    copying.

    Illegal actions raise `yahtzee_env.IllegalActionError` naming the env indices, and no game
    changes; or, with ``illegal_action="penalize"``, the games that chose one get
    ``illegal_penalty`` and do not change while the others step. Randomness:
    ``self.np_random``, seeded by ``reset(seed=...)``; the same seed and actions give the same
    results. ``render()`` draws the first game (``"ansi"``, ``"rgb_array"``, ``"human"``).
    ``call``/``get_attr``/``set_attr``: ``call("action_masks")`` gives a row per game; other
    attributes are shared by all games (``set_attr`` takes one value for all).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 4,
    }

    def __init__(
        self,
        num_envs: int = 1,
        rules: str | RuleSet | None = "official",
        canonical_holds: bool = False,
        render_mode: str | None = None,
        illegal_action: IllegalActionPolicy = "raise",
        illegal_penalty: float = -1.0,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        duplicate: bool = False,
    ) -> None:
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.rules = RuleSet.from_spec(rules)
        self.canonical_holds = check_bool("canonical_holds", canonical_holds)
        self.duplicate = check_bool("duplicate", duplicate)
        self.metadata = dict(self.metadata)
        check_render_mode(render_mode, self.metadata)
        self.render_mode = render_mode
        self.illegal_action, self.illegal_penalty = check_illegal_action(
            illegal_action, illegal_penalty
        )
        self.max_episode_steps = check_positive_int(
            "max_episode_steps", max_episode_steps, allow_none=True
        )
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            mode = None
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise ValueError(
                f"autoreset_mode must be AutoresetMode.SAME_STEP or NEXT_STEP, got "
                f"{autoreset_mode!r}"
            )
        self.metadata["autoreset_mode"] = mode
        self._next_step = mode == AutoresetMode.NEXT_STEP
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

        self._t = _VectorScoring(self.rules)
        self._outcomes = outcome_table()
        n = self.num_envs
        self._action_offsets = np.arange(n) * NUM_ACTIONS  # flat index of action 0 of a game
        self._box_offsets = np.arange(n) * NUM_BOXES  # flat index of box 0 of a game
        self._all = np.ones(n, dtype=bool)  # the `_key` mask of the infos every game has
        self._all.flags.writeable = False
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
        self._elapsed = np.zeros(n, dtype=np.int64)  # steps of the current game
        self._ended: np.ndarray | None = None  # NEXT_STEP: games waiting for their reset step
        # Duplicate dice: the batch's key, each slot's game number and its dealt values.
        self._deal_key = bytes(SEED_BYTES)
        self._games = np.zeros(n, dtype=np.int64)
        self._faces = np.zeros((n if duplicate else 0, 13, ROLLS_PER_TURN, 5), dtype=np.int8)
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
        if self.duplicate:
            self._deal_key = self.np_random.bytes(SEED_BYTES)
            self._games = np.zeros(n, dtype=np.int64)
            everyone = np.arange(n)
            self._deal(everyone, first_game=True)
            zeros = np.zeros(n, dtype=np.intp)
            self._roll = self._dealt_rolls(everyone, zeros + FIRST_ROLL_KEEP, zeros, zeros)
        else:
            self._roll = self._roll_dice(np.full(n, FIRST_ROLL_KEEP * ROLL_OUTCOMES, dtype=np.intp))
        self._rolls_left = np.full(n, ROLLS_PER_TURN - 1, dtype=np.intp)
        self._filled = np.zeros(n, dtype=np.intp)
        self._upper_total = np.zeros(n, dtype=np.int64)
        self._yahtzee_state = np.full(n, YAHTZEE_OPEN, dtype=np.intp)
        self._yahtzee_bonus = np.zeros(n, dtype=np.int64)
        self._total = np.zeros(n, dtype=np.int64)
        self._scores = np.full((n, NUM_BOXES), OPEN, dtype=np.int16)
        self._elapsed = np.zeros(n, dtype=np.int64)
        self._ended = None
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
        # `active`: the games that take their action (None: all of them). Not those whose
        # action is penalized, nor (NEXT_STEP) those that ended last step: they reset now.
        ended = self._ended
        active = penalized = None
        legal = self._mask.reshape(-1).take(self._action_offsets + actions)
        if not legal.all():
            if self.illegal_action == "raise":
                self._raise_illegal(actions)
            penalized = ~legal
            active = legal
        if ended is not None:
            active = ~ended if active is None else active & ~ended
        roll, filled, ystate = self._roll, self._filled, self._yahtzee_state
        is_hold = actions < NUM_HOLDS
        fill = ~is_hold
        if active is not None:
            fill &= active
        box = np.maximum(actions - BOX_ACTION_OFFSET, 0)  # 0 for holds, whose fill is dropped

        # Fill boxes (`BoxScoring.fill`, at the joker values `_observe` found); the holds'
        # scorecards stay as they are.
        done_fill = t.tables.fill(roll, box, self._values, self._upper_total, ystate)
        points = done_fill.points * fill
        filling = np.flatnonzero(fill)
        scores = self._scores.copy()
        scores.reshape(-1)[self._box_offsets[filling] + box[filling]] = points[filling]
        filled = filled | (fill << box)
        upper_total = np.where(fill, done_fill.upper_total, self._upper_total)
        rewards = done_fill.reward * fill
        ystate = np.where(fill, done_fill.yahtzee_state, ystate)
        total = self._total + rewards
        yahtzee_bonus = self._yahtzee_bonus + done_fill.bonus * fill

        # Roll: the unkept dice after a hold, all five (the next turn's first roll) after a fill
        # (or a reset). One draw per game per step, whatever happens.
        keep_offsets = t.keep_offsets.take(roll * NUM_ACTIONS + actions)
        if ended is not None:
            keep_offsets[ended] = FIRST_ROLL_KEEP * ROLL_OUTCOMES
        new_roll = self._roll_dice(keep_offsets)
        rolls_left = np.where(is_hold, self._rolls_left - 1, ROLLS_PER_TURN - 1)
        if active is not None:  # penalized games keep their dice; ended ones re-roll all
            still = ~active if ended is None else ~active & ~ended
            new_roll = np.where(still, roll, new_roll)
            rolls_left = np.where(active, rolls_left, self._rolls_left)
        rewards = rewards.astype(np.float64)
        if penalized is not None:
            rewards[penalized] = self.illegal_penalty

        terminations = filled == ALL_FILLED
        elapsed = self._elapsed + 1
        if ended is not None:  # the reset step of the games that ended last step
            terminations &= ~ended
            rewards[ended] = 0.0
            elapsed[ended] = 0
            rolls_left[ended] = ROLLS_PER_TURN - 1
            back = np.flatnonzero(ended)
            filled[back] = 0
            upper_total[back] = 0
            ystate[back] = YAHTZEE_OPEN
            yahtzee_bonus[back] = 0
            total[back] = 0
            scores[back] = OPEN
            filling = np.union1d(filling, back)
        if self.max_episode_steps is None:
            truncations = np.zeros(self.num_envs, dtype=bool)
        else:
            truncations = (elapsed >= self.max_episode_steps) & ~terminations
        done = terminations | truncations if truncations.any() else terminations
        infos: dict[str, Any] = {}
        if penalized is not None:
            infos["illegal_action"] = infos["_illegal_action"] = penalized
        self._ended = None
        if done.any():
            if self._next_step:
                # The ended games show their last state until the next step resets them.
                over = np.flatnonzero(terminations)
                new_roll[over] = roll[over]
                rolls_left[over] = 0
                self._ended = done
            else:
                infos.update(
                    self._final(done, terminations, roll, new_roll, rolls_left, filled,
                                upper_total, ystate, scores, yahtzee_bonus, total)
                )  # fmt: skip
                # Same-step autoreset to a fresh scorecard (a fill has already made the next
                # game's first roll; a truncated game gets one now).
                gone = np.flatnonzero(done)
                cut = np.flatnonzero(truncations)
                if len(cut):
                    first = np.full(len(cut), FIRST_ROLL_KEEP * ROLL_OUTCOMES, dtype=np.intp)
                    new_roll[cut] = self._roll_dice(first, len(cut))
                    rolls_left[cut] = ROLLS_PER_TURN - 1
                filled = filled.copy()
                filled[gone] = 0
                upper_total = upper_total * ~done
                ystate = np.where(done, YAHTZEE_OPEN, ystate)
                yahtzee_bonus = yahtzee_bonus * ~done
                total = total * ~done
                scores = scores.copy()  # final_info keeps the finished scorecards
                scores[gone] = OPEN
                elapsed[gone] = 0
                filling = np.union1d(filling, cut) if len(cut) else filling

        if self.duplicate:
            if self._next_step:  # games reset now; games that just ended keep their dice
                new_games, kept = ended, (terminations if terminations.any() else None)
            else:  # the games that ended have been reset
                new_games, kept = (done if done.any() else None), None
            new_roll = self._deal_step(
                roll, actions, active, new_games, kept, new_roll, rolls_left, filled
            )
        self._roll, self._rolls_left, self._filled = new_roll, rolls_left, filled
        self._upper_total, self._yahtzee_state = upper_total, ystate
        self._yahtzee_bonus, self._total, self._scores = yahtzee_bonus, total, scores
        self._elapsed = elapsed
        self._observe(changed=filling)
        infos.update(self._infos())
        return self._obs, rewards, terminations, truncations, infos

    def action_masks(self, dtype: Any = bool) -> np.ndarray:
        """``[N, 45]``: the legal actions of every game (never all False in a row; see
        NEXT_STEP above). ``bool`` by default (sb3-contrib); ``action_masks(np.int8)`` for
        ``action_space.sample(mask=...)``. The bool array is read-only and never modified."""
        return self._mask if dtype is bool else self._mask.astype(dtype)

    # The mutable state: the games' fields, what `_observe` derived from them, and the dice
    # generator. `get_state`/`set_state` carry it across a process (exact resume of training).
    _STATE_ARRAYS = (
        "_roll",
        "_rolls_left",
        "_filled",
        "_upper_total",
        "_yahtzee_state",
        "_yahtzee_bonus",
        "_total",
        "_scores",
        "_elapsed",
        "_values",
        "_bonus",
        "_mask",
        "_card_obs",
        "_obs",
    )

    def get_state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """(arrays, facts): copies of every game's arrays, and the JSON-ready rest (started,
        the NEXT_STEP games waiting for their reset, the dice generator's state). `set_state`
        on an env of the same size, rules and holds mode continues exactly from here."""
        arrays = {name.lstrip("_"): np.array(getattr(self, name)) for name in self._STATE_ARRAYS}
        if self._ended is not None:
            arrays["ended"] = np.array(self._ended)
        if self.duplicate:
            arrays["games"], arrays["faces"] = np.array(self._games), np.array(self._faces)
        facts = {
            "num_envs": self.num_envs,
            "rules": self.rules.name,
            "canonical_holds": self.canonical_holds,
            "started": self._started,
            "generator": self.np_random.bit_generator.state,
        }
        if self.duplicate:
            facts["duplicate"], facts["deal_key"] = True, self._deal_key.hex()
        return arrays, facts

    def set_state(self, arrays: dict[str, np.ndarray], facts: dict[str, Any]) -> None:
        """Restore what `get_state` returned (`ValueError` if it is another env's)."""
        mine = (self.num_envs, self.rules.name, self.canonical_holds, self.duplicate)
        theirs = (
            facts["num_envs"], facts["rules"], facts["canonical_holds"],
            facts.get("duplicate", False),
        )  # fmt: skip
        if mine != theirs:
            raise ValueError(
                "state of an env with (num_envs, rules, canonical_holds, duplicate) = "
                f"{theirs}, not {mine}"
            )
        for name in self._STATE_ARRAYS:
            value = np.array(arrays[name.lstrip("_")], dtype=getattr(self, name).dtype)
            setattr(self, name, value)
        self._mask.flags.writeable = False
        self._ended = np.array(arrays["ended"], dtype=bool) if "ended" in arrays else None
        self._started = bool(facts["started"])
        self.np_random.bit_generator.state = facts["generator"]
        if self.duplicate:
            self._deal_key = bytes.fromhex(facts["deal_key"])
            self._games = np.array(arrays["games"], dtype=np.int64)
            self._faces = np.array(arrays["faces"], dtype=np.int8)

    def render(self) -> str | np.ndarray | None:
        """The first game: ``"ansi"`` text, ``"rgb_array"`` image, ``"human"`` printed text
        (the same drawings as `Yahtzee-v0`'s, `yahtzee_env.game.render`)."""
        return render(
            self.render_mode,
            {
                "ansi": lambda: render_card_text(self._view(0)),
                "rgb_array": lambda: render_card_rgb(self._view(0)),
            },
        )

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``call("action_masks")``: a ``bool[45]`` row per game (as `SyncVectorEnv` gives);
        ``call("render")``: the first game's render, once. Any other attribute or method is
        shared by all games: its value (or result) repeated per game."""
        if name == "action_masks":
            masks = self.action_masks(*args, **kwargs)
            return tuple(masks[i] for i in range(self.num_envs))
        if name == "render":
            return (self.render(),)
        if name.startswith("_"):
            raise AttributeError(f"{name!r} is private")
        value = getattr(self, name)
        result = value(*args, **kwargs) if callable(value) else value
        return tuple(result for _ in range(self.num_envs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """An attribute of the games, one entry per game (shared by all games)."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set an attribute shared by all games: one value, or a list/tuple of N equal ones."""
        if name.startswith("_"):
            raise AttributeError(f"{name!r} is private")
        if isinstance(values, (list, tuple)):
            if len(values) != self.num_envs:
                raise ValueError(
                    f"set_attr needs one value or {self.num_envs} values, got {len(values)}"
                )
            if any(v != values[0] for v in values[1:]):
                raise ValueError(
                    f"{name!r} is shared by all games of YahtzeeVectorEnv: give one value"
                )
            values = values[0]
        if name in ("illegal_action", "illegal_penalty"):
            setattr(self, name, values)
            self.illegal_action, self.illegal_penalty = check_illegal_action(
                self.illegal_action, self.illegal_penalty
            )
            return
        if not hasattr(self, name):
            raise AttributeError(f"YahtzeeVectorEnv has no attribute {name!r}")
        setattr(self, name, values)

    # ------------------------------------------------------------------------- internals
    def _roll_dice(self, keep_offsets: np.ndarray, size: int | None = None) -> np.ndarray:
        """New rolls from ``keep * 7776`` per game (see the module docstring)."""
        size = self.num_envs if size is None else size
        r = roll_draws(self.np_random, size)
        return self._outcomes.take(keep_offsets + r).astype(np.intp)

    def _deal(self, slots: np.ndarray, first_game: bool = False) -> None:
        """Start the next game of each of ``slots`` with duplicate dice: its seed, its values."""
        if not first_game:
            self._games[slots] += 1
        for i in slots.tolist():
            self._faces[i] = faces_table(batch_seed(self._deal_key, i, int(self._games[i])))

    def _dealt_rolls(
        self, slots: np.ndarray, keeps: np.ndarray, turns: np.ndarray, rolls: np.ndarray
    ) -> np.ndarray:
        """Duplicate dice: the rolls of ``slots`` at their ``turns`` and ``rolls``."""
        return dealt_rolls(self._faces[slots, turns, rolls], keeps).astype(np.intp)

    def _deal_step(
        self,
        roll: np.ndarray,
        actions: np.ndarray,
        active: np.ndarray | None,
        new_games: np.ndarray | None,
        kept: np.ndarray | None,
        new_roll: np.ndarray,
        rolls_left: np.ndarray,
        filled: np.ndarray,
    ) -> np.ndarray:
        """``new_roll`` with duplicate dice for every game that rolled this step: a hold
        re-rolls at the turn's next roll, a fill (or a new game) makes the next turn's first
        roll. Games that did not roll (penalized, or NEXT_STEP games that just ended) keep
        the dice ``new_roll`` gives them."""
        rolled = np.ones(self.num_envs, dtype=bool) if active is None else active.copy()
        if kept is not None:
            rolled &= ~kept
        fresh = np.zeros(self.num_envs, dtype=bool)
        if new_games is not None:
            fresh[new_games] = True
            self._deal(np.flatnonzero(fresh))
            rolled |= fresh
        slots = np.flatnonzero(rolled)
        if not len(slots):
            return new_roll
        hold = (actions[slots] < NUM_HOLDS) & ~fresh[slots]
        keeps = np.where(
            hold, HOLD_TO_KEEP[roll[slots], np.minimum(actions[slots], NUM_HOLDS - 1)],
            FIRST_ROLL_KEEP,
        )  # fmt: skip
        turns = _TURNS.take(filled[slots])
        rolls = np.where(hold, ROLLS_PER_TURN - 1 - rolls_left[slots], 0)
        new_roll = new_roll.copy()
        new_roll[slots] = self._dealt_rolls(slots, keeps, turns, rolls)
        return new_roll

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
        if self._ended is not None:
            mask[self._ended] = True  # any action: it is ignored at the reset step
        mask.flags.writeable = False
        self._values, self._mask = values, mask
        self._bonus = t.tables.yahtzee_bonus(roll, ystate)  # earned if placed now
        bonus = self._bonus > 0
        if changed is None:
            points = t.tables.points[roll, values]
            legal = t.tables.legal[context, filled]
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
            rows = np.zeros((len(changed), CARD_SPAN.stop - CARD_SPAN.start), dtype=np.float32)
            write_card(
                rows,
                filled.take(changed),
                upper_total.take(changed),
                ystate.take(changed),
                t.threshold,
                OBS_CARD_IN_SPAN,
            )
            self._card_obs[changed, CARD_SPAN] = rows
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
        infos = make_info(
            roll=self._roll,
            rolls_left=self._rolls_left,
            scorecard=self._scores,
            upper_total=self._upper_total,
            upper_bonus=self.rules.upper_bonus(self._upper_total),
            yahtzee_bonus=self._yahtzee_bonus,
            total=self._total,
            action_mask=self._mask,
        )
        every = self._all
        for key in list(infos):
            infos["_" + key] = every
        return infos

    def _final(
        self,
        done: np.ndarray,
        terminations: np.ndarray,
        roll: np.ndarray,
        new_roll: np.ndarray,
        rolls_left: np.ndarray,
        filled: np.ndarray,
        upper_total: np.ndarray,
        ystate: np.ndarray,
        scores: np.ndarray,
        yahtzee_bonus: np.ndarray,
        total: np.ndarray,
    ) -> dict[str, Any]:
        """``final_obs``/``final_info`` (and their masks) of the games that ended: a
        terminated game's last dice and no re-rolls, a truncated game's state as it is."""
        t = self._t
        last_roll = np.where(terminations, roll, new_roll)
        last_rolls_left = rolls_left * ~terminations
        rows = np.flatnonzero(done)
        r, rl, f, y = (a.take(rows) for a in (last_roll, last_rolls_left, filled, ystate))
        context, values = t.tables.context_batch(r, f, y)
        obs_rows = encode_batch(
            r, rl, f, upper_total.take(rows), y, t.tables.legal[context, f],
            t.tables.points[r, values], t.threshold, t.tables.yahtzee_bonus(r, y) > 0,
        )  # fmt: skip
        final_obs = np.empty(self.num_envs, dtype=object)
        for i, row in zip(rows.tolist(), obs_rows, strict=True):
            final_obs[i] = row
        masks = np.zeros((self.num_envs, NUM_ACTIONS), dtype=bool)
        cut = np.flatnonzero(done & ~terminations)
        if len(cut):  # a truncated game's mask is that of its live position
            has_rolls = last_rolls_left.take(cut) > 0
            c, _ = t.tables.context_batch(last_roll.take(cut), filled.take(cut), ystate.take(cut))
            masks[cut] = t.mask_rows.take(
                (has_rolls * t.num_contexts + c) * NUM_FILLED_MASKS + filled.take(cut), axis=0
            )
            if self.canonical_holds:
                masks[cut, :NUM_HOLDS] &= CANONICAL_HOLDS.take(last_roll.take(cut), axis=0)
        final_info = make_info(
            roll=last_roll,
            rolls_left=last_rolls_left,
            scorecard=scores,
            upper_total=upper_total,
            upper_bonus=self.rules.upper_bonus(upper_total),
            yahtzee_bonus=yahtzee_bonus,
            total=total,
            action_mask=masks,
        )
        for key in list(final_info):
            final_info["_" + key] = done
        return {
            "final_obs": final_obs,
            "_final_obs": done,
            "final_info": final_info,
            "_final_info": done,
        }

    def _view(self, i: int) -> CardView | None:
        """Game ``i`` as a `render.CardView` (None before the first reset)."""
        if not self._started:
            return None
        t = self._t
        upper_total = int(self._upper_total[i])
        over = bool(self._filled[i] == ALL_FILLED)
        legal = self._mask[i, BOX_ACTION_OFFSET:]
        points = t.tables.points[int(self._roll[i]), int(self._values[i])]
        return CardView(
            rules_name=self.rules.name,
            threshold=t.threshold,
            dice=tuple(int(d) for d in DICE[self._roll[i]]),
            rolls_left=int(self._rolls_left[i]),
            scores=tuple(int(s) for s in self._scores[i]),
            upper_total=upper_total,
            upper_bonus=int(self.rules.upper_bonus(upper_total)),
            yahtzee_bonus=int(self._yahtzee_bonus[i]),
            total=int(self._total[i]),
            over=over,
            options=None if over else (legal, points),
        )

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


def _shorten(values: np.ndarray, limit: int = 10) -> str:
    items = ", ".join(str(v) for v in values[:limit].tolist())
    return f"[{items}{', ...' if len(values) > limit else ''}]"


__all__ = ["OPEN", "YahtzeeVectorEnv", "outcome_table"]
