"""The routes of ``yahtzee serve``: the page, a JSON API and a WebSocket per table.

HTTP (JSON bodies, at most `MAX_BODY` bytes; errors are ``{"error": "..."}`` with a 4xx):

    GET  /api/config                      CPU levels and rules presets for the lobby
    POST /api/players       {name}        a profile: {player_id, name, token}
    POST /api/stats         {player}      my statistics
    POST /api/tables        {seats, rules, online, match, coach, fill, name, player}
    GET  /api/tables/CODE?since=N         the table's state
    POST /api/tables/CODE/join   {name, player}       -> {seat, token, state}
    POST /api/tables/CODE/start  {seat, token}        (the host)
    POST /api/tables/CODE/act    {seat, token, action: {type: roll|score|next, ...}}
    POST /api/tables/CODE/hint   {seat, token}
    GET  /healthz                         200 while the process is up
    GET  /readyz                          200 if the database answers and its schema is
                                          this program's, else 503 (for a load balancer)

WebSocket ``/ws/CODE``: the server pushes ``{"type": "state", "state": ...}`` after every
change at the table; the page may also send ``{"type": "act" | "hint", "id", "seat",
"token", ...}`` and gets ``ack`` / ``hint`` / ``error`` replies with the same ``id``.
Every connection (HTTP or WebSocket) has its own token-bucket rate limit. An ``act`` may carry
``seq`` (and ``game``), the state it was made from: a stale one is refused with 409.

Several processes on one PostgreSQL database: a change committed by another process reaches
this one as a notification (`Storage.listen`), and the sockets this process holds for that
table get the new state, as they do for its own changes.

The game logic is in `yahtzee_env.web.rooms`, storage in `yahtzee_env.web.storage`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from yahtzee_env.game.rules import PRESETS
from yahtzee_env.web.rooms import Rooms, WebError, cpu_levels
from yahtzee_env.web.stats import player_statistics
from yahtzee_env.web.storage import SchemaError, Storage, describe_target, open_storage

STATIC_DIR = Path(__file__).with_name("static")
MAX_BODY = 4096  # bytes: every legitimate request is far smaller
RATE = 30.0  # requests per second per connection, sustained
BURST = 60  # and in a burst
MAX_SOCKETS = 32  # open WebSockets per table


class RateLimiter:
    """Token buckets keyed by connection; `allow` spends one token."""

    def __init__(self, rate: float = RATE, burst: int = BURST, max_keys: int = 10_000) -> None:
        self.rate, self.burst, self.max_keys = rate, burst, max_keys
        self.buckets: dict[Any, tuple[float, float]] = {}

    def allow(self, key: Any) -> bool:
        now = time.monotonic()
        tokens, last = self.buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if len(self.buckets) >= self.max_keys and key not in self.buckets:
            self.buckets.clear()  # forget idle connections rather than grow without bound
        if tokens < 1:
            self.buckets[key] = (tokens, now)
            return False
        self.buckets[key] = (tokens - 1, now)
        return True

    def forget(self, key: Any) -> None:
        self.buckets.pop(key, None)


def error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def parse_json(raw: bytes | str) -> dict[str, Any]:
    if len(raw) > MAX_BODY:
        raise WebError(f"payload too large: {len(raw)} bytes (at most {MAX_BODY})", 413)
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as err:
        raise WebError(f"malformed JSON: {err}") from None
    if not isinstance(data, dict):
        raise WebError("the JSON body must be an object")
    return data


async def read_body(request: Request) -> dict[str, Any]:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        raise WebError(f"payload too large: {length} bytes (at most {MAX_BODY})", 413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise WebError(f"payload too large (at most {MAX_BODY} bytes)", 413)
        chunks.append(chunk)
    return parse_json(b"".join(chunks))


class Hub:
    """The open WebSockets of each table, for live updates."""

    def __init__(self) -> None:
        self.sockets: dict[str, set[WebSocket]] = {}

    def add(self, code: str, ws: WebSocket) -> None:
        self.sockets.setdefault(code, set()).add(ws)

    def remove(self, code: str, ws: WebSocket) -> None:
        sockets = self.sockets.get(code)
        if sockets:
            sockets.discard(ws)
            if not sockets:
                del self.sockets[code]

    async def broadcast(self, code: str, message: dict[str, Any], skip=None) -> None:
        targets = [ws for ws in self.sockets.get(code, ()) if ws is not skip]
        if targets:
            text = json.dumps(message)
            await asyncio.gather(*(ws.send_text(text) for ws in targets), return_exceptions=True)


def create_app(
    db_path: str | Path | Storage, *, rate: float = RATE, burst: int = BURST
) -> Starlette:
    """The ASGI app over the database at ``db_path`` (a SQLite path, a ``postgresql://`` URL,
    or an open `Storage`)."""
    storage = db_path if isinstance(db_path, Storage) else open_storage(db_path)
    rooms = Rooms(storage)
    hub = Hub()
    limiter = RateLimiter(rate, burst)
    pushed: dict[str, tuple[int, int, int]] = {}  # code -> (rev, game, seq) last sent to sockets

    async def guarded(request: Request, handler) -> Response:
        key = (
            "http",
            request.client.host if request.client else "",
            request.client.port if request.client else 0,
        )
        if request.method != "GET" and not limiter.allow(key):
            return error("too many requests on this connection: slow down", 429)
        try:
            return await handler(request)
        except WebError as err:
            return error(str(err), err.status)

    def endpoint(handler):
        async def wrapped(request: Request) -> Response:
            return await guarded(request, handler)

        return wrapped

    def sent(room) -> None:
        if room.code in hub.sockets:
            pushed[room.code] = (room.rev, room.idx, len(room.log))

    async def publish(room, since: int) -> None:
        sent(room)
        await hub.broadcast(room.code, {"type": "state", "state": rooms.state(room, since)})

    async def remote_change(code: str, rev: int) -> None:
        """Another process committed a change of table ``code`` (``""``: maybe several, the
        notifications were interrupted): push the new state to this process's sockets."""
        for table in [code] if code else list(hub.sockets):
            if table not in hub.sockets:
                continue
            last = pushed.get(table)
            if last is not None and code and last[0] >= rev:
                continue  # already sent (this process read it first)
            try:
                room = rooms.load(table)
            except WebError:
                continue
            if last is not None and last[0] == room.rev:
                continue
            since = last[2] if last is not None and last[1] == room.idx else 0
            await publish(room, since)

    def notified(code: str, rev: int, origin: str) -> None:  # the listener's thread
        if origin != rooms.instance:
            loop.call_soon_threadsafe(lambda: asyncio.ensure_future(remote_change(code, rev)))

    loop: asyncio.AbstractEventLoop | None = None

    # ----------------------------------------------------------------- pages
    async def page(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    # ----------------------------------------------------------------- API
    async def config(request: Request) -> Response:
        return JSONResponse(
            {"levels": cpu_levels(), "rules": list(PRESETS), "max_seats": 4, "min_seats": 2}
        )

    async def create_player(request: Request) -> Response:
        body = await read_body(request)
        return JSONResponse(rooms.create_player(body.get("name")))

    async def stats(request: Request) -> Response:
        body = await read_body(request)
        player = rooms.player(body.get("player"))
        results = storage.results_of(player["id"])
        return JSONResponse({"name": player["name"], **player_statistics(results)})

    async def create_table(request: Request) -> Response:
        body = await read_body(request)
        room, tokens = rooms.create(body)
        return JSONResponse(
            {
                "code": room.code,
                "tokens": {str(k): v for k, v in tokens.items()},
                "state": rooms.state(room),
            }
        )

    async def get_table(request: Request) -> Response:
        room = rooms.load(request.path_params["code"])
        since = request.query_params.get("since", "0")
        if not since.isdigit():
            raise WebError("since must be a non-negative integer")
        return JSONResponse(rooms.state(room, int(since)))

    async def join(request: Request) -> Response:
        body = await read_body(request)
        room, seat, token = rooms.join(request.path_params["code"], body)
        await publish(room, 0)
        return JSONResponse({"seat": seat, "token": token, "state": rooms.state(room)})

    async def start(request: Request) -> Response:
        body = await read_body(request)
        room = rooms.start(request.path_params["code"], body.get("seat"), body.get("token"))
        await publish(room, 0)
        return JSONResponse(rooms.state(room))

    async def act(request: Request) -> Response:
        body = await read_body(request)
        room, first = rooms.act(
            request.path_params["code"],
            body.get("seat"),
            body.get("token"),
            body.get("action"),
            body.get("seq"),
            body.get("game"),
        )
        state = rooms.state(room, first)
        sent(room)
        await hub.broadcast(room.code, {"type": "state", "state": state})
        return JSONResponse(state)

    # ----------------------------------------------------------------- health
    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True, "instance": rooms.instance})

    async def readyz(request: Request) -> Response:
        try:
            version = await asyncio.to_thread(storage.check_version)
        except SchemaError as err:
            return JSONResponse({"ready": False, "error": str(err)}, status_code=503)
        except Exception as err:
            message = f"database {describe_target(storage.target)} unreachable: {err}"
            return JSONResponse({"ready": False, "error": message[:500]}, status_code=503)
        return JSONResponse({"ready": True, "schema_version": version})

    async def hint(request: Request) -> Response:
        body = await read_body(request)
        return JSONResponse(
            rooms.hint(request.path_params["code"], body.get("seat"), body.get("token"))
        )

    # ----------------------------------------------------------------- WebSocket
    async def table_socket(ws: WebSocket) -> None:
        await ws.accept()
        try:
            room = rooms.load(ws.path_params["code"])
        except WebError as err:
            await ws.send_json({"type": "error", "error": str(err), "status": err.status})
            await ws.close(code=4404)
            return
        code = room.code
        key = ("ws", id(ws))
        if len(hub.sockets.get(code, ())) >= MAX_SOCKETS:
            await ws.send_json(
                {"type": "error", "error": "too many connections to this table", "status": 429}
            )
            await ws.close(code=4429)
            return
        hub.add(code, ws)
        try:
            sent(room)
            await ws.send_json({"type": "state", "state": rooms.state(room)})
            while True:
                raw = await ws.receive_text()
                msg_id = None
                try:
                    if not limiter.allow(key):
                        raise WebError("too many messages on this connection: slow down", 429)
                    msg = parse_json(raw)
                    msg_id = msg.get("id")
                    kind = msg.get("type")
                    if kind == "act":
                        room, first = rooms.act(
                            code,
                            msg.get("seat"),
                            msg.get("token"),
                            msg.get("action"),
                            msg.get("seq"),
                            msg.get("game"),
                        )
                        state = rooms.state(room, first)
                        sent(room)
                        await ws.send_json({"type": "ack", "id": msg_id, "state": state})
                        await hub.broadcast(code, {"type": "state", "state": state}, skip=ws)
                    elif kind == "hint":
                        reply = rooms.hint(code, msg.get("seat"), msg.get("token"))
                        await ws.send_json({"type": "hint", "id": msg_id, **reply})
                    elif kind == "state":
                        await ws.send_json(
                            {"type": "state", "state": rooms.state(rooms.load(code))}
                        )
                    elif kind == "ping":
                        await ws.send_json({"type": "pong", "id": msg_id})
                    else:
                        raise WebError(f"unknown message type {str(kind)[:20]!r}")
                except WebError as err:
                    await ws.send_json(
                        {"type": "error", "id": msg_id, "error": str(err), "status": err.status}
                    )
        except WebSocketDisconnect:
            pass
        finally:
            hub.remove(code, ws)
            limiter.forget(key)

    routes = [
        Route("/", page),
        Route("/t/{code}", page),
        Route("/stats", page),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/api/config", endpoint(config)),
        Route("/api/players", endpoint(create_player), methods=["POST"]),
        Route("/api/stats", endpoint(stats), methods=["POST"]),
        Route("/api/tables", endpoint(create_table), methods=["POST"]),
        Route("/api/tables/{code}", endpoint(get_table)),
        Route("/api/tables/{code}/join", endpoint(join), methods=["POST"]),
        Route("/api/tables/{code}/start", endpoint(start), methods=["POST"]),
        Route("/api/tables/{code}/act", endpoint(act), methods=["POST"]),
        Route("/api/tables/{code}/hint", endpoint(hint), methods=["POST"]),
        WebSocketRoute("/ws/{code}", table_socket),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app):
        nonlocal loop
        loop = asyncio.get_running_loop()
        stop = storage.listen(notified)
        try:
            yield
        finally:
            if stop is not None:
                await asyncio.to_thread(stop)
            storage.close()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.rooms = rooms
    app.state.storage = storage
    return app


def app_from_env() -> Starlette:
    """The app over ``$YAHTZEE_DB``: the factory of each ``yahtzee serve --workers N``
    process."""
    import os

    return create_app(os.environ["YAHTZEE_DB"])
