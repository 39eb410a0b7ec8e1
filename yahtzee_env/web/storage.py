"""Storage of the web game: players, tables, games, the action log and results.

One interface (`Storage`), two backends:

- `SQLiteStorage`, the embedded default (a file path, or nothing): one connection, WAL mode,
  for one server process;
- `PostgresStorage` (a ``postgresql://`` URL; the ``postgres`` extra: psycopg 3 and
  psycopg_pool), for any number of server processes on one database.

`open_storage` picks the backend from the target. The SQL is written once, with ``?``
placeholders; the few dialect differences (the id column, float and 64-bit integer types,
``FOR UPDATE``, where the schema version lives, placeholders) are in `DIALECTS` and in the two
small backend classes.

A table is stored as its seed and its seats, each game as its index and seed, and every
accepted action as one row of the log: the server rebuilds any table by replaying its log
(the dice come from the stored seeds), so a restart, even after ``kill -9``, resumes at the
last committed action. Each write commits before it returns (or, inside `lock_table`, when
the block ends), and the server acknowledges an action only after. `expire` deletes tables
(seats, and so their tokens, with them) that never started or went idle; results stay for
the statistics.

Several processes: `lock_table` opens a transaction holding the table's row lock (``SELECT
… FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` write lock) and reads the table's
``rev``, a counter that every committed change of the table moves on by one. A process whose
copy of the table is at another ``rev`` rebuilds it from the log before it applies anything,
so no action is applied twice or lost however many processes receive moves for one table.
Given an ``origin``, `lock_table` publishes ``(code, rev, origin, news)`` right after the
commit, on the connection that committed (PostgreSQL ``NOTIFY``; ``news``: what changed, so
that the others' copies can follow without reading the database); `listen` hands the other
processes' notifications to a callback, and says when it had to reconnect. Reads of several
queries (`load_table`, `table_changes`) and the writes of one change go to PostgreSQL in one
round trip each (psycopg's pipeline mode).

A move (issue 33) takes the optimistic path of `lock_table`: no lock and no read first; its
writes are held back and committed as one transaction of two statements, an UPDATE of the
table's row guarded by the ``rev`` of the server's copy (with the clock and the notification
folded in) and the log's rows; a row that moved on refuses it (`StaleCopy`, nothing
written) and the server goes again under the lock. `Storage.group` (SQLite) commits the
moves of a batch (`batch.MoveBatcher`) in one transaction. `Trips` counts what the storage
asks of its database (round trips, statements, transactions), where it asks.

The schema is versioned (migrations only ever grow, one transaction each: SQLite counts them in
``PRAGMA user_version``, PostgreSQL in the ``schema_version`` table, under an advisory lock so
that instances starting together migrate once). Tokens (players' and seats') are stored as
SHA-256 hashes, never in clear; so is the address of the client that created a table (for
the per-address cap). The server calls it from worker threads: SQLite's one connection is
behind a lock, PostgreSQL's connections come from a pool.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import re
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("yahtzee.web")
POSTGRES_HINT = (
    "a postgresql:// database needs the 'postgres' extra: pip install 'yahtzee-rl[postgres]'"
)
NOTIFY_CHANNEL = "yahtzee_tables"
MIGRATION_LOCK = 20_262_020  # pg_advisory_xact_lock key: one migrating instance at a time

# The migrations, written once for both backends; {pk}, {real} and {int64} are the dialect's.
MIGRATIONS: list[str] = [
    # 1: the first schema
    """
    CREATE TABLE players (
        id {pk},
        token_hash TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        created {real} NOT NULL
    );
    CREATE TABLE tables (
        code TEXT PRIMARY KEY,
        created {real} NOT NULL,
        rules TEXT NOT NULL,
        seed {int64} NOT NULL,
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
        player_id {int64} REFERENCES players(id),
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
        regret {real},               -- coach's grade of a human decision (NULL: not graded)
        PRIMARY KEY (code, idx, seq)
    );
    CREATE TABLE results (
        player_id {int64} NOT NULL REFERENCES players(id),
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        score INTEGER NOT NULL,
        outcome TEXT NOT NULL,       -- 'win', 'draw' or 'loss'
        yahtzees INTEGER NOT NULL,
        upper_bonus INTEGER NOT NULL,
        opponents TEXT NOT NULL,     -- the CPU levels at the table, or 'humans'
        online INTEGER NOT NULL,
        finished {real} NOT NULL,
        PRIMARY KEY (code, idx, seat)
    );
    CREATE INDEX results_player ON results(player_id, finished);
    """,
    # 2: bounded resources (issue 17): last activity, whether the current game is over, and
    # who hosts the table (player id, hashed client address), for expiry and per-host caps
    """
    ALTER TABLE tables ADD COLUMN updated {real};
    ALTER TABLE tables ADD COLUMN over INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables ADD COLUMN host_player {int64};
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
    # 4: several server processes (issue 20): the table's revision, moved on by one at every
    # committed change, so that a process can tell its copy of a table is behind
    """
    ALTER TABLE tables ADD COLUMN rev {int64} NOT NULL DEFAULT 0;
    """,
    # 5: people at online tables (issue 18): the turn timer and its deadline (stored, so a
    # restart plays a turn whose time ran out while the server was down), play-again votes,
    # who may act for a seat (a session's player) and whether the computer plays it for now;
    # accounts (argon2id hashes) and sessions (cookies, stored hashed)
    """
    ALTER TABLE tables ADD COLUMN turn_timer INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables ADD COLUMN deadline {real};
    ALTER TABLE tables ADD COLUMN votes TEXT NOT NULL DEFAULT '';
    ALTER TABLE seats ADD COLUMN owner_id {int64};
    ALTER TABLE seats ADD COLUMN away TEXT;
    CREATE INDEX tables_deadline ON tables(deadline);
    CREATE INDEX seats_owner ON seats(owner_id);
    CREATE TABLE accounts (
        player_id {int64} PRIMARY KEY REFERENCES players(id),
        username TEXT NOT NULL UNIQUE,   -- case-folded
        password_hash TEXT NOT NULL,     -- argon2id, PHC string
        created {real} NOT NULL
    );
    CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        player_id {int64} NOT NULL REFERENCES players(id),
        created {real} NOT NULL,
        seen {real} NOT NULL
    );
    CREATE INDEX sessions_player ON sessions(player_id);
    """,
    # 6: account care and the table's people (issue 32): recovery codes (argon2id; a short
    # selector in clear says which hash to verify), table chat (kept with the game, deleted
    # with the table), reports with the last messages (for a moderator) and blocked accounts
    """
    CREATE TABLE recovery_codes (
        player_id {int64} NOT NULL REFERENCES players(id),
        selector TEXT NOT NULL,
        code_hash TEXT NOT NULL,       -- argon2id of the whole code, PHC string
        created {real} NOT NULL,
        used {real},                   -- NULL: still valid
        PRIMARY KEY (player_id, selector)
    );
    CREATE TABLE chat (
        id {pk},
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,          -- the game it was said in
        seat INTEGER NOT NULL,
        player_id {int64},
        name TEXT NOT NULL,
        kind TEXT NOT NULL,            -- 'text' or 'emote'
        body TEXT NOT NULL,            -- plain text (at most 200 characters), or the emote
        created {real} NOT NULL
    );
    CREATE INDEX chat_code ON chat(code, id);
    CREATE TABLE reports (
        id {pk},
        code TEXT NOT NULL,
        reporter_id {int64},
        reporter_seat INTEGER NOT NULL,
        target_id {int64},
        target_seat INTEGER NOT NULL,
        target_name TEXT NOT NULL,
        messages TEXT NOT NULL,        -- JSON: the table's last messages when reported
        created {real} NOT NULL
    );
    CREATE UNIQUE INDEX reports_once ON reports(code, reporter_seat, target_seat);
    CREATE TABLE blocks (
        player_id {int64} NOT NULL REFERENCES players(id),
        blocked_id {int64} NOT NULL REFERENCES players(id),
        created {real} NOT NULL,
        PRIMARY KEY (player_id, blocked_id)
    );
    CREATE INDEX blocks_blocked ON blocks(blocked_id);
    """,
    # 7: a place to play (issue 32): the quick-match queue (one row per waiting player,
    # deleted when cancelled, consumed or stale), ratings (openskill's mu and sigma per
    # account, and which games were rated, so that none counts twice), the browser each
    # seat was taken from (hashed; seats of one browser never rate each other), tables
    # listed as open, and a table's spectator link (NULL: off)
    """
    CREATE TABLE queue (
        player_id {int64} PRIMARY KEY,
        addr_hash TEXT NOT NULL,
        device TEXT,
        seats INTEGER NOT NULL,
        rules TEXT NOT NULL,
        fill_level TEXT NOT NULL,
        name TEXT NOT NULL,
        created {real} NOT NULL,
        deadline {real} NOT NULL,
        seen {real} NOT NULL,
        table_code TEXT,                -- NULL: waiting; '~...': being seated; else the table
        seat INTEGER
    );
    CREATE INDEX queue_request ON queue(seats, rules, created);
    CREATE INDEX queue_addr ON queue(addr_hash);
    CREATE TABLE ratings (
        player_id {int64} PRIMARY KEY REFERENCES players(id),
        mu {real} NOT NULL,
        sigma {real} NOT NULL,
        games INTEGER NOT NULL,
        updated {real} NOT NULL
    );
    CREATE INDEX ratings_mu ON ratings(mu);
    CREATE TABLE rated_games (
        code TEXT NOT NULL,
        idx INTEGER NOT NULL,
        player_id {int64} NOT NULL,
        mu_before {real} NOT NULL,
        mu_after {real} NOT NULL,
        finished {real} NOT NULL,
        PRIMARY KEY (code, idx, player_id)
    );
    CREATE TABLE seat_devices (
        code TEXT NOT NULL,
        seat INTEGER NOT NULL,
        device TEXT NOT NULL,
        PRIMARY KEY (code, seat)
    );
    ALTER TABLE tables ADD COLUMN listed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables ADD COLUMN watch TEXT;
    CREATE INDEX tables_listed ON tables(listed, started);
    CREATE INDEX tables_watch ON tables(watch);
    """,
    # 8: no lockout by strangers (issue 31): the accounts each browser signed in to (the
    # browser's ``yz_device`` cookie, stored hashed), whose sign-ins are never slowed
    """
    CREATE TABLE devices (
        token_hash TEXT NOT NULL,
        player_id {int64} NOT NULL REFERENCES players(id),
        created {real} NOT NULL,       -- the latest sign-in from it
        PRIMARY KEY (token_hash, player_id)
    );
    CREATE INDEX devices_player ON devices(player_id);
    CREATE INDEX devices_created ON devices(created);
    """,
    # 9: dice players can check (issue 49): the table's dice secret (64 hex digits; each
    # game's dice seed is derived from it, `deal.game_dice_seed`; NULL: a table stored
    # before it), whether every seat draws the same dice (and a quick-match request's
    # preference for it), and per result what its seat rolled (NULL for games without
    # seeded dice): the statistics' fair-dice test
    """
    ALTER TABLE tables ADD COLUMN dice_secret TEXT;
    ALTER TABLE tables ADD COLUMN duplicate INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE results ADD COLUMN faces TEXT;           -- '1,2,..': the six face counts
    ALTER TABLE results ADD COLUMN rolls INTEGER;
    ALTER TABLE results ADD COLUMN yatzy_rolls INTEGER;
    ALTER TABLE results ADD COLUMN yatzy_expected {real};
    ALTER TABLE queue ADD COLUMN duplicate INTEGER NOT NULL DEFAULT 0;
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)

# What differs between the two SQL dialects, in the migrations and the queries.
DIALECTS: dict[str, dict[str, str]] = {
    # SQLite: INTEGER PRIMARY KEY is the rowid (64-bit); REAL is 8 bytes; every INTEGER is
    # 64-bit. BEGIN IMMEDIATE takes the database's write lock, so FOR UPDATE has no place.
    "sqlite": {"pk": "INTEGER PRIMARY KEY", "real": "REAL", "int64": "INTEGER", "for_update": ""},
    # PostgreSQL: REAL would be 4 bytes and INTEGER 32 bits (a table's seed has 62).
    "postgresql": {
        "pk": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        "real": "DOUBLE PRECISION",
        "int64": "BIGINT",
        "for_update": " FOR UPDATE",
    },
}


def migration_sql(number: int, dialect: str) -> list[str]:
    """The statements of migration ``number`` (0-based) in ``dialect``."""
    text = MIGRATIONS[number].format(**DIALECTS[dialect])
    text = re.sub(r"--[^\n]*", "", text)  # comments out, so that ';' splits statements
    return [s.strip() for s in text.split(";") if s.strip()]


def default_db_path() -> Path:
    """``$YAHTZEE_DATA_DIR/web.sqlite3``, else ``$XDG_DATA_HOME/yahtzee-rl/web.sqlite3``,
    else ``~/.local/share/yahtzee-rl/web.sqlite3``."""
    env = os.environ.get("YAHTZEE_DATA_DIR")
    if env:
        return Path(env).expanduser() / "web.sqlite3"
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "yahtzee-rl" / "web.sqlite3"


def is_postgres_url(target: Any) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def describe_target(target: Any) -> str:
    """The database for messages, without a password."""
    text = str(target)
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", text)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SchemaError(RuntimeError):
    """The database's schema is not this program's (newer, or not migrated)."""


class TableLock:
    """The state of one `Storage.lock_table` block: the table's ``rev`` when the lock was
    taken (None: no such table) and, after a block that wrote, the ``rev`` it committed.
    In an optimistic block, ``rev`` is the one the caller's copy is at (it sets it) and
    ``pending`` the block's writes, held back until the block ends."""

    def __init__(self, code: str, rev: int | None, optimistic: bool = False) -> None:
        self.code, self.rev, self.wrote = code, rev, False
        self.news: str | None = None  # what changed, sent with the notification (`Tables`)
        self.unpublished: Exception | None = None  # why the notification failed, if it did
        self.pending: list[tuple[str, tuple]] | None = [] if optimistic else None


class StaleCopy(RuntimeError):
    """An optimistic `Storage.lock_table` block's writes were not committed: the table is no
    longer at the ``rev`` its copy was (another process moved it on, or deleted it)."""


# "UPDATE tables SET a = ?, b = ? WHERE code = ?": merged into an optimistic block's one
# guarded UPDATE of the table's row (`Storage._guarded`)
TABLE_UPDATE = re.compile(r"UPDATE tables SET ((?:\w+ = \?)(?:, \w+ = \?)*) WHERE code = \?$")


@functools.lru_cache(maxsize=256)
def _table_update_columns(text: str) -> tuple[str, ...] | None:
    """The columns a statement sets if it is an UPDATE of one table's row (None: it is not)."""
    found = TABLE_UPDATE.match(text)
    return tuple(a.split(" = ")[0] for a in found.group(1).split(", ")) if found else None


@functools.lru_cache(maxsize=256)
def _guard_text(columns: tuple[str, ...], notify: bool) -> str:
    """The guarded UPDATE of a table's row setting ``columns`` (`Storage._guarded`)."""
    sets = ", ".join(f"{name} = ?" for name in columns)
    returning = "pg_notify(?, ?) AS notified" if notify else "rev"
    return f"UPDATE tables SET {sets} WHERE code = ? AND rev = ? RETURNING {returning}"


class Trips:
    """What a storage has asked of its database, counted where it asks (issue 33):
    ``round_trips`` (waits for the database's answer: every statement on SQLite, BEGIN and
    COMMIT included; on PostgreSQL a pipeline of statements is one), ``statements`` (SQL
    statements run, an ``executemany`` of many rows counting as one; BEGIN and COMMIT not
    included) and ``transactions`` (committed or rolled back). Thread-safe."""

    FIELDS = ("round_trips", "statements", "transactions")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.round_trips = self.statements = self.transactions = 0

    def add(self, round_trips: int = 1, statements: int = 0, transactions: int = 0) -> None:
        with self._lock:
            self.round_trips += round_trips
            self.statements += statements
            self.transactions += transactions

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {name: getattr(self, name) for name in self.FIELDS}

    def since(self, before: dict[str, int]) -> dict[str, int]:
        """The counts since the ``snapshot`` ``before``."""
        now = self.snapshot()
        return {name: now[name] - before[name] for name in self.FIELDS}


class Storage:
    """The database of the web game (both backends). Thread-safe; every method commits
    before it returns, except inside `lock_table`, whose block is one transaction.
    ``trips`` counts what it asks of the database (`Trips`)."""

    dialect = "sqlite"
    multi_process = False  # whether several processes may share the database

    def __init__(self) -> None:
        self._local = threading.local()  # .conn, .lock: this thread's open transaction
        self.clock: Callable[[], float] = time.time  # the stored times' clock (tests move it)
        self._sql_cache: dict[str, str] = {}
        self.trips = Trips()

    # ------------------------------------------------------------------ backend hooks
    def _connection(self) -> contextlib.AbstractContextManager:
        """A context manager: a connection (autocommit) held for the block."""
        raise NotImplementedError

    def _transaction(self, conn) -> contextlib.AbstractContextManager:
        """A context manager: a new transaction on ``conn``, committed on a clean exit and
        rolled back on an exception."""
        raise NotImplementedError

    def _read_version(self, conn) -> int:
        raise NotImplementedError

    def _write_version(self, conn, version: int) -> None:
        raise NotImplementedError

    def _migration_lock(self, conn) -> None:
        """Serialize migrating processes (PostgreSQL); SQLite's write lock already does."""

    def close(self) -> None:
        raise NotImplementedError

    @contextlib.contextmanager
    def held_if_free(self) -> Iterator[bool]:
        """Hold the database for the block if it is free now, without waiting: yields True
        (the block may run its statements on this thread at once: the event loop, issue 33)
        or False (it is busy, or a network away: the caller uses a worker thread)."""
        yield False

    def _publish(self, conn, code: str, rev: int, origin: str, news: str | None = None) -> None:
        """Tell the other processes, on ``conn``, that table ``code`` is at ``rev``."""

    def notify(self, code: str, rev: int, origin: str, news: str | None = None) -> None:
        """Tell the other processes that table ``code`` is at ``rev`` (after the commit;
        `lock_table` does it itself, on the connection that committed); ``news``: what
        changed, for those that can follow it without reading the database (no spaces
        before it: the payload is ``CODE REV ORIGIN[ NEWS]``)."""
        with self._connection() as conn:
            self._publish(conn, code, rev, origin, news)

    def listen(
        self, callback: Callable[[str, int, str, str | None], None]
    ) -> Callable[[], None] | None:
        """Call ``callback(code, rev, origin, news)`` (in another thread) for every
        notification, and ``callback("", 0, "", None)`` after a reconnection (notifications
        may have been lost). Returns a function that stops listening, or None where there is
        nothing to hear."""
        return None

    # ------------------------------------------------------------------ SQL
    def sql(self, text: str) -> str:
        return text

    def _exec(self, conn, text: str, params: tuple = ()) -> list[dict[str, Any]]:
        self.trips.add(1, 1)
        cur = conn.execute(self.sql(text), params)
        if cur.description is None:
            return []
        return [dict(r) for r in cur.fetchall()]

    def _exec_all(self, conn, queries: Sequence[tuple[str, tuple]]) -> list[list[dict]]:
        """The rows of each of ``queries``, run in order (PostgreSQL: in one round trip)."""
        return [self._exec(conn, text, params) for text, params in queries]

    def _write_all(self, conn, statements: Sequence[tuple[str, tuple]]) -> None:
        """Run ``statements`` in order, their results unread (PostgreSQL: one round trip);
        runs of the same statement go as one ``executemany``."""
        sent = self._write_each(conn, statements)
        self.trips.add(sent, sent)

    def _write_each(self, conn, statements: Sequence[tuple[str, tuple]]) -> int:
        """`_write_all`'s statements sent; returns how many (an executemany is one)."""
        batch: list[tuple] = []
        sent = 0
        for i, (text, params) in enumerate(statements):
            batch.append(params)
            if i + 1 < len(statements) and statements[i + 1][0] == text:
                continue
            if len(batch) == 1:
                conn.execute(self.sql(text), batch[0])
            else:  # the rows of a move and its CPU moves
                conn.cursor().executemany(self.sql(text), batch)
            batch = []
            sent += 1
        return sent

    @contextlib.contextmanager
    def _joined(self, conn) -> Iterator[Any]:
        """A new transaction on ``conn``, this thread's open one until the block ends."""
        with self._transaction(conn):
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """One transaction on this thread (a block inside another joins it)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        with self._connection() as conn, self._joined(conn):
            yield conn

    @contextlib.contextmanager
    def group(self) -> Iterator[set[str]]:
        """Group commit (issue 33): the writes of the optimistic `lock_table` blocks run in
        this thread inside the block are held back and committed together, in one
        transaction, when it ends; the database is not held meanwhile (other threads read
        and write between). Yields the set of tables whose guarded UPDATE then found their
        row moved on or gone: nothing of theirs was written (their callers must not take
        the block as committed). An exception out of the group (a statement or the COMMIT
        failed) means none of it was committed. SQLite only (one process, one connection,
        where a commit costs more than the statements); elsewhere each block commits on its
        own when it ends, and the set stays empty."""
        yield set()

    def _tx(self, statements: Sequence[tuple[str, tuple]]) -> None:
        """Run ``statements`` in one transaction, committed before returning (or joining the
        transaction of the `lock_table` block around it)."""
        lock = getattr(self._local, "lock", None)
        if lock is not None and lock.pending is not None:  # optimistic: sent when it ends
            lock.pending.extend(statements)
            lock.wrote = True
            return
        with self.transaction() as conn:
            self._write_all(conn, statements)
            if lock is not None:
                lock.wrote = True

    def _query(self, text: str, params: tuple = ()) -> list[dict[str, Any]]:
        with self._reading() as conn:
            return self._exec(conn, text, params)

    def _guarded(
        self, lock: TableLock, origin: str | None
    ) -> tuple[tuple[str, tuple], list[tuple[str, tuple]]]:
        """An optimistic block's writes as one guarded UPDATE of the table's row (its new
        ``rev`` and every ``UPDATE tables SET ... WHERE code = ?`` of the block, only if the
        row is still at ``lock.rev``; on PostgreSQL it also notifies the other processes,
        at the commit) and the block's other statements, in their order."""
        fields: dict[str, Any] = {"rev": lock.rev + 1}
        rest = []
        for text, params in lock.pending:
            names = _table_update_columns(text)
            if names is not None and params[-1] == lock.code:
                fields.update(zip(names, params[:-1], strict=True))
            else:
                rest.append((text, params))
        notify = self.multi_process and origin is not None
        text = _guard_text(tuple(fields), notify)
        params: tuple = (*fields.values(), lock.code, lock.rev)
        if notify:
            payload = f"{lock.code} {lock.rev + 1} {origin}" + (
                f" {lock.news}" if lock.news else ""
            )
            params += (NOTIFY_CHANNEL, payload)
        return (text, params), rest

    def _commit_pending(self, lock: TableLock, origin: str | None) -> None:
        """Commit an optimistic block's writes in one transaction (`_guarded`): the guarded
        UPDATE, then the rest; `StaleCopy` (and nothing written) if the row moved on."""
        guard, rest = self._guarded(lock, origin)
        group = getattr(self._local, "group", None)
        if group is not None:  # committed with the group's other blocks when it ends
            group.append((lock.code, guard, rest))
            return
        with self._connection() as conn, self._transaction(conn):
            if not self._exec(conn, *guard):  # the first statement: nothing written yet
                raise StaleCopy(f"table {lock.code} is no longer at rev {lock.rev}")
            self._write_all(conn, rest)

    @contextlib.contextmanager
    def _optimistic(self, code: str, origin: str | None) -> Iterator[TableLock]:
        lock = TableLock(code, None, optimistic=True)
        self._local.lock = lock
        try:
            yield lock
        finally:
            self._local.lock = None
        if lock.wrote:
            if lock.rev is None:
                raise RuntimeError("an optimistic block that writes sets lock.rev first")
            self._commit_pending(lock, origin)
            lock.rev += 1

    @contextlib.contextmanager
    def lock_table(
        self, code: str, origin: str | None = None, *, optimistic: bool = False
    ) -> Iterator[TableLock]:
        """A transaction holding table ``code``'s lock: no other process or thread changes
        the table until the block ends. Yields a `TableLock` with the table's ``rev``; if the
        block wrote, its commit moves ``rev`` on by one (``lock.rev`` is then the new one)
        and, with an ``origin``, the other processes are told (`notify`) right after the
        commit, on the same connection: no wait for another one from the pool. A failed
        notification is kept in ``lock.unpublished`` (the change is committed all the same).

        ``optimistic`` (issue 33): no lock and no read first. The caller sets ``lock.rev`` to
        the rev of its copy of the table; the block's writes are held back and, when it
        ends, committed in one transaction of (usually) two statements: an UPDATE of the
        table's row that only applies while the row is at that rev (moving it on by one, and
        on PostgreSQL notifying the others at the commit), then the rest (`_guarded`). If
        the row has moved on, nothing is written and `StaleCopy` is raised: the caller
        rebuilds its copy and tries again under the lock."""
        if getattr(self._local, "conn", None) is not None or getattr(self._local, "lock", None):
            raise RuntimeError("lock_table blocks do not nest (nor go inside a transaction)")
        if optimistic:
            with self._optimistic(code, origin) as lock:
                yield lock
            return
        with self._connection() as conn:
            with self._joined(conn):
                rows = self._exec(
                    conn,
                    "SELECT rev FROM tables WHERE code = ?" + DIALECTS[self.dialect]["for_update"],
                    (code,),
                )
                lock = TableLock(code, int(rows[0]["rev"]) if rows else None)
                self._local.lock = lock
                try:
                    yield lock
                    if lock.wrote and lock.rev is not None:
                        lock.rev += 1
                        self._exec(
                            conn, "UPDATE tables SET rev = ? WHERE code = ?", (lock.rev, code)
                        )
                finally:
                    self._local.lock = None
            if lock.wrote and lock.rev is not None and origin is not None:
                try:
                    self._publish(conn, code, lock.rev, origin, lock.news)
                except Exception as err:  # committed: the others see it at their next read
                    lock.unpublished = err

    # ------------------------------------------------------------------ schema
    @property
    def version(self) -> int:
        with self._connection() as conn:
            return self._read_version(conn)

    def check_version(self) -> int:
        """The schema version; SchemaError if it is not this program's."""
        version = self.version
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"{describe_target(self.target)}: schema version {version} is newer than this "
                f"program's {SCHEMA_VERSION}; upgrade yahtzee-rl or use another --db"
            )
        if version < SCHEMA_VERSION:
            raise SchemaError(
                f"{describe_target(self.target)}: schema version {version}, this program needs "
                f"{SCHEMA_VERSION}: run yahtzee serve --check-db --migrate"
            )
        return version

    def migrate(self) -> list[int]:
        """Apply the migrations this database has not had yet, each in one transaction;
        return the versions reached. SchemaError if the database is newer than this program."""
        applied = []
        while True:
            with self.transaction() as conn:
                self._migration_lock(conn)
                version = self._read_version(conn)
                if version > SCHEMA_VERSION:
                    raise SchemaError(
                        f"{describe_target(self.target)}: schema version {version} is newer "
                        f"than this program's {SCHEMA_VERSION}; upgrade yahtzee-rl or use "
                        "another --db"
                    )
                if version == SCHEMA_VERSION:
                    return applied
                for statement in migration_sql(version, self.dialect):
                    self._exec(conn, statement)
                self._write_version(conn, version + 1)
            applied.append(version + 1)

    # ------------------------------------------------------------------ players
    def create_player(self, name: str, token: str) -> int:
        with self.transaction() as conn:
            rows = self._exec(
                conn,
                "INSERT INTO players (token_hash, name, created) VALUES (?, ?, ?) RETURNING id",
                (token_hash(token), name, self.clock()),
            )
        return int(rows[0]["id"])

    def player_by_token(self, token: str) -> dict[str, Any] | None:
        rows = self._query(
            "SELECT id, name FROM players WHERE token_hash = ?", (token_hash(token),)
        )
        return rows[0] if rows else None

    def player_by_id(self, player_id: int) -> dict[str, Any] | None:
        rows = self._query("SELECT id, name FROM players WHERE id = ?", (player_id,))
        return rows[0] if rows else None

    def rename_player(self, player_id: int, name: str) -> None:
        self._tx([("UPDATE players SET name = ? WHERE id = ?", (name, player_id))])

    # ------------------------------------------------------------------ accounts, sessions
    def create_account(self, player_id: int, username: str, password_hash: str) -> bool:
        """Make ``player_id`` an account; False if the user name is taken."""
        if self.account(username=username) is not None:
            return False
        try:
            self._tx(
                [
                    (
                        "INSERT INTO accounts (player_id, username, password_hash, created) "
                        "VALUES (?, ?, ?, ?)",
                        (player_id, username, password_hash, self.clock()),
                    )
                ]
            )
        except Exception:  # the unique user name, taken meanwhile (either backend's error)
            if self.account(username=username) is not None:
                return False
            raise
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
        now = self.clock()
        sql = "INSERT INTO sessions (token_hash, player_id, created, seen) VALUES (?, ?, ?, ?)"
        self._tx([(sql, (token_hash(token), player_id, now, now))])

    def session_player(self, token: str, max_age_s: float) -> dict[str, Any] | None:
        """The player of a live session (id, name), or None."""
        rows = self._query(
            "SELECT p.id AS id, p.name AS name FROM sessions s JOIN players p "
            "ON p.id = s.player_id WHERE s.token_hash = ? AND s.created > ?",
            (token_hash(token), self.clock() - max_age_s),
        )
        return rows[0] if rows else None

    def delete_sessions(self, *, token: str | None = None, player_id: int | None = None) -> None:
        if token is not None:
            self._tx([("DELETE FROM sessions WHERE token_hash = ?", (token_hash(token),))])
        else:
            self._tx([("DELETE FROM sessions WHERE player_id = ?", (player_id,))])

    def expire_sessions(self, max_age_s: float, now: float | None = None) -> int:
        """Delete the sessions older than ``max_age_s``; return how many."""
        cutoff = (self.clock() if now is None else now) - max_age_s
        rows = self._query("SELECT COUNT(*) AS n FROM sessions WHERE created < ?", (cutoff,))
        if rows[0]["n"]:
            self._tx([("DELETE FROM sessions WHERE created < ?", (cutoff,))])
        return int(rows[0]["n"])

    def add_device(self, token: str, player_id: int) -> None:
        """Remember that a browser (its device cookie's ``token``) signed in as ``player_id``
        (now: a later sign-in from it renews the date)."""
        sql = (
            "INSERT INTO devices (token_hash, player_id, created) VALUES (?, ?, ?) "
            "ON CONFLICT (token_hash, player_id) DO UPDATE SET created = excluded.created"
        )
        self._tx([(sql, (token_hash(token), player_id, self.clock()))])

    def device_signed_in(self, token: str, player_id: int, max_age_s: float) -> bool:
        """Whether the browser ``token`` signed in as ``player_id`` within ``max_age_s``."""
        rows = self._query(
            "SELECT 1 AS x FROM devices WHERE token_hash = ? AND player_id = ? AND created > ?",
            (token_hash(token), player_id, self.clock() - max_age_s),
        )
        return bool(rows)

    def expire_devices(self, max_age_s: float) -> None:
        cutoff = self.clock() - max_age_s
        self._tx([("DELETE FROM devices WHERE created < ?", (cutoff,))])

    def adopt(self, guest_id: int, player_id: int) -> None:
        """Give the guest ``guest_id``'s games, seats and tables to ``player_id``."""
        self._tx(
            [
                ("UPDATE results SET player_id = ? WHERE player_id = ?", (player_id, guest_id)),
                ("UPDATE seats SET player_id = ? WHERE player_id = ?", (player_id, guest_id)),
                ("UPDATE seats SET owner_id = ? WHERE owner_id = ?", (player_id, guest_id)),
                ("UPDATE tables SET host_player = ? WHERE host_player = ?", (player_id, guest_id)),
                ("DELETE FROM sessions WHERE player_id = ?", (guest_id,)),
            ]
        )

    def tables_of(self, player_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """The unfinished tables where ``player_id`` holds a seat, most recent first."""
        rows = self._query(
            "SELECT t.code AS code, t.started AS started, t.online AS online, s.seat AS seat, "
            "s.away AS away FROM seats s JOIN tables t ON t.code = s.code "
            "WHERE s.owner_id = ? AND t.over = 0 ORDER BY t.updated DESC, s.seat LIMIT ?",
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
        now = self.clock()
        statements = [
            (
                "INSERT INTO tables (code, created, rules, seed, online, match, coach, "
                "fill_level, started, updated, host_player, host_addr, public, turn_timer, "
                "dice_secret, duplicate) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    table.get("dice_secret"),
                    int(table.get("duplicate", False)),
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
            "INSERT INTO seats (code, seat, kind, name, player_id, token_hash, owner_id, away) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (code, seat) DO UPDATE SET "
            "kind = excluded.kind, name = excluded.name, player_id = excluded.player_id, "
            "token_hash = excluded.token_hash, owner_id = excluded.owner_id, "
            "away = excluded.away",
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

    def _touch(self, code: str, over: bool | None = None) -> tuple[str, tuple]:
        if over is None:
            return ("UPDATE tables SET updated = ? WHERE code = ?", (self.clock(), code))
        return (
            "UPDATE tables SET updated = ?, over = ? WHERE code = ?",
            (self.clock(), int(over), code),
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
        return [r["code"] for r in rows]

    def start_table(self, code: str, seats: list[dict[str, Any]], first: int) -> None:
        statements = [self._seat_row(code, s) for s in seats]
        statements.append(("UPDATE tables SET started = 1 WHERE code = ?", (code,)))
        statements.append(self._game_row(code, 0, 0, first))
        statements.append(self._touch(code, over=False))
        self._tx(statements)

    def start_game(self, code: str, idx: int, match_no: int, first: int) -> None:
        self._tx([self._game_row(code, idx, match_no, first), self._touch(code, over=False)])

    def table_rev(self, code: str) -> int | None:
        rows = self._query("SELECT rev FROM tables WHERE code = ?", (code,))
        return int(rows[0]["rev"]) if rows else None

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Any]:
        """The connection of this thread's open transaction, else one for a few reads."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        with self._connection() as conn:
            yield conn

    def load_table(self, code: str) -> dict[str, Any] | None:
        """The table's rows, ``rev`` read first: rows committed by another process meanwhile
        can only make the copy newer than its ``rev`` says, and the next `lock_table` then
        rebuilds it. Inside `lock_table` the table cannot change."""
        with self._reading() as conn:
            rows, seats, games, logged = self._exec_all(
                conn,
                [
                    ("SELECT * FROM tables WHERE code = ?", (code,)),
                    ("SELECT * FROM seats WHERE code = ? ORDER BY seat", (code,)),
                    ("SELECT * FROM games WHERE code = ? ORDER BY idx", (code,)),
                    (
                        "SELECT idx, seat, action, regret FROM actions WHERE code = ? "
                        "ORDER BY idx, seq",
                        (code,),
                    ),
                ],
            )
        if not rows:
            return None
        table = rows[0]
        table["seats"], table["games"] = seats, games
        actions: dict[int, list[tuple[int, int, float | None]]] = {}
        for r in logged:
            actions.setdefault(r["idx"], []).append((r["seat"], r["action"], r["regret"]))
        table["actions"] = actions
        return table

    def table_changes(self, code: str, idx: int, seq: int) -> dict[str, Any] | None:
        """What a copy of table ``code`` at game ``idx``, action ``seq`` needs to catch up
        when only that game's log has grown: the table's ``rev`` (read first), ``started``,
        the number of games, the seats, and game ``idx``'s actions from ``seq`` on."""
        with self._reading() as conn:
            rows, seats, actions = self._exec_all(
                conn,
                [
                    (
                        "SELECT rev, started, deadline, votes, (SELECT COUNT(*) FROM games "
                        "WHERE code = ?) AS games FROM tables WHERE code = ?",
                        (code, code),
                    ),
                    (
                        "SELECT seat, kind, name, player_id, token_hash, owner_id, away FROM seats "
                        "WHERE code = ? ORDER BY seat",
                        (code,),
                    ),
                    (
                        "SELECT seat, action, regret FROM actions WHERE code = ? AND idx = ? "
                        "AND seq >= ? ORDER BY seq",
                        (code, idx, seq),
                    ),
                ],
            )
        if not rows:
            return None
        out = rows[0]
        out["seats"] = seats
        out["actions"] = [(r["seat"], r["action"], r["regret"]) for r in actions]
        return out

    def count_tables(self) -> int:
        return int(self._query("SELECT COUNT(*) AS n FROM tables")[0]["n"])

    def table_exists(self, code: str) -> bool:
        return bool(self._query("SELECT 1 FROM tables WHERE code = ?", (code,)))

    def open_tables(self, *, player_id: int | None = None, addr: str | None = None) -> int:
        """How many unfinished tables ``player_id`` (or the address hash ``addr``) hosts."""
        column, value = ("host_player", player_id) if player_id is not None else ("host_addr", addr)
        rows = self._query(
            f"SELECT COUNT(*) AS n FROM tables WHERE {column} = ? AND over = 0", (value,)
        )
        return int(rows[0]["n"])

    def expire(
        self,
        unstarted_s: float,
        idle_s: float,
        keep: Iterable[str] = (),
        now: float | None = None,
        *,
        solo_s: float | None = None,
        abandoned_s: float | None = None,
    ) -> list[str]:
        """Delete the tables never started for ``unstarted_s`` seconds, those idle for
        ``idle_s``, the unfinished games against the computer idle for ``solo_s`` and the
        unfinished online games idle for ``abandoned_s`` (None: ``idle_s``), but those in
        ``keep`` (their seats and tokens go with them; results stay); return their codes.

        A table whose turn clock runs is never deleted before its deadline, and an unfinished
        online game with a turn clock waits at least the clock times its human seats after
        its last move (each of them may take a whole turn: a 1-day table of two players
        idles two days before the abandon rule may take it)."""
        now = self.clock() if now is None else now
        solo_s = idle_s if solo_s is None else solo_s
        abandoned_s = idle_s if abandoned_s is None else abandoned_s
        rows = self._query(
            "SELECT code FROM tables t WHERE (t.deadline IS NULL OR t.deadline <= ?) AND ("
            "(t.started = 0 AND t.updated < ?) OR t.updated < ?"
            " OR (t.online = 0 AND t.over = 0 AND t.updated < ?)"
            " OR (t.online = 1 AND t.started = 1 AND t.over = 0 AND t.updated < ?"
            " AND t.updated + t.turn_timer * (SELECT COUNT(*) FROM seats s"
            " WHERE s.code = t.code AND s.kind = 'human') < ?))",
            (now, now - unstarted_s, now - idle_s, now - solo_s, now - abandoned_s, now),
        )
        keep = set(keep)
        codes = [r["code"] for r in rows if r["code"] not in keep]
        statements = [
            (f"DELETE FROM {name} WHERE code = ?", (code,))
            for code in codes
            for name in ("actions", "chat", "games", "seat_devices", "seats", "tables")
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
        now = self.clock()
        statements += [
            (
                "INSERT INTO results (player_id, code, idx, seat, score, outcome, yahtzees, "
                "upper_bonus, opponents, online, finished, faces, rolls, yatzy_rolls, "
                "yatzy_expected) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
                    r.get("faces"),
                    r.get("rolls"),
                    r.get("yatzy_rolls"),
                    r.get("yatzy_expected"),
                ),
            )
            for r in results
        ]
        # ``over`` is written when the game ends only: a game's start sets it to 0, and
        # every write of it moves two indexes' entries (two more pages in SQLite's log)
        statements.append(self._touch(code, True if over else None))
        self._tx(statements)

    # ------------------------------------------------------------------ statistics
    def results_of(self, player_id: int) -> list[dict[str, Any]]:
        return self._query(
            "SELECT code, idx, seat, score, outcome, yahtzees, upper_bonus, opponents, "
            "online, finished, faces, rolls, yatzy_rolls, yatzy_expected FROM results "
            "WHERE player_id = ? ORDER BY finished, code, idx",
            (player_id,),
        )


HELD_WAIT_S = 0.002  # the longest the event loop waits for SQLite's connection (`held_if_free`)
BUSY_BACKOFF_S = 0.05  # after a wait that ran out, how long the loop does not wait again


class Checkpointer:
    """SQLite's WAL checkpoints, out of the commits (issue 33): a commit may run on the
    event loop (`Storage.held_if_free`), and SQLite's automatic checkpoint, run by the
    commit that takes the log past 1,000 pages, copies pages back into the database file
    and syncs it: milliseconds to much more on a slow disk, for every table on the loop.
    So the storage's connection never checkpoints (``wal_autocheckpoint=0``) and this
    thread, on a connection of its own, runs a passive checkpoint every ``every`` seconds
    (it never waits for a writer, nor makes one wait).

    The log starts over from its beginning only at the first commit after a checkpoint
    that copied all of it. Under a steady load a commit lands while the passive checkpoint
    copies, so it never copies all: the log grew without end (~30 MB a second at 1,000
    players, issue 33's third round), and each commit wrote past its end (the kernel
    zeroing every new page: a tenth of the server's CPU time). So where the passive pass
    may leave frames behind (the count it answers is of the log when it began, so it
    cannot tell), a second one runs holding ``hold`` (the storage's lock: no commit
    meanwhile), which copies only what came during the first and lets the log start over.
    ``done``: checkpoints run; ``complete``: those that copied the whole log (the tests);
    ``held``: the last ``RECENT`` second passes, ``(time.monotonic() at its end, seconds the
    lock was held)`` (the load benchmark sets the slow moves beside them)."""

    RECENT = 4096

    def __init__(self, path: str, every: float = 1.0, hold=None) -> None:
        self.path, self.every, self.hold = path, every, hold
        self.done = self.complete = 0
        self.held: deque[tuple[float, float]] = deque(maxlen=self.RECENT)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="sqlite-checkpoints", daemon=True)
        self.thread.start()

    def checkpoint(self, conn) -> bool:
        """One checkpoint on ``conn``: True if it copied the whole log."""
        _busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if self.hold is not None:  # what was committed meanwhile, with no commit now
            with self.hold:
                began = time.perf_counter()
                _busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                self.held.append((time.monotonic(), time.perf_counter() - began))
        self.done += 1
        whole = copied >= frames
        self.complete += whole
        return whole

    def run(self) -> None:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as err:  # the storage's own connection reports the database
            log.warning("no WAL checkpoints for %s: %s", self.path, err)
            return
        try:
            while not self._stop.wait(self.every):
                try:
                    self.checkpoint(conn)
                except sqlite3.Error as err:  # busy, or the file went: the next one tries
                    log.debug("WAL checkpoint of %s: %s", self.path, err)
        finally:
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        if self.thread is not threading.current_thread():
            self.thread.join(10)


class SQLiteStorage(Storage):
    """The embedded default: one SQLite file (or ``:memory:``), one connection behind a lock,
    WAL mode. For one server process only (`multi_process` is False)."""

    dialect = "sqlite"
    multi_process = False

    def __init__(self, path: str | os.PathLike, *, migrate: bool = True) -> None:
        super().__init__()
        self.path = self.target = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.lock = threading.RLock()
        self.busy_until = 0.0  # `held_if_free` does not wait before this (time.monotonic)
        self.db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a commit survives the process being killed (kill -9); only
        # an OS crash or power cut can lose the last commits.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        if migrate:
            self.migrate()
        self.checkpoints: Checkpointer | None = None
        if str(path) != ":memory:":  # a commit never runs a checkpoint (`Checkpointer`)
            self.db.execute("PRAGMA wal_autocheckpoint=0")
            self.checkpoints = Checkpointer(str(path), hold=self.lock)

    def close(self) -> None:
        if self.checkpoints is not None:
            self.checkpoints.stop()
        self.db.close()

    @contextlib.contextmanager
    def held_if_free(self) -> Iterator[bool]:
        """Free now, or within `HELD_WAIT_S` (the holder is another thread's short piece of
        work, which runs meanwhile: the wait lets the GIL go). A wait that ran out means
        something long holds the database: for `BUSY_BACKOFF_S` nobody waits again."""
        free = self.lock.acquire(blocking=False)
        if not free and time.monotonic() >= self.busy_until:
            free = self.lock.acquire(timeout=HELD_WAIT_S)
            if not free:
                self.busy_until = time.monotonic() + BUSY_BACKOFF_S
        try:
            yield free
        finally:
            if free:
                self.lock.release()

    @contextlib.contextmanager
    def _transaction(self, conn):
        self.trips.add(2, 0, 1)  # BEGIN, and COMMIT or ROLLBACK
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextlib.contextmanager
    def _connection(self):
        with self.lock:
            yield self.db

    def _commit_pending(self, lock: TableLock, origin: str | None) -> None:
        """`Storage._commit_pending` on the connection itself (issue 33, fourth round): the
        same BEGIN IMMEDIATE, guarded UPDATE, the rest and COMMIT, counted once, without
        the generic path's context managers and rows turned into dicts."""
        group = getattr(self._local, "group", None)
        guard, rest = self._guarded(lock, origin)
        if group is not None:  # committed with the group's other blocks when it ends
            group.append((lock.code, guard, rest))
            return
        db, sent = self.db, 0
        with self.lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                if db.execute(*guard).fetchone() is None:  # nothing written yet
                    raise StaleCopy(f"table {lock.code} is no longer at rev {lock.rev}")
                sent = self._write_each(db, rest)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:  # a failed COMMIT leaves it open too
                    db.execute("ROLLBACK")
                raise
            finally:  # BEGIN, the guard, the rest, and COMMIT or ROLLBACK
                self.trips.add(3 + sent, 1 + sent, 1)

    @contextlib.contextmanager
    def group(self) -> Iterator[set[str]]:
        if getattr(self._local, "group", None) is not None or getattr(self._local, "conn", None):
            raise RuntimeError("a group does not go inside another transaction")
        pending: list[tuple[str, tuple, list]] = []
        refused: set[str] = set()
        self._local.group = pending
        try:
            yield refused
        finally:
            self._local.group = None
        if not pending:
            return
        with self._connection() as conn, self._transaction(conn):  # the lock: only for this
            for code, guard, rest in pending:
                if self._exec(conn, *guard):  # its first statement: nothing of it written yet
                    self._write_all(conn, rest)
                else:
                    refused.add(code)

    def _read_version(self, conn) -> int:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])

    def _write_version(self, conn, version: int) -> None:
        conn.execute(f"PRAGMA user_version={int(version)}")


class PostgresStorage(Storage):
    """A PostgreSQL database (``postgresql://USER@HOST:PORT/DBNAME``) through a psycopg 3
    connection pool; any number of server processes may share it (`multi_process`)."""

    dialect = "postgresql"
    multi_process = True

    def __init__(
        self, url: str, *, migrate: bool = True, pool_size: int = 8, timeout: float = 10.0
    ) -> None:
        super().__init__()
        try:
            import psycopg
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ModuleNotFoundError as err:
            if err.name and err.name.split(".")[0] in ("psycopg", "psycopg_pool"):
                raise ModuleNotFoundError(POSTGRES_HINT) from None
            raise
        self.psycopg = psycopg
        self.target = url
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "row_factory": dict_row},
            timeout=timeout,
            open=False,
            name="yahtzee",
        )
        try:
            self.pool.open(wait=True, timeout=timeout)
        except Exception as err:
            self.pool.close()
            raise ConnectionError(f"cannot connect to {describe_target(url)}: {err}") from None
        self._listener: threading.Thread | None = None
        if migrate:
            self.migrate()

    def close(self) -> None:
        self.pool.close()

    def sql(self, text: str) -> str:
        out = self._sql_cache.get(text)
        if out is None:
            out = self._sql_cache[text] = text.replace("%", "%%").replace("?", "%s")
        return out

    def _transaction(self, conn):
        # BEGIN (sent at once outside a pipeline), and COMMIT or ROLLBACK
        self.trips.add(1 if conn.pgconn.pipeline_status else 2, 0, 1)
        return conn.transaction()

    @contextlib.contextmanager
    def _connection(self):
        with self.pool.connection() as conn:
            yield conn

    def _read_version(self, conn) -> int:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        return int(row["version"]) if row else 0

    def _write_version(self, conn, version: int) -> None:
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))

    def _migration_lock(self, conn) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))

    @property
    def version(self) -> int:
        with self._connection() as conn:
            row = conn.execute("SELECT to_regclass('schema_version') AS t").fetchone()
            if row["t"] is None:
                return 0
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            return int(row["version"]) if row else 0

    def _exec_all(self, conn, queries: Sequence[tuple[str, tuple]]) -> list[list[dict]]:
        self.trips.add(1, len(queries))
        with conn.pipeline():  # sent together, answered together: one round trip
            cursors = [conn.execute(self.sql(text), params) for text, params in queries]
        return [c.fetchall() for c in cursors]

    def _write_all(self, conn, statements: Sequence[tuple[str, tuple]]) -> None:
        with conn.pipeline():  # errors surface when the block ends, before the commit
            self.trips.add(1, self._write_each(conn, statements))

    def _commit_pending(self, lock: TableLock, origin: str | None) -> None:
        """`Storage._commit_pending` in two round trips: BEGIN, the guarded UPDATE (which
        notifies) and the rest in one pipeline; then the COMMIT (or ROLLBACK)."""
        guard, rest = self._guarded(lock, origin)
        with self._connection() as conn:
            try:
                with conn.pipeline(), self._transaction(conn):
                    cur = conn.execute(self.sql(guard[0]), guard[1])
                    self.trips.add(1, 1 + self._write_each(conn, rest))
                    if not cur.fetchall():
                        raise StaleCopy(f"table {lock.code} is no longer at rev {lock.rev}")
            except self.psycopg.errors.IntegrityError as err:  # rows of the newer rev's
                raise StaleCopy(f"table {lock.code} moved on: {err}") from None

    # ------------------------------------------------------------------ fan-out
    def _publish(self, conn, code: str, rev: int, origin: str, news: str | None = None) -> None:
        # autocommit, after the change's commit: never announces what could roll back
        payload = f"{code} {rev} {origin}" + (f" {news}" if news else "")
        self.trips.add(1, 1)
        conn.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, payload))

    def listen(self, callback: Callable[[str, int, str, str | None], None]) -> Callable[[], None]:
        """LISTEN on a connection of its own, in a daemon thread that reconnects when the
        connection drops (PostgreSQL restarted, the backend terminated, the network gone:
        TCP keepalives notice a silent peer) and then calls ``callback("", 0, "", None)``,
        after LISTEN again: what changed meanwhile must be re-read."""
        stop = threading.Event()
        psycopg = self.psycopg
        keepalives = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5}
        keepalives["keepalives_count"] = 3
        name = f"yahtzee-listen {os.getpid()}"  # pg_stat_activity names the process

        def run() -> None:
            first = True
            while not stop.is_set():
                try:
                    with psycopg.connect(
                        self.target, autocommit=True, application_name=name, **keepalives
                    ) as conn:
                        conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                        if not first:
                            log.warning("listening for other servers' changes again")
                            callback("", 0, "", None)  # after LISTEN: nothing falls between
                        first = False
                        while not stop.is_set():
                            for note in conn.notifies(timeout=0.5):
                                parts = note.payload.split(" ", 3)
                                if len(parts) >= 3 and parts[1].isdigit():
                                    news = parts[3] if len(parts) == 4 else None
                                    callback(parts[0], int(parts[1]), parts[2], news)
                except Exception as err:  # the database went away: try again shortly
                    if not stop.is_set():
                        log.warning("lost the connection listening for changes: %s", err)
                    first = False
                    stop.wait(0.5)

        thread = threading.Thread(target=run, name="yahtzee-listen", daemon=True)
        thread.start()
        self._listener = thread

        def stopper() -> None:
            stop.set()
            thread.join(5)

        return stopper


def open_storage(target: str | os.PathLike | None = None, *, migrate: bool = True) -> Storage:
    """The storage at ``target``: a ``postgresql://`` URL, else a SQLite file path (None:
    `default_db_path`)."""
    if target is None:
        target = default_db_path()
    if is_postgres_url(target):
        return PostgresStorage(str(target), migrate=migrate)
    return SQLiteStorage(target, migrate=migrate)
