"""A player's records behind the door: `Records`, the intents of my statistics, the games
played offline (issue 50), the lobby's Your open tables and the profiles (issue 62); the
server object holds one (``service.records``) and `routes` reaches each in one line.

    POST /api/stats         {player}      my statistics
    POST /api/offline-games {games}       finished offline games: replayed, kept, never rated
    GET  /api/me/tables                   the session's open tables
    GET  /api/profiles/NAME               an account's profile, as the asker may see it
    POST /api/account/profile {visibility}  (an account) who sees its profile

and the server's background step that grades the games just ended (`grade`), which the
achievement of a clean game reads.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.door.asks import account_of, pid, who
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.limits import RateLimiter
from yahtzee_env.web.people.profiles import Profiles
from yahtzee_env.web.people.ratings import Ratings
from yahtzee_env.web.people.stats import player_statistics
from yahtzee_env.web.storage import Storage
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.locks import TableLocks
from yahtzee_env.web.tables.table import cpu_levels


class Records:
    """A player's records. ``spend`` is the per-token budget (`Service.spend`),
    ``page_games`` the per-player bucket of games played in the page, ``profile_budget``
    spends a profile read of the asker's budget (`Service.spend_profile_view`)."""

    def __init__(
        self,
        tables: Tables,
        storage: Storage,
        ratings: Ratings,
        locks: TableLocks,
        spend: Callable[[Any], None],
        page_games: RateLimiter,
        profile_budget: Callable[[Any], None],
    ) -> None:
        self.tables, self.storage, self.ratings = tables, storage, ratings
        self.locks, self.spend, self.page_games = locks, spend, page_games
        self.profiles, self.profile_budget = Profiles(storage, ratings), profile_budget

    async def statistics(self, body: dict[str, Any], session) -> dict[str, Any]:
        """My statistics: the session's player's (or the body's ``player`` token's)."""
        self.spend(who(body, session, "player"))

        def work():
            player = session if session is not None else self.tables.player(body.get("player"))
            results = self.storage.players.results_of(player["id"])
            return {"name": player["name"], **player_statistics(results, cpu_levels())}

        return await run_in_threadpool(work)

    async def offline_games(self, body: dict[str, Any], session) -> dict[str, Any]:
        """Finished games played in the page (issue 50; offline, or online by the player's
        choice): each replayed by the engine (`offline_games.replay`), kept once in the
        session's player's results, marked as played, never rated. Answers the ids stored
        and those refused (with why); a game over the player's daily cap is in neither, and
        not replayed (the page sends it again later). Each game sent spends a token of the
        player's bucket of games (`Limits.page_games_per_minute`; 429 when it is empty)."""
        from yahtzee_env.policies.web_levels import offline_levels
        from yahtzee_env.web.tables.offline_games import (
            MAX_GAMES_PER_REQUEST,
            MAX_OFFLINE_GAMES_PER_DAY,
            replay,
        )

        if session is None:
            raise WebError("offline games need a session: open the page first", 403, "no_session")
        self.spend(who(body, session, "player"))
        games = body.get("games")
        if not isinstance(games, list) or not 1 <= len(games) <= MAX_GAMES_PER_REQUEST:
            raise WebError(f"games must be a list of 1..{MAX_GAMES_PER_REQUEST} games", 400)
        key = ("player", session["id"])
        if not self.page_games.allow(key, len(games)):
            raise WebError(
                "too many games sent for this player: wait a little",
                429,
                "page_games_budget",
                retry_after=max(1, math.ceil(self.page_games.retry_after(key, len(games)))),
            )

        def work():
            levels = offline_levels()
            since = self.storage.clock() - 86_400
            room = MAX_OFFLINE_GAMES_PER_DAY - self.storage.players.offline_results_since(
                session["id"], since
            )
            rows, refused = [], []
            for record in games:
                if len(rows) >= room:
                    break  # over the daily cap: not replayed, not answered (sent again later)
                try:
                    rows.append(replay(record, levels))
                except WebError as err:
                    game_id = record.get("id") if isinstance(record, dict) else None
                    refused.append({"id": str(game_id)[:64], "error": str(err)})
            self.storage.players.add_offline_results(session["id"], rows)
            return {"stored": [r["id"] for r in rows], "refused": refused}

        return await run_in_threadpool(work)

    async def my_tables(self, session) -> dict[str, Any]:
        """The session's unfinished tables, each tagged ``rated`` where its game changes
        the player's rating (the lobby's Your open tables)."""
        if session is None:
            return {"tables": []}
        player = session["id"]
        tables = await run_in_threadpool(self.tables.open_tables, player)

        rates = functools.partial(self.rates, player)
        for entry in tables:  # "rated": the lobby tags the games that change the rating
            try:
                entry["rated"] = entry["started"] and await self.locks.run(entry["code"], rates)
            except WebError:  # gone meanwhile: the page says it is unavailable
                entry["rated"] = False
        return {"tables": tables}

    async def profile(self, name: str, session, conn) -> dict[str, Any]:
        """The profile of account ``name`` as the session's player may see it (404
        ``no_profile`` for a hidden one as for no account); each read spends the asker's
        budget (``conn``: the request, `Service.asker`)."""
        self.profile_budget(conn)
        read = functools.partial(self.profiles.profile, name, pid(session), cpu_levels())
        return await run_in_threadpool(read)

    async def profile_visibility(self, body: dict[str, Any], session) -> dict[str, Any]:
        """Who sees the session's account's profile (``visibility``: `VISIBILITIES`)."""
        player = account_of(session)
        self.spend(who(body, session))
        change = functools.partial(self.profiles.set_visibility, player, body.get("visibility"))
        return await run_in_threadpool(change)

    def rates(self, player_id: int, code: str) -> bool:
        """Under the table's lock: whether its game changes the player's rating."""
        return self.ratings.rates(self.tables.load(code), player_id)

    async def grade(self, budget_s: float | None = None) -> int:
        """The server's background step: the unaided games of accounts just ended, graded
        once by the solver's review in a worker thread (`reviews.Reviews.grade_pending`),
        no game begun past ``budget_s`` of its CPU time."""
        return await run_in_threadpool(self.tables.reviews.grade_pending, budget_s)


__all__ = ["Records"]
