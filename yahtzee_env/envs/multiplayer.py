"""`yahtzee_v0`: two to four players at one table, as a PettingZoo AEC environment.

A thin adapter, like PettingZoo's classic envs: `yahtzee_env.game.engine.Game` plays the game,
`yahtzee_env.game.observation` encodes each seat's own scorecard, and this module adds what a table
needs: every opponent's progress in the observation, per-agent infos, win or score rewards.

    from yahtzee_env.envs import multiplayer

    env = multiplayer.env(num_players=2, reward="win")
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else policy(obs["observation"], obs["action_mask"])
        env.step(action)

The observation (`encode_table`), infos and win rewards are in `yahtzee_env.envs.seat_view`, shared
with
`YahtzeeVs-v0` (`yahtzee_env.envs.versus`), which does not need PettingZoo.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle, seeding

try:
    from pettingzoo import AECEnv
    from pettingzoo.utils import BaseWrapper, wrappers
except ModuleNotFoundError as err:  # the one-line hint instead of a bare traceback
    if not (err.name or "").startswith("pettingzoo"):
        raise
    raise ModuleNotFoundError(
        "yahtzee_env.envs.multiplayer needs PettingZoo: pip install 'yahtzee-rl[multiplayer]' "
        "(YahtzeeVs-v0 plays against the CPU levels without it)",
        name=err.name,
    ) from err

from yahtzee_env.envs.checks import check_render_mode, render
from yahtzee_env.envs.info import card_info

# The observation layout, infos and win rewards live in `yahtzee_env.envs.seat_view` (no PettingZoo
# needed, so `YahtzeeVs-v0` shares them).
from yahtzee_env.envs.seat_view import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    REWARD_MODES,
    RewardMode,
    encode_table,
    observation_size,
    win_rewards,
)
from yahtzee_env.game.engine import (
    BOX_ACTION_OFFSET,
    NUM_ACTIONS,
    Game,
    IllegalActionError,
    action_id,
    roll_for_first_player,
)
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.game.render import render_table
from yahtzee_env.game.rules import RuleSet


def env(**kwargs: Any) -> AECEnv:
    """`raw_env` in PettingZoo's classic wrappers: an illegal action ends the game with -1
    for the player who made it (`TerminateIllegalWrapper`), an action that is not an action id
    raises `IllegalActionError` (`CheckActionWrapper`), and the call order is enforced."""
    aec = raw_env(**kwargs)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = CheckActionWrapper(aec)
    aec = wrappers.OrderEnforcingWrapper(aec)
    return aec


class CheckActionWrapper(BaseWrapper):
    """PettingZoo's `AssertOutOfBoundsWrapper` as an explicit check: an action that is not an
    id in ``0..44`` (or None for an agent that is done) raises `IllegalActionError`, also
    under ``python -O``, where asserts vanish."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        done = self.terminations.get(agent, False) or self.truncations.get(agent, False)
        if not (action is None and done):
            if action is None:
                raise IllegalActionError(f"{agent} is still playing: None is not an action")
            action_id(action)
        super().step(action)


class raw_env(AECEnv, EzPickle):
    """
    Yahtzee for two to four players: each takes whole turns in seat order (up to three rolls,
    then one box), thirteen rounds; the highest total wins, a tie on top is a draw.

    ## Description
    Agents are ``player_0 .. player_{N-1}`` in seat order. The agent to move keeps acting until
    it fills a box; then the next seat's turn starts with its first roll already made. The
    rules, scoring and all randomness are those of `yahtzee_env.game.engine.Game` (seeded by
    `reset(seed=...)`); the players' dice are the same engine's.

    ## Action Space
    `Discrete(45)` for every agent, the ids of `Yahtzee-v0`: `0..31` hold mask over the sorted
    dice (bit `i` keeps die `i`), legal while re-rolls remain; `32..44` fill box
    `action - 32` (`yahtzee_env.game.rules.BOX_NAMES`).

    ## Observation Space
    `Dict({"observation": Box(0, 1, (D,), float32), "action_mask": Box(0, 1, (45,), int8)})`
    with `D = 73 + 20 * (N - 1)` (93 for two players, 133 for four):

    | index               | meaning                                                     |
    |---------------------|-------------------------------------------------------------|
    | `0:72`              | the observer's own `Yahtzee-v0` vector (`encode_seat`)      |
    | `72`                | the observer's total / 500, capped at 1                     |
    | `73 + 20k + 0:13`   | opponent `k`: box open (1) / filled (0)                     |
    | `73 + 20k + 13`     | opponent `k`: upper total / upper-bonus threshold, capped   |
    | `73 + 20k + 14`     | opponent `k`: upper bonus earned                            |
    | `73 + 20k + 15:18`  | opponent `k`: yahtzee box open / holds 50 / holds 0, one-hot |
    | `73 + 20k + 18`     | opponent `k`: boxes filled / 13                             |
    | `73 + 20k + 19`     | opponent `k`: total / 500, capped at 1                      |

    Opponent `k = 0, 1, ..` is the player `k + 1` seats after the observer (player-relative,
    in seat order), so every agent sees the same layout from its own seat.

    The dice entries (`0:39`) show the dice on the table and the re-rolls left of the turn in
    progress, which are the mover's: an agent that is not to move sees the mover's dice, and
    its points entries (`52:65`) say what those dice would score on *its own* card. Its
    `action_mask` is all zeros (as is everyone's once the game is over). A policy of the
    solitaire env (the CPU levels, `yahtzee_env.policies.baselines`) acts on the first 72 entries,
    or on
    `single_observation(agent)`, and plays exactly as it does in `Yahtzee-v0`.

    ## Rewards
    - `reward="win"` (default): 0 until the end; then +1 to a sole winner and -1 to every other
      player; when several players tie on top it is a draw: 0 to each of them and -1 to the
      rest (so with more than two players the rewards need not sum to zero).
    - `reward="score"`: the points each action adds to its own player's total (holds 0, a box
      its points plus any upper or Yahtzee bonus it earns); the return is the final total.

    With `env()`, an illegal action ends the game at once: -1 to the offender, 0 to the others.

    ## Episode End
    Every agent terminates when the last player fills its thirteenth box. No truncation.

    ## Information
    Each agent's `info` has the `Yahtzee-v0` keys for its own seat: `dice` and `rolls_left`
    (of the table), `scorecard`, `upper_total`, `upper_bonus`, `yahtzee_bonus`, `total` (its
    own card), `action_mask` (`int8[45]`, zeros when it is not its turn). At the end
    `env.last()` therefore gives every player's final `total`.

    ## Arguments
    `env(num_players=2, rules="official", render_mode=None, reward="win", first_player=0,
    duplicate=False)`:
    `num_players` 2..4; `rules` a preset name or `RuleSet`; `render_mode` `"ansi"` or `"human"`;
    `reward` `"win"` or `"score"`; `first_player` a seat (int) or `"roll"` (each player rolls
    five dice, highest starts, tied leaders re-roll: `engine.roll_for_first_player`);
    `duplicate=True`: every seat gets the same dice for the same turn and roll (a duplicate
    game, `yahtzee_env.game.fair_dice`: with the same holds, the same dice), so seats are
    compared with the luck of the dice taken out (common random numbers for evaluation).

    ## Version History
    * v0: Initial version.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "yahtzee_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int = 2,
        rules: str | RuleSet | None = "official",
        render_mode: str | None = None,
        reward: RewardMode = "win",
        first_player: int | Literal["roll"] = 0,
        duplicate: bool = False,
    ) -> None:
        EzPickle.__init__(self, num_players, rules, render_mode, reward, first_player, duplicate)
        super().__init__()
        if (
            isinstance(num_players, bool)
            or not isinstance(num_players, int)
            or not MIN_PLAYERS <= num_players <= MAX_PLAYERS
        ):
            raise ValueError(
                f"num_players must be {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players!r}"
            )
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be 'win' or 'score', got {reward!r}")
        check_render_mode(render_mode, self.metadata)
        if first_player != "roll" and (
            isinstance(first_player, bool)
            or not isinstance(first_player, int)
            or not 0 <= first_player < num_players
        ):
            raise ValueError(
                f"first_player must be 'roll' or a seat 0..{num_players - 1}, got {first_player!r}"
            )
        self.rules = RuleSet.from_spec(rules)
        self.num_players = num_players
        self.reward_mode = reward
        self.first_player = first_player
        self.render_mode = render_mode
        if not isinstance(duplicate, bool):
            raise ValueError(f"duplicate must be True or False, got {duplicate!r}")
        self.duplicate = duplicate

        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agents = self.possible_agents[:]
        self._seats = {agent: i for i, agent in enumerate(self.possible_agents)}
        size = observation_size(num_players)
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, (size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self.game = Game(self.rules, num_players=num_players, duplicate=duplicate)
        self.np_random, self.np_random_seed = seeding.np_random(None)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.agents[0]

    # ------------------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------------- AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game (seeded by ``seed``). ``options`` is accepted and ignored: unlike
        the single-agent envs, which reject options, PettingZoo's `api_test` requires an AEC
        env to accept arbitrary ones (it calls ``reset(seed=0, options={"options": 1})``)."""
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        if self.first_player == "roll":
            first = roll_for_first_player(self.num_players, self.np_random)
        else:
            first = int(self.first_player)
        self.game.reset(self.np_random, first=first)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._skip_agent_selection = None
        self.agent_selection = self.possible_agents[first]
        self._update_infos()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seats[agent]
        game = self.game
        if not game.over and seat == game.current:
            mask = game.legal_action_mask().astype(np.int8)
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": encode_table(game, seat), "action_mask": mask}

    def single_observation(self, agent: str) -> np.ndarray:
        """The agent's own `Yahtzee-v0` observation (float32[72]): what the CPU levels and
        the built-in policies act on. Equal to ``observe(agent)["observation"][:72]``."""
        return encode_seat(self.game, self._seats[agent])

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        seat = self._seats[agent]
        action = action_id(action)  # explicit checks: they hold under python -O too
        # Raises IllegalActionError if illegal, before anything here changes: the game, the
        # rewards and the cumulative rewards are all left as they were.
        points = game.step(action)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if self.reward_mode == "score":
            self.rewards[agent] = float(points)
        if game.over:
            if self.reward_mode == "win":
                for other, r in zip(self.agents, win_rewards(game.totals()), strict=True):
                    self.rewards[other] = r
            self.terminations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        if action >= BOX_ACTION_OFFSET and not game.over:
            self.agent_selection = self.possible_agents[game.current]
        elif game.over:
            # Dead steps go round the table starting after the player who ended the game.
            self.agent_selection = self.possible_agents[(seat + 1) % self.num_players]
        self._update_infos()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        return render(
            self.render_mode, {"ansi": lambda: render_table(self.game, self.possible_agents)}
        )

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------------- internals
    def _update_infos(self) -> None:
        game = self.game
        mover = None if game.over else game.current
        mask = None if mover is None else game.legal_action_mask()
        self.infos = {
            agent: card_info(
                game, self._seats[agent], mask if self._seats[agent] == mover else None
            )
            for agent in self.agents
        }


__all__ = ["CheckActionWrapper", "env", "raw_env"]
