"""Friends and invitations behind the door (issue 62): `FriendsDesk`, the intents of
following, the lobby's view of the people around, invitations and friends-only tables; the
server object holds one (``service.friendship``) and `routes` reaches each in one line.

    GET  /api/friends                     how many are online and wait in quick match; for
                                          an account: whom it follows (friends: online, at
                                          which open table) and its invitations
    POST /api/friends/follow   {name}     follow an account by its user name
                               {code, seat}   ... or the account at a seat of your table
    POST /api/friends/unfollow {name}
    POST /api/friends/invite   {code, name}   invite a friend to a table where you sit
    POST /api/friends/accept   {code}     accept an invitation (then join the table)
    POST /api/friends/decline  {code}
    GET  /api/tables/CODE/friends-only    whether the table seats friends only
    POST /api/tables/CODE/friends-only {on}   (the host, an account, before the start)

Following and inviting need an account's session; each spends the account's own bucket
(``Limits.follows_per_minute``, ``invites_per_minute``). The checks are `people.friends`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.door.asks import account_of, flag, pid, who
from yahtzee_env.web.door.place import check_host
from yahtzee_env.web.errors import WebError, clean_code
from yahtzee_env.web.limits import RateLimiter
from yahtzee_env.web.people.friends import Friends
from yahtzee_env.web.storage import Storage
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.locks import TableLocks


class FriendsDesk:
    """The intents of friends and invitations. ``follows`` and ``invites``: the accounts'
    buckets; ``refuse_past`` and ``spend``: the server object's (`Service`); ``invited``: told
    of each invitation (its e-mail)."""

    def __init__(
        self,
        friends: Friends,
        tables: Tables,
        storage: Storage,
        locks: TableLocks,
        follows: RateLimiter,
        invites: RateLimiter,
        refuse_past: Callable[..., None],
        spend: Callable[[Any], None],
        invited: Callable[[dict[str, Any], int], None] | None = None,
    ) -> None:
        self.friends, self.tables, self.storage, self.locks = friends, tables, storage, locks
        self.follows, self.invites = follows, invites
        self.refuse_past, self.spend = refuse_past, spend
        self.invited = invited  # the invitation's mail (`postman.MailDesk.invited`)

    async def overview(self, session) -> dict[str, Any]:
        """The people around, as the asker may see them (asking marks the asker online)."""
        self.spend(who({}, session))
        return await run_in_threadpool(self.around, pid(session))

    def around(self, player_id: int | None) -> dict[str, Any]:
        account = player_id is not None and (
            self.storage.accounts.account(player_id=player_id) is not None
        )
        return self.friends.overview(player_id, account, self.storage.clock())

    def follow_budget(self, player: int) -> None:
        message = "too many follows: wait a minute"
        self.refuse_past(self.follows, ("follow", player), message, "follow_budget")

    async def follow(self, body: dict[str, Any], session) -> dict[str, Any]:
        player = account_of(session)
        self.follow_budget(player)
        return await run_in_threadpool(self.friends.follow, player, body)

    async def unfollow(self, body: dict[str, Any], session) -> dict[str, Any]:
        player = account_of(session)
        self.follow_budget(player)
        return await run_in_threadpool(self.friends.unfollow, player, body)

    async def invite(self, body: dict[str, Any], session) -> dict[str, Any]:
        player = account_of(session)
        message = "too many invitations: wait a minute"
        self.refuse_past(self.invites, ("invite", player), message, "invite_budget")
        reply = await run_in_threadpool(self.friends.invite, player, body)
        if self.invited is not None:
            self.invited(reply, player)
        return reply

    async def answer(self, body: dict[str, Any], session, accept: bool) -> dict[str, Any]:
        player = account_of(session)
        self.spend(who(body, session))
        return await run_in_threadpool(self.friends.answer, player, body, accept)

    async def friends_only(self, code: Any, session) -> dict[str, Any]:
        code = clean_code(code)
        table = await run_in_threadpool(self.storage.friends.table_of, code)
        if table is None:
            raise WebError(f"no table has the code {code!r}", 404, "unknown_table")
        return {"code": code, "friends_only": bool(table["friends_only"])}

    async def set_friends_only(self, code: Any, body: dict[str, Any], session) -> dict[str, Any]:
        """(The host, an account, before the start) seat friends and the invited only; such
        a table is not listed among the open tables."""
        account_of(session)
        self.spend(who(body, session))
        on = flag(body)
        work = functools.partial(self.restricted, body, session, on)
        return await self.locks.run(code, work)

    def restricted(self, body: dict[str, Any], session, on: bool, code: str) -> dict[str, Any]:
        table = self.tables.load(code)
        check_host(table, body, session)
        if table.started or not table.online:
            raise WebError(
                "only an online table that has not started can change who may join",
                409,
                "not_restrictable",
            )
        self.storage.friends.set_friends_only(code, on)
        if on:
            self.storage.tables.set_listed(code, False)
        return {"code": code, "friends_only": on}


__all__ = ["FriendsDesk"]
