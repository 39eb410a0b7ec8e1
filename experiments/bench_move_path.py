"""The server's work for one move without the web (issue 33, fourth round): `Tables.act` (the
intent, the CPU seats' moves after it, the SQLite commit) and the table's state for the ack,
on a temporary SQLite file, in this thread. Reports the thread's CPU time per move, split
into the commit (`SQLiteStorage.timed_commits`) and the rest, and the WAL's frames (pages)
per commit: the storage's checkpointer is stopped and a passive checkpoint runs here every
``--checkpoint-every`` moves (`SQLiteStorage.wal_checkpoint`), outside the timing (the log
then starts over, as in the server), its count of the log's frames summed. It reaches the
storage through its public methods only (tests/web/test_wings.py holds that).

``--db local-postgres`` (a private cluster, as in ``bench_web.py``) or ``--db
postgresql://...`` runs the same moves on PostgreSQL, in this one thread: the client's CPU
per move (psycopg's and the game's; the database's own process not counted) and the wall
time per move (its round trips), with no WAL to count. Set beside a server's CPU per move
on PostgreSQL (``bench_web.py --db local-postgres``), it says how much of that is the move
and how much the hand-offs between the event loop and the worker threads.

A lever of the storage or the game is measured here first, where the machine's other
processes do not count (``time.thread_time``), then in ``bench_web.py``.

    python experiments/bench_move_path.py --tables 200 --moves 4000
    python experiments/bench_move_path.py --tables 200 --moves 4000 --db local-postgres
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yahtzee_env.web.storage import Storage, is_postgres_url, open_storage
from yahtzee_env.web.tables.authority import Tables


def play(
    tables: Tables, storage: Storage, made: list, total: int, every: int, wal: bool = True
) -> tuple[int, float, float, int]:
    """``total`` moves at the tables ``made`` (code, seat token), ``every`` tables at a time
    then (``wal``: SQLite) a passive checkpoint (untimed): the moves, their CPU seconds,
    their wall seconds, the WAL's frames."""
    moves, spent, wall, frames = 0, 0.0, 0.0, 0
    while moves < total:
        start, began = time.thread_time(), time.perf_counter()
        for code, token in made[:every]:
            table = tables.loaded[code]
            game = table.game
            if game.over:
                intent = {"type": "next"}
            elif table.in_cup:  # a person's turn starts with the dice in the cup: the tap
                intent = {"type": "roll", "hold": []}
            elif game.rolls_left == 2:
                intent = {"type": "roll", "hold": [0]}
            else:
                options = tables.state(table)["options"]
                intent = {"type": "score", "box": max(options, key=options.get)}
            table, first = tables.act(code, 0, token, intent, len(table.log), table.idx)
            tables.state(table, first)
            moves += 1
        spent += time.thread_time() - start
        wall += time.perf_counter() - began
        if wal:
            frames += storage.wal_checkpoint("PASSIVE")
        made = made[every:] + made[:every]
    return moves, spent, wall, frames


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--moves", type=int, default=4000)
    parser.add_argument("--opponent", default="medium")
    parser.add_argument("--checkpoint-every", type=int, default=200)
    parser.add_argument(
        "--db",
        default="sqlite",
        help="sqlite (a temporary file, the default), local-postgres (a private cluster) or "
        "a postgresql:// URL of a database the benchmark may fill",
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.db not in ("sqlite", "local-postgres") and not is_postgres_url(args.db):
        parser.error(f"--db {args.db!r}: use sqlite, local-postgres or a postgresql:// URL")
    with contextlib.ExitStack() as stack:
        if args.db == "sqlite":
            target = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "web.sqlite3"
        elif args.db == "local-postgres":
            from yahtzee_env.web.door.local_postgres import LocalPostgres

            target = stack.enter_context(LocalPostgres()).create_database("bench")
        else:
            target = args.db
        storage = open_storage(target)
        wal = args.db == "sqlite"
        tables = Tables(storage, 10**6, 10**6)
        made = []
        for i in range(args.tables):
            table, tokens = tables.create(
                {"seats": ["human", args.opponent]}, f"10.{i // 250}.{i % 250}.1", None
            )
            made.append((table.code, tokens[0]))
        if wal:  # SQLite's checkpoints run here, between the timed moves
            if storage.checkpoints is not None:
                storage.checkpoints.stop()
            storage.wal_checkpoint("TRUNCATE")
        with storage.timed_commits() as commit_s:
            trips = storage.trips.snapshot()
            moves, spent, wall, frames = play(
                tables, storage, made, args.moves, args.checkpoint_every, wal
            )
        counts = storage.trips.since(trips)
        page = storage.page_size() if wal else None
        storage.close()
    out = {
        "command": " ".join(sys.argv[1:] if argv is None else argv),
        "db": "sqlite" if wal else "postgresql",
        "tables": args.tables,
        "moves": moves,
        "cpu_us_per_move": round(1e6 * spent / moves, 1),
        "wall_us_per_move": round(1e6 * wall / moves, 1),
        "commit_us_per_move": round(1e6 * commit_s[0] / moves, 1),
        "rest_us_per_move": round(1e6 * (spent - commit_s[0]) / moves, 1),
        "wal_frames_per_commit": (
            round(frames / max(1, counts["transactions"]), 2) if wal else None
        ),
        "page_size": page,
        "per_move": {k: round(v / moves, 3) for k, v in counts.items()},
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
