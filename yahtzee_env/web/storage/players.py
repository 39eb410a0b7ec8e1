"""Players (guests and accounts alike): their rows, names, the tables they hold seats
at, and their finished games' results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yahtzee_env.web.storage.base import Store, token_hash

# ``results.offline`` (migration 9): 0 a game the server dealt; a game played in the page,
# replayed by the server and never rated: 1 with the network off, 2 online by the player's
# choice (the server only recorded it).
PLAYED_IN_PAGE = {"offline": 1, "in_page": 2}


class PlayerStore(Store):
    """``storage.players``: players, a guest adopted by an account, results (offline games
    among them)."""

    def create_player(self, name: str, token: str) -> int:
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "INSERT INTO players (token_hash, name, created) VALUES (?, ?, ?) RETURNING id",
                (token_hash(token), name, self.db.clock()),
            )
        return int(rows[0]["id"])

    def player_by_token(self, token: str) -> dict[str, Any] | None:
        rows = self.db._query(
            "SELECT id, name FROM players WHERE token_hash = ?", (token_hash(token),)
        )
        return rows[0] if rows else None

    def player_by_id(self, player_id: int) -> dict[str, Any] | None:
        rows = self.db._query("SELECT id, name FROM players WHERE id = ?", (player_id,))
        return rows[0] if rows else None

    def rename_player(self, player_id: int, name: str) -> None:
        self.db._tx([("UPDATE players SET name = ? WHERE id = ?", (name, player_id))])

    def adopt(self, guest_id: int, player_id: int) -> None:
        """Give the guest ``guest_id``'s games, seats and tables to ``player_id``."""
        self.db._tx(
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
        rows = self.db._query(
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

    def results_of(self, player_id: int) -> list[dict[str, Any]]:
        return self.db._query(
            "SELECT code, idx, seat, score, outcome, yahtzees, upper_bonus, opponents, "
            "online, finished, offline, faces, rolls, yatzy_rolls, yatzy_expected, assisted, "
            "errors FROM results "
            "WHERE player_id = ? ORDER BY finished, code, idx",
            (player_id,),
        )

    def ungraded(self, since: float, limit: int) -> list[dict[str, Any]]:
        """The unaided results of accounts (a guest has no profile to show an achievement
        on) in the server's games finished since ``since`` that the review has not graded
        yet (``errors`` NULL), oldest first: ``code``, ``idx``, ``seat``."""
        return self.db._query(
            "SELECT r.code, r.idx, r.seat FROM results r JOIN accounts a ON a.player_id = "
            "r.player_id WHERE r.errors IS NULL AND r.assisted = 0 AND r.offline = 0 AND "
            "r.finished >= ? ORDER BY r.finished, r.code, r.idx, r.seat LIMIT ?",
            (since, limit),
        )

    def set_errors(self, code: str, idx: int, errors: dict[int, int]) -> None:
        """The errors the review found per seat of game ``idx`` of table ``code`` (-1: it
        could not be graded), kept once (a second grading changes nothing)."""
        self.db._tx(
            [
                (
                    "UPDATE results SET errors = ? WHERE code = ? AND idx = ? AND seat = ? "
                    "AND errors IS NULL",
                    (n, code, idx, seat),
                )
                for seat, n in errors.items()
            ]
        )

    def add_offline_results(self, player_id: int, rows: Sequence[dict[str, Any]]) -> None:
        """A player's games played in the page (`tables.offline_games`), each once: the
        page's game id is part of the key (``offline-PLAYER-ID``), so a resent game is not
        counted twice; ``results.offline`` says how it was played (`PLAYED_IN_PAGE`)."""
        now = self.db.clock()
        self.db._tx(
            [
                (
                    "INSERT INTO results (player_id, code, idx, seat, score, outcome, yahtzees, "
                    "upper_bonus, opponents, online, finished, offline) "
                    "VALUES (?, ?, 0, 0, ?, ?, ?, ?, ?, 0, ?, ?) "
                    "ON CONFLICT (code, idx, seat) DO NOTHING",
                    (
                        player_id,
                        f"offline-{player_id}-{r['id']}",
                        r["score"],
                        r["outcome"],
                        r["yahtzees"],
                        r["upper_bonus"],
                        r["opponents"],
                        now,
                        PLAYED_IN_PAGE[r.get("played", "offline")],
                    ),
                )
                for r in rows
            ]
        )

    def offline_results_since(self, player_id: int, since: float) -> int:
        """How many games played in the page (offline or not) the player has sent since
        ``since`` (their daily cap)."""
        rows = self.db._query(
            "SELECT COUNT(*) AS n FROM results WHERE player_id = ? AND offline <> 0 "
            "AND finished >= ?",
            (player_id, since),
        )
        return int(rows[0]["n"])
