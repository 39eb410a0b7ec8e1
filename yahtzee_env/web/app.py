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
    POST /api/games/CODE-IDX     {player, tokens: {seat: token}}  the review of a finished
                                          game (403 unless seated there or the table is public)

Errors carry a stable ``code`` (and ``params``) besides the English ``error``: the page
shows ``err.<code>`` from its catalogue (``static/i18n/<lang>.json``).

WebSocket ``/ws/CODE``: the server pushes ``{"type": "state", "state": ...}`` after every
change at the table; the page may also send ``{"type": "act" | "hint", "id", "seat",
"token", ...}`` and gets ``ack`` / ``hint`` / ``error`` replies with the same ``id``.
Every connection (HTTP or WebSocket) has its own token-bucket rate limit.

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
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from yahtzee_env.rules import PRESETS
from yahtzee_env.web.rooms import Rooms, WebError, cpu_levels
from yahtzee_env.web.stats import player_statistics
from yahtzee_env.web.storage import Storage

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


def error(message: str, status: int = 400, code: str = "generic", **params: Any) -> JSONResponse:
    """An error reply: ``error`` in English, ``code`` (and ``params``) for the page's
    catalogue (``err.<code>``)."""
    return JSONResponse({"error": message, "code": code, "params": params}, status_code=status)


def error_body(err: WebError) -> dict[str, Any]:
    return {"error": str(err), "code": err.code, "params": err.params, "status": err.status}


def languages() -> list[dict[str, str]]:
    """The page's languages: one catalogue per file ``static/i18n/<code>.json`` (its
    ``_name`` is the language's own name), so a new language is one new file."""
    out = []
    for path in sorted((STATIC_DIR / "i18n").glob("*.json")):
        try:
            name = json.loads(path.read_text(encoding="utf-8")).get("_name", path.stem)
        except (OSError, ValueError):
            continue
        out.append({"code": path.stem, "name": name})
    return out


def parse_json(raw: bytes | str) -> dict[str, Any]:
    if len(raw) > MAX_BODY:
        raise WebError(
            f"payload too large: {len(raw)} bytes (at most {MAX_BODY})", 413, "too_large"
        )
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
        raise WebError(f"payload too large: {length} bytes (at most {MAX_BODY})", 413, "too_large")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise WebError(f"payload too large (at most {MAX_BODY} bytes)", 413, "too_large")
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


def create_app(db_path: str | Path, *, rate: float = RATE, burst: int = BURST) -> Starlette:
    """The ASGI app over the database at ``db_path``."""
    storage = Storage(db_path)
    rooms = Rooms(storage)
    hub = Hub()
    limiter = RateLimiter(rate, burst)

    async def guarded(request: Request, handler) -> Response:
        key = (
            "http",
            request.client.host if request.client else "",
            request.client.port if request.client else 0,
        )
        if request.method != "GET" and not limiter.allow(key):
            return error("too many requests on this connection: slow down", 429, "rate")
        try:
            return await handler(request)
        except WebError as err:
            return error(str(err), err.status, err.code, **err.params)

    def endpoint(handler):
        async def wrapped(request: Request) -> Response:
            return await guarded(request, handler)

        return wrapped

    async def publish(room, since: int) -> None:
        await hub.broadcast(room.code, {"type": "state", "state": rooms.state(room, since)})

    # ----------------------------------------------------------------- pages
    async def page(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    # ----------------------------------------------------------------- API
    async def config(request: Request) -> Response:
        return JSONResponse(
            {
                "levels": cpu_levels(),
                "rules": list(PRESETS),
                "max_seats": 4,
                "min_seats": 2,
                "languages": languages(),
            }
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
            request.path_params["code"], body.get("seat"), body.get("token"), body.get("action")
        )
        state = rooms.state(room, first)
        await hub.broadcast(room.code, {"type": "state", "state": state})
        return JSONResponse(state)

    async def hint(request: Request) -> Response:
        body = await read_body(request)
        return JSONResponse(
            rooms.hint(request.path_params["code"], body.get("seat"), body.get("token"))
        )

    async def game_review(request: Request) -> Response:
        body = await read_body(request)
        game = rooms.review_request(request.path_params["gid"], body)
        return JSONResponse(await run_in_threadpool(rooms.review_of, game))

    # ----------------------------------------------------------------- WebSocket
    async def table_socket(ws: WebSocket) -> None:
        await ws.accept()
        try:
            room = rooms.load(ws.path_params["code"])
        except WebError as err:
            await ws.send_json({"type": "error", **error_body(err)})
            await ws.close(code=4404)
            return
        code = room.code
        key = ("ws", id(ws))
        if len(hub.sockets.get(code, ())) >= MAX_SOCKETS:
            await ws.send_json(
                {
                    "type": "error",
                    "error": "too many connections to this table",
                    "code": "rate",
                    "status": 429,
                }
            )
            await ws.close(code=4429)
            return
        hub.add(code, ws)
        try:
            await ws.send_json({"type": "state", "state": rooms.state(room)})
            while True:
                raw = await ws.receive_text()
                msg_id = None
                try:
                    if not limiter.allow(key):
                        raise WebError(
                            "too many messages on this connection: slow down", 429, "rate"
                        )
                    msg = parse_json(raw)
                    msg_id = msg.get("id")
                    kind = msg.get("type")
                    if kind == "act":
                        room, first = rooms.act(
                            code, msg.get("seat"), msg.get("token"), msg.get("action")
                        )
                        state = rooms.state(room, first)
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
                    await ws.send_json({"type": "error", "id": msg_id, **error_body(err)})
        except WebSocketDisconnect:
            pass
        finally:
            hub.remove(code, ws)
            limiter.forget(key)

    routes = [
        Route("/", page),
        Route("/t/{code}", page),
        Route("/stats", page),
        Route("/games/{gid}", page),
        Route("/api/config", endpoint(config)),
        Route("/api/players", endpoint(create_player), methods=["POST"]),
        Route("/api/stats", endpoint(stats), methods=["POST"]),
        Route("/api/tables", endpoint(create_table), methods=["POST"]),
        Route("/api/tables/{code}", endpoint(get_table)),
        Route("/api/tables/{code}/join", endpoint(join), methods=["POST"]),
        Route("/api/tables/{code}/start", endpoint(start), methods=["POST"]),
        Route("/api/tables/{code}/act", endpoint(act), methods=["POST"]),
        Route("/api/tables/{code}/hint", endpoint(hint), methods=["POST"]),
        Route("/api/games/{gid}", endpoint(game_review), methods=["POST"]),
        WebSocketRoute("/ws/{code}", table_socket),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        storage.close()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.rooms = rooms
    app.state.storage = storage
    return app
