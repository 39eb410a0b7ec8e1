"""SQLite storage of the web game: players, tables, games, the action log and results.

One small module, one connection, a versioned schema (``PRAGMA user_version`` counts the
migrations applied; `MIGRATIONS` only ever grows), WAL mode. A table is stored as its seed
and its seats, each game as its index and seed, and every accepted action as one row of the
log: the server rebuilds any table by replaying its log (the dice come from the stored
seeds), so a restart, even after ``kill -9``, resumes at the last committed action. Each
write method commits before it returns, and the server acknowledges an action only after.

Tokens (players' and seats') are stored as SHA-256 hashes, never in clear; so is the
address of the client that created a table (for the per-address cap). `expire` deletes
tables (seats, and so their tokens, with them) that never started or went idle; results
stay for the statistics.

The server calls it from worker threads: one lock serializes every use of the connection.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MIGRATIONS: list[str] = [
    # 1: the first schema
    """
    CREATE TABLE players (
        id INTEGER PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        created REAL NOT NULL
    );
    CREATE TABLE tables (
        code TEXT PRIMARY KEY,
        created REAL NOT NULL,
        rules TEXT NOT NULL,
        seed INTEGER NOT NULL,
        online INTEGER NOT NULL,
        match INTEGER NOT NULL,
        coach INTEGER NOT NULL,
        fill_level TEXT NOT NULL,
        started INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE seats (
        code TEXT NOT NULL REFERENCES tables(code),
        seat INTEGER NOT NULL,
        kind TEXT NOT NULL,          -- 'human' or a CPU level name
        name TEXT NOT NULL,
        player_id INTEGER REFERENCES players(id),
        token_hash TEXT,             -- NULL: a free friend seat (or a CPU)
        PRIMARY KEY (code, seat)
    );
    CREATE TABLE games (
        code TEXT NOT NULL REFERENCES tables(code),
        idx INTEGER NOT NULL,
        match_no INTEGER NOT NULL,
        first INTEGER NOT NULL,
        PRIMARY KEY (code, idx)
    );
    CREATE TABLE actions (
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,        -- game index at the table
        seq INTEGER NOT NULL,        -- action number within the game
        seat INTEGER NOT NULL,
        action INTEGER NOT NULL,     -- engine action id
        regret REAL,                 -- coach's grade of a human decision (NULL: not graded)
        PRIMARY KEY (code, idx, seq)
    );
    CREATE TABLE results (
        player_id INTEGER NOT NULL REFERENCES players(id),
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        score INTEGER NOT NULL,
        outcome TEXT NOT NULL,       -- 'win', 'draw' or 'loss'
        yahtzees INTEGER NOT NULL,
        upper_bonus INTEGER NOT NULL,
        opponents TEXT NOT NULL,     -- the CPU levels at the table, or 'humans'
        online INTEGER NOT NULL,
        finished REAL NOT NULL,
        PRIMARY KEY (code, idx, seat)
    );
    CREATE INDEX results_player ON results(player_id, finished);
    """,
    # 2: bounded resources (issue 17): last activity, whether the current game is over, and
    # who hosts the table (player id, hashed client address), for expiry and per-host caps
    """
    ALTER TABLE tables ADD COLUMN updated REAL;
    ALTER TABLE tables ADD COLUMN over INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables ADD COLUMN host_player INTEGER;
    ALTER TABLE tables ADD COLUMN host_addr TEXT;
    UPDATE tables SET updated = created;
    CREATE INDEX tables_updated ON tables(updated);
    CREATE INDEX tables_host_player ON tables(host_player, over);
    CREATE INDEX tables_host_addr ON tables(host_addr, over);
    """,
    # 3: a table may make its game reviews public (anyone with the link)
    """
    ALTER TABLE tables ADD COLUMN public INTEGER NOT NULL DEFAULT 0;
    """,
    # 4: people at online tables (issue 18): the turn timer and its deadline (stored, so a
    # restart plays a turn whose time ran out while the server was down), play-again votes,
    # who may act for a seat (a session's player) and whether the computer plays it for now;
    # accounts (argon2id hashes) and sessions (cookies, stored hashed)
    """
    ALTER TABLE tables ADD COLUMN turn_timer INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables ADD COLUMN deadline REAL;
    ALTER TABLE tables ADD COLUMN votes TEXT NOT NULL DEFAULT '';
    ALTER TABLE seats ADD COLUMN owner_id INTEGER;
    ALTER TABLE seats ADD COLUMN away TEXT;
    CREATE INDEX tables_deadline ON tables(deadline);
    CREATE INDEX seats_owner ON seats(owner_id);
    CREATE TABLE accounts (
        player_id INTEGER PRIMARY KEY REFERENCES players(id),
        username TEXT NOT NULL UNIQUE,   -- case-folded
        password_hash TEXT NOT NULL,     -- argon2id, PHC string
        created REAL NOT NULL
    );
    CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        player_id INTEGER NOT NULL REFERENCES players(id),
        created REAL NOT NULL,
        seen REAL NOT NULL
    );
    CREATE INDEX sessions_player ON sessions(player_id);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


def default_db_path() -> Path:
    """``$YAHTZEE_DATA_DIR/web.sqlite3``, else ``$XDG_DATA_HOME/yahtzee-rl/web.sqlite3``,
    else ``~/.local/share/yahtzee-rl/web.sqlite3``."""
    env = os.environ.get("YAHTZEE_DATA_DIR")
    if env:
        return Path(env).expanduser() / "web.sqlite3"
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "yahtzee-rl" / "web.sqlite3"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SchemaError(RuntimeError):
    """The database was written by a newer version of this program."""


class Storage:
    """The database of one server process (thread-safe: one lock around the connection)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.lock = threading.RLock()
        self.db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a commit survives the process being killed (kill -9); only
        # an OS crash or power cut can lose the last commits.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.migrate()

    def close(self) -> None:
        self.db.close()

    @property
    def version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> None:
        """Apply the migrations this database has not had yet, each in one transaction."""
        version = self.version
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"{self.path}: schema version {version} is newer than this program's "
                f"{SCHEMA_VERSION}; upgrade yahtzee-rl or use another --db"
            )
        for number in range(version, SCHEMA_VERSION):
            self.db.execute("BEGIN")
            try:
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version={number + 1}")
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def _tx(self, statements: Iterable[tuple[str, tuple]]) -> None:
        """Run ``statements`` in one transaction, committed before returning."""
        with self.lock:
            self.db.execute("BEGIN")
            try:
                for sql, params in statements:
                    self.db.execute(sql, params)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def _query(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        with self.lock:
            return self.db.execute(sql, params).fetchall()

    # ------------------------------------------------------------------ players
    def create_player(self, name: str, token: str) -> int:
        with self.lock:
            cur = self.db.execute(
                "INSERT INTO players (token_hash, name, created) VALUES (?, ?, ?)",
                (token_hash(token), name, time.time()),
            )
            return int(cur.lastrowid)

    def player_by_token(self, token: str) -> sqlite3.Row | None:
        sql = "SELECT id, name FROM players WHERE token_hash = ?"
        rows = self._query(sql, (token_hash(token),))
        return rows[0] if rows else None

    def player_by_id(self, player_id: int) -> sqlite3.Row | None:
        rows = self._query("SELECT id, name FROM players WHERE id = ?", (player_id,))
        return rows[0] if rows else None

    def rename_player(self, player_id: int, name: str) -> None:
        self._tx([("UPDATE players SET name = ? WHERE id = ?", (name, player_id))])

    # ------------------------------------------------------------------ accounts, sessions
    def create_account(self, player_id: int, username: str, password_hash: str) -> bool:
        """Make ``player_id`` an account; False if the user name is taken."""
        try:
            self._tx(
                [
                    (
                        "INSERT INTO accounts (player_id, username, password_hash, created) "
                        "VALUES (?, ?, ?, ?)",
                        (player_id, username, password_hash, time.time()),
                    )
                ]
            )
        except sqlite3.IntegrityError:
            return False
        return True

    def account(self, *, username: str | None = None, player_id: int | None = None):
        """The account row (player_id, username, password_hash) by user name or player."""
        column, value = ("username", username) if username is not None else ("player_id", player_id)
        rows = self._query(
            f"SELECT player_id, username, password_hash FROM accounts WHERE {column} = ?",
            (value,),
        )
        return rows[0] if rows else None

    def set_password_hash(self, player_id: int, password_hash: str) -> None:
        sql = "UPDATE accounts SET password_hash = ? WHERE player_id = ?"
        self._tx([(sql, (password_hash, player_id))])

    def create_session(self, token: str, player_id: int) -> None:
        now = time.time()
        sql = "INSERT INTO sessions (token_hash, player_id, created, seen) VALUES (?, ?, ?, ?)"
        self._tx([(sql, (token_hash(token), player_id, now, now))])

    def session_player(self, token: str, max_age_s: float) -> sqlite3.Row | None:
        """The player of a live session (id, name), or None."""
        rows = self._query(
            "SELECT p.id, p.name FROM sessions s JOIN players p ON p.id = s.player_id "
            "WHERE s.token_hash = ? AND s.created > ?",
            (token_hash(token), time.time() - max_age_s),
        )
        return rows[0] if rows else None

    def delete_sessions(self, *, token: str | None = None, player_id: int | None = None) -> None:
        if token is not None:
            self._tx([("DELETE FROM sessions WHERE token_hash = ?", (token_hash(token),))])
        else:
            self._tx([("DELETE FROM sessions WHERE player_id = ?", (player_id,))])

    def expire_sessions(self, max_age_s: float, now: float | None = None) -> int:
        """Delete the sessions older than ``max_age_s``; return how many."""
        now = time.time() if now is None else now
        with self.lock:
            cur = self.db.execute("DELETE FROM sessions WHERE created < ?", (now - max_age_s,))
            return cur.rowcount

    def adopt(self, guest_id: int, player_id: int) -> None:
        """Give the guest ``guest_id``'s games, seats and tables to ``player_id``."""
        statements = [
            ("UPDATE results SET player_id = ? WHERE player_id = ?", (player_id, guest_id)),
            ("UPDATE seats SET player_id = ? WHERE player_id = ?", (player_id, guest_id)),
            ("UPDATE seats SET owner_id = ? WHERE owner_id = ?", (player_id, guest_id)),
            ("UPDATE tables SET host_player = ? WHERE host_player = ?", (player_id, guest_id)),
            ("DELETE FROM sessions WHERE player_id = ?", (guest_id,)),
        ]
        self._tx(statements)

    def tables_of(self, player_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """The unfinished tables where ``player_id`` holds a seat, most recent first."""
        rows = self._query(
            "SELECT t.code, t.started, t.online, t.updated, s.seat, s.away FROM seats s "
            "JOIN tables t ON t.code = s.code WHERE s.owner_id = ? AND t.over = 0 "
            "ORDER BY t.updated DESC, s.seat LIMIT ?",
            (player_id, limit * 4),
        )
        out: dict[str, dict[str, Any]] = {}
        for r in rows:
            entry = out.setdefault(
                r["code"],
                {
                    "code": r["code"],
                    "started": bool(r["started"]),
                    "online": bool(r["online"]),
                    "seats": [],
                    "away": [],
                },
            )
            entry["seats"].append(r["seat"])
            if r["away"]:
                entry["away"].append(r["seat"])
        return list(out.values())[:limit]

    # ------------------------------------------------------------------ tables
    def create_table(self, table: dict[str, Any], seats: list[dict[str, Any]]) -> None:
        now = time.time()
        statements = [
            (
                "INSERT INTO tables (code, created, rules, seed, online, match, coach, "
                "fill_level, started, updated, host_player, host_addr, public, turn_timer) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    table["code"],
                    now,
                    table["rules"],
                    table["seed"],
                    int(table["online"]),
                    int(table["match"]),
                    int(table["coach"]),
                    table["fill_level"],
                    int(table["started"]),
                    now,
                    table.get("host_player"),
                    table.get("host_addr"),
                    int(table.get("public", False)),
                    int(table.get("turn_timer", 0)),
                ),
            )
        ]
        statements += [self._seat_row(table["code"], s) for s in seats]
        if table["started"]:
            statements.append(self._game_row(table["code"], 0, 0, table["first"]))
        self._tx(statements)

    @staticmethod
    def _seat_row(code: str, s: dict[str, Any]) -> tuple[str, tuple]:
        return (
            "INSERT OR REPLACE INTO seats (code, seat, kind, name, player_id, token_hash, "
            "owner_id, away) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                code,
                s["seat"],
                s["kind"],
                s["name"],
                s.get("player_id"),
                s.get("token_hash"),
                s.get("owner_id"),
                s.get("away"),
            ),
        )

    @staticmethod
    def _game_row(code: str, idx: int, match_no: int, first: int) -> tuple[str, tuple]:
        return (
            "INSERT INTO games (code, idx, match_no, first) VALUES (?, ?, ?, ?)",
            (code, idx, match_no, first),
        )

    @staticmethod
    def _touch(code: str, over: bool | None = None) -> tuple[str, tuple]:
        if over is None:
            return ("UPDATE tables SET updated = ? WHERE code = ?", (time.time(), code))
        return (
            "UPDATE tables SET updated = ?, over = ? WHERE code = ?",
            (time.time(), int(over), code),
        )

    def update_seat(self, code: str, seat: dict[str, Any]) -> None:
        self._tx([self._seat_row(code, seat), self._touch(code)])

    def update_seats(self, code: str, seats: list[dict[str, Any]], replace: bool = False) -> None:
        """Write these seats (``replace``: they are all the table's seats; others go)."""
        statements = [("DELETE FROM seats WHERE code = ?", (code,))] if replace else []
        statements += [self._seat_row(code, s) for s in seats]
        self._tx([*statements, self._touch(code)])

    def set_clock(self, code: str, deadline: float | None, votes: str) -> None:
        """The table's turn deadline (epoch seconds; None: no clock runs) and its
        play-again votes."""
        self._tx(
            [("UPDATE tables SET deadline = ?, votes = ? WHERE code = ?", (deadline, votes, code))]
        )

    def due(self, now: float, limit: int = 100) -> list[str]:
        """The tables whose turn deadline has passed."""
        rows = self._query(
            "SELECT code FROM tables WHERE deadline IS NOT NULL AND deadline <= ? "
            "ORDER BY deadline LIMIT ?",
            (now, limit),
        )
        return [r[0] for r in rows]

    def start_table(self, code: str, seats: list[dict[str, Any]], first: int) -> None:
        statements = [self._seat_row(code, s) for s in seats]
        statements.append(("UPDATE tables SET started = 1 WHERE code = ?", (code,)))
        statements.append(self._game_row(code, 0, 0, first))
        statements.append(self._touch(code, over=False))
        self._tx(statements)

    def start_game(self, code: str, idx: int, match_no: int, first: int) -> None:
        self._tx([self._game_row(code, idx, match_no, first), self._touch(code, over=False)])

    def load_table(self, code: str) -> dict[str, Any] | None:
        with self.lock:
            row = self.db.execute("SELECT * FROM tables WHERE code = ?", (code,)).fetchone()
            if row is None:
                return None
            table = dict(row)
            table["seats"] = [
                dict(r)
                for r in self.db.execute(
                    "SELECT * FROM seats WHERE code = ? ORDER BY seat", (code,)
                )
            ]
            table["games"] = [
                dict(r)
                for r in self.db.execute("SELECT * FROM games WHERE code = ? ORDER BY idx", (code,))
            ]
            actions: dict[int, list[tuple[int, int, float | None]]] = {}
            for r in self.db.execute(
                "SELECT idx, seat, action, regret FROM actions WHERE code = ? ORDER BY idx, seq",
                (code,),
            ):
                actions.setdefault(r["idx"], []).append((r["seat"], r["action"], r["regret"]))
        table["actions"] = actions
        return table

    def table_exists(self, code: str) -> bool:
        return bool(self._query("SELECT 1 FROM tables WHERE code = ?", (code,)))

    def open_tables(self, *, player_id: int | None = None, addr: str | None = None) -> int:
        """How many unfinished tables ``player_id`` (or the address hash ``addr``) hosts."""
        column, value = ("host_player", player_id) if player_id is not None else ("host_addr", addr)
        rows = self._query(f"SELECT COUNT(*) FROM tables WHERE {column} = ? AND over = 0", (value,))
        return int(rows[0][0])

    def expire(
        self, unstarted_s: float, idle_s: float, keep: Iterable[str] = (), now: float | None = None
    ) -> list[str]:
        """Delete the tables never started for ``unstarted_s`` seconds and those idle for
        ``idle_s`` but those in ``keep`` (their seats and tokens go with them; results stay);
        return their codes."""
        now = time.time() if now is None else now
        rows = self._query(
            "SELECT code FROM tables WHERE (started = 0 AND updated < ?) OR updated < ?",
            (now - unstarted_s, now - idle_s),
        )
        keep = set(keep)
        codes = [r[0] for r in rows if r[0] not in keep]
        statements = [
            (f"DELETE FROM {name} WHERE code = ?", (code,))
            for code in codes
            for name in ("actions", "games", "seats", "tables")
        ]
        if statements:
            self._tx(statements)
        return codes

    # ------------------------------------------------------------------ actions
    def append_actions(
        self,
        code: str,
        idx: int,
        first_seq: int,
        actions: list[tuple[int, int, float | None]],
        results: list[dict[str, Any]] = (),
        over: bool = False,
    ) -> None:
        """Log ``(seat, action, regret)`` rows from ``first_seq`` on, and the finished game's
        ``results`` if any (``over``: the game is over), in one committed transaction."""
        statements = [
            (
                "INSERT INTO actions (code, idx, seq, seat, action, regret) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (code, idx, first_seq + i, seat, action, regret),
            )
            for i, (seat, action, regret) in enumerate(actions)
        ]
        now = time.time()
        statements += [
            (
                "INSERT INTO results (player_id, code, idx, seat, score, outcome, yahtzees, "
                "upper_bonus, opponents, online, finished) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    r["player_id"],
                    code,
                    idx,
                    r["seat"],
                    r["score"],
                    r["outcome"],
                    r["yahtzees"],
                    r["upper_bonus"],
                    r["opponents"],
                    int(r["online"]),
                    now,
                ),
            )
            for r in results
        ]
        statements.append(self._touch(code, over))
        self._tx(statements)

    # ------------------------------------------------------------------ statistics
    def results_of(self, player_id: int) -> list[dict[str, Any]]:
        return [
            dict(r)
            for r in self._query(
                "SELECT code, idx, seat, score, outcome, yahtzees, upper_bonus, opponents, "
                "online, finished FROM results WHERE player_id = ? ORDER BY finished, code, idx",
                (player_id,),
            )
        ]
