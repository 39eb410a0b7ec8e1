"""The quick-match queue (issue 32): one row per waiting player, so that server processes
sharing a PostgreSQL database pair players across processes. Every change of the queue runs
in one transaction holding the queue's lock (PostgreSQL: an advisory lock; SQLite: its write
lock), so two processes never seat one player twice. What is due and who is paired with
whom is `matchmaking.Matchmaker`'s; this store only keeps the rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from yahtzee_env.web.storage.base import Store

QUEUE_LOCK = 20_263_201  # pg_advisory_xact_lock key of the queue
CLAIMED = "~"  # the prefix of a row's table_code while its table is being made
COLUMNS = (
    "player_id",
    "addr_hash",
    "device",
    "seats",
    "rules",
    "fill_level",
    "name",
    "created",
    "deadline",
    "seen",
    "duplicate",  # the player's preference for duplicate dice (issue 49)
)


def matched(row: dict[str, Any]) -> bool:
    """Whether the row's player has a table (not just claimed)."""
    code = row["table_code"]
    return bool(code) and not code.startswith(CLAIMED)


class QueueStore(Store):
    """``storage.queue``: the rows of the quick-match queue."""

    def _locked(self, conn) -> None:
        if self.db.dialect == "postgresql":
            self.db._exec(conn, "SELECT pg_advisory_xact_lock(?)", (QUEUE_LOCK,))

    def _row(self, conn, player_id: int) -> dict[str, Any] | None:
        rows = self.db._exec(conn, "SELECT * FROM queue WHERE player_id = ?", (player_id,))
        return rows[0] if rows else None

    def _count(self, conn, where: str = "", params: tuple = ()) -> int:
        sql = "SELECT COUNT(*) AS n FROM queue" + (f" WHERE {where}" if where else "")
        return int(self.db._exec(conn, sql, params)[0]["n"])

    def _delete(self, conn, player_id: int) -> None:
        self.db._exec(conn, "DELETE FROM queue WHERE player_id = ?", (player_id,))

    def add(self, row: dict[str, Any], per_address: int, total: int) -> str | None:
        """Queue ``row`` (`COLUMNS`); or the reason it is refused: ``already_queued`` (its
        player waits already), ``queue_address`` (``per_address`` rows of its address wait)
        or ``queue_full`` (``total`` rows wait)."""
        with self.db.transaction() as conn:
            self._locked(conn)
            if self._row(conn, row["player_id"]) is not None:
                return "already_queued"
            if self._count(conn, "addr_hash = ?", (row["addr_hash"],)) >= per_address:
                return "queue_address"
            if self._count(conn) >= total:
                return "queue_full"
            marks = ", ".join("?" * len(COLUMNS))
            self.db._exec(
                conn,
                f"INSERT INTO queue ({', '.join(COLUMNS)}) VALUES ({marks})",
                tuple(row[c] for c in COLUMNS),
            )
        return None

    def take(self, player_id: int) -> dict[str, Any] | None:
        """Delete the player's row; the row it was (None: none)."""
        with self.db.transaction() as conn:
            self._locked(conn)
            row = self._row(conn, player_id)
            self._delete(conn, player_id)
        return row

    def poll(self, player_id: int, now: float) -> dict[str, Any] | None:
        """The player's row (None: none): a `matched` row is deleted (read once), any other
        is marked seen at ``now``."""
        with self.db.transaction() as conn:
            self._locked(conn)
            row = self._row(conn, player_id)
            if row is None:
                return None
            if matched(row):
                self._delete(conn, player_id)
            else:
                self.db._exec(
                    conn, "UPDATE queue SET seen = ? WHERE player_id = ?", (now, player_id)
                )
        return row

    def waiting(self, player_id: int, seen_since: float) -> dict[str, Any] | None:
        """The player's row (None: none; a `matched` one is deleted, read once) with
        ``waiting``: how many rows of its request, seen since ``seen_since``, wait."""
        with self.db.transaction() as conn:
            row = self._row(conn, player_id)
            if row is None:
                return None
            if matched(row):
                self._delete(conn, player_id)
                return row
            row["waiting"] = self._count(
                conn,
                "seats = ? AND rules = ? AND table_code IS NULL AND seen >= ?",
                (row["seats"], row["rules"], seen_since),
            )
        return row

    def claim(
        self,
        seats: int,
        rules: str,
        now: float,
        seen_since: float,
        claim: str,
        due: Callable[[list[dict[str, Any]]], bool],
    ) -> list[dict[str, Any]] | None:
        """Claim (as ``claim``) the oldest rows of request (seats, rules) seen since
        ``seen_since``, at most ``seats``, if ``due(rows)``; the rows claimed, oldest first."""
        with self.db.transaction() as conn:
            self._locked(conn)
            rows = self.db._exec(
                conn,
                "SELECT * FROM queue WHERE seats = ? AND rules = ? AND table_code IS NULL "
                "AND seen >= ? ORDER BY created, player_id LIMIT ?",
                (seats, rules, seen_since, seats),
            )
            if not rows or not due(rows):
                return None
            for r in rows:
                self.db._exec(
                    conn,
                    "UPDATE queue SET table_code = ?, seen = ? WHERE player_id = ?",
                    (claim, now, r["player_id"]),
                )
        return rows

    def place(self, claim: str, code: str, placed: dict[int, int]) -> None:
        """The claimed rows learn their table ``code`` and seats (``{player_id: seat}``)."""
        with self.db.transaction() as conn:
            for player_id, seat in placed.items():
                self.db._exec(
                    conn,
                    "UPDATE queue SET table_code = ?, seat = ? WHERE player_id = ? "
                    "AND table_code = ?",
                    (code, seat, player_id, claim),
                )

    def release(self, claim: str, drop: int | None = None) -> None:
        """Hand a claimed group back to the queue (but the player ``drop``, whose row goes)."""
        with self.db.transaction() as conn:
            if drop is not None:
                self._delete(conn, drop)
            self.db._exec(conn, "UPDATE queue SET table_code = NULL WHERE table_code = ?", (claim,))

    def sweep(self, waiting_before: float, kept_before: float) -> int:
        """Delete the waiting rows not seen since ``waiting_before`` and the claimed or
        matched ones not seen since ``kept_before``; how many."""
        with self.db.transaction() as conn:
            self._locked(conn)
            where = "(table_code IS NULL AND seen < ?) OR (table_code IS NOT NULL AND seen < ?)"
            params = (waiting_before, kept_before)
            n = self._count(conn, where, params)
            if n:
                self.db._exec(conn, f"DELETE FROM queue WHERE {where}", params)
        return n

    def waiting_total(self) -> int:
        """How many players wait for a quick match now (not yet being seated)."""
        rows = self.db._query("SELECT COUNT(*) AS n FROM queue WHERE table_code IS NULL")
        return int(rows[0]["n"])

    def size(self) -> int:
        with self.db.transaction() as conn:
            return self._count(conn)
