"""Spectators: a read-only link to a table, which its host may turn off (issue 32).

The host turns the link on (`Spectators.set_link`): the table gets a random watch id (the
``watch`` column, migration 7), and ``/w/ID`` shows the table live to anyone with the link.
The watch id is not the table's code: a spectator never learns the code (which would let
them take a free seat, or keep watching through ``/t/CODE`` after the link is off). What a
spectator gets (`redact`) is the table's state with the watch id in place of the code and
without the game ids of its reviews.

A spectator's socket (``/ws/watch/ID``, `watch.SpectatorSocket`) takes an anonymous slot
(`limits.SocketSlots`: per address, per table, in all) and is kept here, not in the table's
`hub.Hub`: each state the table's sockets get (`fanout.Fanout.push`) reaches the spectators
redacted, encoded once per table. A spectator's socket answers ``ping`` and ``state`` and
refuses every intent (403 ``spectator``): spectators can neither act nor chat. The players
see how many watch (``spectators`` in each state, and a ``{"type": "spectators", "count"}``
message when it changes); the count is of this server process's spectators.

Turning the link off closes this process's spectator sockets of the table at once (close
code 4410); the other processes' are closed by their `check` task, which re-reads the watch
ids of the tables they have spectators for every `CHECK_EVERY_S` seconds (one query).
"""

from __future__ import annotations

import contextlib
import json
import secrets
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.door.hub import CLOSE_GONE, Client, Hub
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.storage import Storage

CHECK_EVERY_S = 2.0
WATCH_ID_BYTES = 12


def clean_watch_id(value: Any) -> str:
    if not isinstance(value, str) or not 8 <= len(value) <= 32 or not value.isascii():
        raise WebError("no table has that watch link", 404, "unknown_watch")
    if not all(c.isalnum() or c in "-_" for c in value):
        raise WebError("no table has that watch link", 404, "unknown_watch")
    return value


def redact(state: dict[str, Any], watch_id: str) -> dict[str, Any]:
    """A table's state as a spectator sees it: no code, no review ids, no seats of theirs."""
    out = {k: v for k, v in state.items() if k not in ("code", "mine", "tokens")}
    out["code"], out["watching"] = watch_id, True
    if isinstance(out.get("result"), dict):
        out["result"] = {k: v for k, v in out["result"].items() if k != "game_id"}
    return out


class Spectators:
    """The spectators of one server process: their sockets per table, the links' ids."""

    def __init__(self, storage: Storage, hub: Hub) -> None:
        self.storage, self.hub = storage, hub
        self.watchers: dict[str, list[Client]] = {}  # code -> spectator sockets
        self.ids: dict[str, str] = {}  # code -> its watch id, for the tables watched here

    def count(self, code: str) -> int:
        return sum(c.closing is None for c in self.watchers.get(code, ()))

    # ----------------------------------------------------------------- the link
    def code_of(self, watch_id: Any) -> str:
        """The table of a watch link (404 ``unknown_watch`` if it is off or never was)."""
        code = self.storage.tables.by_watch(clean_watch_id(watch_id))
        if code is None:
            raise WebError(
                "no table has that watch link (or its host turned it off)", 404, "unknown_watch"
            )
        return code

    def link_of(self, code: str) -> str | None:
        return self.storage.tables.watch_of(code)

    def set_link(self, code: str, on: bool) -> str | None:
        """Turn table ``code``'s watch link on (a new id, unless it has one) or off;
        the id (None: off). Under the table's lock, by its host (`Service.watch_link`)."""
        watch = self.link_of(code)
        if on and watch is None:
            watch = secrets.token_urlsafe(WATCH_ID_BYTES)
        elif not on:
            watch = None
        self.storage.tables.set_watch(code, watch)
        return watch

    def closed(self, code: str) -> None:
        """The link of ``code`` is off: its spectators here go."""
        self.ids.pop(code, None)
        for client in list(self.watchers.get(code, ())):
            client.close(CLOSE_GONE, "the host turned the watch link off")

    # ----------------------------------------------------------------- fan-out
    def push(self, state: dict[str, Any]) -> None:
        """A state the table's sockets get: to its spectators, redacted (encoded once)."""
        code = state.get("code")
        clients = self.watchers.get(code)
        if not clients or code not in self.ids:
            return
        text = json.dumps({"type": "state", "state": redact(state, self.ids[code])})
        for client in clients:
            client.push(text)

    def changed(self, code: str) -> None:
        """Tell the table's players how many watch now."""
        message = {"type": "spectators", "count": self.count(code)}
        self.hub.broadcast(code, message)

    def add(self, client: Client, watch_id: str) -> None:
        self.watchers.setdefault(client.code, []).append(client)
        self.ids[client.code] = watch_id
        self.changed(client.code)

    def remove(self, client: Client) -> None:
        clients = self.watchers.get(client.code)
        if clients and client in clients:
            clients.remove(client)
            if not clients:
                del self.watchers[client.code]
                self.ids.pop(client.code, None)
            self.changed(client.code)

    async def check(self) -> None:
        """Close the spectators of tables whose link is off or changed (another process's
        host turned it off), every `CHECK_EVERY_S` seconds while there are some."""
        while True:
            await anyio.sleep(CHECK_EVERY_S)
            if not self.ids:
                continue
            codes = list(self.ids)
            with contextlib.suppress(Exception):
                now = await run_in_threadpool(self.storage.tables.watches, codes)
                for code in codes:
                    if code in self.ids and now.get(code) != self.ids[code]:
                        self.closed(code)


__all__ = ["CHECK_EVERY_S", "Spectators", "clean_watch_id", "redact"]
