"""The routes of ``yahtzee serve``: the page, a JSON API and a WebSocket per table.

HTTP (JSON bodies, at most `MAX_BODY` bytes; errors are ``{"error": "...", "code": "..."}``
with a 4xx, ``code`` a stable machine word such as ``stale_seq``, and ``params`` its values
when it has some: the page shows ``err.<code>`` from its catalogue, ``static/i18n/<lang>.json``):

    GET  /api/config                      CPU levels and rules presets for the lobby
    POST /api/players       {name}        a profile: {player_id, name, token}
    POST /api/stats         {player}      my statistics
    POST /api/tables        {seats, rules, online, match, coach, fill, name, player}
    GET  /api/tables/CODE?since=N         the table's state
    POST /api/tables/CODE/join   {name, player}       -> {seat, token, state}
    POST /api/tables/CODE/start  {seat, token}        (the host)
    POST /api/tables/CODE/act    {seat, token, seq, game, action: {type: roll|score|next, ...}}
    POST /api/tables/CODE/hint   {seat, token}
    POST /api/tables/CODE/leave  {seat, token}        the seat goes to the computer
    POST /api/tables/CODE/back   {seat, token}        take the seat back from it
    POST /api/tables/CODE/hand   {target, seat, token} (the host) an absent seat to the CPU
    POST /api/tables/CODE/remove {target, seat, token} (the host, before the start)
    GET  /api/session                     the session's profile: {player, account}
    POST /api/session       {name}        a guest session (cookie), or a new name
    POST /api/account/signup {username, password}   the session's profile becomes an account
    POST /api/account/signin {username, password}
    POST /api/account/signout {everywhere}
    GET  /api/me/tables                   the session's open tables

The page identifies itself by its session cookie (``yz_session``: ``HttpOnly``,
``SameSite=Strict``, ``Secure`` over HTTPS): with it, ``seat`` alone says which seat (one
of the session's) and no token is handed out or needed; API clients use the tokens.
    POST /api/games/CODE-IDX     {player, tokens: {seat: token}}  the review of a finished
                                          game (403 unless seated there or the table is public)
    GET  /healthz                         200 while the process is up
    GET  /readyz                          200 if the database answers and its schema is
                                          this program's, else 503 (for a load balancer)

``seq`` and ``game`` are those of the state the move was made from: a move made from an
older state is refused (409 ``stale_seq``), so a repeated request is harmless.

WebSocket ``/ws/CODE``: the server pushes ``{"type": "state", "state": ...}`` after every
change at the table; the page may send ``{"type": "hello", "seat", "token"}`` (a seated
socket: it gets in even when the watchers' slots are full), ``{"type": "act" | "hint",
"id", "seat", "token", ...}`` and gets ``hello`` / ``ack`` / ``hint`` / ``error`` replies
with the same ``id``. A refused socket is closed with a code and reason (`hub`). A
``hello`` without a token names the session's seats (the cookie came with the handshake).
Presence: every state says for each seat whether its player has a socket open
(``connected``), and ``{"type": "presence", "connected": [seats]}`` goes out when that
changes. Turn deadlines are stored with the table; a clock task plays the turns whose time
ran out (at start-up too, for those that ran out while the server was down).

The front door (headers, cross-site checks, per-address limits) is `guard`, the limits
`limits`, the sockets `hub`, the game logic `tables`, storage `storage`. Every piece of
work on a table (moves, CPU moves, coach, loading, database commits) runs in a worker
thread, one at a time per table; the event loop only routes.

Several processes on one PostgreSQL database (issue 20): a table's work also holds the
table's row lock in the database (`Tables.locked`), a copy in memory is used only at the
database's ``rev``, and a change committed by another process reaches this one as a
notification (`Storage.listen`): the sockets this process holds for that table get the new
state, as they do for its own changes. A copy one revision behind follows the change from
the notification itself, on the event loop (`Tables.follow`: a few engine steps, no thread
and no database read); any other case reads the database in a worker thread, one refresh
per table at a time (the notifications heard meanwhile join the next one). After the
listening connection comes back, every table with sockets here is re-read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from yahtzee_env.game.rules import PRESETS, RuleSet
from yahtzee_env.web.accounts import SESSION_COOKIE, SESSION_DAYS, Accounts
from yahtzee_env.web.guard import (
    GuardMiddleware,
    RefusalLog,
    client_address,
    cross_site,
    host_refused,
)
from yahtzee_env.web.hub import (
    CLOSE_BINARY,
    CLOSE_FULL,
    CLOSE_GONE,
    CLOSE_ORIGIN,
    CLOSE_UNKNOWN,
    Client,
    Hub,
)
from yahtzee_env.web.limits import Limits, RateLimiter, SocketSlots
from yahtzee_env.web.stats import player_statistics
from yahtzee_env.web.storage import SchemaError, Storage, describe_target, open_storage
from yahtzee_env.web.tables import Tables, WebError, clean_code, clean_name, cpu_levels

log = logging.getLogger("yahtzee.web")
STATIC_DIR = Path(__file__).with_name("static")
MAX_BODY = 4096  # bytes: every legitimate request is far smaller
MAX_SINCE_DIGITS = 9  # `since` is an event number: a few digits at most


def error(err: WebError) -> JSONResponse:
    body = {"error": str(err), "code": err.code}
    if err.params:
        body["params"] = err.params
    return JSONResponse(body, status_code=err.status)


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
        raise WebError(f"payload too large: {len(raw)} bytes (at most {MAX_BODY})", 413)
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as err:
        raise WebError(f"malformed JSON: {str(err)[:80]}") from None
    except RecursionError:
        raise WebError("malformed JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise WebError("the JSON body must be an object")
    return data


def message_id(value: Any) -> int | str | None:
    """A WebSocket message's ``id`` as echoed back: a small int or a short string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) < 2**53:
        return value
    if isinstance(value, str) and len(value) <= 64:
        return value
    return None


class TableLocks:
    """One asyncio lock per table code in use (the dict only holds codes being worked on),
    so that the work on a table runs one request at a time, in a worker thread."""

    def __init__(self) -> None:
        self.locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, code: str):
        lock, users = self.locks.get(code, (None, 0))
        lock = lock or asyncio.Lock()
        self.locks[code] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self.locks[code]
            if users == 1:
                del self.locks[code]
            else:
                self.locks[code] = (lock, users - 1)

    def busy(self, code: str) -> bool:
        return code in self.locks


def create_app(
    db_path: str | Path | Storage,
    *,
    rate: float | None = None,
    burst: int | None = None,
    limits: Limits | None = None,
    allowed_origins: tuple[str, ...] | list[str] = (),
    allowed_hosts: tuple[str, ...] | list[str] | None = None,
    trust_proxy: str | None = None,
    prewarm: bool = False,
    clock: Callable[[], float] | None = None,
) -> Starlette:
    """The ASGI app over the database at ``db_path``: a SQLite file, a ``postgresql://``
    URL, or an open `Storage`.

    ``limits``: the server's limits (`Limits`; ``rate`` and ``burst`` override its per-address
    request rate). ``allowed_origins``: other origins (``https://game.example``) whose pages
    may make moves, for a deployment behind a proxy. ``allowed_hosts``: the ``Host`` names
    (``game.example``, ``*.example``) this server answers (400 for any other; default: any),
    against DNS rebinding. ``trust_proxy``: the proxy addresses
    (comma-separated, or ``*``) whose ``X-Forwarded-For`` gives the client address.
    ``prewarm``: load (or solve) the official rules' coach table at start-up. ``clock``:
    the wall clock of the turn deadlines (tests move it; default `time.time`)."""
    limits = limits or Limits()
    if rate is not None:
        limits.rate = rate
    if burst is not None:
        limits.burst = burst
    storage = db_path if isinstance(db_path, Storage) else open_storage(db_path)
    tables = Tables(storage, limits.tables_per_player, limits.tables_per_address)
    if clock is not None:
        tables.clock = clock
    accounts = Accounts(storage)
    hub = Hub()
    locks = TableLocks()
    slots = SocketSlots(limits)
    per_address = RateLimiter(limits.rate, limits.burst, limits.max_keys)
    per_token = RateLimiter(limits.token_rate, limits.token_burst, limits.max_keys)
    lookups = RateLimiter(limits.lookups_per_minute / 60, limits.lookup_burst, limits.max_keys)
    logins = RateLimiter(limits.logins_per_minute / 60, limits.login_burst, limits.max_keys)
    refusals = RefusalLog()
    origins = frozenset(o.rstrip("/") for o in allowed_origins)
    hosts = None if allowed_hosts is None else frozenset(h.strip().lower() for h in allowed_hosts)

    def spend(token: Any) -> None:
        """One token of the bucket of a player or seat token (if the request has one)."""
        if isinstance(token, str) and token and not per_token.allow(("token", token)):
            raise WebError("too many requests for this player: slow down", 429)

    def check_lookups(address: str) -> None:
        if lookups.exhausted(address):
            raise WebError(
                "too many unknown table codes from your address: wait a minute",
                429,
                "lookup_budget",
            )

    def failed(address: str, err: WebError) -> None:
        if err.code == "unknown_table":
            lookups.allow(address)

    async def on_table(code: Any, work: Callable[[str], Any]) -> Any:
        """``work(code)`` in a worker thread, holding the table's lock."""
        code = clean_code(code)
        async with locks.hold(code):
            return await run_in_threadpool(work, code)

    async def table_state(code: Any, since: int = 0) -> dict[str, Any]:
        """The table's state: read on the event loop if the table is in memory (cheap, and
        no thread changes it while its lock is held), else loaded in a worker thread."""
        code = clean_code(code)
        async with locks.hold(code):
            table = tables.loaded.get(code)
            if table is not None and not storage.multi_process:
                tables.keep(table)  # in use: not idle
                return tables.state(table, since)
            # shared database: `load` checks the copy's rev against it (one query)
            return await run_in_threadpool(lambda: tables.state(tables.load(code), since))

    # ----------------------------------------------------------------- sessions, presence
    async def session_of(conn) -> Any:
        """The player row of the request's (or socket's) session cookie, or None."""
        token = conn.cookies.get(SESSION_COOKIE)
        if not token:
            return None
        return await run_in_threadpool(accounts.session_player, token)

    def pid(session) -> int | None:
        return session["id"] if session is not None else None

    def who(body: dict[str, Any], session, key: str = "token") -> Any:
        """The key of the per-token limit: the body's token, else the session."""
        return body.get(key) or (f"session:{session['id']}" if session is not None else None)

    def set_session(response: Response, request: Request, token: str | None) -> Response:
        if token is None:
            response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
            return response
        response.set_cookie(
            SESSION_COOKIE,
            token,
            max_age=SESSION_DAYS * 86_400,
            path="/",
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="strict",
        )
        return response

    def present(state: dict[str, Any]) -> dict[str, Any]:
        """``state`` with each seat's presence: its player has a socket open (a CPU is
        always there)."""
        connected = hub.connected(state["code"])
        for seat in state.get("seats", ()):
            seat["connected"] = seat["kind"] == "cpu" or seat["seat"] in connected
        return state

    def publish(state: dict[str, Any], skip: Client | None = None) -> dict[str, Any]:
        """``state`` with presence, pushed to the table's sockets (`push`)."""
        present(state)
        push(state, skip)
        return state

    def on_presence(code: str, connected: frozenset[int], skip: Client | None) -> None:
        hub.broadcast(code, {"type": "presence", "connected": sorted(connected)}, skip=skip)

    hub.on_presence = on_presence

    def mine(code: str, session) -> list[int]:
        table = tables.loaded.get(code)
        return table.seats_of(pid(session)) if table is not None else []

    # ----------------------------------------------------------------- fan-out
    pushed: dict[str, int] = {}  # code -> the rev of the last state sent to its sockets here

    def push(state: dict[str, Any], skip: Client | None = None) -> None:
        """Send ``state`` to the table's sockets (but ``skip``), unless they have had a newer
        one (a change of another process may be pushed out of order with one of ours)."""
        code = state["code"]
        if pushed.get(code, -1) >= state["rev"] and skip is None:
            return
        if hub.count(code):
            pushed[code] = max(pushed.get(code, -1), state["rev"])
        hub.broadcast(code, {"type": "state", "state": state}, skip=skip)

    # Another process's changes: one refresh at a time per table, and what is heard while it
    # runs joins the next one (a burst of moves costs one catch-up, not one each).
    wanted: dict[str, int | None] = {}  # table -> the rev to show next (None: the database's)
    refreshing: set[str] = set()  # tables whose refresh task runs
    tasks: set[asyncio.Task] = set()

    def heard(code: str, rev: int, news: str | None = None) -> None:
        """Another process committed a change of table ``code`` at ``rev`` (``""``: maybe of
        any table, the notifications were interrupted): bring this process's sockets of it
        (of every table it has sockets for) to that state. With the change's ``news``, a
        copy one revision behind follows it here, on the event loop (no thread, no database
        read) when no work on the table is under way; else a refresh task reads it."""
        for table in opening if not code else ():  # any table: sockets opening re-read
            missed[table] = None
        if code in opening:  # a socket of it is opening: it may have read the older state
            old = missed.get(code, -1)
            missed[code] = None if old is None else max(old, rev)
        for table in [code] if code else list(hub.clients):
            if not hub.count(table):
                continue
            target = rev if code else None
            if target is not None and pushed.get(table, -1) >= target:
                continue
            if (
                news
                and table not in refreshing
                and not locks.busy(table)
                and follow(table, rev, news)
            ):
                continue
            if table in wanted:  # None (the database's state) is newer than any rev heard
                old = wanted[table]
                target = None if old is None or target is None else max(old, target)
            wanted[table] = target
            if table not in refreshing:
                refreshing.add(table)
                task = asyncio.ensure_future(refresh_sockets(table))
                tasks.add(task)
                task.add_done_callback(tasks.discard)

    # A socket reads the table's state, then joins the hub: a change heard in between would
    # reach none of its sockets here (the first of the table). What is heard for a table
    # while one of its sockets opens is noted, and caught up once the socket has joined.
    opening: dict[str, int] = {}  # table -> sockets opening now (bounded by the open limits)
    missed: dict[str, int | None] = {}  # table -> the newest rev heard meanwhile (None: any)

    def opened(code: str, rev: int) -> None:
        """The socket of ``code`` that read the state at ``rev`` has joined the hub."""
        late = missed.get(code, -1)
        if late is None:  # the notifications were interrupted meanwhile: re-read
            heard("", rev)
        elif late > rev:
            heard(code, late)

    def follow(code: str, rev: int, news: str) -> bool:
        """Push table ``code``'s state after another process's change, followed from its
        ``news`` (`Tables.follow`); False if the copy here cannot follow it."""
        table = tables.loaded.get(code)
        seq = len(table.log) if table is not None else 0
        try:
            table = tables.follow(code, rev, news)
            if table is None:
                return False
            state = tables.state(table)
        except Exception as err:  # a bug, not the database: the refresh task reads it
            log.warning("could not follow table %s: %s", code, err)
            tables.loaded.pop(code, None)
            return False
        state["events"] = [e for e in state.get("events", []) if e["seq"] >= seq]
        publish(state)
        return True

    async def refresh_sockets(table: str) -> None:
        """Push table ``table``'s new state to its sockets here, until nothing newer is wanted."""
        try:
            while table in wanted:
                target = wanted.pop(table)
                if not hub.count(table) or (target is not None and pushed.get(table, -1) >= target):
                    continue

                def work(code: str, target=target):
                    table = tables.loaded.get(code)
                    seen = (table.idx, len(table.log)) if table is not None else None
                    return seen, tables.state(tables.refresh(code, target))

                try:
                    seen, state = await on_table(table, work)
                except WebError:
                    continue
                except Exception as err:  # the database: the next change or read catches up
                    log.warning("could not refresh table %s: %s", table, err)
                    continue
                if seen is not None and seen[0] == state["game"]:  # animate the new events only
                    state["events"] = [e for e in state.get("events", []) if e["seq"] >= seen[1]]
                publish(state)
        finally:
            refreshing.discard(table)

    def notified(code: str, rev: int, origin: str, news: str | None) -> None:  # listener's thread
        if origin != tables.instance and loop is not None:
            loop.call_soon_threadsafe(heard, code, rev, news)

    loop: asyncio.AbstractEventLoop | None = None

    def endpoint(handler):
        async def wrapped(request: Request) -> Response:
            address = client_address(request.scope)
            try:
                if "code" in request.path_params:
                    check_lookups(address)
                return await handler(request)
            except WebError as err:
                failed(address, err)
                what = f"{request.method} {request.url.path[:60]}"
                refusals.refused(err.status, what, address, str(err))
                return error(err)

        return wrapped

    async def read_body(request: Request) -> dict[str, Any]:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY:
            raise WebError(f"payload too large: {length[:12]} bytes (at most {MAX_BODY})", 413)
        chunks, size = [], 0
        try:
            with anyio.fail_after(limits.read_timeout_s):
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > MAX_BODY:
                        raise WebError(f"payload too large (at most {MAX_BODY} bytes)", 413)
                    chunks.append(chunk)
        except TimeoutError:
            raise WebError("the request body did not arrive in time", 408) from None
        return parse_json(b"".join(chunks))

    # ----------------------------------------------------------------- pages
    async def page(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    # ----------------------------------------------------------------- API
    async def config(request: Request) -> Response:
        levels = cpu_levels()
        return JSONResponse(
            {
                "levels": levels,
                "main_levels": [lv for lv in ("easy", "medium", "hard") if lv in levels],
                "rules": list(PRESETS),
                "max_seats": 4,
                "min_seats": 2,
                "turn_timers": [0, 30, 60, 120, 300],
                "turn_timer_range": [10, 3600],
                "languages": languages(),
            }
        )

    async def create_player(request: Request) -> Response:
        body = await read_body(request)
        return JSONResponse(await run_in_threadpool(tables.create_player, body.get("name")))

    async def stats(request: Request) -> Response:
        body = await read_body(request)
        session = await session_of(request)
        spend(who(body, session, "player"))

        def work():
            player = session if session is not None else tables.player(body.get("player"))
            return {"name": player["name"], **player_statistics(storage.results_of(player["id"]))}

        return JSONResponse(await run_in_threadpool(work))

    async def create_table(request: Request) -> Response:
        body = await read_body(request)
        session = await session_of(request)
        spend(who(body, session, "player"))
        address = client_address(request.scope)

        def work():
            table, tokens = tables.create(body, address, session)
            tokens = {str(k): v for k, v in tokens.items()}
            state = present(tables.state(table))
            seats = mine(table.code, session)
            return {"code": table.code, "tokens": tokens, "mine": seats, "state": state}

        return JSONResponse(await run_in_threadpool(work))

    async def get_table(request: Request) -> Response:
        since = request.query_params.get("since", "0")
        if not since.isdigit() or len(since) > MAX_SINCE_DIGITS:
            raise WebError(f"since must be an integer from 0 to {10**MAX_SINCE_DIGITS - 1}")
        state = present(await table_state(request.path_params["code"], int(since)))
        session = await session_of(request)
        if session is not None:
            state["mine"] = mine(state["code"], session)
        return JSONResponse(state)

    async def join(request: Request) -> Response:
        body = await read_body(request)
        session = await session_of(request)
        spend(who(body, session, "player"))

        def work(code):
            table, seat, token = tables.join(code, body, session)
            reply = {"seat": seat, "state": tables.state(table), "mine": mine(code, session)}
            if token is not None:
                reply["token"] = token
            return reply

        reply = await on_table(request.path_params["code"], work)
        publish(reply["state"])
        return JSONResponse(reply)

    async def start(request: Request) -> Response:
        body = await read_body(request)
        session = await session_of(request)
        spend(who(body, session))

        def work(code):
            table = tables.start(code, body.get("seat", 0), body.get("token"), pid(session))
            return tables.state(table)

        state = await on_table(request.path_params["code"], work)
        return JSONResponse(publish(state))

    def act_work(msg: dict[str, Any], session=None) -> Callable[[str], dict[str, Any]]:
        def work(code):
            table, first = tables.act(
                code,
                msg.get("seat"),
                msg.get("token"),
                msg.get("action"),
                msg.get("seq"),
                msg.get("game"),
                pid(session),
            )
            return tables.state(table, first)

        return work

    async def act(request: Request) -> Response:
        body = await read_body(request)
        session = await session_of(request)
        spend(who(body, session))
        state = await on_table(request.path_params["code"], act_work(body, session))
        return JSONResponse(publish(state))

    # ----------------------------------------------------------------- health
    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True, "instance": tables.instance})

    async def readyz(request: Request) -> Response:
        try:
            version = await run_in_threadpool(storage.check_version)
        except SchemaError as err:
            return JSONResponse({"ready": False, "error": str(err)}, status_code=503)
        except Exception as err:
            message = f"database {describe_target(storage.target)} unreachable: {err}"
            return JSONResponse({"ready": False, "error": message[:500]}, status_code=503)
        return JSONResponse({"ready": True, "schema_version": version})

    async def hint(request: Request) -> Response:
        body = await read_body(request)
        session = await session_of(request)
        spend(who(body, session))
        reply = await on_table(
            request.path_params["code"],
            lambda code: tables.hint(code, body.get("seat"), body.get("token"), pid(session)),
        )
        return JSONResponse(reply)

    def people(what: str):
        """The endpoints of leave, back, hand (to the CPU) and remove."""

        async def handler(request: Request) -> Response:
            body = await read_body(request)
            session = await session_of(request)
            spend(who(body, session))
            seat, token, player = body.get("seat"), body.get("token"), pid(session)
            here = hub.connected(clean_code(request.path_params["code"]))  # read on the loop

            def work(code):
                if what == "leave":
                    table = tables.leave(code, seat, token, player)
                elif what == "back":
                    table = tables.back(code, seat, token, player)
                else:
                    change = tables.hand_to_cpu if what == "hand" else tables.remove_seat
                    target = body.get("target")
                    table = change(code, target, seat, token, player, here)
                return tables.state(table)

            state = await on_table(request.path_params["code"], work)
            return JSONResponse(publish(state))

        return handler

    # ----------------------------------------------------------------- accounts
    async def session_get(request: Request) -> Response:
        session = await session_of(request)
        if session is None:
            return JSONResponse({"player": None, "account": None})
        account = await run_in_threadpool(accounts.account_name, session["id"])
        player = {"id": session["id"], "name": session["name"]}
        return JSONResponse({"player": player, "account": account})

    async def session_post(request: Request) -> Response:
        """A guest session with a name (or the session's new name)."""
        body = await read_body(request)
        session = await session_of(request)
        spend(who(body, session))
        name = clean_name(body.get("name"))

        def work():
            if session is not None:
                storage.rename_player(session["id"], name)
                return session["id"], None, accounts.account_name(session["id"])
            player_id = storage.create_player(name, secrets.token_urlsafe(24))
            return player_id, accounts.new_session(player_id), None

        player_id, token, account = await run_in_threadpool(work)
        reply = JSONResponse({"player": {"id": player_id, "name": name}, "account": account})
        return set_session(reply, request, token) if token else reply

    def login_budget(request: Request, username: Any) -> None:
        """Sign-ins spend a token of the address's and the user name's buckets, sign-ups
        (``username`` None) of the address's (429 ``login_budget`` when one is empty)."""
        keys = [("login-addr", client_address(request.scope))]
        if isinstance(username, str):
            keys.append(("login-user", username.strip().casefold()[:64]))
        if not all([logins.allow(k) for k in keys]):
            raise WebError("too many sign-in attempts: wait a minute", 429, "login_budget")

    async def account_post(request: Request) -> Response:
        what = request.path_params["what"]
        body = await read_body(request)
        session = await session_of(request)
        if what in ("signin", "signup"):
            login_budget(request, body.get("username") if what == "signin" else None)
            work = accounts.sign_in if what == "signin" else accounts.sign_up
            old = request.cookies.get(SESSION_COOKIE)

            def run():
                player_id, username = work(body, session)
                if old:  # a new session id at every sign-in (no session fixation)
                    storage.delete_sessions(token=old)
                token = accounts.new_session(player_id)
                return player_id, username, token, storage.player_by_id(player_id)["name"]

            player_id, username, token, name = await run_in_threadpool(run)
            reply = JSONResponse({"player": {"id": player_id, "name": name}, "account": username})
            return set_session(reply, request, token)
        if what == "signout":
            everywhere = body.get("everywhere", False)
            if not isinstance(everywhere, bool):
                raise WebError("everywhere must be true or false")
            if session is not None:
                token = request.cookies.get(SESSION_COOKIE)
                if everywhere:
                    await run_in_threadpool(storage.delete_sessions, player_id=session["id"])
                else:
                    await run_in_threadpool(storage.delete_sessions, token=token)
            return set_session(JSONResponse({"player": None, "account": None}), request, None)
        raise WebError(f"no such account action {what[:20]!r}", 404, "not_found")

    async def my_tables(request: Request) -> Response:
        session = await session_of(request)
        if session is None:
            return JSONResponse({"tables": []})
        return JSONResponse({"tables": await run_in_threadpool(tables.open_tables, session["id"])})

    async def game_review(request: Request) -> Response:
        """The review of a finished game: checked and read under the table's lock, then
        solved in a worker thread without it (`tables.review_of` touches no live table)."""
        body = await read_body(request)
        session = await session_of(request)
        spend(who(body, session, "player"))
        gid = request.path_params["gid"]
        code = gid.rpartition("-")[0] if isinstance(gid, str) else ""
        if not code:
            raise WebError(f"no game has the id {str(gid)[:30]!r}", 404, "no_game")
        game = await on_table(code, lambda _code: tables.review_request(gid, body, pid(session)))
        return JSONResponse(await run_in_threadpool(tables.review_of, game))

    # ----------------------------------------------------------------- WebSocket
    async def seat_of(code: str, msg: dict[str, Any], session=None) -> list[int]:
        """The seats a ``hello`` message proves: its token's seat, or (without a token)
        the socket's session's seats; WebError if it proves none. Seats the computer took
        while their player was away (a timeout, the host) come back."""
        token = msg.get("token")
        spend(who(msg, session))

        def work(c):
            table = tables.load(c)
            if token is None and session is not None:
                seats = table.seats_of(session["id"])
                if not seats:
                    raise WebError("you have no seat at this table", 403, "not_your_seat")
            else:
                seats = [table.seat_of_token(msg.get("seat"), token)]
            back = tables.reconnected(table, seats)
            return seats, tables.state(table) if back else None

        seats, state = await on_table(code, work)
        if state is not None:
            publish(state)
        return seats

    def hello(seats: list[int]) -> dict[str, Any]:
        reply: dict[str, Any] = {"type": "hello", "seat": seats[0]}
        if len(seats) > 1:
            reply["seats"] = seats
        return reply

    async def table_socket(ws: WebSocket) -> None:
        address = client_address(ws.scope)
        await ws.accept()
        why = cross_site(ws.scope, origins)
        bad_host = host_refused(ws.scope, hosts)
        refusal = None
        if bad_host is not None:
            refusal = CLOSE_ORIGIN, f"socket refused: {bad_host}"
        elif why is not None:
            refusal = CLOSE_ORIGIN, f"cross-site socket refused: {why}"
        elif not per_address.allow(("addr", address)):
            refusal = CLOSE_FULL, "too many requests from your address: slow down"
        if refusal is not None:
            refusals.refused(refusal[0], "WS /ws/", address, refusal[1])
            await ws.close(*refusal)
            return
        try:
            check_lookups(address)
            code = clean_code(ws.path_params["code"])
            opening[code] = opening.get(code, 0) + 1
            try:
                state = await table_state(code)
                client = Client(ws, code, address, limits.send_queue)
                joined = await join_hub(client, state, address)
            finally:
                opening[code] -= 1
                if not opening[code]:
                    del opening[code]
                    missed.pop(code, None)
        except WebError as err:
            failed(address, err)
            refusals.refused(err.status, "WS /ws/", address, str(err))
            reply = {"type": "error", "error": str(err), "code": err.code, "status": err.status}
            await ws.send_json(reply)
            await ws.close(CLOSE_FULL if err.status == 429 else CLOSE_UNKNOWN, str(err)[:120])
            return
        if joined is None:
            return
        slot, session, state = joined
        present(state)
        try:
            async with anyio.create_task_group() as tg:
                client.scope = tg.cancel_scope
                if client.closing is not None:
                    tg.cancel_scope.cancel()
                tg.start_soon(client.send_forever)
                client.push({"type": "state", "state": state})
                slot = await receive_loop(client, slot, session)
                tg.cancel_scope.cancel()
        except WebSocketDisconnect:
            pass
        finally:
            hub.remove(client)
            client.outbox.close()
            if slot == "anonymous":
                slots.release_anonymous(address, code)
            else:
                slots.release_seated()
        if client.closing is not None and client.closing[0] != 1006:  # 1006: the peer left
            with anyio.move_on_after(1), contextlib.suppress(Exception):
                await ws.close(*client.closing)

    async def join_hub(client: Client, state: dict[str, Any], address: str):
        """Take the socket's slot and add it to the hub: ``(slot, session, state)``, or None
        when it was refused (closed here). A seated player's first message proves the seat
        when the anonymous slots are full."""
        ws, code = client.ws, client.code
        session = await session_of(ws)
        full = slots.refuse_anonymous(address, code)
        if full is None:
            slots.take_anonymous(address, code)
            hub.add(client)
            opened(code, state["rev"])
            return "anonymous", session, state
        seat = None
        with anyio.move_on_after(limits.hello_timeout):
            with contextlib.suppress(WebError, WebSocketDisconnect, KeyError):
                msg = parse_json((await ws.receive())["text"])
                if msg.get("type") == "hello":
                    seat = await seat_of(code, msg, session)
        if seat is None:
            refusals.refused(CLOSE_FULL, f"WS /ws/{code}", address, full)
            with contextlib.suppress(Exception):
                await ws.close(CLOSE_FULL, full)
            return None
        slots.take_seated()
        client.push(hello(seat))
        hub.add(client)
        hub.seat(client, seat, limits.sockets_per_seat, quiet=True)
        try:
            state = await table_state(code)
        except BaseException:  # the caller answers the error: give back what was taken
            hub.remove(client)
            slots.release_seated()
            raise
        opened(code, state["rev"])
        return "seated", session, state

    async def receive_loop(client: Client, slot: str, session=None) -> str:
        """Answer the socket's messages until it closes; returns its slot kind."""
        ws, code, address = client.ws, client.code, client.address
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                return slot
            text = message.get("text")
            if text is None:
                refusals.refused(CLOSE_BINARY, f"WS /ws/{code}", address, "a binary frame")
                client.close(CLOSE_BINARY, "binary frames are not accepted: send JSON text")
                return slot
            msg_id = None
            try:
                if not per_address.allow(("addr", address)):
                    raise WebError("too many messages from your address: slow down", 429)
                msg = parse_json(text)
                msg_id = message_id(msg.get("id"))
                kind = msg.get("type")
                if kind == "act":
                    spend(who(msg, session))
                    state = await on_table(code, act_work(msg, session))
                    publish(state, skip=client)
                    client.push({"type": "ack", "id": msg_id, "state": state})
                elif kind == "hint":
                    spend(who(msg, session))
                    seat, token, player = msg.get("seat"), msg.get("token"), pid(session)
                    reply = await on_table(
                        code, lambda c, s=seat, t=token, p=player: tables.hint(c, s, t, p)
                    )
                    client.push({"type": "hint", "id": msg_id, **reply})
                elif kind == "hello":
                    seats = await seat_of(code, msg, session)
                    if slot == "anonymous":
                        slots.release_anonymous(address, code)
                        slots.take_seated()
                        slot = "seated"
                    hub.seat(client, seats, limits.sockets_per_seat, quiet=True)
                    client.push({**hello(seats), "id": msg_id})
                elif kind == "state":
                    state = present(await table_state(code))
                    client.push({"type": "state", "state": state})
                elif kind == "ping":
                    client.push({"type": "pong", "id": msg_id})
                else:
                    raise WebError(f"unknown message type {str(kind)[:20]!r}")
            except WebError as err:
                failed(address, err)
                refusals.refused(err.status, f"WS /ws/{code}", address, str(err))
                reply = {"error": str(err), "code": err.code, "status": err.status}
                client.push({"type": "error", "id": msg_id, **reply})

    # ----------------------------------------------------------------- housekeeping
    async def sweep() -> dict[str, list[str]]:
        """Evict idle tables from memory and delete expired ones (closing their sockets)."""
        evicted = tables.evict(limits.idle_evict_s, limits.tables_in_memory, locks.busy)
        expired = await run_in_threadpool(
            tables.expire, limits.expire_unstarted_s, limits.expire_idle_s, set(locks.locks)
        )
        for code in expired:
            hub.close_table(code, CLOSE_GONE, "this table expired")
        await run_in_threadpool(storage.expire_sessions, SESSION_DAYS * 86_400)
        for code in [c for c in pushed if not hub.count(c)]:
            del pushed[code]  # no socket here any more: nothing to keep in order
        return {"evicted": evicted, "expired": expired}

    async def tick() -> list[str]:
        """Play the turns (and votes) whose deadline has passed; return their tables."""
        due = await run_in_threadpool(storage.due, tables.clock())
        done = []
        for code in due:
            try:
                state = await on_table(code, lambda c: tables.state(tables.time_out(c)))
            except WebError:
                continue
            publish(state)
            done.append(code)
        return done

    async def ticker() -> None:
        while True:  # at start-up first: deadlines that passed while the server was down
            with contextlib.suppress(Exception):
                await tick()
            await anyio.sleep(limits.clock_every_s)

    async def sweeper() -> None:
        while True:
            await anyio.sleep(limits.sweep_every_s)
            await sweep()

    async def warm_coach() -> None:
        await anyio.to_thread.run_sync(
            tables.coach, RuleSet.from_spec("official"), abandon_on_cancel=True
        )

    routes = [
        Route("/", page),
        Route("/t/{code}", page),
        Route("/stats", page),
        Route("/games/{gid}", page),
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
        Route("/api/tables/{code}/leave", endpoint(people("leave")), methods=["POST"]),
        Route("/api/tables/{code}/back", endpoint(people("back")), methods=["POST"]),
        Route("/api/tables/{code}/hand", endpoint(people("hand")), methods=["POST"]),
        Route("/api/tables/{code}/remove", endpoint(people("remove")), methods=["POST"]),
        Route("/api/session", endpoint(session_get)),
        Route("/api/session", endpoint(session_post), methods=["POST"]),
        Route("/api/account/{what}", endpoint(account_post), methods=["POST"]),
        Route("/api/me/tables", endpoint(my_tables)),
        Route("/api/games/{gid}", endpoint(game_review), methods=["POST"]),
        WebSocketRoute("/ws/{code}", table_socket),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app):
        nonlocal loop
        loop = asyncio.get_running_loop()
        stop = storage.listen(notified)
        try:
            async with anyio.create_task_group() as tg:
                if prewarm:
                    tg.start_soon(warm_coach)
                tg.start_soon(sweeper)
                tg.start_soon(ticker)
                yield
                tg.cancel_scope.cancel()
        finally:
            if stop is not None:
                await run_in_threadpool(stop)
            storage.close()

    middleware = [
        Middleware(
            GuardMiddleware,
            limiter=per_address,
            allowed_origins=origins,
            refusals=refusals,
            allowed_hosts=hosts,
        )
    ]
    if trust_proxy:
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        middleware.insert(0, Middleware(ProxyHeadersMiddleware, trusted_hosts=trust_proxy))
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.tables = tables
    app.state.storage = storage
    app.state.hub = hub
    app.state.slots = slots
    app.state.limits = limits
    app.state.sweep = sweep
    app.state.tick = tick
    app.state.accounts = accounts
    return app


def app_from_env() -> Starlette:
    """The app of each ``yahtzee serve --workers N`` process: the database is ``$YAHTZEE_DB``,
    the other options the JSON object ``$YAHTZEE_SERVE_OPTIONS`` (`yahtzee serve` sets both)."""
    import os

    from yahtzee_env.web.limits import Limits
    from yahtzee_env.web.server import ClientErrorFilter

    options = json.loads(os.environ.get("YAHTZEE_SERVE_OPTIONS") or "{}")
    limits = Limits(**options.pop("limits", {}))
    logging.getLogger("uvicorn.error").addFilter(ClientErrorFilter())
    return create_app(os.environ["YAHTZEE_DB"], limits=limits, **options)
