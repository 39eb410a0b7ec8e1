"""`Yahtzee-v0`: one player, thirteen turns, as a Gymnasium environment.

The env only adapts `yahtzee_env.game.engine.Game` to Gymnasium spaces: the engine applies the
action and scores it, `yahtzee_env.game.observation` defines the observation vector. What is here
is bookkeeping for speed (an observation buffer updated in place, cached mask rows).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from yahtzee_env.envs.checks import (
    IllegalActionPolicy,
    UnsupportedRenderModeError,
    apply_or_penalize,
    check_bool,
    check_illegal_action,
    check_render_mode,
    render,
)
from yahtzee_env.envs.info import make_info, scorecard_array
from yahtzee_env.game.dice import CANONICAL_HOLDS, NUM_HOLDS
from yahtzee_env.game.engine import (
    BOX_ACTION_OFFSET,
    NUM_ACTIONS,
    Game,
    IllegalActionError,
    action_id,
)
from yahtzee_env.game.observation import (
    BONUS_INDEX,
    DICE_FEATURES,
    OBS_SIZE,
    OPEN_SLICE,
    ROLLS_LEFT_FEATURES,
    encode_seat,
    write_card,
)
from yahtzee_env.game.render import CardView, render_card_rgb, render_card_text
from yahtzee_env.game.rules import ALL_FILLED, NUM_BOXES, RuleSet
from yahtzee_env.game.step_tables import step_tables

_DICE_AND_ROLLS_END = ROLLS_LEFT_FEATURES.shape[1] + DICE_FEATURES.shape[1]  # obs[0:39]
_POINTS_START = OPEN_SLICE.stop  # obs[52:65]
_POINTS_STOP = _POINTS_START + NUM_BOXES


class YahtzeeEnv(gym.Env[np.ndarray, np.int64]):
    """
    Solitaire Yahtzee: thirteen turns of up to three rolls of five dice, each turn ending by
    filling one of the thirteen boxes of the scorecard.

    ## Description
    Each turn starts with a roll of all five dice. While re-rolls are left (two per turn) the
    agent may keep any subset of the dice and roll the others again, or fill a box at once.
    After the third roll it must fill a box. Every box is filled exactly once; the game ends
    after the thirteenth. Scoring follows the official rules (upper bonus of 35 at 63 points,
    Yahtzee bonus of 100 per further Yahtzee once the yahtzee box holds 50, joker rules), or a
    variant chosen with `rules`. All scoring is done by `yahtzee_env.game.engine` and
    `yahtzee_env.game.rules`; this class only adapts them to Gymnasium.

    ## Action Space
    `Discrete(45)`:

    - `0..31` hold mask: bit `i` set keeps die `i` of the *sorted* dice (`info["dice"]`),
      the others are re-rolled. Legal while `rolls_left > 0`. `31` keeps all dice and spends a
      roll.
    - `32..44` fill box `action - 32`, in the order `aces, twos, threes, fours, fives, sixes,
      three_of_a_kind, four_of_a_kind, full_house, small_straight, large_straight, yahtzee,
      chance` (`yahtzee_env.game.rules.BOX_NAMES`).

    Which actions are legal now is given by `action_masks()` (`bool[45]`, the sb3-contrib
    `MaskablePPO` contract) and `info["action_mask"]` (`int8[45]`). A box is illegal once
    filled, under `upper_first` until the upper section is full, and under the forced joker
    rule when the Yahtzee on the table must go elsewhere. The mask is never all False before the
    end. With `canonical_holds=True` only one hold per distinct kept multiset is legal (and not
    keep-all), which shrinks the hold choices from 32 to at most 31 and often far fewer.

    ## Observation Space
    `Box(0, 1, (72,), float32)`, built by `yahtzee_env.game.observation` (`OBS_VERSION = 1`):

    | index     | meaning                                                                 |
    |-----------|-------------------------------------------------------------------------|
    | `0:30`    | sorted dice one-hot: die `i` shows face `f` -> `6*i + f - 1`            |
    | `30:36`   | face counts / 5                                                         |
    | `36:39`   | re-rolls left (0, 1, 2) one-hot                                         |
    | `39:52`   | box open (1) / filled (0)                                               |
    | `52:65`   | points the dice would score in each box / 50 (0 where illegal now)      |
    | `65`      | upper total / upper-bonus threshold, capped at 1                        |
    | `66`      | upper bonus earned                                                      |
    | `67:70`   | yahtzee box open / holds 50 / holds 0, one-hot                          |
    | `70`      | the dice on the table earn a Yahtzee bonus wherever they are placed     |
    | `71`      | boxes filled / 13                                                       |

    `wrappers.DictObservation` turns it into the PettingZoo-style
    `{"observation": Box, "action_mask": Box(int8)}` dict.

    ## Starting State
    An empty scorecard and the first roll of turn 1 (all five dice rolled, `rolls_left == 2`).
    All randomness comes from `self.np_random` (seeded by `reset(seed=...)`).

    ## Rewards
    The points an action adds to the total score, bonuses included: 0 for holds; the box's
    points for a fill, plus 35 on the fill that takes the upper total to the threshold, plus
    100 for a further Yahtzee while the yahtzee box holds 50. The undiscounted return is the
    final score exactly. With `illegal_action="penalize"` an illegal action earns
    `illegal_penalty` (default `-1.0`) and changes nothing.

    ## Episode End
    - Termination: the thirteenth box is filled (after exactly 13 fill actions).
    - Truncation: `Yahtzee-v0` is registered with `max_episode_steps=1000`
      (`checks.MAX_EPISODE_STEPS`, Gymnasium's `TimeLimit`). A legal game is at most 39
      actions, so this only ends an episode whose policy keeps choosing illegal actions under
      `illegal_action="penalize"` (SB3's `evaluate_policy` would otherwise never return).
      `gym.make(..., max_episode_steps=N)` changes it as for any Gymnasium env.

    ## Information
    `reset()` and `step()` return the info of `yahtzee_env.envs.info` (the same keys and dtypes in
    every env of this package, and with a leading `[N]` axis in the vector envs):

    - `"dice"` int8[5] sorted; `"rolls_left"` int8 (2 after the first roll, 0 after the third);
    - `"scorecard"` int16[13]: points per box in `BOX_NAMES` order, `-1` while open;
    - `"upper_total"` int16, `"upper_bonus"`, `"yahtzee_bonus"`, `"total"` int32 (the score so
      far, bonuses included);
    - `"action_mask"` int8[45], 1 where legal (all 0 once the game is over);
    - `"illegal_action"`: `True`, only on a step penalized under `illegal_action="penalize"`.

    ## Arguments
    ```python
    import gymnasium as gym
    import yahtzee_env  # registers the ids (or use "yahtzee_env:Yahtzee-v0")

    env = gym.make("Yahtzee-v0", rules="official", render_mode=None, canonical_holds=False,
                   illegal_action="raise", illegal_penalty=-1.0)
    ```

    - `rules`: a preset name (`"official"`, `"free-joker"`, `"no-joker"`,
      `"no-joker-no-bonus"`, `"upper-first"`) or a `yahtzee_env.game.rules.RuleSet`.
    - `render_mode`: `"ansi"` (`render()` returns the scorecard and dice as text), `"human"`
      (`render()` prints it) or `"rgb_array"` (a uint8 image of the dice and scorecard,
      `yahtzee_env.game.render.RGB_SHAPE`; drawn with numpy alone, so `RecordVideo` works).
    - `canonical_holds`: only one hold action per distinct keep is legal (a learning aid).
    - `illegal_action`: `"raise"` (an illegal action raises
      `yahtzee_env.IllegalActionError`, state unchanged) or `"penalize"` (reward
      `illegal_penalty`, state unchanged, `info["illegal_action"] = True`). Action ids
      outside `0..44`, bools, and steps after the end always raise.
    - `illegal_penalty`: the reward of a penalized illegal action, a finite number <= 0.
    - `duplicate`: the dice are dealt by turn and roll from a seed drawn at reset
      (`yahtzee_env.game.fair_dice`), not drawn step by step: two envs reset with the same
      seed deal the same dice whatever their policies hold (common random numbers).

    ## Version History
    * v0: Initial version (observation layout `OBS_VERSION = 1`).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 4,
    }

    def __init__(
        self,
        rules: str | RuleSet | None = "official",
        render_mode: str | None = None,
        canonical_holds: bool = False,
        illegal_action: IllegalActionPolicy = "raise",
        illegal_penalty: float = -1.0,
        duplicate: bool = False,
    ) -> None:
        self.rules = RuleSet.from_spec(rules)
        check_render_mode(render_mode, self.metadata)
        self.render_mode = render_mode
        self.canonical_holds = check_bool("canonical_holds", canonical_holds)
        self.illegal_action, self.illegal_penalty = check_illegal_action(
            illegal_action, illegal_penalty
        )

        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        self.duplicate = check_bool("duplicate", duplicate)
        self._game = Game(
            self.rules, num_players=1, canonical_holds=canonical_holds, duplicate=duplicate
        )
        self._tables = step_tables(self.rules)
        self._threshold = self.rules.upper_bonus_threshold
        self._obs = np.zeros(OBS_SIZE, dtype=np.float32)
        self._make_views()
        self._mask = self._tables.mask[0, 0, ALL_FILLED]  # all False until reset
        self._card = None
        self._scorecard = scorecard_array([None] * NUM_BOXES)
        self._total = 0
        self._upper_bonus = 0

    # ------------------------------------------------------------------------- Gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if options:
            raise ValueError(f"Yahtzee-v0 takes no reset options, got {sorted(options)}")
        game = self._game
        game.reset(self.np_random)
        card = game.players[0]
        self._card = card
        self._rule_tables = card.rules.tables
        self._scorecard = scorecard_array(card.scores)
        self._total = 0
        self._upper_bonus = 0
        self._obs[...] = encode_seat(game)
        self._update_mask()
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if type(action) is not int or not 0 <= action < NUM_ACTIONS:
            action = action_id(action)  # coerces numpy integers; refuses the rest
        game = self._game
        if game.over:
            raise IllegalActionError(
                "the game is over; call reset()" if game.players else "call reset() before step()"
            )
        points, penalized = apply_or_penalize(game.step, action, self.illegal_action)
        if penalized:
            info = self._info()
            info["illegal_action"] = True
            return self._obs.copy(), self.illegal_penalty, False, False, info

        if action >= BOX_ACTION_OFFSET:
            # A box was filled: the scorecard part of the observation changes (and a new turn
            # began, or the game ended).
            card = self._card
            box = action - BOX_ACTION_OFFSET
            self._total += points
            self._scorecard[box] = card.scores[box]  # infos get copies: safe to write
            self._upper_bonus = card.upper_bonus
            self._update_scorecard_features()
        self._dice_view[...] = self._tables.dice_rolls[game.roll, game.rolls_left]
        self._update_mask()
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), float(points), game.over, False, self._info()

    def action_masks(self, dtype: Any = bool) -> np.ndarray:
        """The legal actions now, ``[45]`` (all False once the game is over).

        ``bool`` by default (sb3-contrib's `MaskablePPO` contract); ``action_masks(np.int8)``
        gives what Gymnasium's ``action_space.sample(mask=...)`` wants (as
        ``info["action_mask"]``). A fresh, writable array: torch (`MaskablePPO.predict`) warns
        on read-only arrays, and changing it does not change the env.
        """
        return self._mask.copy() if dtype is bool else self._mask.astype(dtype)

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the text card; ``"rgb_array"``: uint8 ``RGB_SHAPE`` image; ``"human"``
        prints the text."""
        return render(
            self.render_mode,
            {
                "ansi": lambda: render_card_text(self._view()),
                "rgb_array": lambda: render_card_rgb(self._view()),
            },
        )

    # ------------------------------------------------------------------------- internals
    def _view(self) -> CardView | None:
        return CardView.of_game(self._game) if self._game.players else None

    def _make_views(self) -> None:
        """Views of the observation buffer that `step` writes through (slicing costs time)."""
        obs = self._obs
        self._dice_view = obs[:_DICE_AND_ROLLS_END]
        self._points_view = obs[_POINTS_START:_POINTS_STOP]

    def _update_scorecard_features(self) -> None:
        """Rewrite the observation entries that change only when a box is filled."""
        card = self._card
        write_card(self._obs, card.filled, card.upper_total, card.yahtzee_state, self._threshold)

    def _update_mask(self) -> None:
        """Point the mask at the row of the current state; refresh the observed points.

        Once the game is over ``rolls_left`` is 0 and every box is filled, so the row is all
        False and the observed points are 0, as `observation.encode` gives.
        """
        game = self._game
        card = self._card
        roll = game.roll
        filled = card.filled
        tables = self._rule_tables
        context, values = tables.context(roll, filled, card.yahtzee_state)
        has_rolls = 1 if game.rolls_left else 0
        step_rows = self._tables
        if self.canonical_holds and has_rolls:
            mask = step_rows.mask[has_rolls, context, filled].copy()
            mask[:NUM_HOLDS] = CANONICAL_HOLDS[roll]
            mask.flags.writeable = False
            self._mask = mask
        else:
            self._mask = step_rows.mask[has_rolls, context, filled]
        np.multiply(
            step_rows.points_scaled[roll, values],
            step_rows.legal_f32[context, filled],
            out=self._points_view,
        )
        self._obs[BONUS_INDEX] = tables.yahtzee_bonus(roll, card.yahtzee_state) > 0

    def _info(self) -> dict[str, Any]:
        card = self._card
        game = self._game
        return make_info(
            roll=game.roll,
            rolls_left=game.rolls_left,
            scorecard=self._scorecard.copy(),
            upper_total=card.upper_total,
            upper_bonus=self._upper_bonus,
            yahtzee_bonus=card.yahtzee_bonus,
            total=self._total,
            action_mask=self._mask,
        )

    # ------------------------------------------------------------------------- pickling
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_tables"]  # a process-wide cache, found again (or rebuilt) on load
        for name in ("_dice_view", "_points_view"):
            del state[name]  # views of _obs: re-made on load, so that they alias it again
        state["_mask"] = state["_mask"].copy()  # pickle the row, not the table it views
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._tables = step_tables(self.rules)
        self._make_views()
        self._mask.flags.writeable = False


__all__ = ["UnsupportedRenderModeError", "YahtzeeEnv", "check_render_mode"]
