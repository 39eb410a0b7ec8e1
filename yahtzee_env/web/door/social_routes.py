"""The HTTP routes of account care and of the table's people (issue 32); `app` lists them.

    POST /api/account/password {current, password}   a new password; the other sessions end
    POST /api/account/recovery-codes {password}      a new set of recovery codes (shown once)
    POST /api/account/recover {username, code, password}  back in with a recovery code
    POST /api/account/delete {password}              the account and its data go
    GET  /api/account/export                         every row about the player, as JSON
    POST /api/account/blocks {}                      the accounts the player blocked
    POST /api/account/unblock {player_id}
    GET  /api/tables/CODE/chat?after=N               the table's messages after id N
    POST /api/tables/CODE/chat {seat, token, text | emote}
    POST /api/tables/CODE/report {seat, token, target}
    POST /api/tables/CODE/block {seat, token, target}   (an account) block that account
    POST /api/tables/CODE/kick {seat, token, target}    (the host) the computer takes the seat
    GET  /api/tables/CODE/moves                      the current game's moves, newest first
    POST /api/games/CODE-IDX                         the review (`Service.review`) and the
                                                     game's chat

Each route reads the request and runs the work in a worker thread (hashing is slow on
purpose); the work on a table runs under its lock (`locks`), and a change is published to
the table's sockets like any other (`fanout`).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from yahtzee_env.web.door.guard import client_address
from yahtzee_env.web.door.routes import MAX_SINCE_DIGITS, asked, endpoint, set_session
from yahtzee_env.web.door.service import Service, login_name, pid, who
from yahtzee_env.web.people.account_care import forget_seats
from yahtzee_env.web.people.accounts import SESSION_COOKIE, device_token
from yahtzee_env.web.people.chat import review_chat
from yahtzee_env.web.tables.movelog import move_log
from yahtzee_env.web.tables.table import WebError


def profile(service: Service, player_id: int, username: str) -> dict[str, Any]:
    name = service.storage.players.player_by_id(player_id)["name"]
    return {"player": {"id": player_id, "name": name}, "account": username}


def account_budget(request: Request, service: Service, session) -> None:
    """A password checked for a session spends the sign-in budget of the address and a
    budget of that session (a stolen session cannot guess the password at leisure, and
    spends only its own budget: nobody else's session or sign-in is slowed)."""
    service.login_budget(client_address(request.scope))
    token = request.cookies.get(SESSION_COOKIE)
    if session is not None and isinstance(token, str):
        key = ("care-session", hashlib.sha256(token.encode()).hexdigest())
        if not service.logins.allow(key):
            wait = max(1, math.ceil(service.logins.retry_after(key)))
            raise WebError(
                "too many password attempts from this session: wait a little",
                429,
                "login_budget",
                retry_after=wait,
            )


# ----------------------------------------------------------------- account care
@endpoint
async def change_password(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    account_budget(request, service, session)

    def work():
        username = service.care.change_password(pid(session), body)
        return profile(service, session["id"], username), service.accounts.new_session(
            session["id"]
        )

    reply, token = await service.hash_gate.run(work)
    return set_session(JSONResponse({**reply, "changed": True}), request, token)


@endpoint
async def recovery_codes(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    account_budget(request, service, session)
    codes = await service.hash_gate.run(service.care.regenerate, pid(session), body)
    return JSONResponse({"recovery_codes": codes})


@endpoint
async def recover(request: Request, service: Service) -> Response:
    body, _session = await asked(request, service)
    service.login_budget(client_address(request.scope))
    name = login_name(body)

    def work():
        player_id, username, left = service.care.recover(body)
        token = service.accounts.new_session(player_id)
        return {**profile(service, player_id, username), "recovery_codes_left": left}, token

    async with service.checking(name, device_token(request)):  # as a password is checked
        try:
            reply, token = await service.hash_gate.run(work)
        except WebError as err:
            if err.code == "bad_recovery":
                service.throttle.failed(name)
            raise
    return set_session(JSONResponse(reply), request, token)


@endpoint
async def delete_account(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    account_budget(request, service, session)
    codes = await service.hash_gate.run(service.care.check_delete, pid(session), body)
    player_id, tables = session["id"], service.tables

    def rename(c: str):
        with tables.locked(c) as table:
            changed = forget_seats(table, player_id)
            if changed:
                service.storage.tables.update_seats(c, [table.seats[i].row() for i in changed])
                if table.started and table.game is not None and not table.game.over:
                    tables.run_cpus(table)
                    tables.timer.arm(table)
            return tables.state(table)

    for code in codes:
        try:
            service.fanout.publish(await service.locks.run(code, rename))
        except WebError:
            continue  # the table expired meanwhile
    await run_in_threadpool(service.care.delete, player_id)
    reply = {"player": None, "account": None, "deleted": True}
    return set_session(JSONResponse(reply), request, None)


@endpoint
async def export_account(request: Request, service: Service) -> Response:
    session = await service.session_of(request)
    service.spend(who({}, session))
    data = await run_in_threadpool(service.care.export, pid(session))
    headers = {"Content-Disposition": 'attachment; filename="yatzy-account.json"'}
    return JSONResponse(data, headers=headers)


@endpoint
async def blocks(request: Request, service: Service) -> Response:
    _body, session = await asked(request, service)
    if session is None:
        raise WebError("sign in first: this needs an account", 403, "no_account")
    rows = await run_in_threadpool(service.storage.people.blocks_of, session["id"])
    return JSONResponse({"blocked": rows})


@endpoint
async def unblock(request: Request, service: Service) -> Response:
    body, session = await asked(request, service)
    if session is None:
        raise WebError("sign in first: this needs an account", 403, "no_account")
    target = body.get("player_id")
    if isinstance(target, bool) or not isinstance(target, int):
        raise WebError("player_id must be an integer")
    await run_in_threadpool(service.storage.people.unblock, session["id"], target)
    return JSONResponse({"unblocked": target})


# ----------------------------------------------------------------- the table's people
async def chat_intent(request: Request, service: Service, work) -> dict[str, Any]:
    """``work(code, body, player_id)`` under the table's lock, for a seated asker."""
    body, session = await asked(request, service)
    service.spend(who(body, session))
    player = pid(session)
    return await service.locks.run(request.path_params["code"], lambda c: work(c, body, player))


@endpoint
async def chat_post(request: Request, service: Service) -> Response:
    message = await chat_intent(request, service, service.chat.say)
    if not message.pop("unheard", False):  # an unheard one goes back to its author only
        chat = {"type": "chat", "message": message}
        service.hub.broadcast(message["code"], chat, seated=True)  # not a socket with no seat
    return JSONResponse({"message": message})


@endpoint
async def chat_get(request: Request, service: Service) -> Response:
    after = request.query_params.get("after", "0")
    if not after.isdigit() or len(after) > MAX_SINCE_DIGITS + 3:
        raise WebError("after must be a message id (an integer)")
    session = await service.session_of(request)
    service.spend(who({}, session))
    player, code = pid(session), request.path_params["code"]
    rows = await service.locks.run(code, lambda c: service.chat.messages(c, player, int(after)))
    return JSONResponse({"messages": rows})


@endpoint
async def report(request: Request, service: Service) -> Response:
    return JSONResponse(await chat_intent(request, service, service.chat.report))


@endpoint
async def block(request: Request, service: Service) -> Response:
    return JSONResponse(await chat_intent(request, service, service.chat.block))


@endpoint
async def kick(request: Request, service: Service) -> Response:
    def work(c, body, player):
        return service.tables.state(service.chat.kick(c, body, player))

    return JSONResponse(service.fanout.publish(await chat_intent(request, service, work)))


@endpoint
async def moves(request: Request, service: Service) -> Response:
    code, tables = request.path_params["code"], service.tables
    return JSONResponse(await service.locks.run(code, lambda c: move_log(tables.load(c))))


@endpoint
async def game_review(request: Request, service: Service) -> Response:
    """The review of a finished game (`Service.review`), with the game's chat."""
    body, session = await asked(request, service)
    gid = request.path_params["gid"]
    review = await service.review(gid, body, session)
    code, _, idx = gid.rpartition("-")
    chat = await run_in_threadpool(review_chat, service.storage, code, int(idx))
    return JSONResponse({**review, "chat": chat})


__all__ = [
    "block",
    "blocks",
    "change_password",
    "chat_get",
    "chat_post",
    "delete_account",
    "export_account",
    "game_review",
    "kick",
    "moves",
    "recover",
    "recovery_codes",
    "report",
    "unblock",
]
