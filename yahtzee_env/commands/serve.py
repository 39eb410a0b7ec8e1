"""``yahtzee serve``: the browser game (tables with the CPU levels, online tables, a coach)."""

from __future__ import annotations

import argparse
import sys

from yahtzee_env.commands import positive_int

HELP = "serve the browser game: tables of 2-4 with the CPU levels, online tables, statistics"


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    parser.add_argument("--port", type=positive_int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--db",
        default=None,
        help="SQLite database file (default: web.sqlite3 in the user data dir, "
        "$XDG_DATA_HOME/yahtzee-rl/)",
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
        "--header-timeout",
        type=positive_float,
        default=10.0,
        metavar="S",
        help="close a connection whose request head has not arrived in S seconds (10)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        from yahtzee_env.web.app import create_app
        from yahtzee_env.web.limits import Limits
        from yahtzee_env.web.server import run as run_server
    except ModuleNotFoundError as err:
        if err.name and err.name.split(".")[0] in ("starlette", "uvicorn", "h11", "anyio"):
            from yahtzee_env.web import INSTALL_HINT

            print(f"yahtzee serve: error: {INSTALL_HINT}", file=sys.stderr)
            return 2
        raise
    from yahtzee_env.web.storage import SchemaError, default_db_path

    db = args.db if args.db is not None else default_db_path()
    limits = Limits(expire_idle_s=args.expire_after * 86_400)
    try:
        app = create_app(
            db,
            limits=limits,
            allowed_origins=args.allowed_origin,
            trust_proxy=args.trust_proxy,
            prewarm=True,
        )
    except SchemaError as err:
        print(f"yahtzee serve: error: {err}", file=sys.stderr)
        return 2
    print(f"Yahtzee at http://{args.host}:{args.port}/  (database {db}; Ctrl-C stops)", flush=True)
    run_server(app, args.host, args.port, header_timeout=args.header_timeout)
    return 0
