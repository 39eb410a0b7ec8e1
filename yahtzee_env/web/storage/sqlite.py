"""The embedded backend: one SQLite file (or ``:memory:``), one connection behind a lock,
WAL mode, for one server process; its WAL checkpoints run out of the commits
(`Checkpointer`), and a batch of moves commits as one transaction (`SQLiteStorage.group`)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from yahtzee_env.web.storage.base import StaleCopy, TableLock, log
from yahtzee_env.web.storage.stores import Storage

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
    The held pass runs only once the log has reached ``hold_from`` pages, and after a
    second pass without the lock (issue 60: each hold stopped the moves for 16 ms on
    average, up to 65 ms, once a second at 1,000 players, and half of the slowest moves of a
    ten-minute run fell in one): the log grows to that size, 64 MiB of 4 KiB pages, and
    starts over from there, a hold every few seconds, copying what came during the
    unlocked second pass only.
    ``done``: checkpoints run; ``complete``: those that copied the whole log (the tests);
    ``held``: the last ``RECENT`` second passes, ``(time.monotonic() at its end, seconds the
    lock was held)`` (the load benchmark sets the slow moves beside them)."""

    RECENT = 4096
    HOLD_FROM = 16_384  # pages in the log before a pass holds the storage's lock

    def __init__(self, path: str, every: float = 1.0, hold=None, hold_from: int | None = None):
        self.path, self.every, self.hold = path, every, hold
        self.hold_from = self.HOLD_FROM if hold_from is None else hold_from
        self.done = self.complete = 0
        self.held: deque[tuple[float, float]] = deque(maxlen=self.RECENT)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="sqlite-checkpoints", daemon=True)
        self.thread.start()

    def checkpoint(self, conn) -> bool:
        """One checkpoint on ``conn``: True if it copied the whole log."""
        _busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if self.hold is not None and frames >= self.hold_from:
            # a second pass without the lock copies what came during the first (far less),
            # so the held one copies only what came during the second; then no commit
            # lands during the held pass, and the log starts over at the next commit
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
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

    # ------------------------------------------------------------ for the benchmarks
    def wal_checkpoint(self, mode: str = "PASSIVE") -> int:
        """A WAL checkpoint now, on the storage's connection (``PASSIVE`` or ``TRUNCATE``):
        the log's frames (pages) when it began. For experiments/bench_move_path.py, which
        stops `checkpoints` and checkpoints between its timed moves."""
        if mode not in ("PASSIVE", "TRUNCATE"):
            raise ValueError(f"mode must be PASSIVE or TRUNCATE, not {mode!r}")
        with self.lock:
            return int(self.db.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()[1])

    def page_size(self) -> int:
        """The database's page size in bytes (a WAL frame holds one page)."""
        with self.lock:
            return int(self.db.execute("PRAGMA page_size").fetchone()[0])

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
