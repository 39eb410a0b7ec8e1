"""The open WebSockets of each table: a bounded send queue per socket, and a sender task
while it has messages waiting.

`Hub.broadcast` never awaits a socket: it puts the message on each socket's queue (a list
of at most ``Limits.send_queue`` messages; the first starts the socket's sender) and returns.
Each socket's own sender task writes its queue out; a socket whose queue is full has
stopped reading (or reads too slowly) and is closed with `CLOSE_SLOW`, so one stuck client
only hurts itself. A message is encoded once for all the sockets it goes to (`encode`:
orjson, compact), not once per socket.

Close codes (the page and the tests read them; the close ``reason`` says it in words) are
the ``CLOSE_*`` constants below; 1007 (invalid UTF-8) and 1009 (frame too big) come from
the WebSocket layer itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

try:  # the web extra's orjson: several times faster than json, same text for these messages
    import orjson

    def encode(message: Any) -> str:
        """A message as compact JSON text."""
        return orjson.dumps(message, option=orjson.OPT_NON_STR_KEYS).decode()

except ModuleNotFoundError:  # pragma: no cover - without the web extra's orjson

    def encode(message: Any) -> str:
        """A message as compact JSON text."""
        return json.dumps(message, separators=(",", ":"))


# The ASGI scope's extension by which the server shows a socket's writable flag (set while
# its transport takes more: `server.websocket_protocol`); `Client.reply` writes inline only
# then. Without it (another server, the test client) a reply is written inline.
WRITABLE = "yahtzee.writable"

CLOSE_BINARY = 1003  # binary frames are not accepted (standard "unsupported data")
CLOSE_SLOW = 4008  # the socket fell behind: its send queue is full
CLOSE_ORIGIN = 4403  # the handshake came from another site
CLOSE_UNKNOWN = 4404  # no such table
CLOSE_REPLACED = 4409  # a newer socket of the same seat took this one's place
CLOSE_GONE = 4410  # the table expired
CLOSE_FULL = 4429  # no socket slot (per address, per table or in total), or rate limit


class Client:
    """One open WebSocket of a table: its queue, its seat (None: a watcher) and address.

    An idle socket holds no task: a sender task is started when a message is queued and
    ends when the queue is empty (issue 60: an idle watcher costs the server its socket's
    objects, not a parked task, its frame and an event as well)."""

    __slots__ = (
        "address",
        "closing",
        "code",
        "ended",
        "queue",
        "queue_size",
        "scope",
        "seats",
        "sender",
        "viewer",
        "ws",
    )

    def __init__(self, ws: WebSocket, code: str, address: str, queue_size: int) -> None:
        self.ws, self.code, self.address = ws, code, address
        self.seats: frozenset[int] = frozenset()  # empty: a watcher
        # the seats its session has, before it says hello: a duplicate game's view for it
        self.viewer: frozenset[int] = frozenset()
        # the send queue: at most `queue_size` messages wait (one more may be being sent);
        # a list, not a deque: a deque's first block is 0.7 KB for each idle socket
        self.queue: list[str] = []
        self.queue_size = queue_size
        self.ended = False
        self.closing: tuple[int, str] | None = None
        self.scope = None  # the anyio CancelScope of the socket's receive loop
        self.sender: asyncio.Task | None = None  # while messages wait to be written

    def push(self, message: dict[str, Any] | str) -> None:
        """Queue ``message`` for this socket (never blocks); a full queue closes it."""
        if self.closing is not None or self.ended:
            return
        if len(self.queue) >= self.queue_size:
            self.close(CLOSE_SLOW, "too slow: the messages to this socket are not being read")
            return
        self.queue.append(message if isinstance(message, str) else encode(message))
        if self.sender is None:
            self.sender = asyncio.get_running_loop().create_task(self.send_queued())

    async def reply(self, message: dict[str, Any] | str) -> None:
        """Send ``message``, the answer to this socket's own message, from its receive loop
        when nothing waits to be written before it and the transport takes more (else
        queued behind, as `push`, so a reader that falls behind fills its queue and is
        closed, as before): a move's ack then makes no sender task (issue 60, seventh
        round: a task a move). While it writes, the pushes of other changes queue behind
        the reply (``sender`` is the loop's task), and it writes them too, in order."""
        writable = self.ws.scope.get("extensions", {}).get(WRITABLE)
        if (
            self.sender is not None
            or self.queue
            or self.closing is not None
            or self.ended
            or (writable is not None and not writable.is_set())  # the peer is behind
        ):
            self.push(message)
            return
        self.sender = asyncio.current_task()
        await self.send_queued(message if isinstance(message, str) else encode(message))

    def end(self) -> None:
        """No more messages: the queue's sender is stopped (the socket is done)."""
        self.ended = True
        sender, self.sender = self.sender, None
        if sender is not None and sender is not asyncio.current_task():
            sender.cancel()

    def close(self, code: int, reason: str) -> None:
        """Ask the socket's handler to close it with ``code`` (the handler does the I/O)."""
        if self.closing is None:
            self.closing = (code, reason[:120])
            if self.scope is not None:
                self.scope.cancel()

    async def send_queued(self, first: str | None = None) -> None:
        """The sender (a task of its own, or the receive loop's with its reply ``first``):
        write the queue out in order, then end (until the next push)."""
        queue = self.queue
        try:
            if first is not None:
                await self.ws.send_text(first)
            while queue:
                await self.ws.send_text(queue.pop(0))
        except (WebSocketDisconnect, OSError, RuntimeError):  # the peer is gone
            self.closing = self.closing or (1006, "")
            if self.scope is not None:
                self.scope.cancel()
        finally:
            if self.sender is asyncio.current_task():
                self.sender = None


class Hub:
    """The open sockets of each table, and so who is at it: a seat is connected while one
    of its player's sockets is open; `on_presence(code, seats)` hears every change."""

    def __init__(self) -> None:
        self.clients: dict[str, list[Client]] = {}
        self.on_presence: Callable[[str, frozenset[int], Client | None], None] | None = None

    def connected(self, code: str) -> frozenset[int]:
        """The seats of table ``code`` with a socket open."""
        seats: set[int] = set()
        for c in self.clients.get(code, ()):
            if c.closing is None:
                seats |= c.seats
        return frozenset(seats)

    def _changed(self, code: str, before: frozenset[int], skip: Client | None = None) -> None:
        after = self.connected(code)
        if after != before and self.on_presence is not None:
            self.on_presence(code, after, skip)

    def add(self, client: Client) -> None:
        self.clients.setdefault(client.code, []).append(client)

    def remove(self, client: Client) -> None:
        clients = self.clients.get(client.code)
        if clients and client in clients:
            before = self.connected(client.code)
            clients.remove(client)
            if not clients:
                del self.clients[client.code]
            self._changed(client.code, before)

    def count(self, code: str | None = None) -> int:
        if code is not None:
            return len(self.clients.get(code, ()))
        return sum(len(c) for c in self.clients.values())

    def seat(self, client: Client, seats: list[int], per_seat: int, quiet: bool = False) -> None:
        """Mark ``client`` as the socket of ``seats``; the oldest of a seat's sockets
        beyond ``per_seat`` is closed (a seat's newest socket always gets in). ``quiet``:
        the presence change goes to the other sockets only (this one gets a state)."""
        before = self.connected(client.code)
        client.seats = frozenset(seats)
        for seat in seats:
            same = [
                c
                for c in self.clients.get(client.code, ())
                if seat in c.seats and c.closing is None
            ]
            for old in same[: max(0, len(same) - per_seat)]:
                old.close(CLOSE_REPLACED, "replaced by a newer connection of the same seat")
        self._changed(client.code, before, client if quiet else None)

    def broadcast(
        self,
        code: str,
        message: dict[str, Any] | str,
        skip: Client | None = None,
        *,
        seated: bool = False,
        seat: int | None = None,
    ) -> None:
        """Queue ``message`` (or its JSON text) for every socket of table ``code`` (but
        ``skip``; ``seated``: only the sockets that said hello for a seat; ``seat``: only
        that seat's), encoded once for them all."""
        targets = [
            c
            for c in self.clients.get(code, ())
            if c is not skip and (c.seats or not seated) and (seat is None or seat in c.seats)
        ]
        if targets:
            text = message if isinstance(message, str) else encode(message)  # once for all
            for client in targets:
                client.push(text)

    def close_table(self, code: str, close_code: int, reason: str) -> None:
        for client in list(self.clients.get(code, ())):
            client.close(close_code, reason)


__all__ = [
    "CLOSE_BINARY",
    "CLOSE_FULL",
    "CLOSE_GONE",
    "CLOSE_ORIGIN",
    "CLOSE_REPLACED",
    "CLOSE_SLOW",
    "CLOSE_UNKNOWN",
    "Client",
    "Hub",
    "encode",
]
