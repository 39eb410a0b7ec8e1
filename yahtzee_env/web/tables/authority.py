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
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from yahtzee_env.game.cpu import cpu_move
from yahtzee_env.game.dice import NUM_DICE
from yahtzee_env.game.engine import (
    BOX_ACTION_OFFSET,
    Game,
    hold_action,
    top_seats,
)
from yahtzee_env.game.fair_dice import DICE_V2, new_seed, roll_counts
from yahtzee_env.game.match import match_is_decided
from yahtzee_env.game.rules import BOX_NAMES, PRESETS, RuleSet
from yahtzee_env.web.errors import WebError, clean_code, clean_name
from yahtzee_env.web.storage import StaleCopy, Storage, token_hash
from yahtzee_env.web.tables.clock import TurnClock
from yahtzee_env.web.tables.coaches import Coaches, CoachWarming
from yahtzee_env.web.tables.replicas import Replicas
from yahtzee_env.web.tables.reviews import Reviews
from yahtzee_env.web.tables.seating import Seating
from yahtzee_env.web.tables.seeds import ClientSeeds
from yahtzee_env.web.tables.table import (
    BANK_ADD_RANGE,
    DEFAULT_FILL,
    FIRST_ROLL,
    MAX_SEATS,
    MIN_SEATS,
    ONLINE_TURN_TIMER,
    TURN_TIMER_RANGE,
    Seat,
    Table,
    cpu_levels,
    new_code,
    unique_names,
)

log = logging.getLogger("yahtzee.web")


def table_choices(body: dict[str, Any]) -> dict[str, Any]:
    """The lobby's choices of a new table, checked (WebError names the field): the seat
    ``kinds``, ``online``, the ``rules``, the ``fill`` level, the ``flags`` (match, coach,
    public) and the turn ``timer``."""
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
    bank_add = 0
    if body.get("time_bank") is not None:
        if "turn_timer" in body:
            raise WebError(
                "give turn_timer (a fixed clock) or time_bank, not both: a time bank's "
                "cap is its longest turn",
                400,
                "bad_time_bank",
            )
        bank_add, timer = time_bank_choice(body["time_bank"], online)
    return {
        "kinds": kinds,
        "online": online,
        "rules": rules_name,
        "fill": fill,
        "flags": flags,
        "timer": timer,
        "bank_add": bank_add,
    }


def time_bank_choice(bank: Any, online: bool) -> tuple[int, int]:
    """The time bank ``{"add": seconds a turn, "cap": the most a bank holds}`` of a new
    table, checked: ``(add, cap)``; the cap is the table's ``turn_timer``."""
    if not online:
        raise WebError("time_bank is for online tables", 400, "bad_time_bank")
    if not isinstance(bank, dict) or set(bank) != {"add", "cap"}:
        raise WebError(
            'time_bank must be {"add": seconds a turn, "cap": seconds at most}',
            400,
            "bad_time_bank",
        )
    add, cap = bank["add"], bank["cap"]
    for name, value, (low, high) in (("add", add, BANK_ADD_RANGE), ("cap", cap, TURN_TIMER_RANGE)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise WebError(
                f"time_bank.{name} must be a whole number of seconds from {low} to {high}",
                400,
                "bad_time_bank",
                field=f"time_bank.{name}",
            )
    if cap < add:
        raise WebError(
            "time_bank.cap must be at least time_bank.add",
            400,
            "bad_time_bank",
            field="time_bank.cap",
        )
    return add, cap


def rolled_by(game: Game, seat: int) -> dict[str, Any]:
    """What ``seat`` rolled in the finished ``game``, as its result row stores it for the
    fair-dice test (issue 49); empty for a game without seeded dice."""
    if game.seeded is None:
        return {}
    counts = roll_counts(game.seeded.log, seat)
    return {
        "faces": ",".join(map(str, counts.faces)),
        "rolls": counts.rolls,
        "yatzy_rolls": counts.yatzy_rolls,
        "yatzy_expected": counts.yatzy_expected,
    }


def new_seats(
    kinds: list[str], host_name: str, owner: int | None, with_tokens: bool
) -> tuple[list[Seat], dict[int, str]]:
    """The seats of a new table of seat ``kinds`` hosted by ``owner`` (None: a guest API
    client), and the host's seat tokens (``with_tokens``: an API client's, one per human
    seat; else none, its seats are bound to its session's player)."""
    tokens: dict[int, str] = {}
    seats: list[Seat] = []
    counts: dict[str, int] = {}
    for i, kind in enumerate(kinds):
        if kind == "human":
            name = host_name if i == 0 else f"Player {i + 1}"
            pid = owner if i == 0 else None
            seat = Seat(i, "human", name, pid, owner_id=owner)
            if with_tokens:  # an API client: a seat token per human seat
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
    return seats, tokens


class Tables:
    """Every table of a server: created, loaded on first use, acted on."""

    def __init__(
        self,
        storage: Storage,
        tables_per_player: int | None = None,
        tables_per_address: int | None = None,
        instance: str | None = None,
        *,
        on_game_over: Callable[[Table], Any] | None = None,
        on_leave: Callable[[Table, list[int]], Any] | None = None,
    ) -> None:
        self.storage = storage
        self.instance = instance or secrets.token_hex(6)  # names this process in notifications
        self.clock = time.time  # wall clock of the turn deadlines (tests move it)
        self.tables_per_player, self.tables_per_address = tables_per_player, tables_per_address
        self.loaded: OrderedDict[str, Table] = OrderedDict()
        self.coaches = Coaches()
        # called with the table when a game ends, inside the transaction of its last moves
        # (`ratings.Ratings.game_over`)
        self.on_game_over = on_game_over
        self.on_leave = on_leave  # ... and with the table and the seats left before its end
        # its named parts (as lila's Rematcher, Moretimer): each holds one concern
        self.seating = Seating(self)  # joining, starting, leaving, handing seats over
        self.timer = TurnClock(self)  # the turn deadlines
        self.replicas = Replicas(self)  # the copies in memory, equal to the database's
        self.reviews = Reviews(self)  # who may open a finished game's review, and it
        self.seeds = ClientSeeds(self)  # the seats' client seeds for the dice (issue 58)

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
        player_id = self.storage.players.create_player(name, token)
        return {"player_id": player_id, "name": name, "token": token}

    def player(self, token: Any, required: bool = True):
        if token is None and not required:
            return None
        if not isinstance(token, str) or not token:
            raise WebError("a player token is required", 403, "player_token")
        row = self.storage.players.player_by_token(token)
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
        choices = table_choices(body)
        kinds, online, rules_name = choices["kinds"], choices["online"], choices["rules"]
        fill, flags, timer = choices["fill"], choices["flags"], choices["timer"]
        bank_add = choices["bank_add"]
        addr_hash = token_hash(f"addr:{address}") if address is not None else None
        self.check_caps(player["id"] if player else None, addr_hash)
        code = new_code()
        while self.storage.tables.table_exists(code):  # 2**-39 per table: never, in practice
            code = new_code()
        owner = player["id"] if player else None
        seats, tokens = new_seats(kinds, host_name, owner, with_tokens=session is None)
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
            bank_add=bank_add,
            public=flags["public"],
            dice_secret=new_seed(),
            duplicate=flags["duplicate"],
            dice=DICE_V2,  # issue 58: the seats' client seeds mixed in
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
            "bank_add": bank_add,
            "dice_secret": table.dice_secret.hex(),
            "duplicate": table.duplicate,
            "dice": table.dice,
        }
        self.storage.tables.create_table(row, [s.row() for s in seats])
        self.keep(table)
        with self.locked(code) as table:
            if table.started:
                self.run_cpus(table)
            self.timer.arm(table)
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
            if self.storage.tables.open_tables(**{key: value}) >= cap:
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

    def evict(
        self, idle_s: float, keep: int, busy=lambda code: False, finished_s: float | None = None
    ) -> list[str]:
        """Drop from memory the tables idle for ``idle_s`` seconds (those whose game is over:
        ``finished_s``), and the least recently used beyond ``keep``, but none that
        ``busy(code)``; return their codes. A worker thread may drop a table meanwhile (a
        failed change, `_build`): it is no error."""
        now = time.monotonic()
        over = len(self.loaded) - keep
        soonest = idle_s if finished_s is None else min(idle_s, finished_s)
        gone = []
        for code, table in list(self.loaded.items()):  # least recently used first
            if busy(code):
                continue
            idle = now - table.used
            if over <= 0 and idle <= soonest:  # the rest were used later still: none goes
                break
            done = finished_s is not None and table.game is not None and table.game.over
            if over > 0 or idle > idle_s or (done and idle > finished_s):
                if self.loaded.pop(code, None) is not None:
                    gone.append(code)
                over -= 1
        return gone

    def expire(self, unstarted_s: float, idle_s: float, keep=(), **hours) -> list[str]:
        """Delete tables never started for ``unstarted_s`` seconds or idle for ``idle_s``
        (unfinished solo and online games sooner: ``solo_s``, ``abandoned_s``), but those
        in ``keep`` (in use now); their seat tokens die with them. Their codes."""
        codes = self.storage.tables.expire(unstarted_s, idle_s, keep, **hours)
        for code in codes:
            self.loaded.pop(code, None)
        return codes

    def load(self, code: Any) -> Table:
        """The table, as committed: the copy in memory if the database has not moved it on
        (one query where several processes share the database), else rebuilt from the log."""
        code = clean_code(code)
        table = self.loaded.get(code)
        if table is not None and self.storage.multi_process:
            rev = self.storage.tables.table_rev(code)
            if rev is None:
                self.loaded.pop(code, None)
                raise WebError(f"no table has the code {code!r}", 404, "unknown_table")
            if rev != table.rev:
                table = self.replicas.catch_up(table)
        if table is not None:
            self.keep(table)
            return table
        table = self.replicas.build(code)
        game = table.game
        if table.started and not game.over and table.seats[game.current].is_cpu:
            with self.locked(code) as table:  # a crash between a start and its CPU moves
                self.run_cpus(table)
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
                    table = self.loaded.get(code) or self.replicas.build(code)
                    lock.rev = table.rev
                elif lock.rev is None:
                    self.loaded.pop(code, None)
                    raise WebError(f"no table has the code {code!r}", 404, "unknown_table")
                else:
                    table = self.loaded.get(code)
                    if table is None:
                        table = self.replicas.build(code)
                    elif table.rev != lock.rev:
                        table = self.replicas.catch_up(table)
                shape, seq = self.replicas.shape(table), len(table.log)
                yield table
                if lock.wrote and self.storage.multi_process:  # nobody else to tell on SQLite
                    lock.news = self.replicas.news(table, shape, seq)
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

    # --------------------------------------------------------------- moves
    def intent_action(self, table: Table, intent: Any, seat: int | None = None) -> int | str:
        """The engine action of a page intent (or ``"next"``); WebError if malformed. The
        mover ``seat``'s dice still in the cup: its Roll is the first roll (`FIRST_ROLL`),
        anything else waits on it (another seat's move is not its turn: refused after)."""
        if not isinstance(intent, dict):
            raise WebError("action must be an object like {'type': 'roll', 'hold': [0, 2]}")
        kind = intent.get("type")
        game = table.game
        if kind == "next":
            return "next"
        cup = table.in_cup and game.current == seat
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
            if cup:  # a person's first roll: all five, the dice dealt for it
                if hold:
                    raise WebError(
                        "the dice are still in the cup: roll all five first", 409, "roll_first"
                    )
                return FIRST_ROLL
            if game.rolls_left == 0:
                raise WebError("no rolls left this turn: score a box", 409, "no_rolls")
            return hold_action(hold)
        if kind == "score":
            box = intent.get("box")
            if not isinstance(box, str) or box not in BOX_NAMES:
                raise WebError(f"unknown box {str(box)[:30]!r}; boxes: {', '.join(BOX_NAMES)}")
            action = BOX_ACTION_OFFSET + BOX_NAMES.index(box)
            if cup:
                raise WebError("roll the dice first: nothing is down to score", 409, "roll_first")
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
        action = self.intent_action(table, intent, seat)
        self.seating.take_back(table, [seat])
        if action == "next":
            if not table.game.over:
                raise WebError("the game is still on: finish it first", 409, "still_on")
            table.votes.add(table.seats[seat].voter())
            if not table.online or table.all_confirmed():
                self.next_game(table)
            self.timer.arm(table, force=True)
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
        if grader is not None and action != FIRST_ROLL:  # warming up: a move plays ungraded
            decision = grader.grade(game, seat, action)
            regret = decision.regret
        table.apply(seat, action, regret, decision)  # on an exception `locked` drops the copy
        self.cpu_moves(table)
        self.commit(table, first)
        self.timer.arm(table)
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
        self.storage.tables.start_game(table.code, idx, match_no, first)
        self.run_cpus(table)

    def run_cpus(self, table: Table) -> None:
        """Play the CPU seats until a human must move, and commit."""
        first = len(table.log)
        self.cpu_moves(table)
        if len(table.log) > first:
            self.commit(table, first)

    def cpu_moves(self, table: Table, timed_out: int | None = None) -> None:
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
            auto = not seat.is_cpu  # a human's seat, played for them: said in the result

            def play(action: int, s: int = seat.seat, auto: bool = auto) -> None:
                table.apply(s, action, auto=auto)

            cpu_move(game, seat.seat, policy, seat.name, play)

    # --------------------------------------------------------------- people
    def open_tables(self, player_id: int) -> list[dict[str, Any]]:
        """The player's unfinished tables, for the lobby's "Your open tables"."""
        return self.storage.players.tables_of(player_id)

    def commit(self, table: Table, first: int) -> None:
        results = []
        game = table.game
        if game.over:
            totals = game.totals()
            table.finished.append(totals)
            top = top_seats(totals)
            cpus = sorted({s.kind for s in table.seats if s.is_cpu})
            helped = {table.log[seq][0] for seq in table.auto if seq < len(table.log)}
            for s in table.seats:
                if s.player_id is None:
                    continue
                card = game.players[s.seat]
                outcome = "loss" if s.seat not in top else ("win" if len(top) == 1 else "draw")
                results.append(
                    {
                        **rolled_by(game, s.seat),
                        "player_id": s.player_id,
                        "seat": s.seat,
                        "score": card.total,
                        "outcome": outcome,
                        "yahtzees": card.yahtzees,
                        "upper_bonus": int(card.upper_bonus > 0),
                        "opponents": "+".join(cpus) if cpus else "humans",
                        "online": table.online,
                        # the coach, or the computer playing the seat (achievements: no)
                        "assisted": int(bool(table.coach) or s.seat in helped),
                    }
                )
        touched = self.storage.tables.append_actions(
            table.code, table.idx, first, table.log[first:], results, over=game.over,
            auto={seq for seq in table.auto if seq >= first}, touched=table.touched,
        )  # fmt: skip
        if touched is not None:
            table.touched = touched
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
        if table.in_cup:
            raise WebError("roll the dice first: the hint is for the dice down", 409, "roll_first")
        options = self.coach(table.rules).hint(game, seat)
        return {"seat": seat, "dice": list(game.dice), "options": [o.to_dict() for o in options]}

    def state(self, table: Table, since: int = 0) -> dict[str, Any]:
        out = table.state(since, self.review if table.coach else None)
        out["rev"] = table.rev  # the database's revision (servers sharing it compare these)
        if table.deadline is not None:
            out["time_left"] = round(max(0.0, table.deadline - self.clock()), 1)
        if table.bank_add:  # each seat's time bank now (the mover's runs: its time left)
            banks = TurnClock.banks_left(table)
            key = table.decision()
            if key is not None and key[1] != "over" and "time_left" in out:
                banks[key[2]] = out["time_left"]
            out["banks"] = banks
        return out


__all__ = ["Tables"]
