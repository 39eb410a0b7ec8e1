"""The fan-out of a table's state to its sockets in this process, its own changes and those
of other processes on one PostgreSQL database (issue 20).

`Fanout.publish` adds each seat's presence to a state and queues it on the table's sockets
(`hub.Hub.broadcast`: it never waits on a socket); a duplicate game's state goes to each
socket as its seats see it (`tables.secrecy`), to the spectators as none of them. A change
committed by another process reaches this one as a notification (`Storage.listen`, on the
listener's thread), and `Fanout.heard` brings this process's sockets of that table to the new state:

- a copy in memory one revision behind follows the change from the notification itself, on
  the event loop (`Tables.follow`: a few engine steps, no thread and no database read), when
  no work on the table is under way;
- any other case reads the database in a worker thread under the table's lock, one refresh
  per table at a time: what is heard while it runs joins the next one (a burst of moves
  costs one catch-up, not one each);
- after the listening connection comes back (``code`` empty: any table may have changed),
  every table with sockets here is re-read.

A socket reads the table's state, then joins the hub: a change heard in between would reach
none of its sockets here (the first of the table). What is heard for a table while one of
its sockets opens (`Fanout.joining`) is noted, and caught up once it has joined (`opened`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from yahtzee_env.web.door.hub import Client, Hub, encode
from yahtzee_env.web.door.spectators import Spectators
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.storage import Storage
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.locks import TableLocks
from yahtzee_env.web.tables.secrecy import Sealed

log = logging.getLogger("yahtzee.web")

# What a game's states repeat unchanged from its first to its last (issue 60: 206 of a move's
# 1,908 bytes). A socket's frame of a move within a game leaves them out (`Fanout.publish`'s
# ``continued``): every socket of the table has had a state of that game, in full, and the
# page keeps them from it (table.js, `STEADY`). HTTP replies and the spectators' states keep
# them.
STEADY_KEYS = frozenset(
    (
        "rules",
        "online",
        "match",
        "coach",
        "fill",
        "turn_timer",
        "time_bank",
        "first",
        "dice_commitment",
        "duplicate",
        "dice_version",
        "client_seeds",
        "client_seed_marks",
        "client_seeds_open",
        "client_seeds_game",
        "next_dice_commitment",
    )
)  # fmt: skip (the seats' seeds are closed by the game's first roll: issue 58)


class Fanout:
    """The sockets' view of every table: what was pushed, what is wanted next."""

    def __init__(self, hub: Hub, tables: Tables, locks: TableLocks, spectators: Spectators) -> None:
        self.hub, self.tables, self.locks = hub, tables, locks
        self.spectators = spectators  # the states go to a table's spectators too
        self.pushed: dict[str, int] = {}  # code -> the rev of the last state sent here
        self.wanted: dict[str, int | None] = {}  # code -> the rev to show next (None: the db's)
        self.refreshing: set[str] = set()  # tables whose refresh task runs
        self.tasks: set[asyncio.Task] = set()
        self.opening: dict[str, int] = {}  # code -> sockets opening now (bounded by the slots)
        self.missed: dict[str, int | None] = {}  # code -> newest rev heard meanwhile (None: any)
        self.moved: dict[str, int] = {}  # code -> newest rev published here meanwhile
        self.loop: asyncio.AbstractEventLoop | None = None
        self.encoded: tuple[dict[str, Any] | None, str] = (None, "")  # the last state's text
        self.continued: dict[str, Any] | None = None  # the last state published ``continued``
        hub.on_presence = self.presence_changed
        self.on_state = None  # told of each state published here (the "your turn" mail)

    # ----------------------------------------------------------------- this process's states
    def present(self, state: dict[str, Any]) -> dict[str, Any]:
        """``state`` with each seat's presence: its player has a socket open (a CPU is
        always there)."""
        connected = self.hub.connected(state["code"])
        for seat in state.get("seats", ()):
            seat["connected"] = seat["kind"] == "cpu" or seat["seat"] in connected
        state["spectators"] = self.spectators.count(state["code"])
        return state

    def publish(
        self, state: dict[str, Any], skip: Client | None = None, continued: bool = False
    ) -> dict[str, Any]:
        """``state`` with presence, pushed to the table's sockets (`push`). ``continued``:
        ``state`` is a move's within a game whose earlier state every socket of the table
        has had (its events start after the game's first), so the sockets' frames of it
        (the push, the ack) leave out the game's `STEADY_KEYS`."""
        self.continued = state if continued else None
        code = state["code"]
        if code in self.opening:  # a socket opening may have read the older state (`opened`)
            self.moved[code] = max(self.moved.get(code, -1), state["rev"])
        self.present(state)
        self.push(state, skip)
        if self.on_state is not None:
            self.on_state(state)
        return state

    def push(self, state: dict[str, Any], skip: Client | None = None) -> None:
        """Send ``state`` to the table's sockets (but ``skip``), unless they have had a newer
        one (a change of another process may be pushed out of order with one of ours)."""
        code, pushed = state["code"], self.pushed
        if pushed.get(code, -1) >= state["rev"] and skip is None:
            return
        clients = self.hub.clients.get(code, ())
        if clients or self.audience(code):
            pushed[code] = max(pushed.get(code, -1), state["rev"])
        if isinstance(state, Sealed):  # a duplicate game: each socket its seats' view
            for client in clients:
                if client is not skip:
                    mine = state.for_seats(client.seats or client.viewer)
                    client.push(encode({"type": "state", "state": mine}))
        elif any(c is not skip for c in clients):
            self.hub.broadcast(code, self.envelope("state", state), skip=skip)
        self.spectators.push(state)

    def audience(self, code: str) -> int:
        """The sockets here that follow table ``code``: its own, and its spectators'."""
        watching = self.spectators.count(code)
        return self.hub.count(code) + watching

    def envelope(self, kind: str, state: dict[str, Any], msg_id: Any = None) -> str:
        """The JSON text of ``{"type": kind, ["id": msg_id,] "state": state}``, the state
        encoded once (issue 33): its push to the table's other sockets and the ack to the
        socket that made the change share the text (the last state encoded is kept)."""
        if self.encoded[0] is not state:
            sent = state
            if state is self.continued:
                sent = {k: v for k, v in state.items() if k not in STEADY_KEYS}
            self.encoded = (state, encode(sent))
        head = f'{{"type":"{kind}",' + (f'"id":{encode(msg_id)},' if kind == "ack" else "")
        return f'{head}"state":{self.encoded[1]}}}'

    def presence_changed(self, code: str, connected: frozenset[int], skip: Client | None) -> None:
        message = {"type": "presence", "connected": sorted(connected)}
        self.hub.broadcast(code, message, skip=skip)

    def forget_idle(self) -> None:
        """Forget the tables with no socket here any more (nothing to keep in order)."""
        for code in [c for c in self.pushed if not self.audience(c)]:
            del self.pushed[code]

    # ----------------------------------------------------------------- other processes
    def listen(self, storage: Storage):
        """Hear the other processes' changes (from the running event loop); returns the
        function that stops listening, or None (a database of one process)."""
        self.loop = asyncio.get_running_loop()
        return storage.listen(self.notified)

    def notified(self, code: str, rev: int, origin: str, news: str | None) -> None:
        """A notification, on the listener's thread: handed to the event loop."""
        if origin != self.tables.instance and self.loop is not None:
            self.loop.call_soon_threadsafe(self.heard, code, rev, news)

    def heard(self, code: str, rev: int, news: str | None = None) -> None:
        """Another process committed a change of table ``code`` at ``rev`` (``""``: maybe of
        any table, the notifications were interrupted): bring this process's sockets of it
        (of every table it has sockets for) to that state. With the change's ``news``, a
        copy one revision behind follows it here, on the event loop, when no work on the
        table is under way; else a refresh task reads it."""
        for table in self.opening if not code else ():  # any table: sockets opening re-read
            self.missed[table] = None
        if code in self.opening:  # a socket of it is opening: it may have read the older state
            old = self.missed.get(code, -1)
            self.missed[code] = None if old is None else max(old, rev)
        watched = list(self.spectators.watchers)
        for table in [code] if code else {*self.hub.clients, *watched}:
            if not self.audience(table):
                continue
            target = rev if code else None
            if target is not None and self.pushed.get(table, -1) >= target:
                continue
            if (
                news
                and table not in self.refreshing
                and not self.locks.busy(table)
                and self.follow(table, rev, news)
            ):
                continue
            self.want(table, target)

    def want(self, code: str, target: int | None) -> None:
        """Table ``code``'s sockets here need its state at ``target`` (None: the database's,
        newer than any rev heard): start its refresh task, unless one runs."""
        if code in self.wanted:
            old = self.wanted[code]
            target = None if old is None or target is None else max(old, target)
        self.wanted[code] = target
        if code not in self.refreshing:
            self.refreshing.add(code)
            task = asyncio.ensure_future(self.refresh_sockets(code))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    def follow(self, code: str, rev: int, news: str) -> bool:
        """Push table ``code``'s state after another process's change, followed from its
        ``news`` (`Tables.follow`); False if the copy here cannot follow it."""
        table = self.tables.loaded.get(code)
        seq = len(table.log) if table is not None else 0
        try:
            table = self.tables.replicas.follow(code, rev, news)
            if table is None:
                return False
            state = self.tables.state(table)
        except Exception as err:  # a bug, not the database: the refresh task reads it
            log.warning("could not follow table %s: %s", code, err)
            self.tables.loaded.pop(code, None)
            return False
        state["events"] = [e for e in state.get("events", []) if e["seq"] >= seq]
        self.publish(state)
        return True

    async def refresh_sockets(self, code: str) -> None:
        """Push table ``code``'s new state to its sockets here, until nothing newer is wanted."""
        try:
            while code in self.wanted:
                target = self.wanted.pop(code)
                if not self.audience(code) or (
                    target is not None and self.pushed.get(code, -1) >= target
                ):
                    continue

                def work(c: str, target=target):
                    table = self.tables.loaded.get(c)
                    seen = (table.idx, len(table.log)) if table is not None else None
                    return seen, self.tables.state(self.tables.replicas.refresh(c, target))

                try:
                    seen, state = await self.locks.run(code, work)
                except WebError:
                    continue
                except Exception as err:  # the database: the next change or read catches up
                    log.warning("could not refresh table %s: %s", code, err)
                    continue
                if seen is not None and seen[0] == state["game"]:  # animate the new events only
                    state["events"] = [e for e in state.get("events", []) if e["seq"] >= seen[1]]
                self.publish(state)
        finally:
            self.refreshing.discard(code)

    # ----------------------------------------------------------------- sockets opening
    @contextlib.contextmanager
    def joining(self, code: str):
        """A socket of ``code`` is opening (reading the state, joining the hub): what is
        heard meanwhile is noted for `opened`."""
        self.opening[code] = self.opening.get(code, 0) + 1
        try:
            yield
        finally:
            self.opening[code] -= 1
            if not self.opening[code]:
                del self.opening[code]
                self.missed.pop(code, None)
                self.moved.pop(code, None)

    def opened(self, code: str, rev: int) -> bool:
        """The socket of ``code`` that read the state at ``rev`` has joined the hub: True if
        this process published a newer state of it meanwhile, which the socket, not yet in
        the hub, was not sent (it reads the state again: a client seed changes no version
        the page could tell from, issue 58). Another process's change heard meanwhile is
        pushed to the table's sockets."""
        late = self.missed.get(code, -1)
        if late is None:  # the notifications were interrupted meanwhile: re-read
            self.heard("", rev)
        elif late > rev:
            self.heard(code, late)
        return self.moved.get(code, -1) > rev


__all__ = ["STEADY_KEYS", "Fanout"]
