"""The game: scorecards, turns, 1..N players and best-of-five matches. No Gymnasium here.

Action ids (shared by every env, the solver and the policies)::

    0..31   hold mask: bit i set keeps die i of the *sorted* dice, the others are re-rolled.
            Legal while re-rolls remain. 31 keeps all: it re-rolls nothing and uses a roll.
    32..44  fill box 0..12 (order of `yahtzee_env.rules.BOX_NAMES`).

All randomness comes from a `DiceRoller` wrapping an explicit `numpy.random.Generator`: a
roll is one uniform integer in [0, 6**5) looked up in the exact outcome table of the keep;
the vector env uses the same table, so both have exactly the same roll distribution.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from yahtzee_env.dice import (
    CANONICAL_HOLDS,
    DICE,
    FIRST_ROLL_KEEP,
    HOLD_TO_KEEP,
    KEEP_CDF,
    NUM_DICE,
    NUM_HOLDS,
    ROLL_OUTCOMES,
)
from yahtzee_env.rules import (
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
    """

    def __init__(
        self,
        rules: RuleSet | str | None = None,
        num_players: int = 1,
        *,
        canonical_holds: bool = False,
    ) -> None:
        if not isinstance(num_players, int) or num_players < 1:
            raise ValueError(f"num_players must be a positive integer, got {num_players!r}")
        self.rules = RuleSet.from_spec(rules)
        self.num_players = num_players
        self.canonical_holds = canonical_holds
        self.roller: DiceRoller | None = None
        self.players: list[Scorecard] = []
        self.first = self.current = 0
        self.roll = 0
        self.rolls_left = 0
        self.turns_taken = 0  # turns completed by all players together
        self.over = True

    # --------------------------------------------------------------------- lifecycle
    def reset(self, rng: np.random.Generator, first: int = 0) -> None:
        if not 0 <= first < self.num_players:
            raise ValueError(f"first player {first} out of range 0..{self.num_players - 1}")
        self.roller = DiceRoller(rng)
        self.players = [Scorecard(self.rules) for _ in range(self.num_players)]
        self.first = self.current = first
        self.turns_taken = 0
        self.over = False
        self._start_turn()

    def _start_turn(self) -> None:
        self.roll = self.roller.roll(FIRST_ROLL_KEEP)
        self.rolls_left = ROLLS_PER_TURN - 1

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
        self.roll = self.roller.roll(int(HOLD_TO_KEEP[self.roll, action]))
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


# ------------------------------------------------------------------------------ seating, matches
def roll_for_first_player(num_players: int, rng: np.random.Generator) -> int:
    """Each player rolls five dice; the highest total starts; tied leaders re-roll."""
    contenders = list(range(num_players))
    while len(contenders) > 1:
        totals = rng.integers(1, 7, size=(len(contenders), NUM_DICE)).sum(axis=1)
        contenders = [p for p, t in zip(contenders, totals, strict=True) if t == totals.max()]
    return contenders[0]


@dataclass(frozen=True)
class MatchResult:
    """A best-of-five match between two or more players."""

    game_totals: tuple[tuple[int, ...], ...]  # per game, every player's final total
    wins: tuple[int, ...]  # games won per player (draws count for nobody)
    points: tuple[int, ...]  # points over all games per player
    winners: tuple[int, ...]  # the match winner(s); more than one only if wins and points tie


MATCH_GAMES = 5
MATCH_WINS_NEEDED = 3


def match_winners(game_totals: Sequence[Sequence[int]]) -> MatchResult:
    """Score a best-of-five from each game's totals (stop feeding games once decided).

    A game's sole top scorer wins it; a tie on top is a draw and counts for nobody. The match
    goes to the first player to win three games; if five games leave no one with three wins,
    the most wins take it and a tie on wins is broken by total points over all games.
    """
    if not game_totals:
        raise ValueError("a match needs at least one game")
    num_players = len(game_totals[0])
    wins = [0] * num_players
    points = [0] * num_players
    for totals in game_totals:
        top = top_seats(totals)
        if len(top) == 1:
            wins[top[0]] += 1
        for p, t in enumerate(totals):
            points[p] += t
    if max(wins) >= MATCH_WINS_NEEDED:
        winners = [p for p in range(num_players) if wins[p] == max(wins)]
    else:
        most = [p for p in range(num_players) if wins[p] == max(wins)]
        best_points = max(points[p] for p in most)
        winners = [p for p in most if points[p] == best_points]
    return MatchResult(
        tuple(tuple(t) for t in game_totals), tuple(wins), tuple(points), tuple(winners)
    )


def match_is_decided(game_totals: Sequence[Sequence[int]]) -> bool:
    """True once someone has three game wins, or five games have been played."""
    if len(game_totals) >= MATCH_GAMES:
        return True
    return bool(game_totals) and max(match_winners(game_totals).wins) >= MATCH_WINS_NEEDED


@dataclass
class Match:
    """The state of a best-of-five match, with no I/O: which seat starts the next game, the
    results so far, and whether (and how) it is decided. A loop (`run_match`), a terminal
    or a web server drives it: ``while not m.decided: m.record(<play a game from
    m.next_start>)``.

    The roll for first player (or a choice) gives ``first``, the seat that starts game 1;
    the start then passes to the next seat each game.
    """

    num_players: int
    first: int = 0
    game_totals: list[tuple[int, ...]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.num_players < 2 or not 0 <= self.first < self.num_players:
            raise ValueError(f"a match needs 2+ players and a first seat among them: {self}")

    @property
    def decided(self) -> bool:
        return match_is_decided(self.game_totals)

    @property
    def next_start(self) -> int:
        """The seat that starts the next game."""
        return (self.first + len(self.game_totals)) % self.num_players

    @property
    def standing(self) -> MatchResult:
        """Wins, points and leaders so far (the result once `decided`)."""
        return match_winners(self.game_totals)

    def record(self, totals: Sequence[int]) -> MatchResult:
        """Add a finished game's totals (seat order); return the standing after it."""
        if self.decided:
            raise ValueError("the match is already decided")
        if len(totals) != self.num_players:
            raise ValueError(f"{len(totals)} totals for {self.num_players} players")
        self.game_totals.append(tuple(int(t) for t in totals))
        return self.standing


def run_match(
    play_game: Callable[[int, int], Sequence[int]],
    num_players: int,
    first: int = 0,
    on_game: Callable[[MatchResult], None] | None = None,
) -> MatchResult:
    """The one best-of-five loop (the library's `match.play_match` and the terminal's match
    both run it): ``play_game(start_seat, game_number)`` plays game 1, 2, ... and returns the
    totals in seat order; ``on_game(standing)`` hears each result. Returns the result."""
    match = Match(num_players, first)
    while not match.decided:
        standing = match.record(play_game(match.next_start, len(match.game_totals) + 1))
        if on_game is not None:
            on_game(standing)
    return match.standing
