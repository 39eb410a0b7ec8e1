"""The tables: their rows, seats and games, the action log, the turn clock's deadline,
expiry, the open-table listing, spectator links and the browsers seats were taken from.

A table is stored as its seed and its seats, each game as its index and seed, and every
accepted action as one row of the log: the server rebuilds any table by replaying it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from yahtzee_env.web.storage.base import Store

# A move rewrites its table's ``updated`` only once the copy's last write of it is this old
# (`TableStore.append_actions`): the time of a table's last move, to within a minute.
TOUCH_EVERY_S = 60.0


class TableStore(Store):
    """``storage.tables``: everything stored per table."""

    def create_table(self, table: dict[str, Any], seats: list[dict[str, Any]]) -> None:
        now = self.db.clock()
        statements = [
            (
                "INSERT INTO tables (code, created, rules, seed, online, match, coach, "
                "fill_level, started, updated, host_player, host_addr, public, turn_timer, "
                "dice_secret, duplicate, dice, bank_add) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    table.get("dice"),
                    int(table.get("bank_add", 0)),
                ),
            )
        ]
        statements += [self._seat_row(table["code"], s) for s in seats]
        if table["started"]:
            statements.append(self._game_row(table["code"], 0, 0, table["first"]))
        self.db._tx(statements)

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

    def _touch(
        self, code: str, over: bool | None = None, now: float | None = None
    ) -> tuple[str, tuple]:
        now = self.db.clock() if now is None else now
        if over is None:
            return ("UPDATE tables SET updated = ? WHERE code = ?", (now, code))
        return ("UPDATE tables SET updated = ?, over = ? WHERE code = ?", (now, int(over), code))

    def update_seat(self, code: str, seat: dict[str, Any]) -> None:
        self.db._tx([self._seat_row(code, seat), self._touch(code)])

    def update_seats(self, code: str, seats: list[dict[str, Any]], replace: bool = False) -> None:
        """Write these seats (``replace``: they are all the table's seats; others go)."""
        statements = [("DELETE FROM seats WHERE code = ?", (code,))] if replace else []
        statements += [self._seat_row(code, s) for s in seats]
        self.db._tx([*statements, self._touch(code)])

    def set_clock(self, code: str, deadline: float | None, votes: str, banks: str = "") -> None:
        """The table's turn deadline (epoch seconds; None: no clock runs), its play-again
        votes and its seats' time banks (JSON; "": none, or all full)."""
        self.db._tx(
            [
                (
                    "UPDATE tables SET deadline = ?, votes = ?, banks = ? WHERE code = ?",
                    (deadline, votes, banks, code),
                )
            ]
        )

    def due(self, now: float, limit: int = 100) -> list[str]:
        """The tables whose turn deadline has passed."""
        rows = self.db._query(
            "SELECT code FROM tables WHERE deadline IS NOT NULL AND deadline <= ? "
            "ORDER BY deadline LIMIT ?",
            (now, limit),
        )
        return [r["code"] for r in rows]

    def set_client_seeds(self, code: str, client_seeds: str) -> None:
        """The client seeds the seats sent (issue 58; JSON, `seeds.dump`)."""
        self.db._tx(
            [("UPDATE tables SET client_seeds = ? WHERE code = ?", (client_seeds, code)),
             self._touch(code)]
        )  # fmt: skip

    def start_table(self, code: str, seats: list[dict[str, Any]], first: int) -> None:
        statements = [self._seat_row(code, s) for s in seats]
        statements.append(("UPDATE tables SET started = 1 WHERE code = ?", (code,)))
        statements.append(self._game_row(code, 0, 0, first))
        statements.append(self._touch(code, over=False))
        self.db._tx(statements)

    def start_game(self, code: str, idx: int, match_no: int, first: int) -> None:
        self.db._tx([self._game_row(code, idx, match_no, first), self._touch(code, over=False)])

    def table_rev(self, code: str) -> int | None:
        rows = self.db._query("SELECT rev FROM tables WHERE code = ?", (code,))
        return int(rows[0]["rev"]) if rows else None

    def load_table(self, code: str) -> dict[str, Any] | None:
        """The table's rows, ``rev`` read first: rows committed by another process meanwhile
        can only make the copy newer than its ``rev`` says, and the next `lock_table` then
        rebuilds it. Inside `lock_table` the table cannot change."""
        with self.db._reading() as conn:
            rows, seats, games, logged = self.db._exec_all(
                conn,
                [
                    ("SELECT * FROM tables WHERE code = ?", (code,)),
                    ("SELECT * FROM seats WHERE code = ? ORDER BY seat", (code,)),
                    ("SELECT * FROM games WHERE code = ? ORDER BY idx", (code,)),
                    (
                        "SELECT idx, seq, seat, action, regret, auto FROM actions WHERE code = ? "
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
        auto: dict[int, set[int]] = {}
        for r in logged:
            actions.setdefault(r["idx"], []).append((r["seat"], r["action"], r["regret"]))
            if r["auto"]:
                auto.setdefault(r["idx"], set()).add(r["seq"])
        table["actions"], table["auto"] = actions, auto
        return table

    def table_changes(self, code: str, idx: int, seq: int) -> dict[str, Any] | None:
        """What a copy of table ``code`` at game ``idx``, action ``seq`` needs to catch up
        when only that game's log has grown: the table's ``rev`` (read first), ``started``,
        the number of games, the seats, and game ``idx``'s actions from ``seq`` on (and, as
        ``auto``, the seqs among them the computer made for a human seat)."""
        with self.db._reading() as conn:
            rows, seats, actions = self.db._exec_all(
                conn,
                [
                    (
                        "SELECT rev, started, deadline, votes, banks, client_seeds, "
                        "(SELECT COUNT(*) FROM games "
                        "WHERE code = ?) AS games FROM tables WHERE code = ?",
                        (code, code),
                    ),
                    (
                        "SELECT seat, kind, name, player_id, token_hash, owner_id, away FROM seats "
                        "WHERE code = ? ORDER BY seat",
                        (code,),
                    ),
                    (
                        "SELECT seq, seat, action, regret, auto FROM actions WHERE code = ? "
                        "AND idx = ? "
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
        out["auto"] = {r["seq"] for r in actions if r["auto"]}
        return out

    def count_tables(self) -> int:
        return int(self.db._query("SELECT COUNT(*) AS n FROM tables")[0]["n"])

    def table_exists(self, code: str) -> bool:
        return bool(self.db._query("SELECT 1 FROM tables WHERE code = ?", (code,)))

    def open_tables(self, *, player_id: int | None = None, addr: str | None = None) -> int:
        """How many unfinished tables ``player_id`` (or the address hash ``addr``) hosts."""
        column, value = ("host_player", player_id) if player_id is not None else ("host_addr", addr)
        rows = self.db._query(
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
        ``idle_s``, the unfinished games against the computer or without a turn clock idle
        for ``solo_s`` and the unfinished online games with a clock idle for ``abandoned_s``
        (None: ``idle_s``), but those in ``keep`` (their seats and tokens go with them;
        results stay); return their codes.

        A table whose turn clock runs is never deleted before its deadline, and an unfinished
        online game with a turn clock waits at least the clock times its human seats after
        its last move (each of them may take a whole turn: a 1-day table of two players
        idles two days before the abandon rule may take it)."""
        now = self.db.clock() if now is None else now
        solo_s = idle_s if solo_s is None else solo_s
        abandoned_s = idle_s if abandoned_s is None else abandoned_s
        # Searches of one index, ``tables_over_updated`` (issue 60: one query over every
        # stored table, the finished ones kept for `idle_s` included, read them all at every
        # sweep): the unfinished tables (``over = 0``, a table never started included) idle
        # for the shortest of the ages, and any table (``over`` 0 or 1) idle ``idle_s``.
        # COALESCE keeps the planner off the deadline's index, where "deadline IS NULL" is
        # nearly every table.
        unfinished = min(unstarted_s, solo_s, abandoned_s)
        rows = self.db._query(
            "SELECT code FROM tables t WHERE t.over = 0 AND t.updated < ? "
            "AND COALESCE(t.deadline, 0) <= ? AND ("
            "(t.started = 0 AND t.updated < ?)"
            " OR ((t.online = 0 OR t.turn_timer = 0) AND t.updated < ?)"
            " OR (t.online = 1 AND t.turn_timer > 0 AND t.started = 1 AND t.updated < ?"
            " AND t.updated + t.turn_timer * (SELECT COUNT(*) FROM seats s"
            " WHERE s.code = t.code AND s.kind = 'human') < ?))"
            " UNION SELECT code FROM tables WHERE over IN (0, 1) AND updated < ? "
            "AND COALESCE(deadline, 0) <= ?",
            (
                now - unfinished,
                now,
                now - unstarted_s,
                now - solo_s,
                now - abandoned_s,
                now,
                now - idle_s,
                now,
            ),
        )
        keep = set(keep)
        codes = [r["code"] for r in rows if r["code"] not in keep]
        statements = [
            (f"DELETE FROM {name} WHERE code = ?", (code,))
            for code in codes
            for name in ("actions", "chat", "games", "seat_devices", "seats", "tables")
        ]
        if statements:
            self.db._tx(statements)
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
        auto: Iterable[int] = (),
        touched: float | None = None,
    ) -> float | None:
        """Log ``(seat, action, regret)`` rows from ``first_seq`` on (``auto``: the seqs the
        computer played for a human seat), and the finished game's ``results`` if any
        (``over``: the game is over), in one committed transaction.

        ``touched``: when the caller's copy of the table last wrote its ``updated`` (None:
        not known). Within `TOUCH_EVERY_S` of it, a move that does not end the game leaves
        ``updated`` as it is: each write of it moves its index's entry, two more pages in
        SQLite's log a move (issue 60), and what reads it (the sweep's ages of hours and
        days, the newest-first lists) needs no finer time. Returns the time written to
        ``updated``, or None when it was left."""
        auto = set(auto)
        statements = [
            (
                "INSERT INTO actions (code, idx, seq, seat, action, regret, auto) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (code, idx, first_seq + i, seat, action, regret, int(first_seq + i in auto)),
            )
            for i, (seat, action, regret) in enumerate(actions)
        ]
        now = self.db.clock()
        statements += [
            (
                "INSERT INTO results (player_id, code, idx, seat, score, outcome, yahtzees, "
                "upper_bonus, opponents, online, finished, faces, rolls, yatzy_rolls, "
                "yatzy_expected, assisted) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
                    r.get("assisted"),
                ),
            )
            for r in results
        ]
        # ``over`` is written when the game ends only: a game's start sets it to 0, and
        # every write of it moves two indexes' entries (two more pages in SQLite's log)
        wrote = None
        if over or touched is None or now - touched >= TOUCH_EVERY_S:
            statements.append(self._touch(code, True if over else None, now))
            wrote = now
        self.db._tx(statements)
        return wrote

    # ------------------------------------------------------------------ seats' people
    def seat_owners(self, code: str) -> list[int]:
        """The players who may act for a seat of table ``code``."""
        rows = self.db._query(
            "SELECT owner_id FROM seats WHERE code = ? AND owner_id IS NOT NULL", (code,)
        )
        return [r["owner_id"] for r in rows]

    def note_devices(self, devices: list[tuple[str, int, str]]) -> None:
        """Record the (hashed) browser each seat was taken from: ``(code, seat, device)``."""
        if not devices:
            return
        with self.db.transaction() as conn:
            for code, seat, device in devices:
                self.db._exec(
                    conn,
                    "INSERT INTO seat_devices (code, seat, device) VALUES (?, ?, ?) "
                    "ON CONFLICT (code, seat) DO UPDATE SET device = excluded.device",
                    (code, seat, device),
                )

    # ------------------------------------------------------------------ open tables
    def listed(self, limit: int) -> list[dict[str, Any]]:
        """The listed online tables that have not started, newest first (at most
        ``limit``), each with its ``seats`` (seat, kind, name)."""
        rows = self.db._query(
            "SELECT code, rules, turn_timer, match, created FROM tables WHERE listed = 1 AND "
            "started = 0 AND online = 1 ORDER BY created DESC LIMIT ?",
            (limit,),
        )
        if not rows:
            return []
        marks = ",".join("?" * len(rows))
        seats = self.db._query(
            f"SELECT code, seat, kind, name FROM seats WHERE code IN ({marks}) ORDER BY code, seat",
            tuple(r["code"] for r in rows),
        )
        for r in rows:
            r["seats"] = [s for s in seats if s["code"] == r["code"]]
        return rows

    def listed_by_host(self, code: str) -> int:
        """How many other unstarted tables the host of table ``code`` lists (the host: its
        player, else its hashed address)."""
        host = self.db._query("SELECT host_player, host_addr FROM tables WHERE code = ?", (code,))
        column, value = ("host_player", host[0]["host_player"])
        if value is None:
            column, value = ("host_addr", host[0]["host_addr"])
        listed = self.db._query(
            f"SELECT COUNT(*) AS n FROM tables WHERE {column} = ? AND listed = 1 AND "
            "started = 0 AND code <> ?",
            (value, code),
        )
        return int(listed[0]["n"])

    def set_listed(self, code: str, on: bool) -> None:
        self.db._tx([("UPDATE tables SET listed = ? WHERE code = ?", (int(on), code))])

    # ------------------------------------------------------------------ spectator links
    def by_watch(self, watch_id: str) -> str | None:
        """The table whose watch link is ``watch_id`` (None: none)."""
        rows = self.db._query("SELECT code FROM tables WHERE watch = ?", (watch_id,))
        return rows[0]["code"] if rows else None

    def watch_of(self, code: str) -> str | None:
        rows = self.db._query("SELECT watch FROM tables WHERE code = ?", (code,))
        return rows[0]["watch"] if rows else None

    def watches(self, codes: list[str]) -> dict[str, str | None]:
        """The watch id of each of ``codes`` that is still a table."""
        marks = ",".join("?" * len(codes))
        rows = self.db._query(
            f"SELECT code, watch FROM tables WHERE code IN ({marks})", tuple(codes)
        )
        return {r["code"]: r["watch"] for r in rows}

    def set_watch(self, code: str, watch: str | None) -> None:
        self.db._tx([("UPDATE tables SET watch = ? WHERE code = ?", (watch, code))])
