"""``yahtzee serve``: the browser game (tables with the CPU levels, online tables, a coach).

The database is SQLite by default (a file; one process) or PostgreSQL (``--db
postgresql://USER@HOST:PORT/DBNAME``, or ``$YAHTZEE_DB``), which any number of server
processes may share: ``--workers N`` runs N on this machine. ``--check-db`` checks the
connection and the schema version (and applies the missing migrations with ``--migrate``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from yahtzee_env.commands import positive_int

HELP = "serve the browser game: tables of 2-4 with the CPU levels, online tables, statistics"
DB_ENV = "YAHTZEE_DB"
SMTP_ENV = "YAHTZEE_SMTP"  # the SMTP URL, its password kept off the command line
SITE_ENV = "YAHTZEE_SITE_URL"


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from yahtzee_env.web.limits import Limits  # stdlib only: no web extra needed for --help

    defaults = Limits()  # read from where they are enforced
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    parser.add_argument("--port", type=positive_int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--db",
        default=None,
        help="a SQLite database file, or a PostgreSQL URL postgresql://USER@HOST:PORT/DBNAME "
        f"(default: ${DB_ENV}, else web.sqlite3 in the user data dir, "
        "$XDG_DATA_HOME/yahtzee-rl/)",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help="server processes on this port (default 1; more than one needs PostgreSQL)",
    )
    parser.add_argument(
        "--check-db",
        action="store_true",
        help="check the database connection and schema version, print them, and exit "
        "(1 if the schema is not current)",
    )
    parser.add_argument(
        "--migrate",
        action="store_true",
        help="with --check-db: apply the missing migrations first",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="another origin whose pages may make moves and open sockets, such as "
        "https://yahtzee.example behind a proxy (repeatable; the server's own origin is "
        "always allowed, every other one is refused with 403)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="a Host name this server answers, such as yahtzee.example or *.example "
        "(repeatable; '*' answers any). Requests for other names get 400, against DNS "
        "rebinding. Default: on a loopback --host, the loopback names and the hosts of "
        "--allowed-origin; on another address, any name",
    )
    parser.add_argument(
        "--trust-proxy",
        nargs="?",
        const="127.0.0.1",
        default=None,
        metavar="ADDRS",
        help="take the client address (for the rate limits and caps) from X-Forwarded-For, "
        "but only on connections from these proxy addresses (comma-separated; default "
        "127.0.0.1; '*' trusts every peer). Without it, X-Forwarded-For is ignored",
    )
    parser.add_argument(
        "--expire-after",
        type=positive_float,
        default=30.0,
        metavar="DAYS",
        help="delete tables nobody has used for this many days (default 30; tables never "
        "started go after a day)",
    )
    parser.add_argument(
        "--expire-solo",
        type=positive_float,
        default=defaults.expire_solo_s / 3600,
        metavar="HOURS",
        help="delete an unfinished game against the computer, or an online one without a "
        f"turn clock, nobody has played for this many hours (default "
        f"{defaults.expire_solo_s / 3600:g}: a week)",
    )
    parser.add_argument(
        "--expire-abandoned",
        type=positive_float,
        default=defaults.expire_abandoned_s / 3600,
        metavar="HOURS",
        help="delete an unfinished online game with a turn clock nobody has moved in for "
        f"this many hours (default {defaults.expire_abandoned_s / 3600:g}); it is kept until "
        "its deadline, and at least the clock times its players after the last move",
    )
    parser.add_argument(
        "--max-sockets",
        type=positive_int,
        default=defaults.sockets_total,
        metavar="N",
        help=f"open WebSockets the server holds at once, every client together (default "
        f"{defaults.sockets_total}; past it a watcher's new socket is refused, a seated "
        "player's still opens)",
    )
    parser.add_argument(
        "--bench-stats",
        action="store_true",
        help="also serve GET /api/bench-stats: this process's CPU time and its database "
        "round trips, for experiments/bench_web.py (off by default)",
    )
    parser.add_argument(
        "--batch-moves",
        action="store_true",
        help="run the moves that arrive together as one batch (on the event loop, or with "
        "--moves-in-threads in one worker-thread call) and, on SQLite, commit them in one "
        "transaction (group commit; each is answered after that commit)",
    )
    parser.add_argument(
        "--moves-in-threads",
        action="store_true",
        help="run every move in a worker thread (by default a move at a table in memory, on "
        "SQLite, whose last move was cheap runs on the event loop when the database is free)",
    )
    parser.add_argument(
        "--ws-deflate",
        action="store_true",
        help="offer permessage-deflate on the WebSockets (off by default: it costs the server "
        "more CPU time than it saves bytes on a ~2 KB message)",
    )
    parser.add_argument(
        "--ws-impl",
        choices=("websockets-sansio", "websockets", "wsproto"),
        default=None,
        help="another of uvicorn's WebSocket implementations (for comparisons; default: the "
        "sans-I/O one, with this server's release of finished sockets)",
    )
    parser.add_argument(
        "--smtp",
        default=None,
        metavar="URL",
        help="send 'your turn' and invitation e-mails through this SMTP server: "
        "smtp://USER:PASSWORD@HOST:PORT (STARTTLS when offered) or smtps://... (TLS), "
        f"?from=ADDRESS for the sender (default: ${SMTP_ENV}; none: no e-mail)",
    )
    parser.add_argument(
        "--site-url",
        default=None,
        metavar="URL",
        help="the server's public address, the base of the e-mails' links "
        f"(default: ${SITE_ENV}, else http://HOST:PORT)",
    )
    parser.add_argument(
        "--header-timeout",
        type=positive_float,
        default=10.0,
        metavar="S",
        help="close a connection whose request head has not arrived in S seconds (10)",
    )


def connections_for(sockets: int) -> int:
    """The connections uvicorn takes before its 503s: every socket the app may hold, and
    room for the page loads and API calls beside them (never under the default)."""
    from yahtzee_env.web.door.server import MAX_CONNECTIONS

    return max(MAX_CONNECTIONS, sockets + 2048)


def limits_of(args: argparse.Namespace) -> dict:
    """The `Limits` fields the command line sets (the rest keep their defaults)."""
    return {
        "expire_idle_s": args.expire_after * 86_400,
        "expire_solo_s": args.expire_solo * 3600,
        "expire_abandoned_s": args.expire_abandoned * 3600,
        "sockets_total": args.max_sockets,
    }


def allowed_hosts(args: argparse.Namespace) -> list[str] | None:
    """The Host names to answer (None: any): the loopback names on a loopback ``--host``,
    plus ``--allowed-host`` and the hosts of ``--allowed-origin``."""
    import ipaddress
    from urllib.parse import urlsplit

    from yahtzee_env.web.door.guard import LOOPBACK_HOSTS

    try:
        loopback = args.host == "localhost" or ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not args.allowed_host:
        return None
    hosts = list(LOOPBACK_HOSTS) if loopback else []
    hosts += args.allowed_host  # create_app normalises the names (case, spaces)
    hosts += [urlsplit(o).hostname or "" for o in args.allowed_origin]
    return sorted({h for h in hosts if h})


def database(args: argparse.Namespace):
    from yahtzee_env.web.storage import default_db_path

    if args.db is not None:
        return args.db
    return os.environ.get(DB_ENV) or default_db_path()


def check_db(db, migrate: bool) -> int:
    """``--check-db [--migrate]``: 0 if the schema is current, 1 if not, 2 if unreachable."""
    from yahtzee_env.web.storage import SCHEMA_VERSION, SchemaError, describe_target, open_storage

    where = describe_target(db)
    try:
        storage = open_storage(db, migrate=False)
    except (ConnectionError, ModuleNotFoundError) as err:
        print(f"yahtzee serve: error: {err}", file=sys.stderr)
        return 2
    try:
        if migrate:
            applied = storage.migrate()
            if applied:
                print(f"{where}: applied migrations {', '.join(map(str, applied))}")
        version = storage.version
        print(
            f"{where}: {storage.dialect}, connected, schema version {version} "
            f"(this program's: {SCHEMA_VERSION})"
        )
        storage.check_version()
    except SchemaError as err:
        print(f"yahtzee serve: error: {err}", file=sys.stderr)
        return 1
    finally:
        storage.close()
    print("schema current")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        from yahtzee_env.web.door.app import create_app
        from yahtzee_env.web.door.server import run as run_server
        from yahtzee_env.web.limits import Limits
    except ModuleNotFoundError as err:
        if err.name and err.name.split(".")[0] in ("starlette", "uvicorn", "h11", "anyio"):
            from yahtzee_env.web import INSTALL_HINT

            print(f"yahtzee serve: error: {INSTALL_HINT}", file=sys.stderr)
            return 2
        raise
    from yahtzee_env.web.storage import SchemaError, describe_target, is_postgres_url, open_storage

    db = database(args)
    if args.migrate and not args.check_db:
        print("yahtzee serve: error: --migrate goes with --check-db", file=sys.stderr)
        return 2
    if args.check_db:
        return check_db(db, args.migrate)
    if args.workers > 1 and not is_postgres_url(str(db)):
        print(
            "yahtzee serve: error: --workers above 1 needs a PostgreSQL database (--db "
            "postgresql://USER@HOST:PORT/DBNAME): SQLite is one process's database, and "
            "processes each holding its tables in memory over one file would diverge",
            file=sys.stderr,
        )
        return 2
    smtp = args.smtp or os.environ.get(SMTP_ENV) or None
    if smtp is not None:
        from yahtzee_env.web.door.postman import parse_smtp

        try:
            parse_smtp(smtp)
        except ValueError as err:
            print(f"yahtzee serve: error: --smtp: {err}", file=sys.stderr)
            return 2
    site = args.site_url or os.environ.get(SITE_ENV) or f"http://{args.host}:{args.port}"
    options = {
        "smtp": smtp,
        "site_url": site,
        "allowed_origins": list(args.allowed_origin),
        "allowed_hosts": allowed_hosts(args),
        "trust_proxy": args.trust_proxy,
        "prewarm": True,
        "bench_stats": args.bench_stats,
        "batch_moves": args.batch_moves,
        "inline_moves": not args.moves_in_threads,
    }
    ws = {"ws_deflate": args.ws_deflate, "ws_impl": args.ws_impl,
          "max_connections": connections_for(args.max_sockets)}  # fmt: skip
    limits = limits_of(args)
    try:
        # migrate here (PostgreSQL: under an advisory lock), before any worker starts
        storage = open_storage(db)
    except (SchemaError, ConnectionError, ModuleNotFoundError) as err:
        print(f"yahtzee serve: error: {err}", file=sys.stderr)
        return 2
    workers = f", {args.workers} workers" if args.workers > 1 else ""
    print(
        f"Yatzy at http://{args.host}:{args.port}/  (database {describe_target(db)}{workers}; "
        "Ctrl-C stops)",
        flush=True,
    )
    if args.workers == 1:
        app = create_app(storage, limits=Limits(**limits), **options)
        run_server(app, args.host, args.port, header_timeout=args.header_timeout, **ws)
        return 0
    storage.close()
    os.environ[DB_ENV] = str(db)  # for the workers' app factory
    os.environ["YAHTZEE_SERVE_OPTIONS"] = json.dumps({**options, "limits": limits})
    run_server(
        "yahtzee_env.web.door.app:app_from_env",
        args.host,
        args.port,
        header_timeout=args.header_timeout,
        workers=args.workers,
        **ws,
    )
    return 0
