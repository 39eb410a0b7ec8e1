"""Tournaments (issue 62): a tournament, its entrants and its matches (the tables of
migration 20; its format and end, migration 21). Every step that two processes could take
at once is one guarded write: a place is taken only while the tournament is open and has
one free (`TournamentStore.join`), a round is opened by the one process whose UPDATE moves
``round`` on (`open_round`), a match's table is made by the one that claims it
(`claim_match`), and a result is kept once (`finish_match`)."""

from __future__ import annotations

from typing import Any

from yahtzee_env.web.storage.base import Store
from yahtzee_env.web.storage.schema import DIALECTS

COLUMNS = (
    "code, name, creator_id, rules, places, best_of, fill_level, starts, seed, state, round, "
    "winner_slot, created, updated, format, finished"
)


class TournamentStore(Store):
    """``storage.tournaments``: tournaments, their entrants and their matches."""

    def create(self, row: dict[str, Any], creator: dict[str, Any]) -> None:
        """A new open tournament, its creator in place 0."""
        now = self.db.clock()
        self.db._tx(
            [
                (
                    f"INSERT INTO tournaments ({COLUMNS}) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', 0, NULL, ?, ?, ?, NULL)",
                    (
                        row["code"],
                        row["name"],
                        creator["player_id"],
                        row["rules"],
                        row["places"],
                        row["best_of"],
                        row["fill_level"],
                        row["starts"],
                        row["seed"],
                        now,
                        now,
                        row.get("format", "knockout"),
                    ),
                ),
                (
                    "INSERT INTO tournament_entrants (code, slot, kind, player_id, name) "
                    "VALUES (?, 0, 'human', ?, ?)",
                    (row["code"], creator["player_id"], creator["name"]),
                ),
            ]
        )

    def get(self, code: str) -> dict[str, Any] | None:
        rows = self.db._query(f"SELECT {COLUMNS} FROM tournaments WHERE code = ?", (code,))
        return rows[0] if rows else None

    def entrants(self, code: str) -> list[dict[str, Any]]:
        return self.db._query(
            "SELECT slot, kind, player_id, name FROM tournament_entrants WHERE code = ? "
            "ORDER BY slot",
            (code,),
        )

    def matches(self, code: str) -> list[dict[str, Any]]:
        return self.db._query(
            "SELECT round, idx, a_slot, b_slot, table_code, claimed, winner_slot, a_total, "
            "b_total FROM tournament_matches WHERE code = ? ORDER BY round, idx",
            (code,),
        )

    def open_of(self, player_id: int) -> int:
        """How many unfinished tournaments ``player_id`` created."""
        rows = self.db._query(
            "SELECT COUNT(*) AS n FROM tournaments WHERE creator_id = ? AND state <> 'over'",
            (player_id,),
        )
        return int(rows[0]["n"])

    def listed(self, limit: int) -> list[dict[str, Any]]:
        """The open and running tournaments, newest first, with their entrants' count."""
        return self.db._query(
            "SELECT t.code AS code, t.name AS name, t.places AS places, t.state AS state, "
            "t.best_of AS best_of, t.rules AS rules, t.starts AS starts, t.format AS format, "
            "(SELECT COUNT(*) "
            "FROM tournament_entrants e WHERE e.code = t.code) AS entrants FROM tournaments t "
            "WHERE t.state <> 'over' ORDER BY t.created DESC LIMIT ?",
            (limit,),
        )

    def join(self, code: str, player_id: int, name: str) -> str | None:
        """Take the next free place of open tournament ``code``, in one transaction; None,
        or why not: ``unknown``, ``started``, ``full``, ``already_entered``."""
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "SELECT places, state FROM tournaments WHERE code = ?"
                + DIALECTS[self.db.dialect]["for_update"],
                (code,),
            )
            if not rows:
                return "unknown"
            if rows[0]["state"] != "open":
                return "started"
            taken = self.db._exec(
                conn, "SELECT slot, player_id FROM tournament_entrants WHERE code = ?", (code,)
            )
            if any(r["player_id"] == player_id for r in taken):
                return "already_entered"
            if len(taken) >= rows[0]["places"]:
                return "full"
            self.db._exec(
                conn,
                "INSERT INTO tournament_entrants (code, slot, kind, player_id, name) "
                "VALUES (?, ?, 'human', ?, ?)",
                (code, max(r["slot"] for r in taken) + 1, player_id, name),
            )
            self.db._exec(
                conn, "UPDATE tournaments SET updated = ? WHERE code = ?", (self.db.clock(), code)
            )
        return None

    def start_now(self, code: str) -> bool:
        """Open tournament ``code`` starts at its next step (its start time is now)."""
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "UPDATE tournaments SET starts = ?, updated = ? WHERE code = ? AND "
                "state = 'open' RETURNING code",
                (self.db.clock(), self.db.clock(), code),
            )
        return bool(rows)

    def close_unfilled(self, created_before: float) -> int:
        """Close (over, no winner) the open tournaments waiting to fill that were created
        before ``created_before``; how many. A full one is not waiting (its last join came
        before the server's step started it): it is left to start."""
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "UPDATE tournaments SET state = 'over', updated = ? WHERE state = 'open' AND "
                "starts IS NULL AND created < ? AND (SELECT COUNT(*) FROM tournament_entrants "
                "e WHERE e.code = tournaments.code) < places RETURNING code",
                (self.db.clock(), created_before),
            )
        return len(rows)

    def due(self, now: float, limit: int) -> list[str]:
        """The running tournaments, and the open ones that are full or whose start time
        passed: the ones `people.tournaments.Tournaments.advance` has work in."""
        rows = self.db._query(
            "SELECT t.code AS code FROM tournaments t WHERE t.state = 'running' OR "
            "(t.state = 'open' AND ((t.starts IS NOT NULL AND t.starts <= ?) OR "
            "(SELECT COUNT(*) FROM tournament_entrants e WHERE e.code = t.code) >= t.places)) "
            "ORDER BY t.updated LIMIT ?",
            (now, limit),
        )
        return [r["code"] for r in rows]

    def begin(self, code: str, cpus: list[tuple[int, str, str]]) -> bool:
        """Start open tournament ``code``: the CPU entrants ``(slot, level, name)`` filling
        its empty places are added; False if another process started it first."""
        with self.db.transaction() as conn:
            moved = self.db._exec(
                conn,
                "UPDATE tournaments SET state = 'running', updated = ? WHERE code = ? AND "
                "state = 'open' RETURNING code",
                (self.db.clock(), code),
            )
            if not moved:
                return False
            for slot, level, name in cpus:
                self.db._exec(
                    conn,
                    "INSERT INTO tournament_entrants (code, slot, kind, player_id, name) "
                    "VALUES (?, ?, ?, NULL, ?)",
                    (code, slot, level, name),
                )
        return True

    def open_round(self, code: str, done: int, pairs: list[tuple[int, int | None]]) -> bool:
        """Round ``done + 1``'s matches ``(a, b)`` (b None: a bye, won at once), if this
        process moves the round on first (a guarded UPDATE); False if another did."""
        with self.db.transaction() as conn:
            moved = self.db._exec(
                conn,
                "UPDATE tournaments SET round = ?, updated = ? WHERE code = ? AND round = ? "
                "AND state = 'running' RETURNING code",
                (done + 1, self.db.clock(), code, done),
            )
            if not moved:
                return False
            for idx, (a, b) in enumerate(pairs):
                self.db._exec(
                    conn,
                    "INSERT INTO tournament_matches (code, round, idx, a_slot, b_slot, "
                    "winner_slot) VALUES (?, ?, ?, ?, ?, ?)",
                    (code, done + 1, idx, a, b, a if b is None else None),
                )
        return True

    def claim_match(self, code: str, rnd: int, idx: int, claim: str, stale: float) -> bool:
        """Claim the making of a match's table (none yet, or a claim older than ``stale``:
        its process died making it)."""
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "UPDATE tournament_matches SET table_code = ?, claimed = ? WHERE code = ? AND "
                "round = ? AND idx = ? AND winner_slot IS NULL AND (table_code IS NULL OR "
                "(table_code LIKE '~%' AND claimed < ?)) RETURNING idx",
                (claim, self.db.clock(), code, rnd, idx, stale),
            )
        return bool(rows)

    def place_match(self, code: str, rnd: int, idx: int, claim: str, table_code: str) -> None:
        self.db._tx(
            [
                (
                    "UPDATE tournament_matches SET table_code = ? WHERE code = ? AND round = ? "
                    "AND idx = ? AND table_code = ?",
                    (table_code, code, rnd, idx, claim),
                )
            ]
        )

    def finish_match(
        self, code: str, rnd: int, idx: int, winner: int, totals: tuple[int, int]
    ) -> None:
        """A match's result, kept once (a second report changes nothing)."""
        self.db._tx(
            [
                (
                    "UPDATE tournament_matches SET winner_slot = ?, a_total = ?, b_total = ?, "
                    "claimed = NULL, table_code = CASE WHEN table_code LIKE '~%' THEN NULL ELSE "
                    "table_code END WHERE code = ? AND round = ? AND idx = ? AND "
                    "winner_slot IS NULL",
                    (winner, totals[0], totals[1], code, rnd, idx),
                ),
                ("UPDATE tournaments SET updated = ? WHERE code = ?", (self.db.clock(), code)),
            ]
        )

    def finish(self, code: str, winner_slot: int | None) -> None:
        """A running tournament is over: its winner's place (None: closed, nobody won)."""
        self.db._tx(
            [
                (
                    "UPDATE tournaments SET state = 'over', winner_slot = ?, updated = ?, "
                    "finished = ? WHERE code = ? AND state = 'running'",
                    (winner_slot, self.db.clock(), self.db.clock(), code),
                )
            ]
        )

    def table_moved_on(self, table_code: str) -> bool:
        """Whether a match's table may hold its result: its game is over (``tables.over``)
        or a later game began (a best-of-five's, or a game after the match); a table gone
        says yes too (loading it then says why)."""
        rows = self.db._query(
            "SELECT t.over AS over, (SELECT COUNT(*) FROM games g WHERE g.code = t.code) AS "
            "games FROM tables t WHERE t.code = ?",
            (table_code,),
        )
        return not rows or bool(rows[0]["over"]) or rows[0]["games"] > 1

    def awaited_tables(self) -> set[str]:
        """The tables whose result a running tournament still waits for (its matches
        without a winner): the table sweep keeps them, however long they idle, for the
        tournament reads its match's result from the table, and its players come back to
        it."""
        rows = self.db._query(
            "SELECT m.table_code AS code FROM tournament_matches m JOIN tournaments t ON "
            "t.code = m.code WHERE t.state = 'running' AND m.winner_slot IS NULL AND "
            "m.table_code IS NOT NULL AND substr(m.table_code, 1, 1) <> '~'"  # ~: a claim
        )
        return {r["code"] for r in rows}

    def won_by(self, player_id: int) -> int:
        """How many tournaments ``player_id`` won (a profile's figure)."""
        rows = self.db._query(
            "SELECT COUNT(*) AS n FROM tournaments t JOIN tournament_entrants e ON e.code = "
            "t.code AND e.slot = t.winner_slot WHERE t.state = 'over' AND e.player_id = ?",
            (player_id,),
        )
        return int(rows[0]["n"])

    def wins_of(self, player_id: int) -> list[dict[str, Any]]:
        """The tournaments ``player_id`` won, first won first: ``code``, ``name``, ``format``
        and ``finished`` (a tournament over before migration 21: its last change)."""
        return self.db._query(
            "SELECT t.code AS code, t.name AS name, t.format AS format, "
            "COALESCE(t.finished, t.updated) AS finished FROM tournaments t JOIN "
            "tournament_entrants e ON e.code = t.code AND e.slot = t.winner_slot "
            "WHERE t.state = 'over' AND e.player_id = ? ORDER BY 4, t.code",
            (player_id,),
        )


__all__ = ["TournamentStore"]
