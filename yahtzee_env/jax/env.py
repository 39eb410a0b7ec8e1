"""`Yahtzee-v0` as pure JAX functions: an explicit state, ``init``/``step``/``observe``, chance
nodes. Every function is `jax.jit`- and `jax.vmap`-able; nothing branches in Python on a traced
value (the rules, the player count and the holds mode are static: they pick the tables).

The rules are not written again here: the tables come from the numpy engine's modules
(`yahtzee_env.game.dice`, `yahtzee_env.game.rules` through `BoxScoring.context_batch` and
`BoxScoring.fill` with ``xp=jax.numpy``, the observation's feature tables), converted once per
env. ``tests/test_jax.py`` plays 10,000 games per preset through this env and the numpy vector
env from the same dice and checks that every card, mask, reward and observation is equal.

Dice: as in the numpy engine, a roll is one uniform integer ``draw`` in ``[0, 6**5)`` mapped
through the exact outcome table of the dice kept: the outcome is ``bisect_right(KEEP_CDF[keep],
draw)``. ``step(state, action, key)`` draws it from ``key``; ``step_with_draw(state, action,
draw)`` takes it as given (the "dice source" the equality test feeds to both engines).

The mask never leaves a policy without an action: it is all True once the game is over (as pgx:
any action then changes nothing and earns 0) and at a chance node (no one decides there: any
action is ignored and `step` rolls the dice), so a masked ``log_softmax`` never divides by zero.
`State.observation` is `observe` of the player to move, written by every step (pgx's field).

Chance nodes (as in pgx's dice games, for expectimax and Stochastic MuZero)::

    after = env.step_deterministic(state, action)    # the afterstate: dice to roll, no mask
    outcomes, probs = env.chance_outcomes(after)      # int32[252] rolls, float32[252] exact
    state = env.step_stochastic(after, outcomes[i])   # the dice land on outcome i

``probs[i]`` is ``weights[i] / 7776`` with the integer ``weights`` of `chance_weights` (the
count of the 6**5 ordered rolls that give roll ``i``): 252 rolls are possible with no die held,
fewer with holds (the others have probability 0; shapes stay fixed for `vmap`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from yahtzee_env.game.dice import (
    CANONICAL_HOLDS,
    DICE,
    FIRST_ROLL_KEEP,
    HOLD_TO_KEEP,
    KEEP_CDF,
    KEEP_PROBS,
    NUM_HOLDS,
    NUM_ROLLS,
    ROLL_OUTCOMES,
)
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS, NUM_TURNS, ROLLS_PER_TURN
from yahtzee_env.game.observation import (
    DICE_FEATURES,
    INPUT_SIZES,
    OBS_SIZE,
    OPEN_FEATURES,
    OPP_CARD,
    OPP_TOTAL,
    OPPONENT_SIZE,
    PROGRESS_FEATURES,
    ROLLS_LEFT_FEATURES,
    STRATEGY_SIZE,
    TABLE_INPUT_VERSION,
    TABLE_SIZE,
    TABLE_TOTAL_SCALE,
    YAHTZEE_BOX_FEATURES,
)
from yahtzee_env.game.rules import (
    MAX_UPPER_TOTAL,
    NUM_BOXES,
    NUM_UPPER,
    YAHTZEE_OPEN,
    RuleSet,
)
from yahtzee_env.game.step_tables import step_tables

OPEN = -1  # a box not yet filled, in ``State.scores``
ENV_ID = "Yahtzee-v0"  # the game of the Gymnasium id, in JAX
IllegalAction = Literal["penalize", "lose"]
ILLEGAL_ACTIONS = ("penalize", "lose")


class State(NamedTuple):
    """One game (a JAX pytree; ``jax.vmap`` adds a leading batch axis to every field).

    ``P`` is the number of players. ``rewards[p]`` is what the last step earned player ``p``.
    Between steps a roll is on the table (``roll``, an index into `DICE`), unless the game is
    over or the state is an afterstate (``is_chance``: the dice not in ``keep`` are in the air).
    """

    current_player: jax.Array  # int32: the player to move
    observation: jax.Array  # float32[D]: `Yahtzee.observe` of the player to move
    rewards: jax.Array  # float32[P]
    terminated: jax.Array  # bool: every box of every card is filled
    truncated: jax.Array  # bool: ``max_episode_steps`` actions (an agent looping on illegal ones)
    legal_action_mask: jax.Array  # bool[45] (all True when over or at a chance node)
    roll: jax.Array  # int32: the dice on the table, index into DICE
    rolls_left: jax.Array  # int32: re-rolls left this turn (0..2)
    is_chance: jax.Array  # bool: an afterstate, the dice not in ``keep`` to be rolled
    keep: jax.Array  # int32: the dice kept for the roll to come (a keep index)
    filled: jax.Array  # int32[P]: bit b set: box b filled
    upper_total: jax.Array  # int32[P]
    yahtzee_state: jax.Array  # int32[P]: YAHTZEE_OPEN / YAHTZEE_50 / YAHTZEE_0
    yahtzee_bonus: jax.Array  # int32[P]: points earned by Yahtzee bonuses
    scores: jax.Array  # int32[P, 13]: each box's points, OPEN (-1) while open
    turns_taken: jax.Array  # int32: turns completed by all players together
    step_count: jax.Array  # int32: decisions taken in this game (illegal actions too)

    @property
    def dice(self) -> jax.Array:
        """int32[5]: the dice on the table, ascending."""
        return jnp.asarray(DICE, dtype=jnp.int32)[self.roll]


class Yahtzee:
    """Yahtzee for JAX: ``init(key)``, ``step(state, action, key)``, ``observe(state)``.

    Arguments (static; each combination builds its own tables once):

    - ``rules``: a preset name (`yahtzee_env.PRESETS`) or a `RuleSet`; official by default.
    - ``num_players``: 1..4; players take whole turns in seat order from seat 0, as
      `yahtzee_env.game.engine.Game`; ``rewards`` has one entry per player.
    - ``canonical_holds``: the mask allows one hold per distinct kept multiset, and no
      keep-all (as ``Yahtzee-v0``'s ``canonical_holds=True``).
    - ``illegal_action``: what an illegal action does (JAX cannot raise on a traced value).
      ``"penalize"`` (default, ``Yahtzee-v0``'s): it changes nothing and gives the player to
      move ``illegal_penalty``; the game goes on. ``"lose"`` (pgx's): the game ends at once
      (``terminated``) as a loss: ``illegal_penalty`` to the player who moved, minus it to each
      other player. Once the game is over every step changes nothing and gives 0.
    - ``illegal_penalty``: that reward (-1).
    - ``max_episode_steps``: ``truncated`` after this many decisions (1000, as the registration;
      a legal game is at most 39 actions per player).
    - ``table``: what `State.observation` holds (and `observe` gives by default): the player's
      own 72 floats (False), or its view of the table (True: `observe(..., table=True)`).

    Actions (45) and the observation (72 floats; `model_input` with version 2: 86) are
    ``Yahtzee-v0``'s; the table view (``73 + 20 * (P - 1)`` floats) is ``YahtzeeVs-v0``'s.
    """

    id = ENV_ID  # pgx's `Env.id`
    version = "v0"  # pgx's `Env.version`: changes when the behaviour does
    num_actions = NUM_ACTIONS

    def __init__(
        self,
        rules: str | RuleSet | None = "official",
        num_players: int = 1,
        canonical_holds: bool = False,
        illegal_penalty: float = -1.0,
        max_episode_steps: int = 1000,
        illegal_action: IllegalAction = "penalize",
        table: bool = False,
    ) -> None:
        if isinstance(num_players, bool) or not isinstance(num_players, int):
            raise ValueError(f"num_players must be an int in 1..4, got {num_players!r}")
        if not 1 <= num_players <= 4:
            raise ValueError(f"num_players must be in 1..4, got {num_players}")
        if not isinstance(canonical_holds, bool):
            raise ValueError(f"canonical_holds must be a bool, got {canonical_holds!r}")
        if not isinstance(table, bool):
            raise ValueError(f"table must be a bool, got {table!r}")
        if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int):
            raise ValueError(f"max_episode_steps must be a positive int, got {max_episode_steps!r}")
        if max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be a positive int, got {max_episode_steps}")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(
                f"illegal_action must be one of {ILLEGAL_ACTIONS}, got {illegal_action!r}"
            )
        self.rules = RuleSet.from_spec(rules)
        self.num_players = num_players
        self.canonical_holds = canonical_holds
        self.illegal_action = illegal_action
        self.illegal_penalty = float(illegal_penalty)
        self.max_episode_steps = max_episode_steps
        self.table = table
        tables = self.rules.tables
        rows = step_tables(self.rules)
        self._tables = tables
        self._lookups = tuple(jnp.asarray(a) for a in tables.flat_lookups())
        self._legal = jnp.asarray(tables.legal)  # [7, 8192, 13]
        self._points_obs = jnp.asarray(rows.points_scaled)  # [252, 2, 13] points / 50
        holds = CANONICAL_HOLDS if canonical_holds else np.ones((NUM_ROLLS, NUM_HOLDS), bool)
        self._holds = jnp.asarray(holds)
        self._hold_to_keep = jnp.asarray(HOLD_TO_KEEP, dtype=jnp.int32)
        self._keep_cdf = jnp.asarray(KEEP_CDF, dtype=jnp.int32)
        self._keep_weights = jnp.asarray(np.diff(KEEP_CDF, axis=1, prepend=0), dtype=jnp.int32)
        # `KEEP_PROBS` rounded once to float32 (XLA would divide by 7776 as a product).
        self._keep_probs = jnp.asarray(KEEP_PROBS, dtype=jnp.float32)
        threshold = self.rules.upper_bonus_threshold
        self._threshold = threshold
        # The card's scalar features by upper total (and a table's totals by total), computed
        # as `observation.write_card` and `write_table` compute them (float64 quotient, then
        # float32): a lookup, so XLA cannot turn the division into a product.
        upper = np.arange(MAX_UPPER_TOTAL + 1)
        self._upper_feature = jnp.asarray(np.minimum(upper / threshold, 1.0).astype(np.float32))
        totals = np.arange(int(TABLE_TOTAL_SCALE) + 1)
        self._total_feature = jnp.asarray(
            np.minimum(totals / TABLE_TOTAL_SCALE, 1.0).astype(np.float32)
        )
        self._dice_features = jnp.asarray(DICE_FEATURES)
        self._rolls_left_features = jnp.asarray(ROLLS_LEFT_FEATURES)
        self._open_features = jnp.asarray(OPEN_FEATURES)
        self._progress_features = jnp.asarray(PROGRESS_FEATURES)
        self._yahtzee_box_features = jnp.asarray(YAHTZEE_BOX_FEATURES)

    def __repr__(self) -> str:
        extra = "".join(
            f", {name}={value!r}"
            for name, value, default in (
                ("illegal_action", self.illegal_action, "penalize"),
                ("table", self.table, False),
            )
            if value != default
        )
        return (
            f"Yahtzee(rules={self.rules.name!r}, num_players={self.num_players}, "
            f"canonical_holds={self.canonical_holds}{extra})"
        )

    @property
    def observation_shape(self) -> tuple[int]:
        """The shape of `State.observation`: (72,), or the table view's (73 + 20 (P - 1),)."""
        if self.table:
            return (OBS_SIZE + 1 + OPPONENT_SIZE * (self.num_players - 1),)
        return (OBS_SIZE,)

    @property
    def observation_size(self) -> int:
        return self.observation_shape[0]

    # ------------------------------------------------------------------------ start
    def init(self, key: jax.Array) -> State:
        """A new game: every card empty, seat 0 to move, its first roll on the table."""
        return self.init_with_draw(draw_of(key))

    def init_with_draw(self, draw: jax.Array) -> State:
        """`init` with the first roll's uniform ``draw`` in ``[0, 7776)`` given."""
        p = self.num_players
        zeros = jnp.zeros(p, dtype=jnp.int32)
        state = State(
            current_player=jnp.int32(0),
            observation=jnp.zeros(self.observation_shape, dtype=jnp.float32),
            rewards=jnp.zeros(p, dtype=jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            legal_action_mask=jnp.ones(NUM_ACTIONS, dtype=bool),
            roll=jnp.int32(0),
            rolls_left=jnp.int32(ROLLS_PER_TURN - 1),
            is_chance=jnp.bool_(True),
            keep=jnp.int32(FIRST_ROLL_KEEP),
            filled=zeros,
            upper_total=zeros,
            yahtzee_state=jnp.full(p, YAHTZEE_OPEN, dtype=jnp.int32),
            yahtzee_bonus=zeros,
            scores=jnp.full((p, NUM_BOXES), OPEN, dtype=jnp.int32),
            turns_taken=jnp.int32(0),
            step_count=jnp.int32(0),
        )
        return self.step_stochastic(state, self.outcome_of_draw(state.keep, draw))

    # ------------------------------------------------------------------------ steps
    def step(self, state: State, action: jax.Array, key: jax.Array) -> State:
        """Apply ``action`` for the player to move, then roll the dice it leaves in the air
        (at a chance node the action is ignored and the dice are rolled)."""
        return self.step_with_draw(state, action, draw_of(key))

    def step_with_draw(self, state: State, action: jax.Array, draw: jax.Array) -> State:
        """`step` with the roll's uniform ``draw`` in ``[0, 7776)`` given (unused when no dice
        are rolled: an illegal action, the game's last fill, a game already over)."""
        after = self._afterstate(state, action)
        return self.step_stochastic(after, self.outcome_of_draw(after.keep, draw))

    def step_deterministic(self, state: State, action: jax.Array) -> State:
        """The afterstate of ``action``: the card filled or the dice held, the dice still to
        roll (``is_chance``, ``keep``). An illegal action leaves the state as it is with
        ``illegal_penalty`` (``illegal_action="penalize"``) or ends the game as a loss
        (``"lose"``); once the game is over, or at a chance node, any action changes nothing
        and earns 0."""
        after = self._afterstate(state, action)
        return after._replace(observation=self.observe(after))

    def _afterstate(self, state: State, action: jax.Array) -> State:
        """`step_deterministic` but its observation (`step` writes the one after the roll)."""
        action = jnp.asarray(action, dtype=jnp.int32)
        p = state.current_player
        over = state.terminated | state.truncated
        decide = ~over & ~state.is_chance  # player p is asked for an action
        in_range = (action >= 0) & (action < NUM_ACTIONS)
        play = decide & in_range & state.legal_action_mask[jnp.clip(action, 0, NUM_ACTIONS - 1)]
        illegal = decide & ~play
        is_hold = action < NUM_HOLDS
        fill = play & ~is_hold
        box = jnp.clip(action - BOX_ACTION_OFFSET, 0, NUM_BOXES - 1)

        # Fill a box: `BoxScoring.fill`, the engine's, on this player's card.
        filled, upper, ystate = state.filled[p], state.upper_total[p], state.yahtzee_state[p]
        _, values = self._tables.context_batch(state.roll, filled, ystate, xp=jnp)
        done = self._tables.fill(state.roll, box, values, upper, ystate, lookups=self._lookups)
        card = lambda field, new: field.at[p].set(jnp.where(fill, new, field[p]))  # noqa: E731
        scores = state.scores.at[p, box].set(
            jnp.where(fill, done.points, state.scores[p, box]).astype(jnp.int32)
        )
        nobody = jnp.zeros(self.num_players, jnp.float32)
        rewards = nobody.at[p].set(jnp.where(fill, done.reward, 0).astype(jnp.float32))
        penalty = jnp.float32(self.illegal_penalty)
        if self.illegal_action == "lose":  # pgx: the game ends, the others win
            rewards = jnp.where(illegal, (nobody - penalty).at[p].set(penalty), rewards)
            forfeit = illegal
        else:
            rewards = jnp.where(illegal, nobody.at[p].set(penalty), rewards)
            forfeit = jnp.bool_(False)
        turns_taken = state.turns_taken + fill
        terminated = state.terminated | (turns_taken == NUM_TURNS * self.num_players) | forfeit
        step_count = state.step_count + decide
        next_player = jnp.where(fill & ~terminated, (p + 1) % self.num_players, p)
        # The dice to roll: the kept ones after a hold, none kept (a first roll) after a fill.
        keep = jnp.where(is_hold, self._hold_to_keep[state.roll, action & (NUM_HOLDS - 1)],
                         FIRST_ROLL_KEEP)  # fmt: skip
        rolls_left = jnp.where(is_hold, state.rolls_left - 1, ROLLS_PER_TURN - 1)
        rolling = play & ~terminated
        truncated = state.truncated | (~terminated & (step_count >= self.max_episode_steps))
        return state._replace(
            current_player=next_player,
            rewards=rewards,
            terminated=terminated,
            truncated=truncated,
            # All True once over and at the chance node to come; an illegal no-op keeps it.
            legal_action_mask=state.legal_action_mask | terminated | truncated | rolling,
            rolls_left=jnp.where(play, jnp.where(terminated, 0, rolls_left), state.rolls_left),
            is_chance=state.is_chance | rolling,
            keep=jnp.where(rolling, keep, state.keep),
            filled=card(state.filled, filled | (1 << box)),
            upper_total=card(state.upper_total, done.upper_total),
            yahtzee_state=card(state.yahtzee_state, done.yahtzee_state),
            yahtzee_bonus=card(state.yahtzee_bonus, state.yahtzee_bonus[p] + done.bonus),
            scores=scores,
            turns_taken=turns_taken,
            step_count=step_count,
        )

    def chance_weights(self, state: State) -> jax.Array:
        """int32[252]: of the 6**5 equally likely ordered rolls, how many give each roll from
        an afterstate (`step_deterministic`); all 0 when no dice are in the air."""
        return jnp.where(state.is_chance, self._keep_weights[state.keep], 0)

    def chance_outcomes(self, state: State) -> tuple[jax.Array, jax.Array]:
        """(outcomes int32[252], probs float32[252]): every roll and its exact probability
        from an afterstate (`chance_weights` / 7776; zero for rolls the kept dice rule out)."""
        probs = jnp.where(state.is_chance, self._keep_probs[state.keep], 0.0)
        return jnp.arange(NUM_ROLLS, dtype=jnp.int32), probs

    def outcome_of_draw(self, keep: jax.Array, draw: jax.Array) -> jax.Array:
        """The roll a uniform ``draw`` in ``[0, 7776)`` gives when ``keep`` is held:
        ``bisect_right(KEEP_CDF[keep], draw)``, as the numpy engine rolls."""
        return jnp.sum(self._keep_cdf[keep] <= draw).astype(jnp.int32)

    def step_stochastic(self, state: State, outcome: jax.Array) -> State:
        """The dice of an afterstate land on roll ``outcome`` (an index into `DICE`; it should
        have a nonzero probability in `chance_outcomes`). A state that is not an afterstate is
        returned as it is."""
        roll = jnp.where(state.is_chance, jnp.asarray(outcome, jnp.int32), state.roll)
        state = state._replace(roll=roll)
        mask = jnp.where(state.is_chance, self.legal_action_mask(state), state.legal_action_mask)
        state = state._replace(legal_action_mask=mask, is_chance=jnp.bool_(False))
        return state._replace(observation=self.observe(state))

    def legal_action_mask(self, state: State) -> jax.Array:
        """bool[45] of the player to move with the dice on the table (as the numpy engine's
        `Game.legal_action_mask`); all True once the game is over (as pgx)."""
        p = state.current_player
        filled = state.filled[p]
        context, _ = self._tables.context_batch(state.roll, filled, state.yahtzee_state[p], xp=jnp)
        holds = self._holds[state.roll] & (state.rolls_left > 0)
        mask = jnp.concatenate([holds, self._legal[context, filled]])
        return mask | state.terminated | state.truncated

    # ------------------------------------------------------------------------ views
    def observe(
        self, state: State, player_id: jax.Array | None = None, table: bool | None = None
    ) -> jax.Array:
        """What ``player_id`` (default: the player to move) sees.

        ``table=False``: float32[72], ``Yahtzee-v0``'s observation: the dice on the table, the
        turn's re-rolls, that player's card and what the dice would score on it
        (`yahtzee_env.game.observation.encode_seat`). ``table=True``: float32[73 + 20 (P - 1)],
        ``YahtzeeVs-v0``'s view of the table (`yahtzee_env.envs.seat_view.encode_table`): those
        72, then its own total and every other card with its total, in seat order after it
        (`observation.write_table`); the win level reads it (`model_input` version 3).
        ``table=None``: the env's ``table`` (what `State.observation` holds). ``table`` is
        static (it sets the shape)."""
        p = state.current_player if player_id is None else player_id
        own = self._observe_seat(state, p)
        if not (self.table if table is None else table):
            return own
        return jnp.concatenate([own, self._table_floats(state, p)])

    def _observe_seat(self, state: State, p: jax.Array) -> jax.Array:
        filled, upper, ystate = state.filled[p], state.upper_total[p], state.yahtzee_state[p]
        context, values = self._tables.context_batch(state.roll, filled, ystate, xp=jnp)
        legal = self._legal[context, filled].astype(jnp.float32)
        bonus = self._tables.yahtzee_bonus(state.roll, ystate, lookups=self._lookups) > 0
        upper_feature = self._upper_feature[jnp.minimum(upper, MAX_UPPER_TOTAL)]
        return jnp.concatenate([
            self._dice_features[state.roll],  # [0:36)
            self._rolls_left_features[state.rolls_left],  # [36:39)
            self._open_features[filled],  # [39:52)
            self._points_obs[state.roll, values] * legal,  # [52:65)
            upper_feature[None],  # 65
            (upper >= self._threshold).astype(jnp.float32)[None],  # 66
            self._yahtzee_box_features[ystate],  # [67:70)
            bonus.astype(jnp.float32)[None],  # 70
            self._progress_features[filled][None],  # 71
        ])  # fmt: skip

    def _table_floats(self, state: State, p: jax.Array) -> jax.Array:
        """`observation.write_table` for seat ``p``: its total / 500 (capped at 1), then one
        block of `OPPONENT_SIZE` per other seat, at the layout `OPP_CARD` / `OPP_TOTAL`."""
        n = self.num_players
        totals = self._total_feature[jnp.clip(self.totals(state), 0, int(TABLE_TOTAL_SCALE))]
        others = (p + jnp.arange(1, n)) % n  # static length: n - 1
        filled, upper = state.filled[others], state.upper_total[others]
        block = jnp.zeros((n - 1, OPPONENT_SIZE), jnp.float32)
        block = block.at[:, OPP_CARD.open].set(self._open_features[filled])
        block = block.at[:, OPP_CARD.upper].set(
            self._upper_feature[jnp.minimum(upper, MAX_UPPER_TOTAL)]
        )
        block = block.at[:, OPP_CARD.upper_bonus].set(
            (upper >= self._threshold).astype(jnp.float32)
        )
        block = block.at[:, OPP_CARD.yahtzee_box].set(
            self._yahtzee_box_features[state.yahtzee_state[others]]
        )
        block = block.at[:, OPP_CARD.progress].set(self._progress_features[filled])
        block = block.at[:, OPP_TOTAL].set(totals[others])
        return jnp.concatenate([totals[p][None], block.reshape(-1)])

    def totals(self, state: State) -> jax.Array:
        """int32[P]: each player's score so far, bonuses included."""
        boxes = jnp.where(state.scores == OPEN, 0, state.scores).sum(axis=-1)
        return boxes + self.rules.upper_bonus(state.upper_total) + state.yahtzee_bonus

    def win_rewards(self, state: State) -> jax.Array:
        """float32[P]: the win objective's result from the totals (`seat_view.win_rewards`):
        +1 to a sole top scorer, 0 to players tied on top (a draw), -1 to everyone else. Give
        it at the end (``terminated``) for ``YahtzeeVs-v0``'s ``reward="win"``."""
        totals = self.totals(state)
        top = totals == totals.max()
        first = jnp.where(top.sum() == 1, 1.0, 0.0)
        return jnp.where(top, first, -1.0).astype(jnp.float32)

    def model_input(self, obs: jax.Array, version: int = 1) -> jax.Array:
        """What a model of input ``version`` reads (`yahtzee_env.game.observation.model_input`):
        the observation (1), or it and the 14 strategy features (2), over ``[..., 72]``; or
        (3, the win level's) a 2-seat table view ``[..., 93]``: version 2 of its own 72
        floats, then the table's 21."""
        if version == 1:
            return obs
        if version == 2:
            return jnp.concatenate([obs, strategy_features(obs, self._threshold)], axis=-1)
        if version == TABLE_INPUT_VERSION:
            if obs.shape[-1] != OBS_SIZE + TABLE_SIZE:
                raise ValueError(
                    f"input version {TABLE_INPUT_VERSION} reads a 2-seat table view of "
                    f"{OBS_SIZE + TABLE_SIZE} floats (observe(..., table=True) with "
                    f"num_players=2), got {obs.shape[-1]}"
                )
            own = obs[..., :OBS_SIZE]
            features = strategy_features(own, self._threshold)
            return jnp.concatenate([own, features, obs[..., OBS_SIZE:]], axis=-1)
        raise ValueError(f"unknown model input version {version!r} (known: {sorted(INPUT_SIZES)})")


def draw_of(key: jax.Array) -> jax.Array:
    """One uniform integer in ``[0, 6**5)``: the randomness of one roll."""
    return jax.random.randint(key, (), 0, ROLL_OUTCOMES, dtype=jnp.int32)


_FACES = np.arange(1, 7, dtype=np.float32)  # numpy: importing starts no JAX backend


@partial(jax.jit, static_argnums=1)
def strategy_features(obs: jax.Array, threshold: int) -> jax.Array:
    """`yahtzee_env.game.observation.strategy_features` in JAX, over ``[..., 72]``: the same
    operations in float32 (``tests/test_jax.py`` holds the two equal on played states)."""
    from yahtzee_env.game.observation import (
        COUNTS_SLICE,
        NUM_DICE,
        OPEN_SLICE,
        POINTS_SLICE,
        UPPER_INDEX,
    )

    upper = jnp.rint(jnp.minimum(obs[..., UPPER_INDEX], 1.0) * threshold)
    open_upper = obs[..., OPEN_SLICE][..., :NUM_UPPER]
    filled_faces = ((1.0 - open_upper) * _FACES).sum(axis=-1)
    open_faces = (open_upper * _FACES).sum(axis=-1)
    reach = upper + 5 * open_faces - threshold
    counts = jnp.rint(obs[..., COUNTS_SLICE] * NUM_DICE)
    most = jnp.clip(counts.max(axis=-1), 1, 5)
    present = counts > 0
    run4 = (present[..., 0:3] & present[..., 1:4] & present[..., 2:5] & present[..., 3:6]).any(-1)
    run5 = present[..., 0:5].all(-1) | present[..., 1:6].all(-1)
    full_house = (counts == 3).any(-1) & (counts == 2).any(-1)
    columns = [
        jnp.clip((upper - 3 * filled_faces) / 21.0, -1, 1),
        jnp.clip((upper + 3 * open_faces - threshold) / 21.0, -1, 1),
        (reach >= 0).astype(jnp.float32),
        jnp.clip(reach / 42.0, -1, 1),
        *[(most == k).astype(jnp.float32) for k in range(1, 6)],
        run4.astype(jnp.float32),
        run5.astype(jnp.float32),
        full_house.astype(jnp.float32),
        obs[..., OPEN_SLICE][..., NUM_UPPER:].sum(axis=-1) / 7.0,
        obs[..., POINTS_SLICE].max(axis=-1),
    ]
    assert len(columns) == STRATEGY_SIZE
    return jnp.stack(columns, axis=-1).astype(jnp.float32)


def random_rollout(env: Yahtzee, key: jax.Array, num_envs: int, steps: int) -> jax.Array:
    """``steps`` steps of ``num_envs`` games at once with uniformly random legal actions,
    each game restarting when it ends (one compiled program: `jax.vmap` over the games,
    `jax.lax.scan` over the steps). Returns float32[num_envs]: the points each game's seat 0
    earned in all. Jit it with ``num_envs`` and ``steps`` static:
    ``jax.jit(random_rollout, static_argnums=(0, 2, 3))``."""
    init, step = jax.vmap(env.init), jax.vmap(env.step)

    def one(carry, key):
        state, earned = carry
        k_act, k_step, k_reset = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k_act, logits)
        state = step(state, action, jax.random.split(k_step, num_envs))
        earned = earned + state.rewards[:, 0]
        done = state.terminated | state.truncated
        fresh = init(jax.random.split(k_reset, num_envs))
        state = jax.tree.map(
            lambda new, old: jnp.where(done.reshape((-1,) + (1,) * (old.ndim - 1)), new, old),
            fresh, state,
        )  # fmt: skip
        return (state, earned), None

    k_init, k_steps = jax.random.split(key)
    start = (init(jax.random.split(k_init, num_envs)), jnp.zeros(num_envs, jnp.float32))
    (_, earned), _ = jax.lax.scan(one, start, jax.random.split(k_steps, steps))
    return earned


def auto_reset(
    step_fn: Callable[[State, jax.Array, jax.Array], State],
    init_fn: Callable[[jax.Array], State],
) -> Callable[[State, jax.Array, jax.Array], State]:
    """A ``step(state, action, key)`` that starts a new game where one ends (pgx's
    ``auto_reset``): the state handed back at the end is ``init_fn``'s fresh game, still
    carrying the finished step's ``terminated``, ``truncated`` and ``rewards``, and the next
    step plays on from that fresh game. ``step_fn``/``init_fn`` are an env's ``step``/``init``
    (one game: `jax.vmap` the result)."""

    def step(state: State, action: jax.Array, key: jax.Array) -> State:
        k_step, k_init = jax.random.split(key)
        # A fresh game this wrapper handed back (no decision yet) drops the last one's end.
        fresh = state.step_count == 0
        state = state._replace(terminated=state.terminated & ~fresh,
                               truncated=state.truncated & ~fresh)  # fmt: skip
        state = step_fn(state, action, k_step)
        over = state.terminated | state.truncated
        new = init_fn(k_init)._replace(
            terminated=state.terminated, truncated=state.truncated, rewards=state.rewards
        )
        return jax.tree.map(lambda a, b: jnp.where(over, a, b), new, state)

    return step


ENVS = {ENV_ID: Yahtzee}


def make(env_id: str = ENV_ID, **kwargs) -> Yahtzee:
    """The JAX env of ``env_id`` (pgx's ``make``): ``make("Yahtzee-v0", num_players=2,
    table=True)``; the keywords are `Yahtzee`'s."""
    if env_id not in ENVS:
        raise ValueError(f"unknown env id {env_id!r} (known: {sorted(ENVS)})")
    return ENVS[env_id](**kwargs)
