"""``yahtzee serve``: the browser game (tables with the CPU levels, online tables, a coach)."""

from __future__ import annotations

import argparse
import sys

from yahtzee_env.commands import positive_int

HELP = "serve the browser game: tables of 2-4 with the CPU levels, online tables, statistics"


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


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from yahtzee_env.web.app import create_app
    except ModuleNotFoundError as err:
        if err.name and err.name.split(".")[0] in ("starlette", "uvicorn"):
            from yahtzee_env.web import INSTALL_HINT

            print(f"yahtzee serve: error: {INSTALL_HINT}", file=sys.stderr)
            return 2
        raise
    from yahtzee_env.web.storage import SchemaError, default_db_path

    db = args.db if args.db is not None else default_db_path()
    try:
        app = create_app(db)
    except SchemaError as err:
        print(f"yahtzee serve: error: {err}", file=sys.stderr)
        return 2
    print(f"Yahtzee at http://{args.host}:{args.port}/  (database {db}; Ctrl-C stops)", flush=True)
    # small WebSocket frames only: every legitimate message is well under 4 KiB
    from uvicorn.config import WS_PROTOCOLS

    ws = "websockets-sansio" if "websockets-sansio" in WS_PROTOCOLS else "auto"
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", ws=ws, ws_max_size=65536)
    return 0
