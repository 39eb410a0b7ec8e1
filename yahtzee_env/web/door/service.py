"""The server object of one ``yahtzee serve`` process: what it holds, and one handler per
intent, whichever door (an HTTP route in `routes`, a socket message in `sockets`) the intent
comes in by.

A `Service` holds the tables (`tables.Tables`, the game loop), the storage, the accounts,
the open sockets (`hub.Hub`) and their fan-out (`fanout.Fanout`), a lock per table
(`locks.TableLocks`), the limits and their token buckets (each made by `limiter`), the
checks of user names' secrets (`logins.LoginGate`, counted in the database) and the log of
refusals. Its handlers check who asks and spend their budget, run the work on a table in a
worker thread under the table's lock (each a named method: `joined`, `changed`, ...), and
publish the new state to the table's sockets: the event loop only routes. Its housekeeping
(`sweep`, `tick`) runs in the background tasks of `run`. The intents of sessions and
sign-ins, of the table's people, of account care, of a place to play and of a player's own
records are in the helpers it holds (`sign_ins.SignIns`, `social.Social`,
`account_desk.AccountDesk`, `play.Place`,
`friendship.FriendsDesk`, `records.Records`, `postman.MailDesk`), each given in its
constructor only what it uses.

Each intent takes the request's JSON body (or the socket's message) as ``body`` and the
session's player row (the page's cookie; None for an API client, which sends tokens) as
``session``; a refused intent raises `WebError`, which each door answers its own way.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
from collections.abc import Callable
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool

from yahtzee_env.game.rules import PRESETS
from yahtzee_env.web.door.account_desk import AccountDesk
from yahtzee_env.web.door.asks import MAX_BODY, parse_json, pid, who
from yahtzee_env.web.door.fanout import Fanout
from yahtzee_env.web.door.friendship import FriendsDesk
from yahtzee_env.web.door.guard import RefusalLog, client_address
from yahtzee_env.web.door.hub import CLOSE_GONE, Client, Hub
from yahtzee_env.web.door.memory import Closes, GcPauses, Settler, give_back
from yahtzee_env.web.door.place import Place
from yahtzee_env.web.door.postman import MailDesk, Postman
from yahtzee_env.web.door.records import Records
from yahtzee_env.web.door.sign_ins import SignIns
from yahtzee_env.web.door.social import Social
from yahtzee_env.web.door.spectators import Spectators
from yahtzee_env.web.door.tourneys import TourneyDesk
from yahtzee_env.web.errors import WebError, clean_code
from yahtzee_env.web.limits import Limits, RateLimiter, SocketSlots
from yahtzee_env.web.people.account_care import AccountCare
from yahtzee_env.web.people.accounts import SESSION_COOKIE, SESSION_DAYS, Accounts, device_of
from yahtzee_env.web.people.chat import Chat
from yahtzee_env.web.people.friends import Friends
from yahtzee_env.web.people.logins import DEVICE_DAYS, HashGate, LoginGate
from yahtzee_env.web.people.mail import Mail
from yahtzee_env.web.people.matchmaking import Matchmaker, note_seats
from yahtzee_env.web.people.ratings import Ratings
from yahtzee_env.web.people.tournaments import Tournaments
from yahtzee_env.web.storage import Storage
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.batch import MoveBatcher
from yahtzee_env.web.tables.locks import TableLocks
from yahtzee_env.web.tables.renames import joined_as, rename_seat
from yahtzee_env.web.tables.secrecy import viewer_state

log = logging.getLogger("yahtzee.web")


class Service:
    """Everything one server process holds, and the intents' handlers.

    ``clock``: the wall clock of the turn deadlines (tests move it). ``origins``: the other
    origins whose pages may make moves; ``hosts``: the ``Host`` names answered (None: any).
    ``batch_moves``: group the changes that arrive together (`run_change`; off by default).
    ``inline_moves``: a change of a table in memory may run on the event loop where it is
    cheap and the database is free now (`locks.TableLocks.run`; on by default, SQLite only);
    with ``batch_moves`` too, the batches run there (`batch.MoveBatcher` on the loop).
    ``smtp``: the SMTP server's URL (`postman.Postman`; None: no e-mail); ``site_url``: the
    server's public address, the base of the mails' links."""

    def __init__(
        self,
        storage: Storage,
        limits: Limits | None = None,
        *,
        origins: frozenset[str] = frozenset(),
        hosts: frozenset[str] | None = None,
        clock: Callable[[], float] | None = None,
        batch_moves: bool = False,
        inline_moves: bool = True,
        smtp: str | None = None,
        site_url: str = "http://localhost:8000",
    ) -> None:
        self.storage = storage
        self.inline_moves = inline_moves
        self.limits = limits = limits or Limits()
        self.ratings = Ratings(storage)
        self.tables = Tables(
            storage,
            limits.tables_per_player,
            limits.tables_per_address,
            on_game_over=self.ratings.game_over,  # rated in the transaction of the last moves
            on_leave=self.ratings.left,
        )
        if clock is not None:  # the turn deadlines and the stored times (expiry) alike
            self.tables.clock = storage.clock = clock
        self.accounts = Accounts(storage)
        self.care = AccountCare(self.accounts)  # password, recovery codes, delete, export
        self.chat = Chat(self.tables, limits.max_keys)  # chat, reports, blocks, kicks
        self.friends = Friends(storage, limits)  # follows, invitations, friends-only tables
        self.hub = Hub()
        self.locks = TableLocks()
        self.spectators = Spectators(storage, self.hub)  # a table's read-only link
        self.fanout = Fanout(self.hub, self.tables, self.locks, self.spectators)
        self.batcher = None  # the moves committed together: on the loop, or in threads
        if batch_moves:
            on_loop = self.locks if inline_moves and not storage.multi_process else None
            self.batcher = MoveBatcher(storage, self.tables, locks=on_loop)
        self.slots = SocketSlots(limits)
        self.limiters: list[RateLimiter] = []  # every token bucket (`limiter`), for the sweep
        self.per_address = self.limiter(limits.rate, 1, limits.burst)
        self.per_address_page = self.limiter(limits.page_rate, 1, limits.page_burst)
        self.per_token = self.limiter(limits.token_rate, 1, limits.token_burst)
        self.page_games = self.limiter(limits.page_games_per_minute, 60, limits.page_game_burst)
        self.lookups = self.limiter(limits.lookups_per_minute, 60, limits.lookup_burst)
        self.network_lookups = self.limiter(
            limits.network_lookups_per_minute, 60, limits.network_lookup_burst
        )
        self.profile_views = self.limiter(limits.profiles_per_minute, 60, limits.profile_burst)
        self.network_profile_views = self.limiter(
            limits.network_profiles_per_minute, 60, limits.network_profile_burst
        )
        self.logins = self.limiter(limits.logins_per_minute, 60, limits.login_burst)
        self.new_players = self.limiter(limits.players_per_hour, 3600, limits.player_burst)
        self.follows = self.limiter(limits.follows_per_minute, 60, limits.follow_burst)
        self.invites = self.limiter(limits.invites_per_minute, 60, limits.invite_burst)
        self.email_sets = self.limiter(limits.email_sets_per_hour, 3600, limits.email_set_burst)
        self.postman = Postman(smtp, limits) if smtp else None  # e-mail (issue 62)
        sender = self.postman.sender if self.postman is not None else "yatzy@localhost"
        self.mail = Mail(storage, limits, site_url, sender)
        self.tourney_creates = self.limiter(
            limits.tournaments_per_hour, 3600, limits.tournament_burst
        )
        self.tourney_joins = self.limiter(
            limits.tournament_joins_per_minute, 60, limits.tournament_join_burst
        )
        self.login_gate = LoginGate(storage, limits)  # checks of a name's secrets (database)
        self.hash_gate = HashGate(limits.hash_workers, limits.hash_queue)  # argon2, bounded
        self.refusals = RefusalLog()
        self.closes = Closes()
        self.settler = Settler.of(limits)  # the collector's freezes
        self.gc_pauses = GcPauses()  # measured only under `yahtzee serve --bench-stats`
        self.origins, self.hosts = origins, hosts
        # a place to play (issue 32): the quick-match queue (ratings, spectators: above)
        self.matchmaker = Matchmaker(
            storage, self.tables, limits.queue_per_address, limits.queue_total
        )
        self.hold_helpers()

    def hold_helpers(self) -> None:
        """The helpers of the door's other intents, each given what it uses."""
        self.sign_ins = SignIns(  # guest sessions, sign in, sign up, sign out
            self.storage,
            self.accounts,
            self.care,
            self.hash_gate,
            self.login_gate,
            self.logins,
            self.refuse_past,
            self.new_player_budget,
            self.spend,
        )
        self.social = Social(  # the table's people: chat, reports, blocks, kicks, reviews
            self.chat, self.tables, self.storage, self.locks, self.fanout, self.hub, self.spend
        )
        self.desk = AccountDesk(  # account care: passwords, recovery codes, delete, export
            self.care,
            self.accounts,
            self.storage,
            self.tables,
            self.locks,
            self.fanout,
            self.hash_gate,
            self.logins,
            self.sign_ins.login_budget,
            self.sign_ins.checking,
            self.spend,
        )
        self.mail_desk = MailDesk(  # an account's e-mail, the mails of turns and invitations
            self.mail, self.postman, self.email_sets, self.refuse_past, self.limits.max_keys
        )
        self.fanout.on_state = self.mail_desk.turn_state
        self.friendship = FriendsDesk(  # friends and invitations (issue 62)
            self.friends,
            self.tables,
            self.storage,
            self.locks,
            self.follows,
            self.invites,
            self.refuse_past,
            self.spend,
            self.mail_desk.invited,
        )
        self.records = Records(  # my statistics, offline games, open tables, profiles
            self.tables,
            self.storage,
            self.ratings,
            self.locks,
            self.spend,
            self.page_games,
            self.spend_profile_view,
        )
        self.tourneys = TourneyDesk(  # knockout and Swiss tournaments (issue 62)
            Tournaments(self.storage, self.tables, self.limits),
            self.storage,
            self.tourney_creates,
            self.tourney_joins,
            self.refuse_past,
            self.spend,
        )
        self.place = Place(  # a place to play: quick match, open tables, ratings, watch links
            self.tables,
            self.storage,
            self.matchmaker,
            self.ratings,
            self.spectators,
            self.locks,
            self.fanout,
            self.spend,
            self.check_lookups,
            self.spend_lookup,
            self.table_state,
        )

    # ----------------------------------------------------------------- limits
    def limiter(self, tokens: float, seconds: float, burst: int) -> RateLimiter:
        """A token bucket per key, ``tokens`` every ``seconds`` up to ``burst`` (at most
        ``Limits.max_keys`` keys), swept with the others."""
        limiter = RateLimiter(tokens / seconds, burst, self.limits.max_keys)
        self.limiters.append(limiter)
        return limiter

    def refuse_past(self, limiter: RateLimiter, key: Any, message: str, code: str) -> None:
        """Spend a token of ``key``'s bucket, or 429 ``code`` with its Retry-After."""
        if not limiter.allow(key):
            wait = max(1, math.ceil(limiter.retry_after(key)))
            raise WebError(message, 429, code, retry_after=wait)

    def spend(self, token: Any) -> None:
        """One token of the bucket of a player or seat token (if the request has one)."""
        if isinstance(token, str) and token and not self.per_token.allow(("token", token)):
            raise WebError("too many requests for this player: slow down", 429)

    def asker(self, conn) -> tuple[str, str]:
        """Who asks, for the limits that one person reaches (unknown table codes): the
        browser's session cookie (hashed), else its device cookie, else its address."""
        token = conn.cookies.get(SESSION_COOKIE)
        if isinstance(token, str) and 16 <= len(token) <= 128:
            return ("session", hashlib.sha256(token.encode()).hexdigest())
        device = device_of(conn)
        if device is not None:
            return ("device", device)
        return ("addr", client_address(conn.scope))

    def check_lookups(self, conn) -> None:
        """Refuse a browser (`asker`) that has spent its budget of unknown table codes, or
        an address that has spent its backstop, ten times larger (a school's network)."""
        address = client_address(conn.scope)
        for limiter, key, code, whose in (
            (self.lookups, self.asker(conn), "lookup_budget", "this browser"),
            (self.network_lookups, ("addr", address), "network_lookup_budget", "your network"),
        ):
            if limiter.exhausted(key):
                raise WebError(
                    f"too many unknown table codes from {whose}: wait a minute",
                    429,
                    code,
                    retry_after=max(1, math.ceil(limiter.retry_after(key))),
                )

    def refused(self, conn, what: str, err: WebError) -> None:
        """A refused request or message: logged (rate-bounded), and an unknown table code
        spends a token of the browser's lookup budget and of its address's backstop."""
        address = client_address(conn.scope)
        if err.code == "unknown_table":
            self.spend_lookup(conn)
        self.refusals.refused(err.status, what, address, str(err))

    def spend_lookup(self, conn) -> None:
        """A guessed code or link: a token of the browser's lookup budget and its network's."""
        self.lookups.allow(self.asker(conn))
        self.network_lookups.allow(("addr", client_address(conn.scope)))

    def spend_profile_view(self, conn) -> None:
        """A profile read (issue 62): a token of the browser's budget (`asker`) and of its
        address's backstop, or 429 ``profile_budget``."""
        self.refuse_past(
            self.profile_views,
            self.asker(conn),
            "too many profiles read: wait a minute",
            "profile_budget",
        )
        self.refuse_past(
            self.network_profile_views,
            ("addr", client_address(conn.scope)),
            "too many profiles read from your network: wait a minute",
            "profile_budget",
        )

    def new_player_budget(self, address: str) -> None:
        """A new player (a profile, a guest session, an account without one) spends a token
        of the address's bucket: one address cannot grow the database without bound."""
        message = "too many new players from your network: try again later"
        self.refuse_past(self.new_players, ("players", address), message, "player_budget")

    # ----------------------------------------------------------------- reading
    async def session_of(self, conn) -> Any:
        """The player row of the request's (or socket's) session cookie, or None."""
        token = conn.cookies.get(SESSION_COOKIE)
        if not token:
            return None
        return await run_in_threadpool(self.accounts.session_player, token)

    async def table_state(self, code: Any, since: int = 0) -> dict[str, Any]:
        """The table's state: read on the event loop if the table is in memory (cheap, and
        no thread changes it while its lock is held), else loaded in a worker thread."""
        code, tables = clean_code(code), self.tables
        async with self.locks.hold(code):
            table = tables.loaded.get(code)
            if table is not None and not self.storage.multi_process:
                tables.keep(table)  # in use: not idle
                return tables.state(table, since)
            # shared database: `load` checks the copy's rev against it (one query)
            return await run_in_threadpool(lambda: tables.state(tables.load(code), since))

    def mine(self, code: str, session) -> list[int]:
        """The session's seats at table ``code`` (in memory)."""
        table = self.tables.loaded.get(code)
        return table.seats_of(pid(session)) if table is not None else []

    async def view(self, code: Any, since: int, session) -> dict[str, Any]:
        """The table's state as its page sees it: presence, and the session's seats."""
        state = self.fanout.present(await self.table_state(code, since))
        mine = self.mine(state["code"], session) if session is not None else []
        state = viewer_state(state, mine)  # a duplicate table's next dice stay secret
        if session is not None:
            state["mine"] = mine
        return state

    # ----------------------------------------------------------------- tables: the intents
    async def create_player(self, body: dict[str, Any], address: str) -> dict[str, Any]:
        self.new_player_budget(address)
        return await run_in_threadpool(self.tables.create_player, body.get("name"))

    async def create_table(
        self, body: dict[str, Any], session, address: str, device: str | None = None
    ) -> dict[str, Any]:
        """A new table; the browser ``device`` (its hashed id) is noted with its seats."""
        self.spend(who(body, session, "player"))
        reply = await run_in_threadpool(self.created, body, session, address)
        await note_seats(self.storage, reply["code"], reply["mine"], device)
        return reply

    def created(self, body: dict[str, Any], session, address: str) -> dict[str, Any]:
        """`create_table`'s work (a worker thread): the table, its tokens, seats and state."""
        table, tokens = self.tables.create(body, address, session)
        state = self.fanout.present(self.tables.state(table))
        seats = self.mine(table.code, session)
        state = viewer_state(state, seats or list(tokens))  # as its seats see it (`secrecy`)
        tokens = {str(k): v for k, v in tokens.items()}
        return {"code": table.code, "tokens": tokens, "mine": seats, "state": state}

    async def join(
        self, code: Any, body: dict[str, Any], session, device: str | None = None
    ) -> dict[str, Any]:
        """A seat at table ``code``; the browser ``device`` (its hashed id) is noted with it."""
        self.spend(who(body, session, "player"))
        work = functools.partial(self.joined, body=body, session=session)
        reply = await self.locks.run(code, work)
        self.fanout.publish(reply["state"])
        reply["state"] = viewer_state(reply["state"], [reply["seat"], *reply["mine"]])
        await note_seats(self.storage, reply["state"]["code"], [reply["seat"]], device)
        return reply

    def joined(self, code: str, body: dict[str, Any], session) -> dict[str, Any]:
        """`join`'s work, under the table's lock: the seat, its token and the state."""
        self.chat.check_join(code, pid(session))  # a blocked account does not join
        self.friends.check_join(code, pid(session))  # nor a stranger a friends-only table
        table, seat, token = self.tables.seating.join(code, body, session)
        reply = {"seat": seat, "state": self.tables.state(table), "mine": self.mine(code, session)}
        reply["joined_as"] = joined_as(body.get("name"), table.seats[seat].name)
        if token is not None:
            reply["token"] = token
        return reply

    async def hello(self, code: str, body: dict[str, Any], session) -> list[int]:
        """The seats a socket's ``hello`` proves: its token's seat, or (without a token)
        the socket's session's seats; WebError if it proves none. Seats the computer took
        while their player was away (a timeout, the host) come back."""
        self.spend(who(body, session))
        work = functools.partial(self.proven, body=body, session=session)
        seats, state = await self.locks.run(code, work)
        if state is not None:
            self.fanout.publish(state)
        return seats

    def proven(self, code: str, body: dict[str, Any], session) -> tuple[list[int], Any]:
        """`hello`'s work, under the table's lock: the seats proven, and the table's new
        state if some came back from the computer (else None)."""
        token = body.get("token")
        table = self.tables.load(code)
        if token is None and session is not None:
            seats = table.seats_of(session["id"])
            if not seats:
                raise WebError("you have no seat at this table", 403, "not_your_seat")
        else:
            seats = [table.seat_of_token(body.get("seat"), token)]
        back = self.tables.seating.reconnected(table, seats)
        return seats, self.tables.state(table) if back else None

    async def change(
        self,
        code: Any,
        body: dict[str, Any],
        session,
        work,
        skip: Client | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """A seated player's change of table ``code``: ``work(code, seat=, token=,
        player_id=, **extra)`` (a named method of the tables: ``extra`` are the intent's
        own fields) returns the table (or the table and the first new event); its new state
        is published to the table's sockets (but ``skip``, the socket that asked) and
        returned (as the asker's seats see it: `secrecy`)."""
        self.spend(who(body, session))
        asker = {"seat": body.get("seat"), "token": body.get("token"), "player_id": pid(session)}
        run = functools.partial(self.changed, work=work, fields={**asker, **extra})
        state, continued, seats = await self.run_change(code, run)
        return viewer_state(self.fanout.publish(state, skip, continued), seats)

    def changed(
        self, code: str, work, fields: dict[str, Any]
    ) -> tuple[dict[str, Any], bool, list[int]]:
        """`change`'s work, under the table's lock: ``work(code, **fields)``, the state from
        its first new event, whether the game went on (not its first event: a socket's
        frame may leave out what the game repeats, `fanout.STEADY_KEYS`), and the asker's
        seats (the token's, once the work proved it, and the session's: `secrecy`)."""
        done = work(code, **fields)
        table, first = done if isinstance(done, tuple) else (done, 0)
        seats = [fields["seat"]] if fields.get("token") is not None else []
        seats.extend(table.seats_of(fields.get("player_id")))
        # a game's last move goes out whole: the next game's seeds open with it (`seeds`)
        continued = first > 0 and table.game is not None and not table.game.over
        return self.tables.state(table, first), continued, seats

    async def run_change(self, code: Any, work: Callable[[str], Any]) -> Any:
        """``work(code)`` under the table's lock, in a worker thread; for a table in memory
        without the coach, on a database of one process: on the event loop where it is
        cheap (``inline_moves``), or with ``batch_moves`` batched with the other tables'
        changes (`batch.MoveBatcher`: one worker-thread call, one transaction)."""
        code = clean_code(code)
        table = self.tables.loaded.get(code)
        batcher = self.batcher
        if table is None or table.coach or self.storage.multi_process:
            return await self.locks.run(code, work)
        if batcher is not None and batcher.locks is not None and code in self.locks.slow:
            batcher = None  # a slow table's move: not on the loop, not in a batch
        if batcher is None:
            inline = self.storage.held_if_free if self.inline_moves else None
            return await self.locks.run(code, work, inline)
        async with self.locks.hold(code):
            return await batcher.run(code, work)

    async def start(self, code: Any, body: dict[str, Any], session, skip=None) -> dict[str, Any]:
        """The host starts the table (its seat defaults to 0)."""
        body = {**body, "seat": body.get("seat", 0)}
        return await self.change(code, body, session, self.tables.seating.start, skip)

    async def client_seed(
        self, code: Any, body: dict[str, Any], session, skip=None
    ) -> dict[str, Any]:
        """The asker's client seed for the dice (``client_seed``, issue 58), before the
        game's first roll (`seeds.ClientSeeds`)."""
        work, seed = self.tables.seeds.send, body.get("client_seed")
        return await self.change(code, body, session, work, skip, client_seed=seed)

    async def act(self, code: Any, body: dict[str, Any], session, skip=None) -> dict[str, Any]:
        """A move (``action``), made from the state ``(game, seq)``."""
        move = {"intent": body.get("action"), "seq": body.get("seq"), "game_idx": body.get("game")}
        return await self.change(code, body, session, self.tables.act, skip, **move)

    async def hint(self, code: Any, body: dict[str, Any], session) -> dict[str, Any]:
        """The coach's options for the asker's turn (changes nothing)."""
        self.spend(who(body, session))
        seat, token, player = body.get("seat"), body.get("token"), pid(session)
        return await self.locks.run(
            code, functools.partial(self.tables.hint, seat=seat, token=token, player_id=player)
        )

    async def leave(self, code: Any, body: dict[str, Any], session, skip=None) -> dict[str, Any]:
        """The asker leaves: the seat is free again (before the start) or the computer's."""
        return await self.change(code, body, session, self.tables.seating.leave, skip)

    async def back(self, code: Any, body: dict[str, Any], session, skip=None) -> dict[str, Any]:
        """The asker takes their seat back from the computer."""
        return await self.change(code, body, session, self.tables.seating.back, skip)

    async def rename(self, code: Any, body: dict[str, Any], session, skip=None) -> dict[str, Any]:
        """The asker plays as ``name`` at this table (a name nobody else there has)."""
        work = functools.partial(rename_seat, self.tables)
        return await self.change(code, body, session, work, skip, name=body.get("name"))

    async def hand(self, code: Any, body: dict[str, Any], session, skip=None) -> dict[str, Any]:
        """The host hands an absent seat (``target``) to the computer."""
        here = self.hub.connected(clean_code(code))  # read on the event loop
        hand_over, target = self.tables.seating.hand_over, body.get("target")
        return await self.change(code, body, session, hand_over, skip, target=target, present=here)

    async def remove(self, code: Any, body: dict[str, Any], session, skip=None) -> dict[str, Any]:
        """The host removes seat ``target`` before the start."""
        here = self.hub.connected(clean_code(code))  # read on the event loop
        hand_over, target = self.tables.seating.hand_over, body.get("target")
        return await self.change(
            code, body, session, hand_over, skip, target=target, present=here, remove=True
        )

    # ----------------------------------------------------------------- sessions, accounts
    async def profile(self, session) -> dict[str, Any]:
        """The session's profile: ``{player, account}`` (None and None without one)."""
        if session is None:
            return {"player": None, "account": None}
        account = await run_in_threadpool(self.accounts.account_name, session["id"])
        out = {"player": {"id": session["id"], "name": session["name"]}, "account": account}
        if account is not None:
            out["rating"] = await run_in_threadpool(self.ratings.of, session["id"])
        return out

    # ----------------------------------------------------------------- housekeeping
    async def sweep(self) -> list[str]:
        """Delete expired tables (closing their sockets), but those in use and those a
        running tournament still waits on, and what else has expired (sessions, devices,
        invitations, mails, tournaments). Idle tables leave memory in `settle`."""
        lim = self.limits
        awaited = await run_in_threadpool(self.storage.tournaments.awaited_tables)
        expired = await run_in_threadpool(
            functools.partial(
                self.tables.expire,
                lim.expire_unstarted_s,
                lim.expire_idle_s,
                set(self.locks.locks) | awaited,
                solo_s=lim.expire_solo_s,
                abandoned_s=lim.expire_abandoned_s,
            )
        )
        for code in expired:
            self.hub.close_table(code, CLOSE_GONE, "this table expired")
        await run_in_threadpool(self.storage.accounts.expire_sessions, SESSION_DAYS * 86_400)
        await run_in_threadpool(self.matchmaker.sweep)
        await run_in_threadpool(self.storage.accounts.expire_devices, DEVICE_DAYS * 86_400)
        await run_in_threadpool(self.login_gate.sweep)
        await run_in_threadpool(self.friends.sweep)
        await run_in_threadpool(self.mail.sweep)
        await run_in_threadpool(self.tourneys.tournaments.sweep)
        self.fanout.forget_idle()
        for limiter in self.limiters:
            limiter.forget_full()
        await run_in_threadpool(give_back, False)
        return expired

    async def tick(self) -> list[str]:
        """Play the turns (and votes) whose deadline has passed; return their tables."""
        tables = self.tables
        due = await run_in_threadpool(self.storage.tables.due, tables.clock())
        done = []
        for code in due:
            try:
                state = await self.locks.run(code, lambda c: tables.state(tables.timer.time_out(c)))
            except WebError:
                continue
            self.fanout.publish(state)
            done.append(code)
        return done

    async def socket_closed(self) -> None:
        """A socket closed: after every few hundred, the heap goes back to the system."""
        if self.closes.closed():
            await run_in_threadpool(give_back, False)

    async def warm_coach(self) -> None:
        """Prepare every preset's coach: the cached tables load (a worker thread), the
        others are solved in a child process (`coaches`), official first."""
        presets = ["official", *(name for name in PRESETS if name != "official")]
        await anyio.to_thread.run_sync(self.tables.coaches.prepare, presets, abandon_on_cancel=True)

    @contextlib.asynccontextmanager
    async def run(self, prewarm: bool = False):
        """The server's life (the app's lifespan): it hears the other processes' changes,
        plays the timed-out turns and sweeps in background tasks; at the end it stops them
        and closes the storage."""
        stop = self.fanout.listen(self.storage)
        try:
            async with anyio.create_task_group() as tg:
                if prewarm:
                    tg.start_soon(self.warm_coach)
                # sweeps (a failed one is logged, and the next one runs: an error here must
                # not end the server's life, the task group's end closing the storage)
                tg.start_soon(forever, self.sweep, self.limits.sweep_every_s, False, "sweep")
                # what the young collections left, out of the collector's walks (issue 60)
                every = self.limits.freeze_every_s
                tg.start_soon(forever, functools.partial(settle, self), every, False, "freeze")
                tg.start_soon(self.spectators.check)
                # the clock: at start-up first (deadlines that passed while it was down)
                tg.start_soon(forever, self.tick, self.limits.clock_every_s, True, None)
                # tournaments: starts, next rounds, winners (a poll of a bracket steps it too)
                every = self.limits.tournament_every_s
                tg.start_soon(forever, self.tourneys.step, every, True, "tournaments' step")
                # the games just ended: graded once, for the achievement of a clean game
                # (within a share of one core: a review costs tens of ms, issue 60)
                every = self.limits.grade_every_s
                grade = functools.partial(self.records.grade, self.limits.grade_share * every)
                tg.start_soon(forever, grade, every, True, "games' grading")
                yield self
                tg.cancel_scope.cancel()
        finally:
            self.tables.coaches.close()
            if self.postman is not None:
                await run_in_threadpool(self.postman.close)
            if stop is not None:
                await run_in_threadpool(stop)
            self.storage.close()


async def settle(service: Service) -> list[str]:
    """Every few seconds: idle tables leave memory (they reload if someone comes back), those
    whose game is over once they idled past `Limits.finished_evict_s` (about 35 games end a
    second at 1,000 players, and a table holds ~50 KB: waiting for the minute's sweep doubled
    the memory of the tables), then what the collector's young collections left is frozen
    (`memory.Settler`). Returns the tables evicted."""
    lim = service.limits
    evicted = service.tables.evict(
        lim.idle_evict_s, lim.tables_in_memory, service.locks.busy, lim.finished_evict_s
    )
    await run_in_threadpool(service.settler.settle)
    return evicted


async def forever(work, every_s: float, at_start: bool, what: str | None) -> None:
    """``await work()`` every ``every_s`` seconds (``at_start``: first at once) for as long as
    the server lives; a failure is logged (``what`` names it; None: passed over quietly)
    and the next one runs."""
    if not at_start:
        await anyio.sleep(every_s)
    while True:
        try:
            await work()
        except Exception:
            if what is not None:
                log.exception("the %s failed; the next one runs in %s s", what, every_s)
        await anyio.sleep(every_s)


__all__ = ["MAX_BODY", "Service", "forever", "parse_json", "pid", "settle", "who"]
