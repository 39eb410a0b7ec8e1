"""The game: scorecards, turns, 1..N players (best-of-five matches: `game.match`). No
Gymnasium here.

Action ids (shared by every env, the solver and the policies)::

    0..31   hold mask: bit i set keeps die i of the *sorted* dice, the others are re-rolled.
            Legal while re-rolls remain. 31 keeps all: it re-rolls nothing and uses a roll.
    32..44  fill box 0..12 (order of `yahtzee_env.game.rules.BOX_NAMES`).

All randomness comes from a `DiceRoller` wrapping an explicit `numpy.random.Generator`: a
roll is one uniform integer in [0, 6**5) looked up in the exact outcome table of the keep;
the vector env uses the same table, so both have exactly the same roll distribution. A game
reset with a 32-byte ``seed`` (or built with ``duplicate=True``) rolls instead the dice that
`yahtzee_env.game.fair_dice` derives from the seed for each seat, turn and roll, which anyone
can recompute; in a duplicate game every seat draws the same dice.
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from yahtzee_env.game.dice import (
    CANONICAL_HOLDS,
    DICE,
    FIRST_ROLL_KEEP,
    HOLD_TO_KEEP,
    KEEP_CDF,
    NUM_DICE,
    NUM_HOLDS,
    ROLL_OUTCOMES,
)
from yahtzee_env.game.fair_dice import DICE_ALGORITHM, SEED_BYTES, SeededDice
from yahtzee_env.game.rules import (
    ALL_FILLED,
    BOX_NAMES,
    IS_YAHTZEE,
    NUM_BOXES,
    NUM_UPPER,
    UPPER_MASK,
    YAHTZEE_50,
    YAHTZEE_OPEN,
    Box,
    RuleSet,
)

NUM_ACTIONS = NUM_HOLDS + NUM_BOXES  # 45
BOX_ACTION_OFFSET = NUM_HOLDS  # action 32 + b fills box b
KEEP_ALL = NUM_HOLDS - 1  # hold every die: 31
ROLLS_PER_TURN = 3
NUM_TURNS = NUM_BOXES


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the current state. The state is unchanged."""


def action_id(action: Any) -> int:
    """An action as a Python int: ints, numpy integers and 0-d integer arrays are accepted;
    bools (Python or numpy) are refused like every other non-integer, and so are ids outside
    ``0..44`` (`IllegalActionError` naming the action)."""
    if type(action) is not int:
        if isinstance(action, bool) or getattr(getattr(action, "dtype", None), "kind", "") == "b":
            raise IllegalActionError(
                f"action {action!r} is a bool, not an action id (an integer in "
                f"0..{NUM_ACTIONS - 1})"
            )
        try:
            action = operator.index(action)
        except TypeError:
            raise IllegalActionError(
                f"action {action!r} is not an action id (an integer in 0..{NUM_ACTIONS - 1})"
            ) from None
    if not 0 <= action < NUM_ACTIONS:
        raise IllegalActionError(f"action {action} is out of range 0..{NUM_ACTIONS - 1}")
    return action


def box_action(box: int) -> int:
    """The action id that fills ``box``."""
    return BOX_ACTION_OFFSET + int(box)


def hold_action(positions: Sequence[int]) -> int:
    """The action id that keeps the dice at ``positions`` (0-based, in sorted order)."""
    action = 0
    for p in positions:
        if not 0 <= p < NUM_DICE:
            raise ValueError(f"die position {p} out of range 0..{NUM_DICE - 1}")
        action |= 1 << p
    return action


def describe_action(action: int) -> str:
    """A short human-readable name: ``hold[0,2]`` or ``box:full_house``."""
    if 0 <= action < NUM_HOLDS:
        return "hold[" + ",".join(str(i) for i in range(NUM_DICE) if action >> i & 1) + "]"
    if BOX_ACTION_OFFSET <= action < NUM_ACTIONS:
        return "box:" + BOX_NAMES[action - BOX_ACTION_OFFSET]
    return f"<invalid action {action}>"


_KEEP_CDF_LISTS = [row.tolist() for row in KEEP_CDF]
_DICE_TUPLES = [tuple(int(d) for d in row) for row in DICE]


class DiceRoller:
    """Rolls dice from an explicit generator, drawing uniform integers in blocks for speed."""

    BLOCK = 512

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._pending: list[int] = []

    def roll(self, keep: int = FIRST_ROLL_KEEP) -> int:
        """The roll index after re-rolling every die not in ``keep`` (a keep index)."""
        if not self._pending:
            self._pending = self.rng.integers(0, ROLL_OUTCOMES, size=self.BLOCK).tolist()
        return bisect_right(_KEEP_CDF_LISTS[keep], self._pending.pop())


# ------------------------------------------------------------------------------ scorecard
@dataclass
class Scorecard:
    """One player's scorecard. ``scores[b]`` is None while box ``b`` is open."""

    rules: RuleSet = field(default_factory=RuleSet)
    scores: list[int | None] = field(default_factory=lambda: [None] * NUM_BOXES)
    filled: int = 0  # bit b set: box b filled
    upper_total: int = 0
    yahtzee_state: int = YAHTZEE_OPEN  # YAHTZEE_OPEN / YAHTZEE_50 / YAHTZEE_0
    yahtzee_bonus: int = 0  # points earned by Yahtzee bonuses
    yahtzees: int = 0  # Yahtzees scored: the 50 in the yahtzee box, then each bonus Yahtzee

    @property
    def upper_bonus(self) -> int:
        return int(self.rules.upper_bonus(self.upper_total))

    @property
    def total(self) -> int:
        """The score so far, bonuses included."""
        boxes = sum(s for s in self.scores if s is not None)
        return boxes + self.upper_bonus + self.yahtzee_bonus

    @property
    def complete(self) -> bool:
        return self.filled == ALL_FILLED

    def options(self, roll: int) -> tuple[np.ndarray, np.ndarray]:
        """(legal bool[13], points int16[13]) for placing ``roll`` now (bonuses excluded)."""
        return self.rules.tables.options(roll, self.filled, self.yahtzee_state)

    def place(self, box: int, roll: int) -> int:
        """Fill ``box`` with ``roll``; return the points added to the total, bonuses included."""
        tables = self.rules.tables
        context, values = tables.context(roll, self.filled, self.yahtzee_state)
        legal = tables.legal[context, self.filled]
        if not 0 <= box < NUM_BOXES:
            raise IllegalActionError(f"box {box} does not exist (0..{NUM_BOXES - 1})")
        if not legal[box]:
            raise IllegalActionError(self._why_illegal(box, legal))
        fill = tables.fill(roll, box, values, self.upper_total, self.yahtzee_state)
        if IS_YAHTZEE[roll] and (
            self.yahtzee_state == YAHTZEE_50 or (box == Box.YAHTZEE and fill.points > 0)
        ):
            self.yahtzees += 1
        self.scores[box] = int(fill.points)
        self.yahtzee_bonus += int(fill.bonus)
        self.filled |= 1 << box
        self.upper_total = int(fill.upper_total)
        self.yahtzee_state = int(fill.yahtzee_state)
        return int(fill.reward)

    def why_illegal(self, box: int, roll: int) -> str | None:
        """Why filling ``box`` with ``roll`` is illegal now, in words; None if it is legal."""
        legal, _ = self.options(roll)
        return None if legal[box] else self._why_illegal(box, legal)

    def _why_illegal(self, box: int, legal: np.ndarray) -> str:
        name = BOX_NAMES[box]
        if self.filled >> box & 1:
            return f"box {name!r} is already filled (with {self.scores[box]})"
        allowed = ", ".join(BOX_NAMES[b] for b in np.flatnonzero(legal))
        if self.rules.upper_first and (self.filled & UPPER_MASK) != UPPER_MASK and box >= NUM_UPPER:
            return f"box {name!r} is closed until the upper section is full; open: {allowed}"
        return f"the joker rule does not allow {name!r} for this Yahtzee; allowed: {allowed}"

    def as_dict(self) -> dict[str, int | None]:
        return dict(zip(BOX_NAMES, self.scores, strict=True))


# ------------------------------------------------------------------------------ game
class Game:
    """A game of 1..N players. Players take whole turns in seat order, starting at ``first``.

    ``step(action)`` applies one action of the player to move and returns the points it added
    to that player's total. After a box is filled the next player's first roll is made at once,
    so between calls there is always a roll on the table until the game is over.

    ``duplicate=True``: every seat gets the same dice for the same turn and roll (with the
    same holds, the same dice; `yahtzee_env.game.fair_dice` says how re-rolls draw when holds
    differ), so seats can be compared with the luck of the dice taken out (common random
    numbers). Its dice come from a seed drawn from ``rng`` at `reset`, or the ``seed`` given.
    """

    def __init__(
        self,
        rules: RuleSet | str | None = None,
        num_players: int = 1,
        *,
        canonical_holds: bool = False,
        duplicate: bool = False,
    ) -> None:
        if not isinstance(num_players, int) or num_players < 1:
            raise ValueError(f"num_players must be a positive integer, got {num_players!r}")
        if not isinstance(duplicate, bool):
            raise ValueError(f"duplicate must be True or False, got {duplicate!r}")
        self.rules = RuleSet.from_spec(rules)
        self.num_players = num_players
        self.canonical_holds = canonical_holds
        self.duplicate = duplicate
        self.roller: DiceRoller | None = None
        self.seeded: SeededDice | None = None  # the seeded dice and their log, when seeded
        self.players: list[Scorecard] = []
        self.first = self.current = 0
        self.roll = 0
        self.rolls_left = 0
        self.turns_taken = 0  # turns completed by all players together
        self.over = True

    # --------------------------------------------------------------------- lifecycle
    def reset(
        self,
        rng: np.random.Generator,
        first: int = 0,
        *,
        seed: bytes | None = None,
        dice: str = DICE_ALGORITHM,
        game: int = 0,
        client_seeds: list[str | None] | None = None,
    ) -> None:
        """A new game: ``first`` moves first. The dice come from ``rng``; or, given a 32-byte
        ``seed`` (and in a duplicate game, where a missing seed is drawn from ``rng``), from
        `yahtzee_env.game.fair_dice`, every roll logged in ``self.seeded``: derivation
        ``dice`` (v1, or `fair_dice.DICE_V2` with the table's ``game`` and the seats'
        ``client_seeds``)."""
        if not 0 <= first < self.num_players:
            raise ValueError(f"first player {first} out of range 0..{self.num_players - 1}")
        if seed is None and self.duplicate:
            seed = rng.bytes(SEED_BYTES)
        self.seeded = (
            None
            if seed is None
            else SeededDice(
                seed,
                duplicate=self.duplicate,
                seats=self.num_players,
                algorithm=dice,
                game=game,
                client_seeds=client_seeds,
            )
        )
        self.roller = DiceRoller(rng)
        self.players = [Scorecard(self.rules) for _ in range(self.num_players)]
        self.first = self.current = first
        self.turns_taken = 0
        self.over = False
        self._start_turn()

    def _start_turn(self) -> None:
        self.roll = self._roll_dice(FIRST_ROLL_KEEP, 0)
        self.rolls_left = ROLLS_PER_TURN - 1

    def _roll_dice(self, keep: int, roll: int) -> int:
        """The dice after re-rolling those not in ``keep`` as the turn's roll ``roll`` (0 the
        first), from the game's dice source."""
        if self.seeded is None:
            return self.roller.roll(keep)
        return self.seeded.roll(keep, self.current, self.player.filled.bit_count(), roll)

    # --------------------------------------------------------------------- queries
    @property
    def player(self) -> Scorecard:
        """The scorecard of the player to move."""
        return self.players[self.current]

    @property
    def dice(self) -> tuple[int, ...]:
        """The five dice on the table, sorted ascending."""
        return _DICE_TUPLES[self.roll]

    def legal_action_mask(self) -> np.ndarray:
        """bool[45]: the actions `step` accepts now (all False once the game is over)."""
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        if self.over:
            return mask
        if self.rolls_left > 0:
            mask[:NUM_HOLDS] = CANONICAL_HOLDS[self.roll] if self.canonical_holds else True
        mask[BOX_ACTION_OFFSET:] = self.player.options(self.roll)[0]
        return mask

    def box_options(self) -> tuple[np.ndarray, np.ndarray]:
        """(legal bool[13], points int16[13]) of the dice on the table for the player to move."""
        return self.player.options(self.roll)

    # --------------------------------------------------------------------- actions
    def step(self, action: int) -> int:
        """Apply ``action`` for the player to move; return the points it added (0 for holds).

        Raises `IllegalActionError` (state unchanged) if the action is not legal now.
        """
        if self.over:
            raise IllegalActionError("the game is over; reset it first")
        if (
            isinstance(action, bool)
            or not isinstance(action, (int, np.integer))
            or not 0 <= action < NUM_ACTIONS
        ):
            raise IllegalActionError(
                f"action {action!r} is not an action id (0..{NUM_ACTIONS - 1})"
            )
        action = int(action)
        if action < NUM_HOLDS:
            self._hold(action)
            return 0
        gained = self.player.place(action - BOX_ACTION_OFFSET, self.roll)
        self.turns_taken += 1
        if self.turns_taken == NUM_TURNS * self.num_players:
            self.over = True
            self.rolls_left = 0
        else:
            self.current = (self.current + 1) % self.num_players
            self._start_turn()
        return gained

    def _hold(self, action: int) -> None:
        if self.rolls_left == 0:
            raise IllegalActionError(
                f"action {action} ({describe_action(action)}) re-rolls, but no rolls are left "
                "this turn: fill a box"
            )
        if self.canonical_holds and not CANONICAL_HOLDS[self.roll, action]:
            raise IllegalActionError(
                f"action {action} ({describe_action(action)}) is not the canonical hold for its "
                "kept dice (canonical_holds=True allows one hold per kept multiset, no keep-all)"
            )
        keep = int(HOLD_TO_KEEP[self.roll, action])
        self.roll = self._roll_dice(keep, ROLLS_PER_TURN - self.rolls_left)
        self.rolls_left -= 1

    # --------------------------------------------------------------------- results
    def totals(self) -> list[int]:
        return [p.total for p in self.players]

    def winners(self) -> list[int]:
        """Seats with the highest total (more than one: a draw). Meaningful once over."""
        return top_seats(self.totals())


def top_seats(totals: Sequence[int]) -> list[int]:
    """Seats with the highest total: one is the winner; several tie on top (a draw)."""
    best = max(totals)
    return [seat for seat, t in enumerate(totals) if t == best]


# ------------------------------------------------------------------------------ seating
def roll_for_first_player(num_players: int, rng: np.random.Generator) -> int:
    """Each player rolls five dice; the highest total starts; tied leaders re-roll."""
    contenders = list(range(num_players))
    while len(contenders) > 1:
        totals = rng.integers(1, 7, size=(len(contenders), NUM_DICE)).sum(axis=1)
        contenders = [p for p, t in zip(contenders, totals, strict=True) if t == totals.max()]
    return contenders[0]
