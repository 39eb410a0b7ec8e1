"""The HTTP routes of a place to play (issue 32): quick match, open tables, ratings and
spectators; `app.route_list` adds `routes()` to the server's.

    POST /api/quick         {seats, rules, fill, wait, name}   queue for a quick match
    GET  /api/quick                       where the session stands: idle, waiting, matched
    POST /api/quick/cancel                leave the queue (nothing of the request is kept)
    GET  /api/open-tables                 the tables listed as open, with their free seats
    POST /api/tables/CODE/list   {on}     (the host, before the start) list the table or not
    GET  /api/leaderboard                 the top ratings, your own place, the CPU levels'
    GET  /api/tables/CODE/rated           whether the game rates you, and what leaving costs
    POST /api/tables/CODE/watch  {on}     (the host) the read-only link on or off: {watch}
    GET  /api/tables/CODE/watch          (the host) the link's id: {watch}
    GET  /api/watch/ID                    the table of watch link ID, as spectators see it
    WS   /ws/watch/ID                     its live states (`spectators`)

A player is the session's (the page's cookie) or, for an API client, the body's player token;
each request spends the asker's token bucket. The browser a request comes from is the hashed
``yz_device`` cookie (`accounts.DEVICE_COOKIE`), recorded with the seats it takes so that
seats of one browser never rate each other (`ratings`).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from yahtzee_env.web.door.guard import client_address
from yahtzee_env.web.door.routes import asked, endpoint
from yahtzee_env.web.door.service import Service, pid, who
from yahtzee_env.web.door.spectators import redact
from yahtzee_env.web.people.accounts import device_of
from yahtzee_env.web.tables.table import WebError, clean_code

OPEN_TABLES_SHOWN = 20
LISTED_PER_HOST = 2  # unstarted tables one host may list at once


def player_of(service: Service, body: dict[str, Any], session) -> dict[str, Any]:
    player = service.tables.who(body, session)
    if player is None:
        raise WebError("a player is needed: choose a name first", 403, "player_token")
    return player


def flag(body: dict[str, Any], key: str = "on") -> bool:
    value = body.get(key)
    if not isinstance(value, bool):
        raise WebError(f"{key} must be true or false")
    return value


# ----------------------------------------------------------------- quick match
@endpoint
async def quick_request(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    service.spend(who(body, session, "player"))
    address, device = client_address(request.scope), device_of(request)

    def work():
        player = player_of(service, body, session)
        return service.matchmaker.request(body, player, address, device)

    return JSONResponse(await run_in_threadpool(work))


@endpoint
async def quick_status(request: Request, service: Service) -> Response:
    session = await service.session_of(request)
    token = request.query_params.get("player")
    body = {"player": token} if token else {}
    if session is None and not token:  # a first visit: no player yet, so nothing waits
        return JSONResponse({"state": "idle"})
    service.spend(who(body, session, "player"))

    def work():
        return service.matchmaker.status(player_of(service, body, session))

    return JSONResponse(await run_in_threadpool(work))


@endpoint
async def quick_cancel(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    service.spend(who(body, session, "player"))

    def work():
        return service.matchmaker.cancel(player_of(service, body, session))

    return JSONResponse(await run_in_threadpool(work))


# ----------------------------------------------------------------- open tables
def open_tables(storage) -> list[dict[str, Any]]:
    """The listed online tables that have not started and have a free seat, newest first."""
    rows = storage.tables.listed(OPEN_TABLES_SHOWN)
    out = []
    for r in rows:
        mine = r["seats"]
        free = sum(s["kind"] == "friend" for s in mine)
        if not free or not mine:
            continue
        host = mine[0]["name"]
        cpus = [s["kind"] for s in mine if s["kind"] not in ("human", "friend")]
        out.append(
            {
                "code": r["code"],
                "rules": r["rules"],
                "host": host,
                "seats": len(mine),
                "free": free,
                "cpus": cpus,
                "turn_timer": int(r["turn_timer"] or 0),
                "match": bool(r["match"]),
            }
        )
    return out


@endpoint
async def list_open_tables(request: Request, service: Service) -> Response:
    return JSONResponse({"tables": await run_in_threadpool(open_tables, service.storage)})


def _host_check(service: Service, table, body: dict[str, Any], session) -> None:
    """The asker is table's host (seat 0: its session's, or its seat token)."""
    player = session["id"] if session is not None else None
    token = body.get("token")
    seat = 0 if token is None else body.get("seat", 0)
    table.seat_of_token(seat, token, player)
    if seat != 0:
        raise WebError("only the host (seat 1) can do that", 403, "not_host")


@endpoint
async def list_table(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    service.spend(who(body, session))
    on = flag(body)
    storage = service.storage

    def work(code: str):
        table = service.tables.load(code)
        _host_check(service, table, body, session)
        if on and (table.started or not table.online):
            raise WebError(
                "only an online table that has not started can be listed", 409, "not_listable"
            )
        if on and not any(s.kind == "friend" for s in table.seats):
            raise WebError(  # it would never show in the list: say so instead
                "an open table needs a free seat: make one seat 'a friend'", 409, "no_free_seat"
            )
        if on and storage.tables.listed_by_host(code) >= LISTED_PER_HOST:
            raise WebError(
                f"you already list {LISTED_PER_HOST} open tables", 429, "too_many_listed"
            )
        storage.tables.set_listed(code, on)
        return {"code": code, "listed": on}

    return JSONResponse(await service.locks.run(request.path_params["code"], work))


# ----------------------------------------------------------------- ratings
@endpoint
async def leaderboard(request: Request, service: Service) -> Response:
    session = await service.session_of(request)
    player = session["id"] if session is not None else None
    return JSONResponse(await run_in_threadpool(service.ratings.leaderboard, player))


# ----------------------------------------------------------------- spectators
@endpoint
async def watch_link(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    service.spend(who(body, session))
    on = flag(body)

    def work(code: str):
        _host_check(service, service.tables.load(code), body, session)
        return service.spectators.set_link(code, on)

    code = clean_code(request.path_params["code"])
    watch = await service.locks.run(code, work)
    if watch is None:
        service.spectators.closed(code)
    return JSONResponse({"code": code, "watch": watch})


@endpoint
async def watch_link_of(request: Request, service: Service) -> Response:
    """The host's view of the link: ``{watch}`` (None: off)."""
    session = await service.session_of(request)

    def work(code: str):
        _host_check(service, service.tables.load(code), {}, session)
        return service.spectators.link_of(code)

    code = clean_code(request.path_params["code"])
    return JSONResponse({"code": code, "watch": await service.locks.run(code, work)})


@endpoint
async def watched_table(request: Request, service: Service) -> Response:
    watch_id = request.path_params["wid"]
    service.check_lookups(request)  # guessing links: the code's budget
    try:
        code = await run_in_threadpool(service.spectators.code_of, watch_id)
    except WebError as err:
        service.spend_lookup(request)  # a guessed link spends budget
        raise err
    state = service.fanout.present(await service.table_state(code))
    return JSONResponse(redact(state, watch_id))


@endpoint
async def rated(request: Request, service: Service) -> Response:
    """Whether the table's current game rates the session's player, and what leaving it
    now would cost (`ratings.Ratings.leave_cost`): the page asks before it leaves."""
    session = await service.session_of(request)
    service.spend(who({}, session))
    player, tables = pid(session), service.tables

    def work(c: str) -> dict:
        return service.ratings.leave_cost(tables.load(c), player)

    code = clean_code(request.path_params["code"])
    return JSONResponse(await service.locks.run(code, work))


__all__ = ["open_tables"]
