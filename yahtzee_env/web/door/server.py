"""uvicorn as ``yahtzee serve`` runs it: timeouts and sizes against slow or hostile clients.

- `HeaderTimeoutH11Protocol`: uvicorn's h11 protocol with a deadline for a request's head.
  uvicorn's own ``timeout_keep_alive`` only covers the wait *between* requests (and is
  cancelled by the first byte of the next), so a client that sends half a request line and
  then nothing (slowloris) would hold its connection forever; here a connection whose
  request head is not complete ``header_timeout`` seconds after its first byte (or after
  the connection opens) is closed. The body has its own deadline in the app.
- A fixed kernel send buffer per connection (`SEND_BUFFER`, not Linux's autotuning up to
  4 MiB): what a client that stops reading can pin in the kernel is bounded, and the server
  sees it stop (its socket's send queue fills, `hub`) after a few hundred KiB, not megabytes.
- `ReleasingWebSocketProtocol`: the handshake's request and response are let go once it is
  done, and once the app is done with a socket, a peer that still does
  not read (so the buffered bytes never drain and a plain close never completes) is cut off
  (`transport.abort()`) after `CLOSE_GRACE` seconds: closed sockets are released. A socket
  whose peer is gone is let go at once (no timer holds it). Its receive queue and writable
  flag are a `Mailbox` and a `Flag`, without the deques of asyncio's queue and event
  (issue 60: an idle socket holds about 17 KB, not 30).
- h11's limit on an incomplete request head (16 KiB), WebSocket frames of at most 64 KiB,
  keep-alive pings on every socket (a vanished peer is released), a cap on concurrent
  connections (503 beyond it), and the forwarded address only from ``--trust-proxy``.
- No permessage-deflate by default (issue 33): compressing and decompressing every message
  was a tenth of the server's time per move, for messages of about 2 KB on the wire
  (``ws_deflate`` turns it on). ``ws_impl`` picks another of uvicorn's WebSocket
  implementations (for comparisons; the default is the sans-I/O one, released as below).
- `ClientErrorFilter`: uvicorn logs some client errors itself (an invalid request, invalid
  UTF-8 in a text frame, at ERROR with a traceback); they become one WARNING line each,
  rate-bounded (a client's mistake is not the server's error).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from yahtzee_env.web.door.hub import WRITABLE
from yahtzee_env.web.limits import RateLimiter

HEADER_TIMEOUT = 10.0  # s for a request's head to arrive
KEEP_ALIVE = 5  # s an idle keep-alive connection stays open
MAX_HEAD = 16 * 1024  # bytes of request line + headers
WS_MAX_SIZE = 64 * 1024  # bytes per WebSocket frame (every legitimate one is under 4 KiB)
MAX_CONNECTIONS = 4096  # concurrent connections and sockets (503 beyond)
SEND_BUFFER = 64 * 1024  # bytes of kernel send buffer per connection (Linux doubles it)
CLOSE_GRACE = 5.0  # s a finished socket's peer has to take its last bytes


class HeaderTimeoutH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing connections whose request head is too slow."""

    # `yahtzee serve --workers N` sets the variable for its worker processes (which import
    # this class by name: a class made by `protocol_with` cannot be sent to them)
    header_timeout = float(os.environ.get("YAHTZEE_HEADER_TIMEOUT") or HEADER_TIMEOUT)

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        self._head_timer = None
        self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.header_timeout, self._head_too_slow)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._arm_head_timer()  # a request head has begun and is not complete
        else:
            self._disarm_head_timer()

    def connection_lost(self, exc) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def _head_too_slow(self) -> None:
        self._head_timer = None
        # IDLE: no request head is complete (one being answered would be SEND_BODY or DONE)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


class ClientErrorFilter(logging.Filter):
    """uvicorn's log lines about a client's error: no traceback, at most ``rate`` a second."""

    CLIENT_ERRORS = ("Invalid HTTP request", "Invalid UTF-8", "Invalid WebSocket")

    def __init__(self, rate: float = 5.0, burst: int = 20) -> None:
        super().__init__()
        self.bucket = RateLimiter(rate, burst, max_keys=1)

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(self.CLIENT_ERRORS):
            return True
        record.exc_info, record.exc_text = None, None
        if record.levelno > logging.WARNING:  # the client's fault, not the server's
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return self.bucket.allow("log")


class Mailbox:
    """What uvicorn's WebSocket protocol uses of its `asyncio.Queue` (``put_nowait``,
    ``get``, ``empty``), for its one reader, the socket's handler: a list and, while the
    handler waits, one future (an `asyncio.Queue` holds three deques and an event: with the
    writable event, 3.9 KB of a socket that mostly waits)."""

    __slots__ = ("items", "waiter")

    def __init__(self) -> None:
        self.items: list = []
        self.waiter: asyncio.Future | None = None

    def put_nowait(self, item) -> None:
        self.items.append(item)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def empty(self) -> bool:
        return not self.items

    def qsize(self) -> int:
        return len(self.items)

    async def get(self):
        while not self.items:
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        return self.items.pop(0)


class Flag:
    """What uvicorn's WebSocket protocol uses of its `asyncio.Event` (``set``, ``clear``,
    ``is_set``, ``wait``), the list of waiters made only when one waits (an event's deque
    is about 0.7 KB a socket)."""

    __slots__ = ("value", "waiters")

    def __init__(self, value: bool = False) -> None:
        self.value = value
        self.waiters: list[asyncio.Future] | None = None

    def is_set(self) -> bool:
        return self.value

    def set(self) -> None:
        self.value = True
        waiters, self.waiters = self.waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(True)

    def clear(self) -> None:
        self.value = False

    async def wait(self) -> bool:
        if self.value:
            return True
        waiter = asyncio.get_running_loop().create_future()
        if self.waiters is None:
            self.waiters = []
        self.waiters.append(waiter)
        try:
            return await waiter
        finally:
            if self.waiters is not None and waiter in self.waiters:
                self.waiters.remove(waiter)


def websocket_protocol():
    """uvicorn's sans-I/O WebSocket protocol, releasing its connection when the app is done
    (None if this uvicorn does not have it: then its default is used)."""
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:
        return None

    class ReleasingWebSocketProtocol(WebSocketsSansIOProtocol):
        release_timer = None

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            # the receive queue and the writable flag, without asyncio's deques (issue 60:
            # 3.9 KB of an idle socket's 30)
            self.queue, self.writable = Mailbox(), Flag(True)

        def handle_connect(self, event) -> None:
            super().handle_connect(event)
            scope = getattr(self, "scope", None)  # none: the handshake was refused
            if scope is not None:  # the socket's writable flag, for `hub.Client.reply`
                scope["extensions"][WRITABLE] = self.writable

        async def run_asgi(self) -> None:
            await super().run_asgi()
            # only a peer still there gets the grace (the timer holds the protocol, and with
            # it the connection's buffers: issue 57, 1,000 sockets closed held them all)
            if not self.disconnected:
                self.release_timer = self.loop.call_later(CLOSE_GRACE, self._release)

        async def send(self, message) -> None:
            await super().send(message)
            if self.handshake_complete and getattr(self, "response", None) is not None:
                # the handshake's request and response (their headers: about 3 KB a socket)
                # are not read again once it is done (issue 60); the request's headers are
                # emptied, as the parser of `websockets` keeps the request to the end
                self.request.headers.clear()
                self.request = self.response = None

        def connection_lost(self, exc) -> None:
            super().connection_lost(exc)
            if self.release_timer is not None:  # a cancelled timer lets the protocol go
                self.release_timer.cancel()
                self.release_timer = None

        def _release(self) -> None:
            self.release_timer = None
            if not self.disconnected:  # the peer never took its last bytes
                self.transport.abort()

    return ReleasingWebSocketProtocol


def protocol_with(header_timeout: float) -> type[HeaderTimeoutH11Protocol]:
    return type(
        "HeaderTimeoutH11Protocol",
        (HeaderTimeoutH11Protocol,),
        {"header_timeout": header_timeout},
    )


def __getattr__(name: str):
    """``ReleasingWebSocketProtocol`` by name, for the processes of ``--workers N``."""
    if name == "ReleasingWebSocketProtocol":
        cls = websocket_protocol()
        if cls is not None:
            globals()[name] = cls
            return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


WS_IMPLS = ("websockets-sansio", "websockets", "wsproto")  # uvicorn's, for `ws_impl`


def uvicorn_config(
    app,
    host: str,
    port: int,
    *,
    header_timeout: float = HEADER_TIMEOUT,
    workers: int = 1,
    ws_deflate: bool = False,
    ws_impl: str | None = None,
    max_connections: int = MAX_CONNECTIONS,
):
    """uvicorn's `Config` for ``app`` on ``host:port`` with the settings above: what `run`
    (``yahtzee serve``) serves with, and a test that serves ``app`` in its own process.
    ``max_connections``: open connections and sockets together, past which uvicorn answers
    503 (`yahtzee serve` raises it with ``--max-sockets``).
    ``workers`` above 1: ``app`` is the import string of an app factory, run in that many
    processes sharing the listening socket (uvicorn's supervisor). ``ws_deflate``: offer
    permessage-deflate; ``ws_impl``: one of `WS_IMPLS` as uvicorn has it (None: ours)."""
    import uvicorn

    ws = ws_impl or websocket_protocol() or "auto"
    if workers > 1:  # the workers import the protocol classes by name (no pickled classes)
        os.environ["YAHTZEE_HEADER_TIMEOUT"] = str(header_timeout)
        http = f"{__name__}:HeaderTimeoutH11Protocol"
        if ws_impl is None and ws != "auto":
            ws = f"{__name__}:ReleasingWebSocketProtocol"
        extra = {"factory": True, "workers": workers}
    else:
        # one process: uvicorn's WEB_CONCURRENCY, if set, does not make it a supervisor
        http, extra = protocol_with(header_timeout), {"workers": 1}
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=http,
        ws=ws,
        ws_max_size=WS_MAX_SIZE,
        ws_per_message_deflate=ws_deflate,
        ws_ping_interval=20.0,
        ws_ping_timeout=20.0,
        timeout_keep_alive=KEEP_ALIVE,
        h11_max_incomplete_event_size=MAX_HEAD,
        limit_concurrency=max_connections,
        proxy_headers=False,  # the app applies --trust-proxy itself
        server_header=False,
        **extra,
    )


def run(app, host: str, port: int, **settings) -> None:
    """Serve ``app`` on ``host:port`` (blocks until stopped), with `uvicorn_config`'s
    ``settings``, the collector and the heap set for a long-running process."""
    import uvicorn

    from yahtzee_env.web.door.memory import limit_arenas, tune_gc

    limit_arenas()  # before the worker threads: freed memory goes back (`memory`)
    tune_gc()  # a long-running process: what start-up made is out of the collector's way
    config = uvicorn_config(app, host, port, **settings)
    logging.getLogger("uvicorn.error").addFilter(ClientErrorFilter())  # after uvicorn's config
    server = uvicorn.Server(config)
    if config.workers > 1:
        import inspect

        from uvicorn.supervisors import Multiprocess

        sockets = [config.bind_socket()]
        if "target" in inspect.signature(Multiprocess).parameters:  # uvicorn before 0.30
            Multiprocess(config, target=server.run, sockets=sockets).run()
        else:
            Multiprocess(config, sockets=sockets).run()
    else:
        server.run()
