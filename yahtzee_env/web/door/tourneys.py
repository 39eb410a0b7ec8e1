"""Tournaments behind the door (issue 62): `TourneyDesk`, the intents of creating, joining
and watching a tournament (knockout or Swiss), and the server's background step that plays them
(`people.tournaments`); the server object holds one (``service.tourneys``) and `routes`
reaches each in one line.

    GET  /api/tournaments                 the open and running tournaments, newest first
    POST /api/tournaments {name, format, rules, places, best_of, fill, start_in}
                                          (an account) a new tournament: its bracket
    GET  /api/tournaments/CODE            its bracket and a Swiss one's standings (the
                                          page asks every few seconds)
    POST /api/tournaments/CODE/join {}    (an account) take a free place
    POST /api/tournaments/CODE/start {}   (its creator) start now: CPUs fill the places

Creating and joining need an account's session and spend its own bucket
(``Limits.tournaments_per_hour``, ``tournament_joins_per_minute``); an account may have
``Limits.tournaments_per_account`` unfinished tournaments. Nobody reports a result: the
server reads each match's own table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.door.asks import account_of, pid, who
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.limits import RateLimiter
from yahtzee_env.web.people.tournaments import Tournaments, parse_tournament
from yahtzee_env.web.storage import Storage


class TourneyDesk:
    """The intents of tournaments. ``creates`` and ``joins``: the accounts' buckets;
    ``refuse_past`` and ``spend``: the server object's (`Service`)."""

    def __init__(
        self,
        tournaments: Tournaments,
        storage: Storage,
        creates: RateLimiter,
        joins: RateLimiter,
        refuse_past: Callable[..., None],
        spend: Callable[[Any], None],
    ) -> None:
        self.tournaments, self.storage = tournaments, storage
        self.creates, self.joins = creates, joins
        self.refuse_past, self.spend = refuse_past, spend

    def account(self, session) -> dict[str, Any]:
        """The session's player, which must be an account's (403 ``no_account``)."""
        player = account_of(session)
        if self.storage.accounts.account(player_id=player) is None:
            raise WebError("sign in first: tournaments are for accounts", 403, "no_account")
        return {"id": player, "name": session["name"]}

    async def create(self, body: dict[str, Any], session) -> dict[str, Any]:
        player = await run_in_threadpool(self.account, session)
        parse_tournament(body)  # a refused choice spends nothing: the bucket is for creations
        message = "too many tournaments created: wait a while"
        self.refuse_past(self.creates, ("tourney", player["id"]), message, "tourney_budget")
        return await run_in_threadpool(self.tournaments.create, player, body)

    async def join(self, code: Any, session) -> dict[str, Any]:
        player = await run_in_threadpool(self.account, session)
        message = "too many joins: wait a minute"
        self.refuse_past(self.joins, ("join", player["id"]), message, "join_budget")
        return await run_in_threadpool(self.tournaments.join, code, player)

    async def start(self, code: Any, session) -> dict[str, Any]:
        player = await run_in_threadpool(self.account, session)
        message = "too many joins: wait a minute"
        self.refuse_past(self.joins, ("join", player["id"]), message, "join_budget")
        return await run_in_threadpool(self.tournaments.start_now, code, player)

    async def bracket(self, code: Any, session) -> dict[str, Any]:
        """The bracket, after the tournament's due steps (a poll moves it on too)."""
        self.spend(who({}, session))
        return await run_in_threadpool(self.stepped, code, pid(session))

    def stepped(self, code: Any, player_id: int | None) -> dict[str, Any]:
        view = self.tournaments.view(code, player_id)  # an unknown code: 404 first
        if view["state"] != "over":
            self.tournaments.advance(view["code"])
            view = self.tournaments.view(code, player_id)
        return view

    async def listing(self, session) -> dict[str, Any]:
        self.spend(who({}, session))
        return await run_in_threadpool(self.tournaments.listing)

    async def step(self) -> list[str]:
        """The server's background step: every tournament with something to do."""
        return await run_in_threadpool(self.tournaments.advance_due)


__all__ = ["TourneyDesk"]
