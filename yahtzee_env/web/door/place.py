"""A place to play behind the door (issue 32): `Place`, the intents of quick match, open
tables, ratings and spectator links; the server object holds one (``service.place``) and
`routes` reaches each in one line.

    POST /api/quick         {seats, rules, fill, wait, name}   queue for a quick match
    GET  /api/quick                       where the session stands: idle, waiting, matched
    POST /api/quick/cancel                leave the queue (nothing of the request is kept)
    GET  /api/open-tables                 the tables listed as open, with their free seats
    POST /api/tables/CODE/list   {on}     (the host, before the start) list the table or not
    GET  /api/leaderboard                 the top ratings, your own place, the CPU levels'
    GET  /api/tables/CODE/rated           whether the game rates you, and what leaving costs
    POST /api/tables/CODE/watch  {on}     (the host) the read-only link on or off: {watch}
    GET  /api/tables/CODE/watch          (the host) the link's id: {watch}
    GET  /api/watch/ID                    the table of watch link ID, as spectators see it
    WS   /ws/watch/ID                     its live states (`spectators`)

A player is the session's (the page's cookie) or, for an API client, the body's player token;
each request spends the asker's token bucket. The browser a request comes from is the hashed
``yz_device`` cookie (`accounts.DEVICE_COOKIE`), recorded with the seats it takes so that
seats of one browser never rate each other (`ratings`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.door.asks import flag, pid, who
from yahtzee_env.web.door.fanout import Fanout
from yahtzee_env.web.door.spectators import Spectators, redact
from yahtzee_env.web.errors import WebError, clean_code
from yahtzee_env.web.people.matchmaking import Matchmaker
from yahtzee_env.web.people.ratings import Ratings
from yahtzee_env.web.storage import Storage
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.locks import TableLocks

OPEN_TABLES_SHOWN = 20
LISTED_PER_HOST = 2  # unstarted tables one host may list at once


def open_tables(storage: Storage) -> list[dict[str, Any]]:
    """The listed online tables that have not started and have a free seat, newest first."""
    rows = storage.tables.listed(OPEN_TABLES_SHOWN)
    out = []
    for r in rows:
        mine = r["seats"]
        free = sum(s["kind"] == "friend" for s in mine)
        if not free or not mine:
            continue
        host = mine[0]["name"]
        cpus = [s["kind"] for s in mine if s["kind"] not in ("human", "friend")]
        out.append(
            {
                "code": r["code"],
                "rules": r["rules"],
                "host": host,
                "seats": len(mine),
                "free": free,
                "cpus": cpus,
                "turn_timer": int(r["turn_timer"] or 0),
                "match": bool(r["match"]),
            }
        )
    return out


def check_host(table, body: dict[str, Any], session) -> None:
    """The asker is the table's host (seat 0: its session's, or its seat token)."""
    player = session["id"] if session is not None else None
    token = body.get("token")
    seat = 0 if token is None else body.get("seat", 0)
    table.seat_of_token(seat, token, player)
    if seat != 0:
        raise WebError("only the host (seat 1) can do that", 403, "not_host")


class Place:
    """The intents of a place to play. ``spend`` (the per-token budget), ``check_lookups``
    and ``spend_lookup`` (a browser's budget of guessed codes and links) and
    ``table_state`` (a table's state, read on the loop where it can be) are the server
    object's (`Service`)."""

    def __init__(
        self,
        tables: Tables,
        storage: Storage,
        matchmaker: Matchmaker,
        ratings: Ratings,
        spectators: Spectators,
        locks: TableLocks,
        fanout: Fanout,
        spend: Callable[[Any], None],
        check_lookups: Callable[[Any], None],
        spend_lookup: Callable[[Any], None],
        table_state: Callable[..., Any],
    ) -> None:
        self.tables, self.storage, self.matchmaker = tables, storage, matchmaker
        self.ratings, self.spectators, self.locks, self.fanout = ratings, spectators, locks, fanout
        self.spend, self.check_lookups, self.spend_lookup = spend, check_lookups, spend_lookup
        self.table_state = table_state

    def player_of(self, body: dict[str, Any], session) -> dict[str, Any]:
        player = self.tables.who(body, session)
        if player is None:
            raise WebError("a player is needed: choose a name first", 403, "player_token")
        return player

    # ----------------------------------------------------------------- quick match
    async def quick(
        self, body: dict[str, Any], session, address: str, device: str | None
    ) -> dict[str, Any]:
        """Queue for a quick match (``device``: the browser's hashed id)."""
        self.spend(who(body, session, "player"))
        return await run_in_threadpool(self.queued, body, session, address, device)

    def queued(self, body: dict[str, Any], session, address: str, device: str | None):
        return self.matchmaker.request(body, self.player_of(body, session), address, device)

    async def quick_status(self, token: str | None, session) -> dict[str, Any]:
        """Where the player (the session's, else the query's token) stands: idle, waiting,
        matched."""
        body = {"player": token} if token else {}
        if session is None and not token:  # a first visit: no player yet, so nothing waits
            return {"state": "idle"}
        self.spend(who(body, session, "player"))
        return await run_in_threadpool(self.standing, body, session)

    def standing(self, body: dict[str, Any], session) -> dict[str, Any]:
        return self.matchmaker.status(self.player_of(body, session))

    async def quick_cancel(self, body: dict[str, Any], session) -> dict[str, Any]:
        """Leave the queue (nothing of the request is kept)."""
        self.spend(who(body, session, "player"))
        return await run_in_threadpool(self.cancelled, body, session)

    def cancelled(self, body: dict[str, Any], session) -> dict[str, Any]:
        return self.matchmaker.cancel(self.player_of(body, session))

    # ----------------------------------------------------------------- open tables
    async def open_tables(self) -> dict[str, Any]:
        return {"tables": await run_in_threadpool(open_tables, self.storage)}

    async def list_table(self, code: Any, body: dict[str, Any], session) -> dict[str, Any]:
        """(The host, before the start) list the table as open, or not."""
        self.spend(who(body, session))
        on = flag(body)
        return await self.locks.run(code, functools.partial(self.listed, body, session, on))

    def listed(self, body: dict[str, Any], session, on: bool, code: str) -> dict[str, Any]:
        table = self.tables.load(code)
        check_host(table, body, session)
        if on and (table.started or not table.online):
            raise WebError(
                "only an online table that has not started can be listed", 409, "not_listable"
            )
        if on and not any(s.kind == "friend" for s in table.seats):
            raise WebError(  # it would never show in the list: say so instead
                "an open table needs a free seat: make one seat 'a friend'", 409, "no_free_seat"
            )
        if on and (self.storage.friends.table_of(code) or {}).get("friends_only"):
            raise WebError(  # its seats are for friends: a stranger could not take one
                "a table open to friends only is not listed", 409, "friends_only_listed"
            )
        if on and self.storage.tables.listed_by_host(code) >= LISTED_PER_HOST:
            raise WebError(
                f"you already list {LISTED_PER_HOST} open tables", 429, "too_many_listed"
            )
        self.storage.tables.set_listed(code, on)
        return {"code": code, "listed": on}

    # ----------------------------------------------------------------- ratings
    async def leaderboard(self, session) -> dict[str, Any]:
        return await run_in_threadpool(self.ratings.leaderboard, pid(session))

    async def rated(self, code: Any, session) -> dict[str, Any]:
        """Whether the table's current game rates the session's player, and what leaving it
        now would cost (`ratings.Ratings.leave_cost`): the page asks before it leaves."""
        self.spend(who({}, session))
        return await self.locks.run(clean_code(code), functools.partial(self.cost, pid(session)))

    def cost(self, player_id: int | None, code: str) -> dict[str, Any]:
        return self.ratings.leave_cost(self.tables.load(code), player_id)

    # ----------------------------------------------------------------- spectators
    async def watch_link(self, code: Any, body: dict[str, Any], session) -> dict[str, Any]:
        """(The host) the read-only link on or off: ``{code, watch}`` (None: off)."""
        self.spend(who(body, session))
        on = flag(body)
        code = clean_code(code)
        watch = await self.locks.run(code, functools.partial(self.linked, body, session, on))
        if watch is None:
            self.spectators.closed(code)
        return {"code": code, "watch": watch}

    def linked(self, body: dict[str, Any], session, on: bool, code: str) -> str | None:
        check_host(self.tables.load(code), body, session)
        return self.spectators.set_link(code, on)

    async def watch_link_of(self, code: Any, session) -> dict[str, Any]:
        """The host's view of the link: ``{code, watch}`` (None: off)."""
        code = clean_code(code)
        return {
            "code": code,
            "watch": await self.locks.run(code, functools.partial(self.link, session)),
        }

    def link(self, session, code: str) -> str | None:
        check_host(self.tables.load(code), {}, session)
        return self.spectators.link_of(code)

    async def watched(self, conn, watch_id: str) -> dict[str, Any]:
        """The table of watch link ``watch_id``, as spectators see it; a guessed link
        spends the budget of guessed codes (``conn``: the request)."""
        self.check_lookups(conn)  # guessing links: the code's budget
        try:
            code = await run_in_threadpool(self.spectators.code_of, watch_id)
        except WebError as err:
            self.spend_lookup(conn)  # a guessed link spends budget
            raise err
        return redact(self.fanout.present(await self.table_state(code)), watch_id)


__all__ = ["Place", "open_tables"]
