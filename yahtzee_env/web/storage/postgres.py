"""The server database: PostgreSQL (``postgresql://USER@HOST:PORT/DBNAME``) through a
psycopg 3 connection pool, for any number of server processes; reads of several queries and
the writes of one change go in one round trip each (pipeline mode), and the processes tell
each other of changes with NOTIFY (`PostgresStorage.listen`)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence

from yahtzee_env.web.storage.base import (
    MIGRATION_LOCK,
    NOTIFY_CHANNEL,
    StaleCopy,
    TableLock,
    describe_target,
    log,
)
from yahtzee_env.web.storage.stores import Storage

POSTGRES_HINT = (
    "a postgresql:// database needs the 'postgres' extra: pip install 'yahtzee-rl[postgres]'"
)


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
