"""The table's people behind the door (issue 32): `Social`, the intents of its chat, reports,
blocks and kicks, the move log, the account's blocks and a finished game's review; the
server object holds one (``service.social``) and `routes` reaches each in one line.

    GET  /api/tables/CODE/chat?after=N               the table's messages after id N
    POST /api/tables/CODE/chat {seat, token, text | emote}
    POST /api/tables/CODE/report {seat, token, target}
    POST /api/tables/CODE/block {seat, token, target}   (an account) block that account
    POST /api/tables/CODE/kick {seat, token, target}    (the host) the computer takes the seat
    GET  /api/tables/CODE/moves                      the current game's moves, newest first
    POST /api/account/blocks {}                      the accounts the player blocked
    POST /api/account/unblock {player_id}
    POST /api/games/CODE-IDX                         the review and the game's chat

The work on a table runs under its lock (`locks`), in a worker thread; a change is
published to the table's sockets like any other (`fanout`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.door.asks import MAX_SINCE_DIGITS, account_of, pid, who
from yahtzee_env.web.door.fanout import Fanout
from yahtzee_env.web.door.hub import Hub
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.people.chat import Chat, review_chat
from yahtzee_env.web.storage import Storage
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.locks import TableLocks
from yahtzee_env.web.tables.movelog import move_log
from yahtzee_env.web.tables.secrecy import viewer_state


class Social:
    """The intents of a table's people and of the account's blocks. ``spend``: the per-token
    budget (`Service.spend`)."""

    def __init__(
        self,
        chat: Chat,
        tables: Tables,
        storage: Storage,
        locks: TableLocks,
        fanout: Fanout,
        hub: Hub,
        spend: Callable[[Any], None],
    ) -> None:
        self.chat, self.tables, self.storage = chat, tables, storage
        self.locks, self.fanout, self.hub, self.spend = locks, fanout, hub, spend

    async def seated(self, code: Any, body: dict[str, Any], session, work) -> Any:
        """``work(code, body, player_id)`` under the table's lock, for a seated asker."""
        self.spend(who(body, session))
        run = functools.partial(work, body=body, player_id=pid(session))
        return await self.locks.run(code, run)

    async def say(self, code: Any, body: dict[str, Any], session) -> dict[str, Any]:
        """A message (or an emote) at the table: the table's seated sockets hear it."""
        message = await self.seated(code, body, session, self.chat.say)
        hidden = message.pop("hidden")  # its author is blocked: to the author's seat only
        chat = {"type": "chat", "message": message}
        only = message["seat"] if hidden else None
        self.hub.broadcast(message["code"], chat, seated=True, seat=only)  # seated sockets
        return {"message": message}

    async def messages(self, code: Any, after: str, session) -> dict[str, Any]:
        """The table's messages after id ``after`` (the query's text)."""
        if not after.isdigit() or len(after) > MAX_SINCE_DIGITS + 3:
            raise WebError("after must be a message id (an integer)")
        self.spend(who({}, session))
        read = functools.partial(self.chat.messages, player_id=pid(session), after=int(after))
        return {"messages": await self.locks.run(code, read)}

    async def report(self, code: Any, body: dict[str, Any], session) -> dict[str, Any]:
        return await self.seated(code, body, session, self.chat.report)

    async def block(self, code: Any, body: dict[str, Any], session) -> dict[str, Any]:
        return await self.seated(code, body, session, self.chat.block)

    async def kick(self, code: Any, body: dict[str, Any], session) -> dict[str, Any]:
        """The host hands a player's seat to the computer; the new state goes out."""
        state = self.fanout.publish(await self.seated(code, body, session, self.kicked))
        table = self.tables.loaded.get(state["code"])
        return viewer_state(state, table.seats_of(pid(session)) if table is not None else [])

    def kicked(self, code: str, body: dict[str, Any], player_id: int | None) -> dict[str, Any]:
        return self.tables.state(self.chat.kick(code, body, player_id))

    async def moves(self, code: Any, session=None) -> dict[str, Any]:
        """The current game's moves, newest first (`movelog`), as the session's seats may
        see them (a duplicate game's: `secrecy`)."""
        return await self.locks.run(code, functools.partial(self.move_log, player_id=pid(session)))

    def move_log(self, code: str, player_id: int | None = None) -> dict[str, Any]:
        table = self.tables.load(code)
        return move_log(table, table.seats_of(player_id))

    async def blocks(self, session) -> dict[str, Any]:
        """The accounts the session's account blocked."""
        player = account_of(session)
        return {"blocked": await run_in_threadpool(self.storage.people.blocks_of, player)}

    async def unblock(self, body: dict[str, Any], session) -> dict[str, Any]:
        player = account_of(session)
        target = body.get("player_id")
        if isinstance(target, bool) or not isinstance(target, int):
            raise WebError("player_id must be an integer")
        await run_in_threadpool(self.storage.people.unblock, player, target)
        return {"unblocked": target}

    async def review(self, gid: Any, body: dict[str, Any], session) -> dict[str, Any]:
        """The review of a finished game and its chat: checked and read under the table's
        lock, then solved in a worker thread without it (`reviews.Reviews.review_of`
        touches no live table)."""
        self.spend(who(body, session, "player"))
        code = gid.rpartition("-")[0] if isinstance(gid, str) else ""
        if not code:
            raise WebError(f"no game has the id {str(gid)[:30]!r}", 404, "no_game")
        game = await self.locks.run(
            code, functools.partial(self.requested, gid, body, pid(session))
        )
        review = await run_in_threadpool(self.tables.reviews.review_of, game)
        read = functools.partial(review_chat, reader=pid(session))
        chat = await run_in_threadpool(read, self.storage, code, int(game["idx"]))
        return {**review, "chat": chat}

    def requested(self, gid: str, body: dict[str, Any], player_id: int | None, _code: str):
        """Under the table's lock: what the review of game ``gid`` needs, if the asker may
        open it (`reviews.Reviews.review_request`)."""
        return self.tables.reviews.review_request(gid, body, player_id)


__all__ = ["Social"]
