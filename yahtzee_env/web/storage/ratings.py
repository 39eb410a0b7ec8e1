"""Ratings of accounts (issue 32): openskill's ``mu`` and ``sigma`` per account, and which
games were rated (``rated_games``, one row per account), so that none counts twice. How a
game is rated is `web.people.ratings`'s; this store reads and writes the rows, a game's
rating in one transaction (`RatingStore.game`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from yahtzee_env.web.storage.base import Database, Store


class RatedGame:
    """The reads and writes of rating game ``idx`` of table ``code``, inside one
    transaction (`RatingStore.game`)."""

    def __init__(self, db: Database, conn, code: str, idx: int) -> None:
        self.db, self.conn, self.code, self.idx = db, conn, code, idx

    def _rows(self, text: str, params: tuple) -> list[dict[str, Any]]:
        return self.db._exec(self.conn, text, params)

    def accounts(self, player_ids: list[int]) -> set[int]:
        """Those of ``player_ids`` that are accounts."""
        if not player_ids:
            return set()
        marks = ",".join("?" * len(player_ids))
        sql = f"SELECT player_id FROM accounts WHERE player_id IN ({marks})"
        return {r["player_id"] for r in self._rows(sql, tuple(player_ids))}

    def devices(self) -> dict[int, str]:
        """The (hashed) browser each seat of the table was taken from, where known."""
        sql = "SELECT seat, device FROM seat_devices WHERE code = ?"
        return {r["seat"]: r["device"] for r in self._rows(sql, (self.code,))}

    def rated(self) -> set[int]:
        """The accounts this game was already rated for (they left it)."""
        sql = "SELECT player_id FROM rated_games WHERE code = ? AND idx = ?"
        return {r["player_id"] for r in self._rows(sql, (self.code, self.idx))}

    def rating(self, player_id: int) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM ratings WHERE player_id = ?", (player_id,))
        return rows[0] if rows else None

    def store(self, player_id: int, mu: float, sigma: float, games: int, now: float) -> None:
        self._rows(
            "INSERT INTO ratings (player_id, mu, sigma, games, updated) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (player_id) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, "
            "games = excluded.games, updated = excluded.updated",
            (player_id, mu, sigma, games, now),
        )

    def record(self, player_id: int, before: float, after: float, now: float) -> None:
        """The game is rated for ``player_id`` (``mu`` from ``before`` to ``after``)."""
        self._rows(
            "INSERT INTO rated_games (code, idx, player_id, mu_before, mu_after, "
            "finished) VALUES (?, ?, ?, ?, ?, ?)",
            (self.code, self.idx, player_id, before, after, now),
        )


class RatingStore(Store):
    """``storage.ratings``: accounts' ratings and the games rated."""

    def of(self, player_id: int) -> dict[str, Any] | None:
        """The account's ``mu``, ``sigma`` and ``games`` (None: never rated)."""
        rows = self.db._query(
            "SELECT mu, sigma, games FROM ratings WHERE player_id = ?", (player_id,)
        )
        return rows[0] if rows else None

    def place(self, mu: float) -> int:
        """The place of a rating ``mu`` (1: nobody is ahead)."""
        ahead = self.db._query("SELECT COUNT(*) AS n FROM ratings WHERE mu > ?", (mu,))
        return int(ahead[0]["n"]) + 1

    def top(self, limit: int) -> list[dict[str, Any]]:
        """The ``limit`` best accounts (player_id, mu, sigma, games, username), best first."""
        return self.db._query(
            "SELECT r.player_id AS player_id, r.mu AS mu, r.sigma AS sigma, r.games AS games, "
            "a.username AS username FROM ratings r JOIN accounts a ON a.player_id = r.player_id "
            "ORDER BY r.mu DESC, r.player_id LIMIT ?",
            (limit,),
        )

    @contextlib.contextmanager
    def reading(self, code: str, idx: int) -> Iterator[RatedGame]:
        """Read what rates game ``idx`` of table ``code`` without taking the write lock (the
        lobby's rated tags, Leave's preview of its cost); `game` to rate it."""
        with self.db._reading() as conn:
            yield RatedGame(self.db, conn, code, idx)

    @contextlib.contextmanager
    def game(self, code: str, idx: int) -> Iterator[RatedGame]:
        """Rate game ``idx`` of table ``code`` in one transaction (joining the one of the
        game's last moves, or of the players' leaving, when there is one)."""
        with self.db.transaction() as conn:
            yield RatedGame(self.db, conn, code, idx)
