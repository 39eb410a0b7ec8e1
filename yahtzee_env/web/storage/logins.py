"""The checks of user names' secrets (issue 57): per (user name, address, kind) the failed
checks and the check in flight (``login_tries``), and per user name the budgets that checks
draw from (``login_budgets``), so that every server process sharing the database sees the
same counts. The rules are `people.logins`'; this store only keeps the rows and changes
them atomically (`change`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from yahtzee_env.web.storage.base import Store
from yahtzee_env.web.storage.schema import DIALECTS

TRY_COLUMNS = ("failures", "updated", "seen", "tried", "busy_until", "retry_at")


class LoginStore(Store):
    """``storage.logins``: the rows of `people.logins.LoginGate`."""

    def change(
        self,
        name: str,
        addr: str,
        kind: str,
        pools: Sequence[str],
        decide: Callable[[dict[str, Any], dict[str, float], float], tuple[Any, Any, Any]],
    ) -> Any:
        """In one transaction holding the row of (``name``, ``addr``, ``kind``) and the
        name's budgets ``pools`` (made first where missing: a new row is all zeros, a new
        budget full): ``decide(row, tats, now)`` returns ``(row, tats, result)``, the
        row's new columns (None: delete it), the budgets' new times (`people.logins`:
        each budget is one "theoretical arrival time") and what to return. Any number of
        processes may call it at once: each sees the others' committed changes."""
        db = self.db
        lock = DIALECTS[db.dialect]["for_update"]
        pools = sorted(pools)  # always locked in one order: no deadlock
        key = (name, addr, kind)
        ensure = [
            (
                "INSERT INTO login_tries (name, addr, kind, failures, updated, seen, tried, "
                "busy_until, retry_at) VALUES (?, ?, ?, 0, 0, 0, 0, 0, 0) "
                "ON CONFLICT (name, addr, kind) DO NOTHING",
                key,
            )
        ]
        ensure += [
            (
                "INSERT INTO login_budgets (name, pool, tat) VALUES (?, ?, 0) "
                "ON CONFLICT (name, pool) DO NOTHING",
                (name, pool),
            )
            for pool in pools
        ]
        with db.transaction() as conn:
            now = db.clock()
            db._write_all(conn, ensure)
            rows = db._exec(
                conn,
                "SELECT failures, updated, seen, tried, busy_until, retry_at FROM login_tries "
                "WHERE name = ? AND addr = ? AND kind = ?" + lock,
                key,
            )
            tats: dict[str, float] = {}
            for pool in pools:  # one by one, in order
                found = db._exec(
                    conn,
                    "SELECT tat FROM login_budgets WHERE name = ? AND pool = ?" + lock,
                    (name, pool),
                )
                tats[pool] = float(found[0]["tat"])
            row = {c: float(rows[0][c]) for c in TRY_COLUMNS}
            new_row, new_tats, result = decide(dict(row), dict(tats), now)
            writes: list[tuple[str, tuple]] = []
            if new_row is None:
                writes.append(
                    ("DELETE FROM login_tries WHERE name = ? AND addr = ? AND kind = ?", key)
                )
            elif new_row != row:
                values = tuple(new_row[c] for c in TRY_COLUMNS)
                writes.append(
                    (
                        "UPDATE login_tries SET failures = ?, updated = ?, seen = ?, tried = ?, "
                        "busy_until = ?, retry_at = ? WHERE name = ? AND addr = ? AND kind = ?",
                        values + key,
                    )
                )
            for pool, tat in sorted(new_tats.items()):
                if tat != tats.get(pool):
                    writes.append(
                        (
                            "UPDATE login_budgets SET tat = ? WHERE name = ? AND pool = ?",
                            (tat, name, pool),
                        )
                    )
            if writes:
                db._write_all(conn, writes)
        return result

    def tries(self, name: str) -> list[dict[str, Any]]:
        """The rows of user name ``name`` (the tests, and an operator's eye)."""
        return self.db._query(
            "SELECT addr, kind, failures, updated, seen, tried, busy_until, retry_at "
            "FROM login_tries "
            "WHERE name = ? ORDER BY addr, kind",
            (name,),
        )

    def forget(self, idle_before: float, forget_s: float) -> None:
        """Delete what holds nothing any more: the rows last seen before ``idle_before``
        whose failures (one forgotten every ``forget_s``) are gone and with no check in
        flight, and the budgets that are full again."""
        now = self.db.clock()
        self.db._tx(
            [
                (
                    "DELETE FROM login_tries WHERE seen < ? AND busy_until < ? "
                    "AND updated + failures * ? < ?",
                    (idle_before, now, forget_s, now),
                ),
                ("DELETE FROM login_budgets WHERE tat < ?", (now,)),
            ]
        )


__all__ = ["LoginStore"]
