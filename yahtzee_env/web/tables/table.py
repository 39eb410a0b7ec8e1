"""A table in memory: its seats, its games and their action log, replayed through the
engine, and the views the page gets of it (the errors a refused request raises are
`web.errors`'s).

A `Table` is one table in memory: 2-4 seats (humans holding a seat token, or CPU levels),
a sequence of games (one, or best-of-five matches), and the action log of each game. Every
move goes through `engine.Game.step`; the page only sends intents (``roll`` with the held
dice positions, ``score`` a box by name, ``next`` game) and shows the state it gets back.

Determinism: game ``idx`` of a table rolls its dice from ``default_rng([seed, idx])``
(first the roll for first player, then the game: `deal.new_game`), so replaying the logged
actions rebuilds the same game, dice included. CPU moves are logged like human ones.
"""

from __future__ import annotations

import bisect
import functools
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from yahtzee_env.game.dice import NUM_DICE
from yahtzee_env.game.engine import (
    BOX_ACTION_OFFSET,
    NUM_HOLDS,
    ROLLS_PER_TURN,
    Game,
    Scorecard,
    top_seats,
)
from yahtzee_env.game.fair_dice import DICE_ALGORITHM
from yahtzee_env.game.match import match_is_decided, match_winners
from yahtzee_env.game.rules import BOX_NAMES, RuleSet
from yahtzee_env.game.words import describe_reroll, describe_score, kept_faces, positions_of
from yahtzee_env.web.errors import CODE_ALPHABET, CODE_LENGTH, MAX_NAME, WebError

# re-exported, so that code written against their old home still imports them from here
from yahtzee_env.web.errors import clean_code as clean_code
from yahtzee_env.web.errors import clean_name as clean_name
from yahtzee_env.web.storage import token_hash
from yahtzee_env.web.tables.deal import new_game
from yahtzee_env.web.tables.secrecy import END_OF_TURN, seal
from yahtzee_env.web.tables.seeds import client_seed_view

MIN_SEATS, MAX_SEATS = 2, 4
EVENTS_KEPT = 64
TURN_TIMER_RANGE = (10, 3 * 86_400)  # seconds a human has for a turn (0: no timer): 3 days
TURN_TIMERS = (0, 120, 86_400, 3 * 86_400)  # the lobby's turn clocks: off, 2 min, 1 day, 3 days
ONLINE_TURN_TIMER = 120  # an online table's default; a solo table has none
# The time bank (issue 62), as Board Game Arena's "+0:21 per turn, max 2:03": each seat has
# a bank, full (at the cap: the table's ``turn_timer``) at a game's start; each of its turns
# first adds the increment, up to the cap, and its time is taken from the bank. A turn never
# lasts more than the cap, so the fixed clock's bounds (and expiry) hold for it too.
BANK_ADD_RANGE = (5, 86_400)  # seconds added per turn
TIME_BANKS = ((15, 90), (21, 123), (30, 300), (43_200, 3 * 86_400))  # the lobby's (add, cap)
MAIN_LEVELS = ("easy", "medium", "hard")  # the seed's levels: the lobby's first choices
DEFAULT_FILL = "medium"  # the CPU level of the seats nobody took (the lobby's default too)
AWAY_REASONS = ("timeout", "host", "left")  # why the computer plays a human's seat
# The log's mark of a person's first roll of a turn (issue 58): the engine deals a turn's
# first roll from the committed dice at the turn's start, and a person's seat keeps it in the
# cup (not shown, nothing to hold or score) until its Roll intent, logged as this pseudo-action
# (no engine step). The CPU's turns, and a seat the computer plays, roll by themselves.
FIRST_ROLL = -1
REVIEWS_KEPT = 256  # game reviews cached in memory
MAX_NEWS = 7000  # characters of a change sent with its notification (PostgreSQL takes 8000)


def cpu_levels() -> list[str]:
    """The CPU seat kinds: the shipped trained levels, then the built-in policies."""
    from yahtzee_env.policies.baselines import POLICIES
    from yahtzee_env.policies.models import LEVELS, LEVELS_DIR

    shipped = [lv for lv in LEVELS if (LEVELS_DIR / f"{lv}.json").exists()]
    return shipped + [p for p in POLICIES if p not in shipped]


def main_levels() -> list[str]:
    """The CPU levels the lobby offers first (the others under "more levels")."""
    levels = cpu_levels()
    return [lv for lv in MAIN_LEVELS if lv in levels]


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


@functools.lru_cache(maxsize=256)
def trained_for(level: str, rules: RuleSet) -> str | None:
    """The preset a trained CPU level learned when the table plays other rules (the page
    labels the seat "trained for official rules"); None for the rule-aware built-ins.
    Read once per level and rules (a shipped manifest does not change while the server
    runs; every state of a table with a CPU seat asks)."""
    from yahtzee_env.policies.models import LEVELS, level_manifest
    from yahtzee_env.policies.resolve import trained_for_other_rules

    if level not in LEVELS:
        return None
    # the manifest says it, without building the player (master computes a table at load)
    return trained_for_other_rules(level_manifest(level), rules)


@dataclass
class Seat:
    seat: int
    kind: str  # "human", "friend" (free until someone joins) or a CPU level
    name: str
    player_id: int | None = None  # whose statistics the seat's games go to
    token_hash: str | None = None  # a seat token (API clients); the page uses its session
    owner_id: int | None = None  # the player (session) who may act for the seat
    away: str | None = None  # the computer plays the seat for now: AWAY_REASONS

    @property
    def is_cpu(self) -> bool:
        return self.kind not in ("human", "friend")

    @property
    def computer_moves(self) -> bool:
        """The computer makes this seat's moves: a CPU seat, or a human's while away."""
        return self.is_cpu or (self.kind == "human" and self.away is not None)

    @property
    def taken(self) -> bool:
        return self.token_hash is not None or self.owner_id is not None

    def voter(self) -> int | str:
        """Who confirms Play again for this seat: its owner (one vote for all the seats a
        person plays at one screen), else the seat itself."""
        return self.owner_id if self.owner_id is not None else f"seat{self.seat}"

    def row(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "kind": self.kind,
            "name": self.name,
            "player_id": self.player_id,
            "token_hash": self.token_hash,
            "owner_id": self.owner_id,
            "away": self.away,
        }


@dataclass
class Table:
    """One table in memory, rebuilt from the database by `Tables.load`."""

    code: str
    rules: RuleSet
    seed: int
    online: bool
    match: bool
    coach: bool
    fill_level: str
    seats: list[Seat]
    started: bool = False
    public: bool = False  # anyone with the link may open its game reviews
    games: list[dict[str, int]] = field(default_factory=list)  # idx, match_no, first
    finished: list[list[int]] = field(default_factory=list)  # totals of finished games
    game: Game | None = None
    log: list[tuple[int, int, float | None]] = field(default_factory=list)  # current game
    events: list[dict[str, Any]] = field(default_factory=list)
    held: list[int] = field(default_factory=list)
    decisions: dict[int, list] = field(default_factory=dict)  # seat -> [coach.Decision]
    used: float = 0.0  # time.monotonic() of the last use, for eviction from memory
    rev: int = 0  # the database's revision of the table this copy is at
    # the database clock's time this copy last wrote to the table's ``updated`` (None: it
    # has not): a move soon after leaves it (`TableStore.append_actions`)
    touched: float | None = None
    turn_timer: int = 0  # seconds per turn (0: off)
    deadline: float | None = None  # epoch seconds: the waited-on decision times out
    armed: tuple | None = None  # the decision `deadline` was set for
    votes: set = field(default_factory=set)  # voters who confirmed Play again
    saved_clock: tuple | None = None  # (deadline, votes, banks) as last stored
    bank_add: int = 0  # the time bank's seconds added per turn (0: the fixed clock)
    # the banks (stored as JSON): {"game": idx, "left": seconds per seat at the end of its
    # last turn}; empty, or of another game: every bank is full (`clock.TurnClock`)
    banks: dict = field(default_factory=dict)
    # The dice (issue 49): the 32-byte secret each game's dice seed comes from (never sent:
    # a finished game's review reveals that game's seed), None for a table stored before
    # it; ``duplicate``: every seat draws the same dice.
    dice_secret: bytes | None = field(default=None, repr=False)
    duplicate: bool = False
    # issue 58: the dice's derivation (a table made since: v2, the seats' client seeds mixed
    # in) and, per game, the client seed each seat sent (None: none; `seeds.ClientSeeds`)
    dice: str = DICE_ALGORITHM
    client_seeds: dict[int, list[str | None]] = field(default_factory=dict)
    # the actions of the current game (their seq) the computer made for a human seat (away,
    # timed out): the result says "the computer played N of your 13 turns"
    auto: set[int] = field(default_factory=set)
    # per seat, its card after each of its turns of the current game ([0]: empty): what a
    # duplicate table shows of a seat's card to a seat that has not played those turns
    card_history: list[list[dict]] = field(default_factory=list, repr=False)
    rolled: bool = False  # the current turn's first roll is down (tapped, or a move made)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.seats]

    @property
    def idx(self) -> int:
        return len(self.games) - 1

    # --------------------------------------------------------------- replay
    def begin_game(self, idx: int, first: int | None = None) -> int:
        """Set up game ``idx`` from its seed; return the first seat: the roll of the dice
        for first player (always made, so the dice stream is the same), unless ``first``
        is given (later games of a match pass the start to the next seat)."""
        self.game, first = new_game(
            self.rules, self.seed, idx, len(self.seats), first,
            secret=self.dice_secret, duplicate=self.duplicate, dice=self.dice,
            client_seeds=self.client_seeds.get(idx),
        )  # fmt: skip
        self.log, self.events, self.held, self.decisions = [], [], [], {}
        self.auto = set()
        empty = card_view(Scorecard(self.rules))
        self.card_history = [[empty] for _ in self.seats]
        self.rolled = False
        return first

    @property
    def in_cup(self) -> bool:
        """A person's turn waits on its first roll: the dice are still in the cup."""
        game = self.game
        if game is None or game.over or self.rolled:
            return False
        return not self.seats[game.current].computer_moves

    def apply(
        self,
        seat: int,
        action: int,
        regret: float | None = None,
        decision=None,
        auto: bool = False,
    ) -> None:
        """Step the engine for ``seat`` and record the action, its event and held dice
        (``auto``: the computer made it for a human seat)."""
        game = self.game
        name = self.seats[seat].name
        dice = game.dice
        # the event holds tuples, not lists: the collector stops tracking a tuple of numbers at
        # its first young collection, so a kept event costs the later collections two dicts
        # (not seven containers); the JSON is the same (issue 33, fifth round)
        event: dict[str, Any] = {"seq": len(self.log), "seat": seat, "dice_before": tuple(dice)}
        if self.duplicate:  # when in the seat's game: its turn (boxes filled before it)
            # and the roll it makes (a score ends the turn), which a duplicate table's views
            # go by (`secrecy`); other tables' frames do without them
            event["turn"] = game.players[seat].filled.bit_count()
            event["roll"] = ROLLS_PER_TURN - game.rolls_left if action < NUM_HOLDS else END_OF_TURN
        if action == FIRST_ROLL:  # the person's tap: the dice dealt for this roll come out
            event.update(
                type="roll",
                dice_before=(),
                kept=(),
                dice=tuple(game.dice),
                text=describe_reroll(name, (), game.dice),
                msg={"key": "narr.first_roll", "name": name, "dice": tuple(game.dice)},
            )
            if self.duplicate:
                event["roll"] = 0  # the turn's first roll
            self.held = []
            self.rolled = True
        elif action < NUM_HOLDS:
            kept = tuple(kept_faces(dice, action))
            game.step(action)
            n = NUM_DICE - len(kept)
            key = "narr.reroll_all" if not kept else "narr.keep_all" if n == 0 else "narr.keep"
            self.held = positions_of(game.dice, kept)
            self.rolled = True
            event.update(
                type="roll",
                kept=tuple([i for i in range(NUM_DICE) if action >> i & 1]),
                dice=tuple(game.dice),
                text=describe_reroll(name, kept, game.dice),
                # the page's words: a catalogue key and its values (`text` is for the API)
                msg={"key": key, "name": name, "kept": kept, "n": n, "dice": tuple(game.dice)},
            )
        else:
            box = action - BOX_ACTION_OFFSET
            card = game.players[seat]
            before = card.upper_bonus + card.yahtzee_bonus
            game.step(action)
            points = card.scores[box]
            extra = card.upper_bonus + card.yahtzee_bonus - before
            self.held = []
            self.rolled = False
            text = describe_score(name, box, points, extra)
            msg = {"key": "narr.score_bonus" if extra else "narr.score", "name": name}
            msg.update(box=BOX_NAMES[box], points=points, extra=extra)
            event.update(type="score", box=BOX_NAMES[box], points=points, text=text, msg=msg)
            self.card_history[seat].append(card_view(card))
            if not game.over and self.seats[game.current].computer_moves:
                # (a person's next dice are still in the cup: not told)
                event["next_dice"] = tuple(game.dice)
                if self.duplicate:
                    event["next_seat"] = game.current
                    event["next_turn"] = game.player.filled.bit_count()
        if regret is not None:
            event["regret"] = round(regret, 4)
        if decision is not None:
            self.decisions.setdefault(seat, []).append(decision)
        if auto:
            self.auto.add(len(self.log))
        self.log.append((seat, action, regret))
        self.events.append(event)
        del self.events[:-EVENTS_KEPT]

    # --------------------------------------------------------------- views
    def seat_of_token(self, seat: Any, token: Any, player_id: int | None = None) -> int:
        """The seat index if ``token`` is that seat's token, or (with no token) the seat
        is ``player_id``'s (the session's player); WebError otherwise."""
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise WebError("seat must be an integer")
        if not 0 <= seat < len(self.seats):
            raise WebError(f"seat {seat} does not exist at this table (0..{len(self.seats) - 1})")
        if token is None and player_id is not None:
            if self.seats[seat].owner_id != player_id:
                raise WebError(f"seat {seat} is not yours", 403, "not_your_seat")
            return seat
        if not isinstance(token, str) or not token:
            raise WebError("a seat token is required to act", 403, "seat_token")
        expected = self.seats[seat].token_hash
        if expected is None or not hmac.compare_digest(expected, token_hash(token)):
            raise WebError(f"that token is not the token of seat {seat}", 403, "seat_token")
        return seat

    def seats_of(self, player_id: int | None) -> list[int]:
        """The seats ``player_id`` may act for."""
        if player_id is None:
            return []
        return [s.seat for s in self.seats if s.owner_id == player_id and s.kind == "human"]

    def voters(self) -> set:
        """Who must confirm Play again: every human seat's voter, but the away ones."""
        return {s.voter() for s in self.seats if s.kind == "human" and s.away is None}

    def all_confirmed(self) -> bool:
        """Every present human has confirmed Play again (and there is one at least)."""
        voters = self.voters()
        return bool(voters) and voters <= self.votes

    def decision(self) -> tuple | None:
        """What the table waits on now, as a key: a human's turn (game, boxes filled,
        seat), the play-again vote, or None (nothing a clock could time out)."""
        game = self.game
        if not self.started or game is None:
            return None
        if game.over:
            return (self.idx, "over") if self.online and self.voters() else None
        seat = self.seats[game.current]
        if seat.computer_moves:
            return None
        filled = sum(c.filled.bit_count() for c in game.players)
        return (self.idx, filled, game.current)

    def result(self) -> dict[str, Any] | None:
        game = self.game
        if game is None or not game.over:
            return None
        totals = game.totals()
        top = top_seats(totals)
        if len(top) == 1:
            text = f"{self.names[top[0]]} wins with {totals[top[0]]} points"
        else:
            text = "Draw: " + " and ".join(self.names[s] for s in top)
            text += f" tie on {totals[top[0]]} points"
        msg = {"key": "result.draw" if len(top) > 1 else "result.win", "seats": top}
        msg["points"] = totals[top[0]]
        ranking = sorted(range(len(totals)), key=lambda s: (-totals[s], s))
        places = [1 + sum(t > totals[s] for t in totals) for s in ranking]
        return {
            "ranking": [
                {"seat": s, "place": p, "total": totals[s]}
                for s, p in zip(ranking, places, strict=True)
            ],
            "totals": totals,
            "winners": top,
            "draw": len(top) > 1,
            "text": text,
            "msg": msg,
            "game_id": f"{self.code}-{self.idx}",
            "cpu_turns": self.cpu_turns(),
        }

    def cpu_turns(self) -> list[int]:
        """Per seat, the turns of the current game the computer finished for a human (a
        turn is the computer's when it filled the box)."""
        counts = [0] * len(self.seats)
        for seq in self.auto:
            seat, action, _ = self.log[seq]
            if action >= NUM_HOLDS:
                counts[seat] += 1
        return counts

    def match_games(self) -> list[list[int]]:
        """Totals of the finished games of the current match."""
        if not self.games:
            return []
        match_no = self.games[-1]["match_no"]
        done = [
            g for g in self.games if g["match_no"] == match_no and g["idx"] < len(self.finished)
        ]
        return [self.finished[g["idx"]] for g in done]

    def match_state(self) -> dict[str, Any] | None:
        if not self.match:
            return None
        games = self.match_games()
        state: dict[str, Any] = {"games": games, "decided": match_is_decided(games)}
        if games:
            result = match_winners(games)
            state.update(wins=list(result.wins), points=list(result.points))
            if state["decided"]:
                names = " and ".join(self.names[s] for s in result.winners)
                verb = "win" if len(result.winners) > 1 else "wins"
                state["text"] = f"{names} {verb} the match ({'-'.join(map(str, result.wins))})"
                state["msg"] = {"key": "match.won", "seats": list(result.winners)}
                state["msg"]["wins"] = "-".join(map(str, result.wins))
        return state

    def state(self, since: int = 0, coach_review=None) -> dict[str, Any]:
        """The table as the page shows it (JSON-ready). ``since``: the first event to send."""
        game = self.game
        numbers: dict[str, int] = {}
        totals_of = {s.kind: sum(o.kind == s.kind for o in self.seats) for s in self.seats}
        seats = []
        for s in self.seats:
            view = {"seat": s.seat, "name": s.name, "kind": "cpu" if s.is_cpu else s.kind}
            if s.is_cpu:
                numbers[s.kind] = numbers.get(s.kind, 0) + 1
                view.update(level=s.kind, trained_for=trained_for(s.kind, self.rules))
                if totals_of[s.kind] > 1:
                    view["number"] = numbers[s.kind]  # "hard 2": several seats share a level
            else:
                view.update(taken=s.taken, away=s.away)
            seats.append(view)
        out: dict[str, Any] = {
            "code": self.code,
            "rules": self.rules.name,
            "online": self.online,
            "match": self.match,
            "coach": self.coach,
            "public": self.public,
            "started": self.started,
            "seats": seats,
            "fill": self.fill_level,
            "turn_timer": self.turn_timer,
            "time_bank": {"add": self.bank_add, "cap": self.turn_timer} if self.bank_add else None,
            "deadline": self.deadline,
            "game": self.idx,
            "seq": len(self.log),
            "version": [self.idx, len(self.log)],
        }
        out.update(client_seed_view(self))  # issue 58: the seeds the seats sent (`seeds`)
        if game is None:
            return out
        out["first"] = self.games[-1]["first"]
        # the commitment to the game's dice seed, from before the first roll (the seed
        # itself only in the finished game's review)
        out["dice_commitment"] = game.seeded.commitment if game.seeded is not None else None
        out["duplicate"] = self.duplicate
        out["cards"] = [cards[-1] for cards in self.card_history]
        out["over"] = game.over
        # the events are in seq order (a card, too, moves only at a score: its history's last)
        out["events"] = self.events[bisect.bisect_left(self.events, since, key=_seq) :]
        if game.over:
            out["result"] = self.result()
            if self.online:
                out["votes"] = [
                    s.seat for s in self.seats if s.kind == "human" and s.voter() in self.votes
                ]
                out["voters"] = [s.seat for s in self.seats if s.kind == "human" and s.away is None]
        elif self.in_cup:  # nothing down yet: the Roll intent rolls all five
            out.update(
                current=game.current, dice=[], rolls_left=ROLLS_PER_TURN, held=[], options={},
                cup=True,
            )  # fmt: skip
        else:
            legal, points = game.box_options()
            out.update(
                current=game.current,
                dice=list(game.dice),
                rolls_left=game.rolls_left,
                held=self.held,
                options={BOX_NAMES[b]: int(points[b]) for b in np.flatnonzero(legal)},
                cup=False,
            )
        out["match_state"] = self.match_state()
        if self.coach:
            out["regret"] = {
                str(seat): round(sum(d.regret for d in ds), 4)
                for seat, ds in self.decisions.items()
            }
            if game.over and coach_review is not None:
                out["review"] = {str(seat): coach_review(ds) for seat, ds in self.decisions.items()}
        if self.duplicate and not game.over:  # the next dice stay secret (issue 58)
            return seal(self, out, self.progress())
        return out

    def progress(self) -> list[tuple[int, int]]:
        """Per seat: the boxes it has filled, and the rolls it has made of its turn."""
        game = self.game
        cup = self.in_cup
        return [
            (
                card.filled.bit_count(),
                ROLLS_PER_TURN - game.rolls_left
                if s == game.current and not game.over and not cup
                else 0,
            )
            for s, card in enumerate(game.players)
        ]


def _seq(event: dict[str, Any]) -> int:
    return event["seq"]


def card_view(card: Scorecard) -> dict[str, Any]:
    """A seat's card as the page shows it."""
    return {
        "scores": card.as_dict(),
        "upper_total": card.upper_total,
        "upper_bonus": card.upper_bonus,
        "yahtzee_bonus": card.yahtzee_bonus,
        "total": card.total,
    }


def unique_names(seats: list[Seat], keep: list[int] = ()) -> None:
    """Make the names at a table unique: a repeated name gets " 2", " 3"... (the seats
    in ``keep`` keep theirs)."""
    taken = {seats[i].name.casefold() for i in keep}
    for s in seats:
        if s.seat in keep:
            continue
        base, n, name = s.name, 1, s.name
        while name.casefold() in taken:
            n += 1
            name = f"{base[: MAX_NAME - 3]} {n}"
        s.name = name
        taken.add(name.casefold())
