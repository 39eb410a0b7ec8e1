"""The HTTP routes of ``yahtzee serve``: one plain function per route (`app` lists them).

Each reads what the request carries (a JSON body of at most `service.MAX_BODY` bytes, the
session cookie, the path's table code) and hands it to the intent's handler on the server
object (`service.Service`, ``request.app.state.service``), the same handler a socket message
of that intent reaches. `endpoint` answers a refused request (`WebError`) with its status and
``{"error", "code", "params"}``.
"""

from __future__ import annotations

import functools
import json
import math
import secrets
from pathlib import Path
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from yahtzee_env.game.rules import BOX_NAMES, NUM_UPPER, PRESETS
from yahtzee_env.web.door.guard import client_address
from yahtzee_env.web.door.service import MAX_BODY, Service, parse_json
from yahtzee_env.web.people.accounts import SESSION_COOKIE, SESSION_DAYS, device_token
from yahtzee_env.web.people.logins import DEVICE_COOKIE, DEVICE_DAYS
from yahtzee_env.web.people.matchmaking import DEFAULT_WAIT, WAIT_RANGE, WAITS, note_seats
from yahtzee_env.web.storage import SchemaError, describe_target
from yahtzee_env.web.tables.table import (
    DEFAULT_FILL,
    MAX_SEATS,
    MIN_SEATS,
    ONLINE_TURN_TIMER,
    TURN_TIMER_RANGE,
    TURN_TIMERS,
    WebError,
    cpu_levels,
    main_levels,
)

STATIC_DIR = Path(__file__).parents[1] / "static"  # yahtzee_env/web/static
MAX_SINCE_DIGITS = 9  # `since` is an event number: a few digits at most
DEFAULT_RETRY_AFTER = 1  # s: a 429 whose budget refills within a second


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


def error(err: WebError) -> JSONResponse:
    """A refusal as JSON; a 429 (and a 503 that knows) says when to try again
    (``Retry-After``, and the params' ``retry_after`` for the page's words)."""
    headers = {}
    if err.status == 429:
        err.params.setdefault("retry_after", DEFAULT_RETRY_AFTER)
    if err.status in (429, 503) and "retry_after" in err.params:
        headers["Retry-After"] = str(max(1, math.ceil(err.params["retry_after"])))
    body = {"error": str(err), "code": err.code}
    if err.params:
        body["params"] = err.params
    return JSONResponse(body, status_code=err.status, headers=headers)


def endpoint(handler):
    """A route ``handler(request, service)``: a request naming a table code spends the
    address's lookup budget's check first, and a refusal is logged and answered as JSON."""

    @functools.wraps(handler)
    async def wrapped(request: Request) -> Response:
        service: Service = request.app.state.service
        try:
            if "code" in request.path_params:
                service.check_lookups(request)
            return await handler(request, service)
        except WebError as err:
            service.refused(request, f"{request.method} {request.url.path[:60]}", err)
            return error(err)

    return wrapped


async def read_body(request: Request, service: Service) -> dict[str, Any]:
    """The request's JSON object, refused when larger than `MAX_BODY` or slower to arrive
    than ``Limits.read_timeout_s``."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        raise WebError(f"payload too large: {length[:12]} bytes (at most {MAX_BODY})", 413)
    chunks, size = [], 0
    try:
        with anyio.fail_after(service.limits.read_timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY:
                    raise WebError(f"payload too large (at most {MAX_BODY} bytes)", 413)
                chunks.append(chunk)
    except TimeoutError:
        raise WebError("the request body did not arrive in time", 408) from None
    return parse_json(b"".join(chunks))


async def asked(request: Request, service: Service) -> tuple[dict[str, Any], Any]:
    """The request's body and its session's player (None without one)."""
    body = await read_body(request, service)
    return body, await service.session_of(request)


def set_session(
    response: Response, request: Request, token: str | None, device: str | None = None
) -> Response:
    """Set the session cookie to ``token`` (None: delete it), and the browser's id cookie
    (``device``, else a new one where the request has none)."""
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
    if device is None and device_token(request) is None:  # kept across sign-ins
        device = secrets.token_urlsafe(24)
    if device is not None:
        response.set_cookie(
            DEVICE_COOKIE,
            device,
            max_age=DEVICE_DAYS * 86_400,
            path="/",
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="strict",
        )
    return response


# ----------------------------------------------------------------- the page, health
async def page(request: Request) -> Response:
    return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})


async def healthz(request: Request) -> Response:
    return JSONResponse({"ok": True, "instance": request.app.state.service.tables.instance})


async def bench_stats(request: Request) -> Response:
    """What this process has spent (issue 33; only where `create_app`'s ``bench_stats`` is
    on, for experiments/bench_web.py): its CPU seconds by its own accounting, and the
    storage's counts of round trips, statements and transactions (`storage.Trips`)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    service = request.app.state.service
    try:  # the benchmark's window: the collector's longest pauses since this clock reading
        since = float(request.query_params["since"]) if "since" in request.query_params else None
    except ValueError:
        return JSONResponse({"error": "since must be a number", "code": "bad_since"}, 400)
    checkpoints = getattr(service.storage, "checkpoints", None)  # SQLite's `Checkpointer`
    held = None
    if checkpoints is not None and since is not None:  # its locked passes in the window
        held = [[ended, spent] for ended, spent in list(checkpoints.held) if ended > since]
    return JSONResponse(
        {
            "checkpoint_holds_since": held,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "db": service.storage.trips.snapshot(),
            "sockets": service.hub.count(),
            "tables_in_memory": len(service.tables.loaded),
            "gc": service.gc_pauses.snapshot(since),
            "moves": {  # where the changes ran (`locks.TableLocks.run`)
                "inline": service.locks.inline,
                "threaded": service.locks.threaded,
                "busy_db": service.locks.busy_db,
                "inline_s": service.locks.inline_s,
                "inline_max_s": service.locks.inline_max_s,
            },
        }
    )


async def readyz(request: Request) -> Response:
    storage = request.app.state.service.storage
    try:
        version = await run_in_threadpool(storage.check_version)
    except SchemaError as err:
        return JSONResponse({"ready": False, "error": str(err)}, status_code=503)
    except Exception as err:
        message = f"database {describe_target(storage.target)} unreachable: {err}"
        return JSONResponse({"ready": False, "error": message[:500]}, status_code=503)
    return JSONResponse({"ready": True, "schema_version": version})


# ----------------------------------------------------------------- the lobby
@endpoint
async def config(request: Request, service: Service) -> Response:
    """What the lobby offers, read from where it is enforced (`tables`): the CPU levels,
    the rules presets, the seat counts, the turn timer's range and suggestions, the boxes."""
    return JSONResponse(
        {
            "levels": cpu_levels(),
            "main_levels": main_levels(),
            "fill": DEFAULT_FILL,
            "rules": list(PRESETS),
            "max_seats": MAX_SEATS,
            "min_seats": MIN_SEATS,
            "turn_timers": list(TURN_TIMERS),
            "turn_timer_range": list(TURN_TIMER_RANGE),
            "turn_timer_online": ONLINE_TURN_TIMER,
            "boxes": list(BOX_NAMES),  # the card's order (actions 32.. score them so)
            "upper_boxes": NUM_UPPER,
            "languages": languages(),
            "quick_waits": list(WAITS),  # quick match (`matchmaking`)
            "quick_wait_range": list(WAIT_RANGE),
            "quick_default_wait": DEFAULT_WAIT,
        }
    )


@endpoint
async def create_player(request: Request, service: Service) -> Response:
    body = await read_body(request, service)
    return JSONResponse(await service.create_player(body, client_address(request.scope)))


@endpoint
async def stats(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    return JSONResponse(await service.statistics(body, session))


@endpoint
async def create_table(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    address = client_address(request.scope)
    reply = await service.create_table(body, session, address)
    await note_seats(request, service, reply["code"], reply["mine"])
    return JSONResponse(reply)


@endpoint
async def my_tables(request: Request, service: Service) -> Response:
    return JSONResponse(await service.my_tables(await service.session_of(request)))


# ----------------------------------------------------------------- a table
@endpoint
async def get_table(request: Request, service: Service) -> Response:
    since = request.query_params.get("since", "0")
    if not since.isdigit() or len(since) > MAX_SINCE_DIGITS:
        raise WebError(f"since must be an integer from 0 to {10**MAX_SINCE_DIGITS - 1}")
    session = await service.session_of(request)
    return JSONResponse(await service.view(request.path_params["code"], int(since), session))


async def table_intent(request: Request, service: Service, intent) -> Response:
    """``intent(code, body, session)`` of the path's table, answered with its reply."""
    body, session = await asked(request, service)
    return JSONResponse(await intent(request.path_params["code"], body, session))


@endpoint
async def join(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    reply = await service.join(request.path_params["code"], body, session)
    await note_seats(request, service, reply["state"]["code"], [reply["seat"]])
    return JSONResponse(reply)


@endpoint
async def start(request: Request, service: Service) -> Response:
    return await table_intent(request, service, service.start)


@endpoint
async def act(request: Request, service: Service) -> Response:
    return await table_intent(request, service, service.act)


@endpoint
async def hint(request: Request, service: Service) -> Response:
    return await table_intent(request, service, service.hint)


@endpoint
async def leave(request: Request, service: Service) -> Response:
    return await table_intent(request, service, service.leave)


@endpoint
async def back(request: Request, service: Service) -> Response:
    return await table_intent(request, service, service.back)


@endpoint
async def rename(request: Request, service: Service) -> Response:
    return await table_intent(request, service, service.rename)


@endpoint
async def hand(request: Request, service: Service) -> Response:
    return await table_intent(request, service, service.hand)


@endpoint
async def remove(request: Request, service: Service) -> Response:
    return await table_intent(request, service, service.remove)


# ----------------------------------------------------------------- sessions, accounts
@endpoint
async def session_get(request: Request, service: Service) -> Response:
    return JSONResponse(await service.profile(await service.session_of(request)))


@endpoint
async def session_post(request: Request, service: Service) -> Response:
    """A guest session with a name (or the session's new name)."""
    body, session = await asked(request, service)
    reply, token = await service.name_session(body, session, client_address(request.scope))
    return set_session(JSONResponse(reply), request, token) if token else JSONResponse(reply)


async def signing_in(request: Request, service: Service, new: bool) -> Response:
    body, session = await asked(request, service)
    address, old = client_address(request.scope), request.cookies.get(SESSION_COOKIE)
    device = device_token(request)
    known = device is not None
    device = device or secrets.token_urlsafe(24)  # this browser's id from now on
    reply, token = await service.sign_in(body, session, address, old, new, device, known)
    return set_session(JSONResponse(reply), request, token, device)


@endpoint
async def sign_in(request: Request, service: Service) -> Response:
    return await signing_in(request, service, new=False)


@endpoint
async def sign_up(request: Request, service: Service) -> Response:
    return await signing_in(request, service, new=True)


@endpoint
async def sign_out(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    reply = await service.sign_out(body, session, request.cookies.get(SESSION_COOKIE))
    return set_session(JSONResponse(reply), request, None)


@endpoint
async def no_account_action(request: Request, service: Service) -> Response:
    await asked(request, service)
    what = request.path_params["what"]
    raise WebError(f"no such account action {what[:20]!r}", 404, "not_found")
