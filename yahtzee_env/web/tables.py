"""The game loop of the web tables: seats, turns, CPU moves, the coach, resume by replay.

A `Table` is one table in memory: 2-4 seats (humans holding a seat token, or CPU levels),
a sequence of games (one, or best-of-five matches), and the action log of each game. Every
move goes through `engine.Game.step`; the page only sends intents (``roll`` with the held
dice positions, ``score`` a box by name, ``next`` game) and shows the state it gets back.

Determinism: game ``idx`` of a table rolls its dice from ``default_rng([seed, idx])``
(first the roll for first player, then the game: `deal.new_game`), so replaying the logged
actions rebuilds the same game, dice included. CPU moves are logged like human ones.
`Tables.act` applies a human intent and the CPU moves that follow it until a human must
decide, then commits them all in one transaction before returning; only then does the
server answer.

One action per intent: every intent carries the ``seq`` (and ``game``) of the state it was
made from, and one made from any other state is refused with 409 ``stale_seq``, so a double
click or a retried request changes nothing.

`Tables` does no locking of its own: the server runs its methods in worker threads, at most
one at a time per table (`locks.TableLocks`, which the server object holds), so an update
is atomic, a turn waiting on an absent human holds nothing, and no request waits on another
table's work. `Tables.loaded` keeps the loaded tables (least recently used first); `evict`
drops idle ones from memory (they reload from the database on use).

Several server processes on one database (PostgreSQL): every change of a table runs inside
`Storage.lock_table`, one transaction holding the table's row lock. Under the lock the table
compares its ``rev`` with the database's and rebuilds itself from the log if another process
has moved the table on; then it validates the intent (a stale ``seq`` is refused as above),
applies it with the CPU moves that follow, writes, and commits. Only after the commit does it
publish ``(code, rev)`` to the other processes, with what changed when that is only the
current game's new actions and the clock (`Tables._news`; the others' copies `follow` it).
Nothing is owned between two transactions (no lease, no timer), so a process that dies leaves
nothing to take over: the next process to touch the table rebuilds it at its last committed
action.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import json
import logging
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from yahtzee_env.game.cpu import cpu_move
from yahtzee_env.game.dice import NUM_DICE
from yahtzee_env.game.engine import (
    BOX_ACTION_OFFSET,
    NUM_HOLDS,
    Game,
    hold_action,
    top_seats,
)
from yahtzee_env.game.fair_dice import new_seed, roll_counts
from yahtzee_env.game.match import match_is_decided, match_winners
from yahtzee_env.game.rules import BOX_NAMES, PRESETS, RuleSet
from yahtzee_env.game.words import describe_reroll, describe_score, kept_faces, positions_of
from yahtzee_env.web.coaches import Coaches, CoachWarming
from yahtzee_env.web.deal import new_game
from yahtzee_env.web.names import name_problem
from yahtzee_env.web.review import review_game
from yahtzee_env.web.storage import StaleCopy, Storage, token_hash

log = logging.getLogger("yahtzee.web")

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: easy to read aloud
CODE_LENGTH = 8  # 31**8 ~ 2**39.6 codes
CODE_PATTERN = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")
MAX_NAME = 24
MIN_SEATS, MAX_SEATS = 2, 4
EVENTS_KEPT = 64
TURN_TIMER_RANGE = (10, 3 * 86_400)  # seconds a human has for a turn (0: no timer): 3 days
TURN_TIMERS = (0, 30, 60, 120, 300, 3600, 86_400, 3 * 86_400)  # the lobby's suggestions
ONLINE_TURN_TIMER = 120  # an online table's default; a solo table has none
MAIN_LEVELS = ("easy", "medium", "hard")  # the seed's levels: the lobby's first choices
DEFAULT_FILL = "medium"  # the CPU level of the seats nobody took (the lobby's default too)
AWAY_REASONS = ("timeout", "host", "left")  # why the computer plays a human's seat
REVIEWS_KEPT = 256  # game reviews cached in memory
MAX_NEWS = 7000  # characters of a change sent with its notification (PostgreSQL takes 8000)


ERROR_CODES = {
    400: "bad_request",
    403: "forbidden",
    404: "unknown_table",
    408: "timeout",
    409: "conflict",
    410: "gone",
    413: "too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


class WebError(Exception):
    """A refused request: ``status`` is the HTTP status, the message says why in English (for
    the API and the terminal) and ``code`` is a stable machine word for it, by default the
    status's (`ERROR_CODES`); the page translates it (``err.<code>`` in
    ``static/i18n/*.json``), with ``params`` as its placeholders."""

    status = 400

    def __init__(
        self, message: str, status: int | None = None, code: str | None = None, **params: Any
    ) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.code = code or ERROR_CODES.get(self.status, "error")
        self.params = params


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


def clean_code(code: Any) -> str:
    """A table code as typed (any case, dashes or spaces) in canonical form."""
    if not isinstance(code, str):
        raise WebError("table code must be a string", code="unknown_table")
    text = code.strip().upper().replace("-", "").replace(" ", "")
    if CODE_PATTERN.fullmatch(text) is None:
        raise WebError(f"no table has the code {code[:20]!r}", 404, "unknown_table")
    return text


def clean_name(name: Any, default: str | None = None) -> str:
    """A player name: 1..24 characters, none that disguises it (`names.name_problem`)."""
    if name is None and default is not None:
        return default
    if not isinstance(name, str):
        raise WebError("name must be a string", code="name_empty")
    name = " ".join(name.split())
    if not name:
        if default is not None:
            return default
        raise WebError("name is empty", code="name_empty")
    if len(name) > MAX_NAME:
        raise WebError(f"name is longer than {MAX_NAME} characters", code="name_long", max=MAX_NAME)
    problem = name_problem(name)
    if problem is not None:
        raise WebError(problem[0], code=problem[1])
    return name


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
    turn_timer: int = 0  # seconds per turn (0: off)
    deadline: float | None = None  # epoch seconds: the waited-on decision times out
    armed: tuple | None = None  # the decision `deadline` was set for
    votes: set = field(default_factory=set)  # voters who confirmed Play again
    saved_clock: tuple | None = None  # (deadline, votes) as last stored
    # The dice (issue 49): the 32-byte secret each game's dice seed comes from (never sent:
    # a finished game's review reveals that game's seed), None for a table stored before
    # it; ``duplicate``: every seat draws the same dice.
    dice_secret: bytes | None = field(default=None, repr=False)
    duplicate: bool = False

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
            secret=self.dice_secret, duplicate=self.duplicate,
        )  # fmt: skip
        self.log, self.events, self.held, self.decisions = [], [], [], {}
        return first

    def apply(self, seat: int, action: int, regret: float | None = None, decision=None) -> None:
        """Step the engine for ``seat`` and record the action, its event and held dice."""
        game = self.game
        name = self.seats[seat].name
        dice = game.dice
        # the event holds tuples, not lists: the collector stops tracking a tuple of numbers at
        # its first young collection, so a kept event costs the later collections two dicts
        # (not seven containers); the JSON is the same (issue 33, fifth round)
        event: dict[str, Any] = {"seq": len(self.log), "seat": seat, "dice_before": tuple(dice)}
        if action < NUM_HOLDS:
            kept = tuple(kept_faces(dice, action))
            game.step(action)
            n = NUM_DICE - len(kept)
            key = "narr.reroll_all" if not kept else "narr.keep_all" if n == 0 else "narr.keep"
            self.held = positions_of(game.dice, kept)
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
            text = describe_score(name, box, points, extra)
            msg = {"key": "narr.score_bonus" if extra else "narr.score", "name": name}
            msg.update(box=BOX_NAMES[box], points=points, extra=extra)
            event.update(type="score", box=BOX_NAMES[box], points=points, text=text, msg=msg)
            if not game.over:
                event["next_dice"] = tuple(game.dice)
        if regret is not None:
            event["regret"] = round(regret, 4)
        if decision is not None:
            self.decisions.setdefault(seat, []).append(decision)
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
        filled = sum(v is not None for c in game.players for v in c.as_dict().values())
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
        }

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
            "deadline": self.deadline,
            "game": self.idx,
            "seq": len(self.log),
            "version": [self.idx, len(self.log)],
        }
        if game is None:
            return out
        out["first"] = self.games[-1]["first"]
        # the commitment to the game's dice seed, from before the first roll (the seed
        # itself only in the finished game's review)
        out["dice_commitment"] = game.seeded.commitment if game.seeded is not None else None
        out["duplicate"] = self.duplicate
        cards = []
        for card in game.players:
            cards.append(
                {
                    "scores": card.as_dict(),
                    "upper_total": card.upper_total,
                    "upper_bonus": card.upper_bonus,
                    "yahtzee_bonus": card.yahtzee_bonus,
                    "total": card.total,
                }
            )
        out["cards"] = cards
        out["over"] = game.over
        out["events"] = [e for e in self.events if e["seq"] >= since]
        if game.over:
            out["result"] = self.result()
            if self.online:
                out["votes"] = [
                    s.seat for s in self.seats if s.kind == "human" and s.voter() in self.votes
                ]
                out["voters"] = [s.seat for s in self.seats if s.kind == "human" and s.away is None]
        else:
            legal, points = game.box_options()
            out.update(
                current=game.current,
                dice=list(game.dice),
                rolls_left=game.rolls_left,
                held=self.held,
                options={BOX_NAMES[b]: int(points[b]) for b in np.flatnonzero(legal)},
            )
        out["match_state"] = self.match_state()
        if self.coach:
            out["regret"] = {
                str(seat): round(sum(d.regret for d in ds), 4)
                for seat, ds in self.decisions.items()
            }
            if game.over and coach_review is not None:
                out["review"] = {str(seat): coach_review(ds) for seat, ds in self.decisions.items()}
        return out


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


class Tables:
    """Every table of a server: created, loaded on first use, acted on."""

    def __init__(
        self,
        storage: Storage,
        tables_per_player: int | None = None,
        tables_per_address: int | None = None,
        instance: str | None = None,
    ) -> None:
        self.storage = storage
        self.instance = instance or secrets.token_hex(6)  # names this process in notifications
        self.clock = time.time  # wall clock of the turn deadlines (tests move it)
        self.tables_per_player, self.tables_per_address = tables_per_player, tables_per_address
        self.loaded: OrderedDict[str, Table] = OrderedDict()
        self.coaches = Coaches()
        self._reviews: dict[tuple[str, int], dict[str, Any]] = {}  # solved in threads
        self._reviews_lock = threading.Lock()
        # called with the table when a game ends, inside the transaction of its last moves
        # (`ratings.Ratings.game_over`)
        self.on_game_over = None
        self.on_leave = None  # ... and with the table and the seats left before a game's end

    # --------------------------------------------------------------- resources
    def policy(self, level: str, rules: RuleSet):
        """The CPU ``level`` for a table of ``rules``, from the one resolver (built for these
        rules; a trained level made for others plays them, labelled: `resolve_policy`)."""
        from yahtzee_env.policies.resolve import shared_policy

        return shared_policy(level, rules)

    def coach(self, rules: RuleSet):
        """The coach of ``rules``, or 503 ``coach_warming`` while a child process prepares
        it (`coaches`: no solve runs in this process)."""
        try:
            return self.coaches.coach(rules)
        except CoachWarming as warming:
            raise WebError(
                f"{warming}: ready in about {warming.seconds} s (the table plays on meanwhile)",
                503,
                "coach_warming",
                seconds=warming.seconds,
                retry_after=warming.seconds,
            ) from None

    def grader(self, rules: RuleSet):
        """The coach of ``rules`` to grade a move with, or None while it warms up."""
        return self.coaches.grader(rules)

    def coach_ready(self, rules_name: str) -> bool:
        return self.coaches.is_ready(rules_name)

    def review(self, decisions) -> dict[str, Any]:
        from yahtzee_env.solver.coach import review

        return review(decisions)

    # --------------------------------------------------------------- players
    def create_player(self, name: Any) -> dict[str, Any]:
        name = clean_name(name)
        token = secrets.token_urlsafe(24)
        player_id = self.storage.create_player(name, token)
        return {"player_id": player_id, "name": name, "token": token}

    def player(self, token: Any, required: bool = True):
        if token is None and not required:
            return None
        if not isinstance(token, str) or not token:
            raise WebError("a player token is required", 403, "player_token")
        row = self.storage.player_by_token(token)
        if row is None:
            raise WebError("unknown player token (create a profile first)", 403, "player_token")
        return row

    # --------------------------------------------------------------- tables
    def who(self, body: dict[str, Any], session=None):
        """The player making a request: its session's (the page), else the body's player
        token (API clients), else None."""
        if session is not None:
            return session
        return self.player(body.get("player"), required=False)

    def create(
        self, body: dict[str, Any], address: str | None = None, session=None
    ) -> tuple[Table, dict[int, str]]:
        """A new table from the lobby's choices; returns it and the host's seat tokens
        (none with a ``session``: its player's seats are bound to it on the server).
        ``address``: the client's (its hash is stored, for the per-address cap)."""
        player = self.who(body, session)
        host_name = clean_name(body.get("name"), default=player["name"] if player else "Player 1")
        kinds = body.get("seats")
        levels = cpu_levels()
        allowed = ["human", "friend", *levels]
        if not isinstance(kinds, list) or not MIN_SEATS <= len(kinds) <= MAX_SEATS:
            raise WebError(f"seats must be a list of {MIN_SEATS} to {MAX_SEATS} seat kinds")
        for i, kind in enumerate(kinds):
            if kind not in allowed:
                raise WebError(f"seat {i}: unknown kind {kind!r}; choose one of {allowed}")
        if kinds[0] != "human":
            raise WebError("seat 0 is the host's: its kind must be 'human'")
        online = body.get("online", False)
        if not isinstance(online, bool):
            raise WebError("online must be true or false")
        if "friend" in kinds and not online:
            raise WebError(
                "friends join online tables: create an online table to seat friends",
                code="friends_online",
            )
        rules_name = body.get("rules", "official")
        if not isinstance(rules_name, str) or rules_name not in PRESETS:
            raise WebError(f"unknown rules {str(rules_name)[:30]!r}; presets: {', '.join(PRESETS)}")
        fill = body.get("fill", DEFAULT_FILL)
        if not isinstance(fill, str) or fill not in levels:
            raise WebError(
                f"unknown CPU level {str(fill)[:30]!r} for empty seats; choose one of {levels}"
            )
        flags = {}
        for key in ("match", "coach", "public", "duplicate"):
            flags[key] = body.get(key, False)
            if not isinstance(flags[key], bool):
                raise WebError(f"{key} must be true or false")
        timer = body.get("turn_timer", ONLINE_TURN_TIMER if online else 0)
        low, high = TURN_TIMER_RANGE
        if (
            isinstance(timer, bool)
            or not isinstance(timer, int)
            or not (timer == 0 or low <= timer <= high)
        ):
            raise WebError(
                f"turn_timer must be 0 (off) or {low} to {high} seconds", 400, "bad_turn_timer"
            )
        addr_hash = token_hash(f"addr:{address}") if address is not None else None
        self.check_caps(player["id"] if player else None, addr_hash)
        code = new_code()
        while self.storage.table_exists(code):  # 2**-39 per table: never, in practice
            code = new_code()
        tokens: dict[int, str] = {}
        seats: list[Seat] = []
        counts: dict[str, int] = {}
        owner = player["id"] if player else None
        for i, kind in enumerate(kinds):
            if kind == "human":
                name = host_name if i == 0 else f"Player {i + 1}"
                pid = owner if i == 0 else None
                seat = Seat(i, "human", name, pid, owner_id=owner)
                if session is None:  # an API client: a seat token per human seat
                    tokens[i] = secrets.token_urlsafe(18)
                    seat.token_hash = token_hash(tokens[i])
                seats.append(seat)
            elif kind == "friend":
                seats.append(Seat(i, "friend", f"(seat {i + 1} free)"))
            else:
                counts[kind] = counts.get(kind, 0) + 1
                name = kind if counts[kind] == 1 else f"{kind} #{counts[kind]}"
                seats.append(Seat(i, kind, name))
        unique_names(seats)
        table = Table(
            code,
            RuleSet.from_spec(rules_name),
            secrets.randbits(62),
            online,
            flags["match"],
            flags["coach"],
            fill,
            seats,
            turn_timer=timer,
            public=flags["public"],
            dice_secret=new_seed(),
            duplicate=flags["duplicate"],
        )
        if not online:
            table.started = True
            first = table.begin_game(0, first=0)  # you roll first
            table.games.append({"idx": 0, "match_no": 0, "first": first})
        row = {
            "code": code,
            "rules": rules_name,
            "seed": table.seed,
            "online": online,
            "match": table.match,
            "coach": table.coach,
            "public": table.public,
            "fill_level": fill,
            "started": table.started,
            "first": table.games[0]["first"] if table.games else 0,
            "host_player": player["id"] if player else None,
            "host_addr": addr_hash,
            "turn_timer": timer,
            "dice_secret": table.dice_secret.hex(),
            "duplicate": table.duplicate,
        }
        self.storage.create_table(row, [s.row() for s in seats])
        self.keep(table)
        with self.locked(code) as table:
            if table.started:
                self.run_cpus(table)
            self._clock(table)
        return table, tokens

    def check_caps(self, player_id: int | None, addr_hash: str | None) -> None:
        """Refuse a new table to a host with too many unfinished ones."""
        caps = [
            (player_id, self.tables_per_player, "player_id", "you host"),
            (addr_hash, self.tables_per_address, "addr", "your network hosts"),
        ]
        for value, cap, key, who in caps:
            if value is None or cap is None:
                continue
            if self.storage.open_tables(**{key: value}) >= cap:
                raise WebError(  # 409, no Retry-After: waiting does not help, finishing does
                    f"{who} {cap} unfinished tables: finish or leave one before creating another",
                    409,
                    "too_many_tables" if key == "player_id" else "network_tables",
                    max=cap,
                )

    def keep(self, table: Table) -> None:
        table.used = time.monotonic()
        self.loaded[table.code] = table
        self.loaded.move_to_end(table.code)

    def evict(self, idle_s: float, keep: int, busy=lambda code: False) -> list[str]:
        """Drop from memory the tables idle for ``idle_s`` seconds, and the least recently
        used beyond ``keep``, but none that ``busy(code)``; return their codes. A worker
        thread may drop a table meanwhile (a failed change, `_build`): it is no error."""
        now = time.monotonic()
        over = len(self.loaded) - keep
        gone = []
        for code, table in list(self.loaded.items()):  # least recently used first
            if busy(code):
                continue
            if over > 0 or now - table.used > idle_s:
                if self.loaded.pop(code, None) is not None:
                    gone.append(code)
                over -= 1
        return gone

    def expire(self, unstarted_s: float, idle_s: float, keep=(), **hours) -> list[str]:
        """Delete tables never started for ``unstarted_s`` seconds or idle for ``idle_s``
        (unfinished solo and online games sooner: ``solo_s``, ``abandoned_s``), but those
        in ``keep`` (in use now); their seat tokens die with them. Their codes."""
        codes = self.storage.expire(unstarted_s, idle_s, keep, **hours)
        for code in codes:
            self.loaded.pop(code, None)
        return codes

    def load(self, code: Any) -> Table:
        """The table, as committed: the copy in memory if the database has not moved it on
        (one query where several processes share the database), else rebuilt from the log."""
        code = clean_code(code)
        table = self.loaded.get(code)
        if table is not None and self.storage.multi_process:
            rev = self.storage.table_rev(code)
            if rev is None:
                self.loaded.pop(code, None)
                raise WebError(f"no table has the code {code!r}", 404, "unknown_table")
            if rev != table.rev:
                table = self._catch_up(table)
        if table is not None:
            self.keep(table)
            return table
        table = self._build(code)
        game = table.game
        if table.started and not game.over and table.seats[game.current].is_cpu:
            with self.locked(code) as table:  # a crash between a start and its CPU moves
                self.run_cpus(table)
        return table

    def refresh(self, code: str, rev: int | None = None) -> Table:
        """Table ``code`` at revision ``rev`` or newer, as a notification from another process
        announced it (None: at whatever the database holds, when notifications may have been
        lost). A copy in memory already there costs nothing; one behind catches up at once
        (one round trip: no query first for the database's ``rev``, which is known to be
        ahead)."""
        table = self.loaded.get(code)
        if table is None:
            return self.load(code)
        if rev is None or table.rev < rev:
            table = self._catch_up(table)
        self.keep(table)
        return table

    def _build(self, code: str) -> Table:
        """Rebuild table ``code`` from the database (its rows, then its log replayed)."""
        row = self.storage.load_table(code)
        if row is None:
            self.loaded.pop(code, None)
            raise WebError(f"no table has the code {code!r}", 404, "unknown_table")
        seats = [
            Seat(
                s["seat"],
                s["kind"],
                s["name"],
                s["player_id"],
                s["token_hash"],
                s.get("owner_id"),
                s.get("away"),
            )
            for s in row["seats"]
        ]
        table = Table(
            code,
            RuleSet.from_spec(row["rules"]),
            row["seed"],
            bool(row["online"]),
            bool(row["match"]),
            bool(row["coach"]),
            row["fill_level"],
            seats,
            started=bool(row["started"]),
            public=bool(row.get("public", 0)),
            rev=int(row["rev"]),
            turn_timer=int(row.get("turn_timer") or 0),
            deadline=row.get("deadline"),
            votes=set(json.loads(row["votes"])) if row.get("votes") else set(),
            dice_secret=bytes.fromhex(row["dice_secret"]) if row.get("dice_secret") else None,
            duplicate=bool(row.get("duplicate") or 0),
        )
        for g in row["games"]:
            table.begin_game(g["idx"], g["first"])
            table.games.append({k: g[k] for k in ("idx", "match_no", "first")})
            for seat, action, regret in row["actions"].get(g["idx"], []):
                decision = None
                grader = self.grader(table.rules) if regret is not None and table.coach else None
                if grader is not None:
                    decision = grader.grade(table.game, seat, action)
                table.apply(seat, action, regret, decision)
            if table.game.over:
                table.finished.append(table.game.totals())
        table.armed = table.decision()  # the stored deadline is the current decision's
        table.saved_clock = (table.deadline, row.get("votes") or "")
        self.keep(table)
        return table

    def _catch_up(self, table: Table) -> Table:
        """``table`` brought to the database's state: the new actions of its current game
        applied, if nothing else changed (another process's move: the common case), else
        rebuilt from the whole log."""
        new = self.storage.table_changes(table.code, table.idx, len(table.log))
        if new is None:
            return self._build(table.code)  # gone: raises 404
        same = (
            bool(new["started"]) == table.started
            and int(new["games"]) == len(table.games)
            and table.game is not None
            and [tuple(s.values()) for s in new["seats"]]
            == [tuple(s.row().values()) for s in table.seats]
        )
        if not same:
            return self._build(table.code)
        try:
            for seat, action, regret in new["actions"]:
                decision = None
                grader = self.grader(table.rules) if regret is not None and table.coach else None
                if grader is not None:
                    decision = grader.grade(table.game, seat, action)
                table.apply(seat, action, regret, decision)
        except Exception:
            return self._build(table.code)  # a copy that cannot follow the log: start over
        if new["actions"] and table.game.over:
            table.finished.append(table.game.totals())
        table.deadline, votes = new["deadline"], new["votes"] or ""  # the clock, as stored
        table.votes = set(json.loads(votes)) if votes else set()
        table.saved_clock, table.armed = (table.deadline, votes), table.decision()
        table.rev = int(new["rev"])
        return table

    @contextlib.contextmanager
    def locked(self, code: Any, optimistic: bool = False):
        """Table ``code`` under its lock, at the database's last committed state: the block
        is one transaction (committed when it ends, rolled back on an exception). After a
        commit that wrote, the other processes are told (`Storage.lock_table`'s ``origin``).

        ``optimistic``: the copy in memory as it is, with no lock or read first; the block's
        writes commit when it ends only if the database is still at the copy's ``rev``,
        else `StaleCopy` (`Storage.lock_table`; `optimistically` tries again locked)."""
        code = clean_code(code)
        try:
            with self.storage.lock_table(code, origin=self.instance, optimistic=optimistic) as lock:
                if optimistic:
                    table = self.loaded.get(code) or self._build(code)
                    lock.rev = table.rev
                elif lock.rev is None:
                    self.loaded.pop(code, None)
                    raise WebError(f"no table has the code {code!r}", 404, "unknown_table")
                else:
                    table = self.loaded.get(code)
                    if table is None:
                        table = self._build(code)
                    elif table.rev != lock.rev:
                        table = self._catch_up(table)
                shape, seq = self._shape(table), len(table.log)
                yield table
                if lock.wrote and self.storage.multi_process:  # nobody else to tell on SQLite
                    lock.news = self._news(table, shape, seq)
        except WebError:
            raise  # refused before any change: the copy in memory is still the database's
        except BaseException:
            self.loaded.pop(code, None)  # memory may be ahead of the database: rebuild
            raise
        table.rev = lock.rev
        if lock.unpublished is not None:  # committed: the others see it at their next read
            log.warning(
                "could not notify the other servers of table %s: %s", code, lock.unpublished
            )

    @staticmethod
    def _shape(table: Table) -> tuple:
        """What of a table a change can alter besides its current game's log and clock."""
        return table.started, len(table.games), [s.row() for s in table.seats]

    def _news(self, table: Table, shape: tuple, seq: int) -> str | None:
        """A change of ``table`` (that had ``shape`` and ``seq`` actions in its current game)
        as the other processes' copies can follow it without reading the database: the
        actions it appended and the clock, as JSON. None when anything else changed (a seat,
        a new game) or it is too long for a notification: they read the database then."""
        if self._shape(table) != shape or len(table.log) < seq or table.saved_clock is None:
            return None
        deadline, votes = table.saved_clock
        news = {"idx": table.idx, "seq": seq, "actions": table.log[seq:]}
        news.update(deadline=deadline, votes=votes)
        text = json.dumps(news, separators=(",", ":"))
        return text if len(text) < MAX_NEWS else None

    def follow(self, code: str, rev: int, news: str) -> Table | None:
        """Table ``code`` after another process's change to ``rev``, followed from its
        `_news` by the copy in memory if that copy is at ``rev - 1``: no database read, and
        cheap (the engine steps a few actions), so it may run on the event loop while no
        thread works on the table. None if the copy cannot follow (absent, at another rev, a
        coach's table, news of another game): `refresh` reads the database then."""
        table = self.loaded.get(code)
        if table is None or table.rev != rev - 1 or table.coach or table.game is None:
            return None
        try:
            new = json.loads(news)
            actions = [(int(seat), int(action), None) for seat, action, _ in new["actions"]]
            if new["idx"] != table.idx or new["seq"] != len(table.log):
                return None
            votes = new["votes"]
            clock = (new["deadline"], votes, set(json.loads(votes)) if votes else set())
        except (ValueError, KeyError, TypeError):
            return None
        try:
            for seat, action, regret in actions:
                table.apply(seat, action, regret)
        except Exception:
            self.loaded.pop(code, None)  # a copy that cannot follow: rebuilt at its next use
            return None
        if actions and table.game.over:
            table.finished.append(table.game.totals())
        table.deadline, table.votes = clock[0], clock[2]
        table.saved_clock, table.armed = clock[:2], table.decision()
        table.rev = rev
        self.keep(table)
        return table

    def join(self, code: Any, body: dict[str, Any], session=None) -> tuple[Table, int, str | None]:
        """Take the first free seat; returns the table, the seat and its token (None with
        a ``session``: the seat is bound to the session's player)."""
        player = self.who(body, session)
        name = clean_name(body.get("name"), default=player["name"] if player else "Friend")
        with self.locked(code) as table:
            return self._join(table, player, name, session)

    def _join(self, table: Table, player, name: str, session=None) -> tuple[Table, int, str | None]:
        if table.started:
            raise WebError("this table has already started: no seat is free", 409, "started")
        if player and any(s.player_id == player["id"] for s in table.seats):
            raise WebError("you already have a seat at this table", 409, "already_seated")
        free = [s for s in table.seats if s.kind == "friend"]
        if not free:
            raise WebError("every seat at this table is taken", 409, "full")
        seat = free[0]
        seat.kind, seat.name = "human", name
        seat.player_id = seat.owner_id = player["id"] if player else None
        token = None
        if session is None:
            token = secrets.token_urlsafe(18)
            seat.token_hash = token_hash(token)
        unique_names(table.seats, keep=[s.seat for s in table.seats if s is not seat])
        self.storage.update_seat(table.code, seat.row())
        return table, seat.seat, token

    def start(self, code: Any, seat: Any, token: Any, player_id: int | None = None) -> Table:
        with self.locked(code) as table:
            return self._start(table, seat, token, player_id)

    def _start(self, table: Table, seat: Any, token: Any, player_id: int | None = None) -> Table:
        table.seat_of_token(seat, token, player_id)
        if seat != 0:
            raise WebError("only the host (seat 1) can start the table", 403, "host_only")
        if table.started:
            raise WebError("the table has already started", 409, "started")
        counts: dict[str, int] = {}
        for s in table.seats:
            if s.is_cpu:
                counts[s.kind] = counts.get(s.kind, 0) + 1
        for s in table.seats:
            if s.kind == "friend":
                counts[table.fill_level] = counts.get(table.fill_level, 0) + 1
                n = counts[table.fill_level]
                s.kind = table.fill_level
                s.name = table.fill_level if n == 1 else f"{table.fill_level} #{n}"
        unique_names(table.seats, keep=[s.seat for s in table.seats if not s.is_cpu])
        table.started = True
        first = table.begin_game(0, first=0)  # the host rolls first
        table.games.append({"idx": 0, "match_no": 0, "first": first})
        self.storage.start_table(table.code, [s.row() for s in table.seats], first)
        self.run_cpus(table)
        self._clock(table)
        return table

    # --------------------------------------------------------------- moves
    def intent_action(self, table: Table, intent: Any) -> int | str:
        """The engine action of a page intent (or ``"next"``); WebError if malformed."""
        if not isinstance(intent, dict):
            raise WebError("action must be an object like {'type': 'roll', 'hold': [0, 2]}")
        kind = intent.get("type")
        game = table.game
        if kind == "next":
            return "next"
        if game is None or game.over:
            raise WebError("the game is over: start the next one", 409, "game_over")
        if kind == "roll":
            hold = intent.get("hold", [])
            if not isinstance(hold, list) or not all(
                isinstance(p, int) and not isinstance(p, bool) for p in hold
            ):
                raise WebError("hold must be a list of dice positions 0..4")
            if len(set(hold)) != len(hold) or not all(0 <= p < NUM_DICE for p in hold):
                raise WebError(f"illegal hold {hold[:8]}: positions are distinct, 0..4")
            if len(hold) == NUM_DICE:
                raise WebError(
                    "all five dice are held: release some or score a box", code="all_held"
                )
            if game.rolls_left == 0:
                raise WebError("no rolls left this turn: score a box", 409, "no_rolls")
            return hold_action(hold)
        if kind == "score":
            box = intent.get("box")
            if not isinstance(box, str) or box not in BOX_NAMES:
                raise WebError(f"unknown box {str(box)[:30]!r}; boxes: {', '.join(BOX_NAMES)}")
            action = BOX_ACTION_OFFSET + BOX_NAMES.index(box)
            if not game.legal_action_mask()[action]:
                reason = game.player.why_illegal(BOX_NAMES.index(box), game.roll)  # the engine's
                raise WebError(f"cannot score there: {reason}", 409, "cannot_score", box=box)
            return action
        raise WebError(f"unknown action type {str(kind)[:20]!r}: use roll, score or next")

    def act(
        self,
        code: Any,
        seat: Any,
        token: Any,
        intent: Any,
        seq: Any,
        game_idx: Any = None,
        player_id: int | None = None,
    ) -> tuple[Table, int]:
        """Apply one human intent made from the state ``(game, seq)`` and the CPU moves after
        it; commit; return the table and the seq of the first new event (for the page's
        animation). An intent made from another state is refused (409 ``stale_seq``). All of
        it under the table's lock (`locked`), so the same intent sent to two processes at once
        is applied once. ``next`` is a vote at an online table: the next game starts once
        every human (but the away ones) has confirmed. Acting takes an away seat back."""
        args = (seat, token, intent, seq, game_idx, player_id)
        return self.optimistically(code, lambda table: self._act(table, *args))

    def optimistically(self, code: Any, work):
        """``work(table)`` in an optimistic block (`locked`): one transaction of usually two
        statements, no lock taken first. Where the copy may be behind the database (several
        processes share it), a block that found it stale (`StaleCopy`) or refused the work
        (a `WebError`: the copy may not have the newest move yet) runs again, locked."""
        try:
            with self.locked(code, optimistic=True) as table:
                return work(table)
        except StaleCopy:
            pass
        except WebError:
            if not self.storage.multi_process:
                raise
        with self.locked(code) as table:
            return work(table)

    def _act(
        self,
        table: Table,
        seat: Any,
        token: Any,
        intent: Any,
        seq: Any,
        game_idx: Any,
        player_id: int | None = None,
    ) -> tuple[Table, int]:
        table.seat_of_token(seat, token, player_id)
        if not table.started:
            raise WebError("the table has not started yet: the host starts it", 409, "not_started")
        for name, value in (("seq", seq), ("game", game_idx)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise WebError(f"{name} must be an integer")
        if seq is None:
            raise WebError(
                "seq is required: send the seq of the state the move was made from",
                400,
                "seq_required",
            )
        if seq != len(table.log) or (game_idx is not None and game_idx != table.idx):
            raise WebError("the table has moved on: reload its state", 409, "stale_seq")
        action = self.intent_action(table, intent)
        self._back(table, [seat])
        if action == "next":
            if not table.game.over:
                raise WebError("the game is still on: finish it first", 409, "still_on")
            table.votes.add(table.seats[seat].voter())
            if not table.online or table.all_confirmed():
                self.next_game(table)
            self._clock(table, force=True)
            return table, 0
        game = table.game
        if game.current != seat:
            mover = table.seats[game.current].name
            raise WebError(
                f"it is not your turn: {mover} (seat {game.current + 1}) is to move",
                409,
                "not_your_turn",
                seat=game.current,
            )
        first = len(table.log)
        regret = decision = None
        grader = self.grader(table.rules) if table.coach else None
        if grader is not None:  # while the coach warms up, a move is played ungraded
            decision = grader.grade(game, seat, action)
            regret = decision.regret
        table.apply(seat, action, regret, decision)  # on an exception `locked` drops the copy
        self._cpu_moves(table)
        self._commit(table, first)
        self._clock(table)
        return table, first

    def next_game(self, table: Table) -> None:
        """Start the next game: of the same best-of-five while it is undecided (the start
        passes to the next seat, as in the terminal game), else a new game or match."""
        if not table.game.over:
            raise WebError("the game is still on: finish it first", 409, "still_on")
        idx = len(table.games)
        last = table.games[-1]
        first = 0  # a new game or match: you (the host) roll first
        if table.match and not match_is_decided(table.match_games()):
            match_no = last["match_no"]
            first = (last["first"] + 1) % len(table.seats)
        else:
            match_no = last["match_no"] + 1
        table.votes = set()
        first = table.begin_game(idx, first)
        table.games.append({"idx": idx, "match_no": match_no, "first": first})
        self.storage.start_game(table.code, idx, match_no, first)
        self.run_cpus(table)

    def run_cpus(self, table: Table) -> None:
        """Play the CPU seats until a human must move, and commit."""
        first = len(table.log)
        self._cpu_moves(table)
        if len(table.log) > first:
            self._commit(table, first)

    def _cpu_moves(self, table: Table, timed_out: int | None = None) -> None:
        """Play the CPU seats, and the away humans' seats (with the table's fill level)
        while someone is still at the table, until a present human must decide.
        ``timed_out``: a seat whose turn ran out: the computer finishes that turn anyway."""
        game = table.game
        here = any(s.kind == "human" and s.away is None for s in table.seats)
        turn = game.turns_taken if timed_out is not None else None
        while not game.over:
            seat = table.seats[game.current]
            finishing = seat.seat == timed_out and game.turns_taken == turn
            if not (seat.is_cpu or (seat.computer_moves and (here or finishing))):
                break
            policy = self.policy(seat.kind if seat.is_cpu else table.fill_level, table.rules)
            cpu_move(game, seat.seat, policy, seat.name, lambda a, s=seat.seat: table.apply(s, a))

    # --------------------------------------------------------------- people
    def _clock(self, table: Table, force: bool = False) -> None:
        """(Re)arm the turn clock for the decision the table waits on now (a new turn or
        a new vote gets ``turn_timer`` seconds; the same one keeps its deadline) and
        store it with the votes, when they changed."""
        key = table.decision()
        if key is None or not table.turn_timer:
            table.deadline = None
        elif key != table.armed:  # a new decision (the same one keeps its deadline, or none)
            table.deadline = self.clock() + table.turn_timer
        table.armed = key
        saved = (table.deadline, json.dumps(sorted(table.votes, key=str)) if table.votes else "")
        if force or saved != table.saved_clock:
            self.storage.set_clock(table.code, *saved)
            table.saved_clock = saved

    def _time_out(self, table: Table) -> bool:  # under the table's lock
        """If the table's deadline has passed: the computer plays the waited-on turn (and
        the seat is away), or, at a finished game, the next starts for those who
        confirmed (the others are away; with no confirmation at all nothing starts)."""
        if table.deadline is None or self.clock() < table.deadline:
            return False
        game = table.game
        if True:
            if game.over:
                late = [
                    s
                    for s in table.seats
                    if s.kind == "human" and s.away is None and s.voter() not in table.votes
                ]
                if table.votes:
                    for s in late:
                        s.away = "timeout"
                    self.storage.update_seats(table.code, [s.row() for s in late])
                    self.next_game(table)
                else:  # nobody confirmed: no game starts; the table waits, without a clock
                    table.deadline = None
            else:
                seat = table.seats[game.current]
                seat.away = "timeout"
                self.storage.update_seat(table.code, seat.row())
                first = len(table.log)
                self._cpu_moves(table, timed_out=seat.seat)
                self._commit(table, first)
            self._clock(table)
        return True

    def time_out(self, code: str) -> Table:
        """Play the table's timed-out decision, if its deadline has passed (the server's
        clock task calls this for the tables `Storage.due` lists)."""
        with self.locked(code) as table:
            self._time_out(table)
        return table

    def _back(self, table: Table, seats: list[int], reasons=AWAY_REASONS) -> bool:
        """Take ``seats`` back from the computer (those away for one of ``reasons``)."""
        back = [table.seats[i] for i in seats if table.seats[i].away in reasons]
        for s in back:
            s.away = None
        if back:
            self.storage.update_seats(table.code, [s.row() for s in back])
            self.run_cpus(table)
            self._clock(table)
        return bool(back)

    def _caller_seats(
        self, table: Table, seat: Any, token: Any, player_id: int | None
    ) -> list[int]:
        if token is None and seat is None and player_id is not None:
            seats = table.seats_of(player_id)
            if not seats:
                raise WebError("you have no seat at this table", 403, "not_your_seat")
            return seats
        return [table.seat_of_token(seat, token, player_id)]

    def back(self, code: Any, seat: Any, token: Any, player_id: int | None = None) -> Table:
        """The caller takes their seat(s) back from the computer."""
        with self.locked(code) as table:
            self._back(table, self._caller_seats(table, seat, token, player_id))
        return table

    def reconnected(self, table: Table, seats: list[int]) -> bool:
        """A seated socket opened: seats the computer took for a timeout or the host come
        back (a seat its player left is taken back only by asking: `back`)."""
        return self._back(table, seats, ("timeout", "host"))

    def leave(self, code: Any, seat: Any, token: Any, player_id: int | None = None) -> Table:
        """The caller leaves: before the start their seat is free again (the host's seat
        cannot be left); after it, the computer plays it (they may take it back)."""
        with self.locked(code) as table:
            seats = self._caller_seats(table, seat, token, player_id)
            if not table.started:
                if 0 in seats:
                    raise WebError(
                        "the host cannot leave a table before it starts", 409, "host_leaves"
                    )
                for i in seats:
                    table.seats[i] = Seat(i, "friend", f"(seat {i + 1} free)")
                self.storage.update_seats(table.code, [table.seats[i].row() for i in seats])
                return table
            left = [table.seats[i] for i in seats if table.seats[i].kind == "human"]
            for s in left:
                s.away = "left"
            self.storage.update_seats(table.code, [s.row() for s in left])
            if self.on_leave is not None and not table.game.over:
                self.on_leave(table, [s.seat for s in left])
            if table.game.over and table.online and table.all_confirmed():
                self.next_game(table)  # the others had all confirmed: they need not wait
            self.run_cpus(table)
            self._clock(table)
            return table

    def _host(self, table: Table, seat: Any, token: Any, player_id: int | None) -> None:
        if token is None and seat is None:
            seat = 0
        table.seat_of_token(seat, token, player_id)
        if seat != 0:
            raise WebError("only the host (seat 1) can do that", 403, "not_host")

    def _target(self, table: Table, target: Any) -> Seat:
        if isinstance(target, bool) or not isinstance(target, int):
            raise WebError("target must be a seat number")
        if not 0 < target < len(table.seats):
            raise WebError(f"no seat {target} to hand over (1..{len(table.seats) - 1})")
        return table.seats[target]

    def hand_to_cpu(
        self,
        code: Any,
        target: Any,
        seat: Any = None,
        token: Any = None,
        player_id: int | None = None,
        present: frozenset = frozenset(),
    ) -> Table:
        """The host gives seat ``target`` to the computer: before the start a free or
        absent seat becomes a CPU of the fill level; during a game an absent player's seat
        is played by the computer until they come back. ``present``: seats with an open
        socket (a connected player's seat cannot be taken from them)."""
        with self.locked(code) as table:
            self._host(table, seat, token, player_id)
            s = self._target(table, target)
            if s.is_cpu:
                raise WebError("the computer already plays that seat", 409, "already_cpu")
            if (
                s.kind == "human"
                and s.owner_id is not None
                and s.owner_id == table.seats[0].owner_id
            ):
                pass  # the host's own second seat (one screen): theirs to give
            elif s.seat in present:
                raise WebError(
                    "that player is here: only an absent seat goes to the computer",
                    409,
                    "player_present",
                )
            if not table.started:
                counts = sum(o.kind == table.fill_level for o in table.seats)
                table.seats[s.seat] = Seat(s.seat, table.fill_level, table.fill_level)
                if counts:
                    table.seats[s.seat].name = f"{table.fill_level} #{counts + 1}"
                self.storage.update_seat(table.code, table.seats[s.seat].row())
                return table
            if s.away is None:
                s.away = "host"
                self.storage.update_seat(table.code, s.row())
            if table.game.over and table.online and table.all_confirmed():
                self.next_game(table)
            self.run_cpus(table)
            self._clock(table)
            return table

    def remove_seat(
        self,
        code: Any,
        target: Any,
        seat: Any = None,
        token: Any = None,
        player_id: int | None = None,
        present: frozenset = frozenset(),
    ) -> Table:
        """Before the start, the host removes seat ``target``: a free seat, or one whose
        player is not here (the seats after it move up); two seats at least remain."""
        with self.locked(code) as table:
            self._host(table, seat, token, player_id)
            s = self._target(table, target)
            if table.started:
                raise WebError("the game has started: hand the seat to the computer instead", 409)
            if s.seat in present:
                raise WebError("that player is here", 409, "player_present")
            if len(table.seats) <= MIN_SEATS:
                raise WebError(f"a table keeps {MIN_SEATS} seats at least", 409, "min_seats")
            del table.seats[s.seat]
            for i, other in enumerate(table.seats):
                other.seat = i
                if other.kind == "friend":
                    other.name = f"(seat {i + 1} free)"
            self.storage.update_seats(table.code, [o.row() for o in table.seats], replace=True)
            return table

    def open_tables(self, player_id: int) -> list[dict[str, Any]]:
        """The player's unfinished tables, for the lobby's "Your open tables"."""
        return self.storage.tables_of(player_id)

    def _commit(self, table: Table, first: int) -> None:
        results = []
        game = table.game
        if game.over:
            totals = game.totals()
            table.finished.append(totals)
            top = top_seats(totals)
            cpus = sorted({s.kind for s in table.seats if s.is_cpu})
            for s in table.seats:
                if s.player_id is None:
                    continue
                card = game.players[s.seat]
                outcome = "loss" if s.seat not in top else ("win" if len(top) == 1 else "draw")
                rolled = {}
                if game.seeded is not None:  # what the seat rolled, for the fair-dice test
                    counts = roll_counts(game.seeded.log, s.seat)
                    rolled = {
                        "faces": ",".join(map(str, counts.faces)),
                        "rolls": counts.rolls,
                        "yatzy_rolls": counts.yatzy_rolls,
                        "yatzy_expected": counts.yatzy_expected,
                    }
                results.append(
                    {
                        **rolled,
                        "player_id": s.player_id,
                        "seat": s.seat,
                        "score": card.total,
                        "outcome": outcome,
                        "yahtzees": card.yahtzees,
                        "upper_bonus": int(card.upper_bonus > 0),
                        "opponents": "+".join(cpus) if cpus else "humans",
                        "online": table.online,
                    }
                )
        self.storage.append_actions(
            table.code, table.idx, first, table.log[first:], results, over=game.over
        )
        if game.over and self.on_game_over is not None:
            self.on_game_over(table)

    def hint(
        self, code: Any, seat: Any, token: Any, player_id: int | None = None
    ) -> dict[str, Any]:
        table = self.load(code)
        table.seat_of_token(seat, token, player_id)
        if not table.coach:
            raise WebError(
                "the coach is off at this table (turn it on in the lobby)", 409, "coach_off"
            )
        game = table.game
        if game is None or game.over or game.current != seat:
            raise WebError("a hint is for your own turn", 409, "hint_own_turn")
        options = self.coach(table.rules).hint(game, seat)
        return {"seat": seat, "dice": list(game.dice), "options": [o.to_dict() for o in options]}

    def state(self, table: Table, since: int = 0) -> dict[str, Any]:
        out = table.state(since, self.review if table.coach else None)
        out["rev"] = table.rev  # the database's revision (servers sharing it compare these)
        if table.deadline is not None:
            out["time_left"] = round(max(0.0, table.deadline - self.clock()), 1)
        return out

    # --------------------------------------------------------------- game reviews
    def review_request(
        self, game_id: Any, body: dict[str, Any], player_id: int | None = None
    ) -> dict[str, Any]:
        """Check that ``body`` may open the review of ``game_id`` (``CODE-IDX``): the table
        is public, or the session's ``player_id`` has a seat there, or ``body`` holds a seat
        token of it (``tokens: {seat: token}``) or the player token of a player seated there.
        Returns what `review_of` needs (read here, under the table's lock, so that the
        solver's work touches no live table); WebError 404 for no such finished game, 403 for
        no access."""
        text = str(game_id) if isinstance(game_id, str) else ""
        code, _, idx_text = text.rpartition("-")
        if not code or not idx_text.isdigit():
            raise WebError(f"no game has the id {text[:30]!r}", 404, "no_game")
        table = self.load(code)
        idx = int(idx_text)
        if idx >= len(table.finished):
            raise WebError(f"no finished game has the id {text[:30]!r}", 404, "no_game")
        seated = player_id is not None and any(
            player_id in (s.player_id, s.owner_id) for s in table.seats
        )
        if not (table.public or seated or self._may_review(table, body)):
            raise WebError("only the players of this table can open its reviews", 403, "private")
        row = self.storage.load_table(table.code)
        return {
            "code": table.code,
            "idx": idx,
            "rules": table.rules,
            "seed": table.seed,
            "first": table.games[idx]["first"],
            "coach": table.coach,
            "seats": table.state()["seats"],
            "actions": row["actions"].get(idx, []),
            "dice_secret": table.dice_secret,
            "duplicate": table.duplicate,
        }

    def _may_review(self, table: Table, body: dict[str, Any]) -> bool:
        tokens = body.get("tokens")
        if isinstance(tokens, dict):
            for seat, token in tokens.items():
                try:
                    table.seat_of_token(int(seat), token)
                    return True
                except (WebError, ValueError):
                    continue
        player = body.get("player")
        if isinstance(player, str) and player:
            row = self.storage.player_by_token(player)
            if row is not None and any(s.player_id == row["id"] for s in table.seats):
                return True
        return False

    def review_of(self, game: dict[str, Any]) -> dict[str, Any]:
        """The solver's review of the finished game `review_request` described (cached;
        CPU-bound: call it in a thread, off the event loop)."""
        key = (game["code"], game["idx"])
        with self._reviews_lock:
            cached = self._reviews.get(key)
        if cached is None:
            coach = self.coach(game["rules"])
            out = review_game(
                coach,
                game["rules"],
                game["seed"],
                game["idx"],
                game["first"],
                game["seats"],
                game["actions"],
                secret=game["dice_secret"],
                duplicate=game["duplicate"],
            )
            out.update(id=f"{key[0]}-{key[1]}", code=key[0], game=key[1], coach=game["coach"])
            with self._reviews_lock:
                while len(self._reviews) >= REVIEWS_KEPT:  # forget the oldest
                    self._reviews.pop(next(iter(self._reviews)))
                self._reviews[key] = cached = out
        return cached


__all__ = ["Seat", "Table", "Tables", "WebError", "clean_code", "clean_name", "cpu_levels"]
