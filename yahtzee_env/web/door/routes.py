"""The HTTP routes of ``yahtzee serve``: one plain function per route (`app` lists them),
each one line into the server object (`service.Service`, ``request.app.state.service``) or
a helper it holds (``service.social``, ``service.desk``, ``service.place``): the same
handler a socket message of that intent reaches.

`endpoint` reads what a request carries (`Ask`: a POST's JSON body of at most
`asks.MAX_BODY` bytes, the session's player, the path's table code), answers a returned
dict as JSON, and a refused request (`WebError`) with its status and ``{"error", "code",
"params"}``. tests/web/test_wings.py holds every route to one line.
"""

from __future__ import annotations

import functools
import math
import secrets
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

import yahtzee_env.web.door.site as site
from yahtzee_env.web.door.asks import MAX_BODY, MAX_SINCE_DIGITS, parse_json
from yahtzee_env.web.door.guard import client_address
from yahtzee_env.web.door.service import Service
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.people.accounts import SESSION_COOKIE, SESSION_DAYS, device_of, device_token
from yahtzee_env.web.people.logins import DEVICE_COOKIE, DEVICE_DAYS
from yahtzee_env.web.tables.offline_games import MAX_BODY_BYTES as OFFLINE_BODY

DEFAULT_RETRY_AFTER = 1  # s: a 429 whose budget refills within a second


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


@dataclass
class Ask:
    """A request as its intent reads it: the JSON ``body`` (a POST's; ``{}`` otherwise) and
    the ``session``'s player row (None without one, or where the route reads none)."""

    request: Request
    body: dict[str, Any]
    session: Any

    @property
    def code(self) -> str:
        """The path's table code (``/api/tables/CODE/...``)."""
        return self.request.path_params["code"]

    @property
    def address(self) -> str:
        return client_address(self.request.scope)

    @property
    def cookie(self) -> str | None:
        """The session cookie as sent."""
        return self.request.cookies.get(SESSION_COOKIE)

    @property
    def device(self) -> str | None:
        """The browser's hashed id (`accounts.device_of`)."""
        return device_of(self.request)

    @property
    def device_token(self) -> str | None:
        """The browser's id cookie as sent (`accounts.device_token`)."""
        return device_token(self.request)

    def param(self, name: str) -> str:
        return self.request.path_params[name]

    def query(self, name: str, default: str | None = None) -> str | None:
        return self.request.query_params.get(name, default)


def endpoint(handler=None, *, limit: int = MAX_BODY, session: bool = True):
    """A route ``handler(ask, service)`` (`Ask`): a request naming a table code spends the
    address's lookup budget's check first; a POST's body (at most ``limit`` bytes) and the
    session's player (``session``: read it) are read; a dict returned is answered as JSON; a
    refusal is logged and answered as JSON."""
    if handler is None:
        return functools.partial(endpoint, limit=limit, session=session)

    @functools.wraps(handler)
    async def wrapped(request: Request) -> Response:
        service: Service = request.app.state.service
        try:
            if "code" in request.path_params:
                service.check_lookups(request)
            body = await read_body(request, service, limit) if request.method == "POST" else {}
            player = await service.session_of(request) if session else None
            answer = await handler(Ask(request, body, player), service)
        except WebError as err:
            service.refused(request, f"{request.method} {request.url.path[:60]}", err)
            return error(err)
        return answer if isinstance(answer, Response) else JSONResponse(answer)

    return wrapped


async def read_body(request: Request, service: Service, limit: int = MAX_BODY) -> dict[str, Any]:
    """The request's JSON object, refused when larger than ``limit`` (`MAX_BODY`) or slower
    to arrive than ``Limits.read_timeout_s``."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise WebError(f"payload too large: {length[:12]} bytes (at most {limit})", 413)
    chunks, size = [], 0
    try:
        with anyio.fail_after(service.limits.read_timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise WebError(f"payload too large (at most {limit} bytes)", 413)
                chunks.append(chunk)
    except TimeoutError:
        raise WebError("the request body did not arrive in time", 408) from None
    return parse_json(b"".join(chunks), limit)


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


def signed(ask: Ask, reply: dict, token: str | None, device: str | None = None) -> Response:
    """``reply``, and the new session's cookie where there is a ``token`` (`set_session`)."""
    if token is None:
        return JSONResponse(reply)
    return set_session(JSONResponse(reply), ask.request, token, device)


def signed_out(ask: Ask, reply: dict) -> Response:
    """``reply``, the session cookie deleted."""
    return set_session(JSONResponse(reply), ask.request, None)


def attachment(data: dict, filename: str) -> Response:
    """``data`` as a JSON file to save."""
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    return JSONResponse(data, headers=headers)


def since_of(text: str) -> int:
    """The ``since`` of a table's state: an event number."""
    if not text.isdigit() or len(text) > MAX_SINCE_DIGITS:
        raise WebError(f"since must be an integer from 0 to {10**MAX_SINCE_DIGITS - 1}")
    return int(text)


def refuse_account_action(what: str) -> Response:
    """An account action that does not exist (404 ``not_found``)."""
    raise WebError(f"no such account action {what[:20]!r}", 404, "not_found")


# ----------------------------------------------------------------- the page, health
async def page(request: Request) -> Response:
    return FileResponse(site.STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})


async def service_worker(request: Request) -> Response:
    return await site.service_worker()


async def level_file(request: Request) -> Response:
    return await site.level_file(request.path_params["name"], request.headers.get("if-none-match"))


async def healthz(request: Request) -> Response:
    return JSONResponse({"ok": True, "instance": request.app.state.service.tables.instance})


async def bench_stats(request: Request) -> Response:
    return site.bench_stats(request.app.state.service, request.query_params.get("since"))


async def readyz(request: Request) -> Response:
    return await site.readiness(request.app.state.service.storage)


# ----------------------------------------------------------------- the lobby
@endpoint(session=False)
async def config(ask: Ask, service: Service) -> dict:
    return site.lobby_config()


@endpoint(session=False)
async def create_player(ask: Ask, service: Service) -> dict:
    return await service.create_player(ask.body, ask.address)


@endpoint
async def stats(ask: Ask, service: Service) -> dict:
    return await service.records.statistics(ask.body, ask.session)


@endpoint
async def create_table(ask: Ask, service: Service) -> dict:
    return await service.create_table(ask.body, ask.session, ask.address, ask.device)


@endpoint(limit=OFFLINE_BODY)
async def offline_games(ask: Ask, service: Service) -> dict:
    return await service.records.offline_games(ask.body, ask.session)


@endpoint
async def my_tables(ask: Ask, service: Service) -> dict:
    return await service.records.my_tables(ask.session)


# ----------------------------------------------------------------- a table
@endpoint
async def get_table(ask: Ask, service: Service) -> dict:
    return await service.view(ask.code, since_of(ask.query("since", "0")), ask.session)


@endpoint
async def join(ask: Ask, service: Service) -> dict:
    return await service.join(ask.code, ask.body, ask.session, ask.device)


@endpoint
async def start(ask: Ask, service: Service) -> dict:
    return await service.start(ask.code, ask.body, ask.session)


@endpoint
async def client_seed(ask: Ask, service: Service) -> dict:
    return await service.client_seed(ask.code, ask.body, ask.session)


@endpoint
async def act(ask: Ask, service: Service) -> dict:
    return await service.act(ask.code, ask.body, ask.session)


@endpoint
async def hint(ask: Ask, service: Service) -> dict:
    return await service.hint(ask.code, ask.body, ask.session)


@endpoint
async def leave(ask: Ask, service: Service) -> dict:
    return await service.leave(ask.code, ask.body, ask.session)


@endpoint
async def back(ask: Ask, service: Service) -> dict:
    return await service.back(ask.code, ask.body, ask.session)


@endpoint
async def rename(ask: Ask, service: Service) -> dict:
    return await service.rename(ask.code, ask.body, ask.session)


@endpoint
async def hand(ask: Ask, service: Service) -> dict:
    return await service.hand(ask.code, ask.body, ask.session)


@endpoint
async def remove(ask: Ask, service: Service) -> dict:
    return await service.remove(ask.code, ask.body, ask.session)


# ----------------------------------------------------------------- the table's people
@endpoint
async def chat_get(ask: Ask, service: Service) -> dict:
    return await service.social.messages(ask.code, ask.query("after", "0"), ask.session)


@endpoint
async def chat_post(ask: Ask, service: Service) -> dict:
    return await service.social.say(ask.code, ask.body, ask.session)


@endpoint
async def report(ask: Ask, service: Service) -> dict:
    return await service.social.report(ask.code, ask.body, ask.session)


@endpoint
async def block(ask: Ask, service: Service) -> dict:
    return await service.social.block(ask.code, ask.body, ask.session)


@endpoint
async def kick(ask: Ask, service: Service) -> dict:
    return await service.social.kick(ask.code, ask.body, ask.session)


@endpoint
async def moves(ask: Ask, service: Service) -> dict:
    return await service.social.moves(ask.code, ask.session)


@endpoint
async def game_review(ask: Ask, service: Service) -> dict:
    return await service.social.review(ask.param("gid"), ask.body, ask.session)


# ----------------------------------------------------------------- sessions, accounts
@endpoint
async def session_get(ask: Ask, service: Service) -> dict:
    return await service.profile(ask.session)


@endpoint
async def session_post(ask: Ask, service: Service) -> Response:
    """A guest session with a name (or the session's new name)."""
    return signed(ask, *await service.sign_ins.name_session(ask.body, ask.session, ask.address))


@endpoint
async def sign_in(ask: Ask, service: Service) -> Response:
    return signed(
        ask,
        *await service.sign_ins.sign_in(
            ask.body, ask.session, ask.address, ask.cookie, ask.device_token
        ),
    )


@endpoint
async def sign_up(ask: Ask, service: Service) -> Response:
    return signed(
        ask,
        *await service.sign_ins.sign_in(
            ask.body, ask.session, ask.address, ask.cookie, ask.device_token, new=True
        ),
    )


@endpoint
async def sign_out(ask: Ask, service: Service) -> Response:
    return signed_out(ask, await service.sign_ins.sign_out(ask.body, ask.session, ask.cookie))


@endpoint
async def change_password(ask: Ask, service: Service) -> Response:
    return signed(
        ask, *await service.desk.change_password(ask.body, ask.session, ask.address, ask.cookie)
    )


@endpoint
async def recovery_codes(ask: Ask, service: Service) -> dict:
    return await service.desk.recovery_codes(ask.body, ask.session, ask.address, ask.cookie)


@endpoint
async def recover(ask: Ask, service: Service) -> Response:
    return signed(ask, *await service.desk.recover(ask.body, ask.address, ask.device_token))


@endpoint
async def delete_account(ask: Ask, service: Service) -> Response:
    return signed_out(
        ask, await service.desk.delete(ask.body, ask.session, ask.address, ask.cookie)
    )


@endpoint
async def export_account(ask: Ask, service: Service) -> Response:
    return attachment(await service.desk.export(ask.session), "yatzy-account.json")


@endpoint
async def profile(ask: Ask, service: Service) -> dict:
    return await service.records.profile(ask.param("name"), ask.session, ask.request)


@endpoint
async def profile_visibility(ask: Ask, service: Service) -> dict:
    return await service.records.profile_visibility(ask.body, ask.session)


@endpoint
async def blocks(ask: Ask, service: Service) -> dict:
    return await service.social.blocks(ask.session)


@endpoint
async def unblock(ask: Ask, service: Service) -> dict:
    return await service.social.unblock(ask.body, ask.session)


@endpoint
async def no_account_action(ask: Ask, service: Service) -> Response:
    return refuse_account_action(ask.param("what"))


# ----------------------------------------------------------------- a place to play
@endpoint
async def quick_request(ask: Ask, service: Service) -> dict:
    return await service.place.quick(ask.body, ask.session, ask.address, ask.device)


@endpoint
async def quick_status(ask: Ask, service: Service) -> dict:
    return await service.place.quick_status(ask.query("player"), ask.session)


@endpoint
async def quick_cancel(ask: Ask, service: Service) -> dict:
    return await service.place.quick_cancel(ask.body, ask.session)


@endpoint(session=False)
async def list_open_tables(ask: Ask, service: Service) -> dict:
    return await service.place.open_tables()


@endpoint
async def list_table(ask: Ask, service: Service) -> dict:
    return await service.place.list_table(ask.code, ask.body, ask.session)


@endpoint
async def leaderboard(ask: Ask, service: Service) -> dict:
    return await service.place.leaderboard(ask.session)


@endpoint
async def rated(ask: Ask, service: Service) -> dict:
    return await service.place.rated(ask.code, ask.session)


@endpoint
async def watch_link(ask: Ask, service: Service) -> dict:
    return await service.place.watch_link(ask.code, ask.body, ask.session)


@endpoint
async def watch_link_of(ask: Ask, service: Service) -> dict:
    return await service.place.watch_link_of(ask.code, ask.session)


@endpoint(session=False)
async def watched_table(ask: Ask, service: Service) -> dict:
    return await service.place.watched(ask.request, ask.param("wid"))


# ---------------------------------------------------------------- friends (issue 62)
@endpoint
async def friends(ask: Ask, service: Service) -> dict:
    return await service.friendship.overview(ask.session)


@endpoint
async def follow(ask: Ask, service: Service) -> dict:
    return await service.friendship.follow(ask.body, ask.session)


@endpoint
async def unfollow(ask: Ask, service: Service) -> dict:
    return await service.friendship.unfollow(ask.body, ask.session)


@endpoint
async def invite(ask: Ask, service: Service) -> dict:
    return await service.friendship.invite(ask.body, ask.session)


@endpoint
async def accept_invite(ask: Ask, service: Service) -> dict:
    return await service.friendship.answer(ask.body, ask.session, True)


@endpoint
async def decline_invite(ask: Ask, service: Service) -> dict:
    return await service.friendship.answer(ask.body, ask.session, False)


@endpoint
async def friends_only(ask: Ask, service: Service) -> dict:
    return await service.friendship.friends_only(ask.code, ask.session)


@endpoint
async def set_friends_only(ask: Ask, service: Service) -> dict:
    return await service.friendship.set_friends_only(ask.code, ask.body, ask.session)


# ----------------------------------------------------------------- e-mail (issue 62)
@endpoint
async def email_settings(ask: Ask, service: Service) -> dict:
    return await service.mail_desk.settings(ask.session)


@endpoint
async def email_address(ask: Ask, service: Service) -> dict:
    return await service.mail_desk.set_address(ask.body, ask.session)


@endpoint
async def email_resend(ask: Ask, service: Service) -> dict:
    return await service.mail_desk.resend(ask.session)


@endpoint
async def email_choices(ask: Ask, service: Service) -> dict:
    return await service.mail_desk.choices(ask.body, ask.session)


@endpoint
async def email_remove(ask: Ask, service: Service) -> dict:
    return await service.mail_desk.remove(ask.session)


async def email_confirm(request: Request) -> Response:
    return await request.app.state.service.mail_desk.confirm_page(request)


async def email_unsubscribe(request: Request) -> Response:
    return await request.app.state.service.mail_desk.unsubscribe_page(request)


# ---------------------------------------------------------------- tournaments (issue 62)
@endpoint
async def tournaments(ask: Ask, service: Service) -> dict:
    return await service.tourneys.listing(ask.session)


@endpoint
async def create_tournament(ask: Ask, service: Service) -> dict:
    return await service.tourneys.create(ask.body, ask.session)


@endpoint
async def tournament(ask: Ask, service: Service) -> dict:
    return await service.tourneys.bracket(ask.code, ask.session)


@endpoint
async def join_tournament(ask: Ask, service: Service) -> dict:
    return await service.tourneys.join(ask.code, ask.session)


@endpoint
async def start_tournament(ask: Ask, service: Service) -> dict:
    return await service.tourneys.start(ask.code, ask.session)
