"""The storage wing's base: connections, transactions, group commit, table locks,
LISTEN/NOTIFY and migrations (`Database`); the SQL of each concern is in its store
(`stores.Storage`: ``storage.tables``, ``storage.players``, ...).

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
written) and the server goes again under the lock. `Database.group` (SQLite) commits the
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
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from yahtzee_env.web.storage.schema import DIALECTS, SCHEMA_VERSION, migration_sql

log = logging.getLogger("yahtzee.web")
NOTIFY_CHANNEL = "yahtzee_tables"
MIGRATION_LOCK = 20_262_020  # pg_advisory_xact_lock key: one migrating instance at a time


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
    """The state of one `Database.lock_table` block: the table's ``rev`` when the lock was
    taken (None: no such table) and, after a block that wrote, the ``rev`` it committed.
    In an optimistic block, ``rev`` is the one the caller's copy is at (it sets it) and
    ``pending`` the block's writes, held back until the block ends."""

    def __init__(self, code: str, rev: int | None, optimistic: bool = False) -> None:
        self.code, self.rev, self.wrote = code, rev, False
        self.news: str | None = None  # what changed, sent with the notification (`Tables`)
        self.unpublished: Exception | None = None  # why the notification failed, if it did
        self.pending: list[tuple[str, tuple]] | None = [] if optimistic else None


class StaleCopy(RuntimeError):
    """An optimistic `Database.lock_table` block's writes were not committed: the table is no
    longer at the ``rev`` its copy was (another process moved it on, or deleted it)."""


# "UPDATE tables SET a = ?, b = ? WHERE code = ?": merged into an optimistic block's one
# guarded UPDATE of the table's row (`Database._guarded`)
TABLE_UPDATE = re.compile(r"UPDATE tables SET ((?:\w+ = \?)(?:, \w+ = \?)*) WHERE code = \?$")


@functools.lru_cache(maxsize=256)
def _table_update_columns(text: str) -> tuple[str, ...] | None:
    """The columns a statement sets if it is an UPDATE of one table's row (None: it is not)."""
    found = TABLE_UPDATE.match(text)
    return tuple(a.split(" = ")[0] for a in found.group(1).split(", ")) if found else None


@functools.lru_cache(maxsize=256)
def _guard_text(columns: tuple[str, ...], notify: bool) -> str:
    """The guarded UPDATE of a table's row setting ``columns`` (`Database._guarded`)."""
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


class Database:
    """The database of the web game (both backends), without the SQL of any concern (the
    stores', `Store`). Thread-safe; every write commits before it returns, except inside
    `lock_table`, whose block is one transaction. ``trips`` counts what it asks of the
    database (`Trips`)."""

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

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Any]:
        """The connection of this thread's open transaction, else one for a few reads."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        with self._connection() as conn:
            yield conn

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
    def timed_commits(self) -> Iterator[list[float]]:
        """Within the block, the calling threads' CPU seconds in the optimistic commits
        (`_commit_pending`: BEGIN, the guarded UPDATE, the rest, COMMIT; on PostgreSQL the
        client's side only, its waits not counted) are summed into the one-item list it
        yields. For experiments/bench_move_path.py; off by default (the server never pays
        for the clock readings)."""
        spent = [0.0]
        real = self._commit_pending

        def timed(lock: TableLock, origin: str | None) -> None:
            start = time.thread_time()
            try:
                return real(lock, origin)
            finally:
                spent[0] += time.thread_time() - start

        self._commit_pending = timed
        try:
            yield spent
        finally:
            del self._commit_pending  # the class's own again

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


class Store:
    """The SQL of one concern (the wing's named stores, `stores.Storage`), run on ``db``'s
    connections and transactions: a store's writes inside `Database.lock_table` or
    `Database.transaction` join that block's transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db
