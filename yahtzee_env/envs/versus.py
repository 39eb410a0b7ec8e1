"""`YahtzeeVs-v0`: one learning agent at a table with one to three CPU opponents.

A single-agent Gymnasium env over the multi-player engine: the opponents (built-in policies,
the CPU levels, model files or any `Policy` object) take their turns inside `step` (and inside
`reset` when they sit before the agent), so a researcher can train an agent that maximises
its chance of winning against our levels with any single-agent algorithm::

    import gymnasium as gym
    import yahtzee_env  # noqa: F401

    env = gym.make("YahtzeeVs-v0", opponents=["hard", "medium"], reward="win", seat="random")

The observation is the table observation (`yahtzee_env.envs.seat_view`) for the agent's seat;
PettingZoo
is not needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from yahtzee_env.envs.checks import (
    IllegalActionPolicy,
    apply_or_penalize,
    check_illegal_action,
    check_render_mode,
    render,
)
from yahtzee_env.envs.info import card_info
from yahtzee_env.envs.seat_view import (
    MAX_PLAYERS,
    REWARD_MODES,
    RewardMode,
    encode_table,
    observation_size,
    win_rewards,
)
from yahtzee_env.game.cpu import cpu_move
from yahtzee_env.game.engine import NUM_ACTIONS, Game, IllegalActionError, action_id
from yahtzee_env.game.render import render_table
from yahtzee_env.game.rules import RuleSet


def resolve_opponent(spec: Any, rules: RuleSet, seed: int = 0) -> tuple[str, Any]:
    """(name, policy) of an opponent given as a name (built-in policy, CPU level, model
    manifest path) or as an object with ``act(observation, action_mask)``."""
    if isinstance(spec, str):
        from yahtzee_env.policies.resolve import policy_label, resolve_policy

        policy = resolve_policy(spec, rules, seed)
        return policy_label(spec, policy, rules), policy
    if callable(getattr(spec, "act", None)):
        return str(getattr(spec, "name", type(spec).__name__)), spec
    raise TypeError(f"an opponent is a policy name or an object with act(obs, mask), got {spec!r}")


class YahtzeeVsEnv(gym.Env[np.ndarray, np.int64]):
    """
    Yahtzee against one to three CPU opponents, as a single-agent env.

    ## Description
    A game of `yahtzee_env.game.engine.Game` for `1 + len(opponents)` players. Seats take whole
    turns in order starting with seat 0; the agent sits at `seat`. Every opponent turn is
    played inside `reset`/`step` with the opponent's policy acting on its own `Yahtzee-v0`
    observation (`observation.encode_seat`), exactly as in the other envs. The episode is the
    whole game: the agent's 13 turns and everything the opponents do in between.

    ## Action Space
    `Discrete(45)`, the ids of `Yahtzee-v0`: `0..31` hold mask over the sorted dice, legal
    while re-rolls remain; `32..44` fill box `action - 32`. `action_masks()` (`bool[45]`) and
    `info["action_mask"]` (`int8[45]`) give the legal actions; the mask is never all False
    before the end, and all False once the game is over.

    ## Observation Space
    `Box(0, 1, (D,), float32)`, `D = 73 + 20 * len(opponents)`: the agent's `Yahtzee-v0`
    vector (`[0:72]`), its total / 500 (`[72]`), then one block of 20 per opponent in seat
    order after the agent (box open flags, upper total, upper bonus, yahtzee box, progress,
    total / 500): see `yahtzee_env.envs.seat_view` for the layout. Whenever the agent
    observes it is the agent's turn, so the dice entries are its own dice.

    ## Starting State
    Empty scorecards; the opponents sitting before the agent have played their first turn,
    and the agent's first roll is on the table. All randomness (dice, the seat when
    `seat="random"`, and the opponents' own randomness) comes from `self.np_random`: at every
    reset each opponent policy that keeps a numpy `Generator` in an `rng` attribute (the
    built-in `random` policy) gets a fresh one drawn from it, so `reset(seed=s)` fixes the
    whole game whatever the opponents.

    ## Rewards
    - `reward="win"` (default): 0 until the end, then +1 if the agent is the sole top scorer,
      0 if it ties on top with others (a draw), -1 otherwise.
    - `reward="score"`: the points each of the agent's actions adds to its total, bonuses
      included (the `Yahtzee-v0` reward); the return is the agent's final total.

    With `illegal_action="penalize"` an illegal action earns `illegal_penalty` and changes
    nothing; with `"raise"` (default) it raises `yahtzee_env.IllegalActionError`.

    ## Episode End
    - Termination: the last player fills its thirteenth box (that may happen inside the
      agent's last `step`, after the opponents sitting after it finish).
    - Truncation: registered with `max_episode_steps=1000`, which no legal game reaches (the
      agent acts at most 39 times); it ends only a policy stuck on illegal actions under
      `illegal_action="penalize"`.

    ## Information
    The `Yahtzee-v0` keys for the agent's seat (`dice`, `rolls_left`, `scorecard`,
    `upper_total`, `upper_bonus`, `yahtzee_bonus`, `total`, `action_mask`), plus `seat` (the
    agent's seat, int), `totals` (int32[P]: every player's total, in seat order) and, at the
    end, `winners` (bool[P]: True at the seats with the top total; several means a draw).
    `illegal_action: True` on a penalized step. Fixed shapes and dtypes
    (`yahtzee_env.envs.info`), so Gymnasium's sync and async vector envs batch them.

    ## Arguments
    ```python
    gym.make("YahtzeeVs-v0", opponents=("heuristic",), reward="win", rules="official",
             seat=0, render_mode=None, illegal_action="raise", illegal_penalty=-1.0)
    ```

    - `opponents`: 1 to 3 opponents, each a name resolved by
      `yahtzee_env.policies.resolve.resolve_policy` (`random`, `greedy`, `heuristic`,
      `optimal`, `easy`, `medium`, `hard`, or a model manifest path) or a policy object with
      `act(observation, action_mask)`. A single name may be given as a string.
    - `reward`: `"win"` or `"score"`.
    - `rules`: a preset name or a `RuleSet`.
    - `seat`: the agent's seat, `0..len(opponents)`, or `"random"` (drawn at every reset).
    - `render_mode`: `"ansi"` or `"human"` (every player's scorecard).
    - `illegal_action`, `illegal_penalty`: as in `Yahtzee-v0`.

    ## Version History
    * v0: Initial version.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        opponents: Sequence[Any] | str = ("heuristic",),
        reward: RewardMode = "win",
        rules: str | RuleSet | None = "official",
        seat: int | Literal["random"] = 0,
        render_mode: str | None = None,
        illegal_action: IllegalActionPolicy = "raise",
        illegal_penalty: float = -1.0,
    ) -> None:
        self.rules = RuleSet.from_spec(rules)
        if isinstance(opponents, str) or callable(getattr(opponents, "act", None)):
            opponents = [opponents]
        opponents = list(opponents)
        if not 1 <= len(opponents) <= MAX_PLAYERS - 1:
            raise ValueError(f"opponents: 1 to {MAX_PLAYERS - 1} needed, got {len(opponents)}")
        resolved = [resolve_opponent(o, self.rules) for o in opponents]
        self.opponent_names = [name for name, _ in resolved]
        self.opponent_policies = [policy for _, policy in resolved]
        self.num_players = 1 + len(opponents)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be 'win' or 'score', got {reward!r}")
        if seat != "random" and (
            isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.num_players
        ):
            raise ValueError(f"seat must be 'random' or 0..{self.num_players - 1}, got {seat!r}")
        check_render_mode(render_mode, self.metadata)
        self.illegal_action, self.illegal_penalty = check_illegal_action(
            illegal_action, illegal_penalty
        )
        self.reward_mode = reward
        self.seat_option = seat
        self.render_mode = render_mode

        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.Box(
            0.0, 1.0, (observation_size(self.num_players),), np.float32
        )
        self.game = Game(self.rules, num_players=self.num_players)
        self.seat = 0 if seat == "random" else int(seat)
        self._mask = np.zeros(NUM_ACTIONS, dtype=bool)

    # ------------------------------------------------------------------------- Gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if options:
            raise ValueError(f"YahtzeeVs-v0 takes no reset options, got {sorted(options)}")
        rng = self.np_random
        if self.seat_option == "random":
            self.seat = int(rng.integers(self.num_players))
        for policy in self.opponent_policies:
            if getattr(policy, "stochastic", False):  # each episode from the env's seed
                policy.reseed(int(rng.integers(2**63)))
        self.game.reset(rng, first=0)
        self._play_opponents()
        if self.render_mode == "human":
            self.render()
        return encode_table(self.game, self.seat), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        game = self.game
        action = action_id(action)
        if game.over:
            raise IllegalActionError("the game is over; call reset()")
        points, penalized = apply_or_penalize(game.step, action, self.illegal_action)
        if penalized:
            info = self._info()
            info["illegal_action"] = True
            return encode_table(game, self.seat), self.illegal_penalty, False, False, info
        self._play_opponents()  # after a box: the opponents' turns; always: the new mask
        if self.reward_mode == "score":
            reward = float(points)
        else:
            reward = win_rewards(game.totals())[self.seat] if game.over else 0.0
        if self.render_mode == "human":
            self.render()
        return encode_table(game, self.seat), reward, game.over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """bool[45]: the agent's legal actions now (all False once the game is over)."""
        return self._mask.copy()

    def render(self) -> str | None:
        return render(
            self.render_mode, {"ansi": lambda: render_table(self.game, self.player_names())}
        )

    # ------------------------------------------------------------------------- internals
    def player_names(self) -> list[str]:
        """Names in seat order: ``agent`` at the agent's seat, the opponents' names around."""
        others = iter(self.opponent_names)
        return ["agent" if s == self.seat else next(others) for s in range(self.num_players)]

    def opponent_seats(self) -> list[int]:
        """The opponents' seats, in the order of ``opponents``."""
        return [s for s in range(self.num_players) if s != self.seat]

    def _play_opponents(self) -> None:
        """Play the opponents' turns until it is the agent's turn or the game is over."""
        game = self.game
        policies = dict(zip(self.opponent_seats(), self.opponent_policies, strict=True))
        while not game.over and game.current != self.seat:
            seat = game.current
            name = self.opponent_names[self.opponent_seats().index(seat)]
            cpu_move(game, seat, policies[seat], f"opponent {name!r} (seat {seat})")
        self._mask = game.legal_action_mask()

    def _info(self) -> dict[str, Any]:
        game = self.game
        info = card_info(game, self.seat, None if game.over else self._mask)
        info["seat"] = self.seat
        info["totals"] = np.array(game.totals(), dtype=np.int32)
        if game.over:
            winners = np.zeros(self.num_players, dtype=bool)
            winners[game.winners()] = True
            info["winners"] = winners
        return info


__all__ = ["YahtzeeVsEnv", "resolve_opponent"]
