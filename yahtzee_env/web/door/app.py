"""The routes of ``yahtzee serve``: the page, a JSON API and a WebSocket per table.

HTTP (JSON bodies, at most `MAX_BODY` bytes; errors are ``{"error": "...", "code": "..."}``
with a 4xx, ``code`` a stable machine word such as ``stale_seq``, and ``params`` its values
when it has some: the page shows ``err.<code>`` from its catalogue, ``static/i18n/<lang>.json``):

    GET  /api/config                      CPU levels and rules presets for the lobby
    GET  /levels/NAME.json | NAME.f32     a level as the page plays it offline (issue 50)
    GET  /sw.js                           the service worker (its cache: the page offline)
    POST /api/offline-games {games}       finished offline games: replayed, kept, never rated
    POST /api/players       {name}        a profile: {player_id, name, token}
    POST /api/stats         {player}      my statistics
    POST /api/tables        {seats, rules, online, match, coach, fill, name, player}
    GET  /api/tables/CODE?since=N         the table's state
    POST /api/tables/CODE/join   {name, player}       -> {seat, token, state}
    POST /api/tables/CODE/start  {seat, token}        (the host)
    POST /api/tables/CODE/client-seed {seat, token, client_seed}  before the game's first
                                          roll: the seat's seed mixed into the dice (issue 58)
    POST /api/tables/CODE/act    {seat, token, seq, game, action: {type: roll|score|next, ...}}
    POST /api/tables/CODE/hint   {seat, token}
    POST /api/tables/CODE/leave  {seat, token}        the seat goes to the computer
    POST /api/tables/CODE/back   {seat, token}        take the seat back from it
    POST /api/tables/CODE/hand   {target, seat, token} (the host) an absent seat to the CPU
    POST /api/tables/CODE/rename {seat, token, name}  play as another name at this table
    POST /api/tables/CODE/remove {target, seat, token} (the host, before the start)
    GET  /api/session                     the session's profile: {player, account}
    POST /api/session       {name}        a guest session (cookie), or a new name
    POST /api/account/signup {username, password}   the session's profile becomes an account
    POST /api/account/signin {username, password}
    POST /api/account/signout {everywhere}
    GET  /api/me/tables                   the session's open tables
    POST /api/account/password | recovery-codes | recover | delete,
    GET  /api/account/export, POST /api/tables/CODE/chat | report | block | kick,
    GET  /api/tables/CODE/chat?after=N, GET /api/tables/CODE/moves
                                          account care and the table's people (issue 32):
                                          `account_desk` and `social` list their bodies
    GET  /api/profiles/NAME, POST /api/account/profile {visibility}
                                          a profile and who sees it (issue 62): `records`
    GET  /api/email, POST /api/email | email/resend | email/choices | email/remove,
    GET|POST /email/confirm, /email/unsubscribe    e-mail (issue 62: `postman`)
    /api/quick, /api/open-tables, /api/leaderboard, /api/watch/ID, /ws/watch/ID and the
    host's /api/tables/CODE/list and /watch: a place to play (issue 32), `place`
    /api/friends, /api/friends/follow | unfollow | invite | accept | decline and the
    host's /api/tables/CODE/friends-only: friends and invitations (issue 62), `friendship`
    /api/tournaments, /api/tournaments/CODE, its /join and /start: tournaments (issue 62),
                                          `tourneys`

The page identifies itself by its session cookie (``yz_session``: ``HttpOnly``,
``SameSite=Strict``, ``Secure`` over HTTPS): with it, ``seat`` alone says which seat (one
of the session's) and no token is handed out or needed; API clients use the tokens.
    POST /api/games/CODE-IDX     {player, tokens: {seat: token}}  the review of a finished
                                          game (403 unless seated there or the table is public)
    GET  /healthz                         200 while the process is up
    GET  /api/bench-stats                 only with ``yahtzee serve --bench-stats``: the
                                          process's CPU seconds and database round trips
    GET  /readyz                          200 if the database answers and its schema is
                                          this program's, else 503 (for a load balancer)

``seq`` and ``game`` are those of the state the move was made from: a move made from an
older state is refused (409 ``stale_seq``), so a repeated request is harmless.

WebSocket ``/ws/CODE`` (`sockets`): the server pushes ``{"type": "state", "state": ...}``
after every change at the table; the page may send ``{"type": "hello", "seat", "token"}`` (a
seated socket: it gets in even when the watchers' slots are full), the intents ``{"type":
"act" | "hint" | "start" | "leave" | "back" | "hand" | "remove", "id", "seat", "token", ...}``
(the bodies of their routes) and gets ``hello`` / ``ack`` / ``hint`` / ``error`` replies
with the same ``id``. A refused socket is closed with a code and reason (`hub`). A ``hello``
without a token names the session's seats (the cookie came with the handshake). Presence:
every state says for each seat whether its player has a socket open (``connected``), and
``{"type": "presence", "connected": [seats]}`` goes out when that changes. Turn deadlines
are stored with the table; a clock task plays the turns whose time ran out (at start-up
too, for those that ran out while the server was down).

The rooms: `create_app` builds the server object (`service.Service`: the tables, storage,
accounts, sockets, locks and limits, and one handler per intent) and lists the routes; the
HTTP routes are `routes`, the table's socket `sockets` (reached past the router:
`SocketLane`), the fan-out of states to the sockets (other processes' changes too)
`fanout`, the front door (headers, cross-site checks, per-address limits) `guard`, the
limits `limits`, the sockets `hub`, the game loop `tables`, storage `storage`. Every
piece of work on a table (moves, CPU moves, coach, loading, database commits) runs in a
worker thread, one at a time per table (`locks`); the event loop only routes.

Several processes on one PostgreSQL database (issue 20): a table's work also holds the
table's row lock in the database (`Tables.locked`), a copy in memory is used only at the
database's ``rev``, and a change committed by another process reaches this one as a
notification (`Storage.listen`, then `fanout.Fanout`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Match, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

import yahtzee_env.web.door.routes as http
from yahtzee_env.web.door.guard import GuardMiddleware
from yahtzee_env.web.door.service import Service
from yahtzee_env.web.door.site import STATIC_DIR, languages
from yahtzee_env.web.door.sockets import table_socket
from yahtzee_env.web.door.watch import watch_socket
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.storage import Storage, open_storage

POST = ["POST"]


# The one page's views (a table, my statistics, the dice checker of issue 58, a game's review,
# the leaderboard, a profile of issue 62, a watch link): each address serves the page itself
PAGE_VIEWS = ("/", "/t/{code}", "/stats", "/verify", "/games/{gid}", "/leaderboard", "/p/{name}",
              "/w/{wid}", "/tournaments", "/tournaments/{code}")  # fmt: skip


class SocketLane:
    """The sockets' short way in: a WebSocket whose path is one of ``routes`` goes to its
    endpoint from here, past the rest of the middleware and the router, which have nothing
    to do for a socket (the guard lets sockets through: their handlers check and refuse
    them themselves). Each of those layers is a coroutine frame kept for as long as the
    socket is open: about 4.3 KB of an idle socket (issue 60). Every other request, and a
    socket on another path, goes on as before."""

    def __init__(self, app, routes: list[WebSocketRoute]) -> None:
        self.app, self.routes = app, routes

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket":
            for route in self.routes:
                match, child = route.matches(scope)
                if match is Match.FULL:
                    scope.update(child)
                    await route.endpoint(WebSocket(scope, receive=receive, send=send))
                    return
        await self.app(scope, receive, send)


def email_routes() -> list:
    """E-mail (issue 62): an account's address, its choices; the mails' links."""
    return [
        Route("/api/email", http.email_settings),
        Route("/api/email", http.email_address, methods=POST),
        Route("/api/email/resend", http.email_resend, methods=POST),
        Route("/api/email/choices", http.email_choices, methods=POST),
        Route("/api/email/remove", http.email_remove, methods=POST),
        Route("/email/confirm", http.email_confirm, methods=["GET", "POST"]),
        Route("/email/unsubscribe", http.email_unsubscribe, methods=["GET", "POST"]),
    ]


def route_list(bench_stats: bool = False) -> list:
    """Every route of the server, and its handler (``bench_stats``: and
    ``GET /api/bench-stats``, what the process has spent, for the load benchmark)."""
    extra = [Route("/api/bench-stats", http.bench_stats)] if bench_stats else []
    routes = [
        *(Route(path, http.page) for path in PAGE_VIEWS),
        Route("/levels/{name}", http.level_file),
        Route("/sw.js", http.service_worker),
        Route("/healthz", http.healthz),
        Route("/readyz", http.readyz),
        Route("/api/config", http.config),
        Route("/api/players", http.create_player, methods=POST),
        Route("/api/stats", http.stats, methods=POST),
        Route("/api/tables", http.create_table, methods=POST),
        Route("/api/tables/{code}", http.get_table),
        Route("/api/tables/{code}/join", http.join, methods=POST),
        Route("/api/tables/{code}/start", http.start, methods=POST),
        Route("/api/tables/{code}/client-seed", http.client_seed, methods=POST),
        Route("/api/tables/{code}/act", http.act, methods=POST),
        Route("/api/tables/{code}/hint", http.hint, methods=POST),
        Route("/api/tables/{code}/leave", http.leave, methods=POST),
        Route("/api/tables/{code}/back", http.back, methods=POST),
        Route("/api/tables/{code}/hand", http.hand, methods=POST),
        Route("/api/tables/{code}/rename", http.rename, methods=POST),
        Route("/api/tables/{code}/remove", http.remove, methods=POST),
        Route("/api/tables/{code}/chat", http.chat_get),
        Route("/api/tables/{code}/chat", http.chat_post, methods=POST),
        Route("/api/tables/{code}/report", http.report, methods=POST),
        Route("/api/tables/{code}/block", http.block, methods=POST),
        Route("/api/tables/{code}/kick", http.kick, methods=POST),
        Route("/api/tables/{code}/moves", http.moves),
        Route("/api/session", http.session_get),
        Route("/api/session", http.session_post, methods=POST),
        Route("/api/account/signin", http.sign_in, methods=POST),
        Route("/api/account/signup", http.sign_up, methods=POST),
        Route("/api/account/signout", http.sign_out, methods=POST),
        Route("/api/account/password", http.change_password, methods=POST),
        Route("/api/account/recovery-codes", http.recovery_codes, methods=POST),
        Route("/api/account/recover", http.recover, methods=POST),
        Route("/api/account/delete", http.delete_account, methods=POST),
        Route("/api/account/export", http.export_account),
        Route("/api/account/blocks", http.blocks, methods=POST),
        Route("/api/account/unblock", http.unblock, methods=POST),
        Route("/api/account/profile", http.profile_visibility, methods=POST),
        Route("/api/account/{what}", http.no_account_action, methods=POST),
        Route("/api/me/tables", http.my_tables),
        Route("/api/offline-games", http.offline_games, methods=POST),
        Route("/api/games/{gid}", http.game_review, methods=POST),
        # a place to play (issue 32): quick match, open tables, ratings, spectators
        Route("/api/profiles/{name}", http.profile),
        Route("/api/quick", http.quick_request, methods=POST),
        Route("/api/quick", http.quick_status),
        Route("/api/quick/cancel", http.quick_cancel, methods=POST),
        Route("/api/open-tables", http.list_open_tables),
        Route("/api/tables/{code}/list", http.list_table, methods=POST),
        Route("/api/leaderboard", http.leaderboard),
        Route("/api/tables/{code}/rated", http.rated),
        # friends and invitations (issue 62)
        Route("/api/friends", http.friends),
        Route("/api/friends/follow", http.follow, methods=POST),
        Route("/api/friends/unfollow", http.unfollow, methods=POST),
        Route("/api/friends/invite", http.invite, methods=POST),
        Route("/api/friends/accept", http.accept_invite, methods=POST),
        Route("/api/friends/decline", http.decline_invite, methods=POST),
        Route("/api/tables/{code}/friends-only", http.friends_only),
        Route("/api/tables/{code}/friends-only", http.set_friends_only, methods=POST),
        *email_routes(),
        Route("/api/tables/{code}/watch", http.watch_link, methods=POST),
        Route("/api/tables/{code}/watch", http.watch_link_of),
        Route("/api/watch/{wid}", http.watched_table),
        Route("/api/tournaments", http.tournaments),  # tournaments (issue 62)
        Route("/api/tournaments", http.create_tournament, methods=POST),
        Route("/api/tournaments/{code}", http.tournament),
        Route("/api/tournaments/{code}/join", http.join_tournament, methods=POST),
        Route("/api/tournaments/{code}/start", http.start_tournament, methods=POST),
        WebSocketRoute("/ws/{code}", table_socket),
        WebSocketRoute("/ws/watch/{wid}", watch_socket),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    return [*extra, *routes]


def create_app(
    db_path: str | Path | Storage,
    *,
    limits: Limits | None = None,
    allowed_origins: tuple[str, ...] | list[str] = (),
    allowed_hosts: tuple[str, ...] | list[str] | None = None,
    trust_proxy: str | None = None,
    prewarm: bool = False,
    clock: Callable[[], float] | None = None,
    bench_stats: bool = False,
    batch_moves: bool = False,
    inline_moves: bool = True,
    smtp: str | None = None,
    site_url: str = "http://localhost:8000",
) -> Starlette:
    """The ASGI app over the database at ``db_path``: a SQLite file, a ``postgresql://``
    URL, or an open `Storage`. Its server object is ``app.state.service``.

    ``limits``: the server's limits (`Limits`, the one place they are set).
    ``allowed_origins``: other origins (``https://game.example``) whose pages may make
    moves, for a deployment behind a proxy. ``allowed_hosts``: the ``Host`` names
    (``game.example``, ``*.example``) this server answers (400 for any other; default: any),
    against DNS rebinding. ``trust_proxy``: the proxy addresses (comma-separated, or ``*``)
    whose ``X-Forwarded-For`` gives the client address. ``prewarm``: load (or solve) the
    official rules' coach table at start-up. ``clock``: the wall clock of the turn deadlines
    (tests move it; default `time.time`). ``bench_stats``: serve ``GET /api/bench-stats``
    (the process's CPU time and the storage's round trips; off by default).
    ``batch_moves``: the moves that arrive together at tables in memory run in one
    worker-thread call and, on SQLite, commit in one transaction (`batch.MoveBatcher`;
    off by default). ``inline_moves``: a move at a table in memory, on SQLite, runs on the
    event loop where it is cheap and the database is free (`locks.TableLocks.run`; on by
    default; with ``batch_moves``, the batches run there). ``smtp``: the SMTP server's URL
    (``smtp://USER:PASSWORD@HOST:PORT``, ``smtps://...``; None: no e-mail, `postman`);
    ``site_url``: the server's public address, the base of the mails' links."""
    storage = db_path if isinstance(db_path, Storage) else open_storage(db_path)
    origins = frozenset(o.rstrip("/") for o in allowed_origins)
    hosts = None if allowed_hosts is None else frozenset(h.strip().lower() for h in allowed_hosts)
    service = Service(
        storage,
        limits,
        origins=origins,
        hosts=hosts,
        clock=clock,
        batch_moves=batch_moves,
        inline_moves=inline_moves,
        smtp=smtp,
        site_url=site_url,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with service.run(prewarm=prewarm):
            yield

    guard = Middleware(
        GuardMiddleware,
        limiter=service.per_address,
        page_limiter=service.per_address_page,
        allowed_origins=origins,
        refusals=service.refusals,
        allowed_hosts=hosts,
    )
    routes = route_list(bench_stats)
    sockets = [r for r in routes if isinstance(r, WebSocketRoute)]
    middleware = [Middleware(SocketLane, routes=sockets), guard]
    if trust_proxy:
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        middleware.insert(0, Middleware(ProxyHeadersMiddleware, trusted_hosts=trust_proxy))
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.service = service
    if bench_stats:
        service.gc_pauses.start()
    return app


def app_from_env() -> Starlette:
    """The app of each ``yahtzee serve --workers N`` process: the database is ``$YAHTZEE_DB``,
    the other options the JSON object ``$YAHTZEE_SERVE_OPTIONS`` (`yahtzee serve` sets both)."""
    from yahtzee_env.web.door.server import ClientErrorFilter

    options = json.loads(os.environ.get("YAHTZEE_SERVE_OPTIONS") or "{}")
    limits = Limits(**options.pop("limits", {}))
    logging.getLogger("uvicorn.error").addFilter(ClientErrorFilter())
    return create_app(os.environ["YAHTZEE_DB"], limits=limits, **options)


__all__ = ["STATIC_DIR", "SocketLane", "app_from_env", "create_app", "languages", "route_list"]
