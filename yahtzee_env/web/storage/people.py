"""The table's people (issue 32): the table chat, reports, blocked accounts, and what
deleting or exporting an account reads and writes (the tables of migration 6)."""

from __future__ import annotations

import json
import time
from typing import Any

from yahtzee_env.web.storage.base import Store

DELETED_NAME = "deleted player"  # the name a deleted account's seats and messages keep


class PeopleStore(Store):
    """``storage.people``: chat, reports, blocks; deleting and exporting an account."""

    # ------------------------------------------------------------------ chat, reports, blocks
    def add_chat(self, message: dict[str, Any], hidden: bool = False) -> dict[str, Any]:
        """Store a message (code, idx, seat, player_id, name, kind, body); return it with its
        ``id`` and ``created``. ``hidden``: its author is blocked by someone at the table, so
        only its author reads it (`chat_of`'s ``reader``); its id is the next of the one
        sequence all the same, and its author cannot tell it from a message heard."""
        now = time.time()
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "INSERT INTO chat (code, idx, seat, player_id, name, kind, body, created, hidden) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    message["code"],
                    message["idx"],
                    message["seat"],
                    message.get("player_id"),
                    message["name"],
                    message["kind"],
                    message["body"],
                    now,
                    int(hidden),
                ),
            )
        out = {k: v for k, v in message.items() if k != "player_id"}
        return {**out, "id": int(rows[0]["id"]), "created": now}

    @staticmethod
    def _heard_by(reader: int | None) -> tuple[str, tuple]:
        """The condition of the messages ``reader`` reads: those heard by all, and the
        reader's own hidden ones (None: a reader with no account, or a moderator's view of
        what the table heard)."""
        if reader is None:
            return "hidden = 0", ()
        return "(hidden = 0 OR player_id = ?)", (reader,)

    def chat_of(
        self,
        code: str,
        *,
        after: int = 0,
        idx: int | None = None,
        limit: int = 100,
        reader: int | None = None,
    ) -> list[dict[str, Any]]:
        """The table's messages after id ``after`` (of game ``idx`` only, if given) that
        ``reader`` reads (`_heard_by`), oldest first, at most ``limit`` (the newest)."""
        heard, extra = self._heard_by(reader)
        where, params = f"code = ? AND id > ? AND {heard}", [code, after, *extra]
        if idx is not None:
            where += " AND idx = ?"
            params.append(idx)
        rows = self.db._query(
            f"SELECT id, idx, seat, name, kind, body, created FROM chat WHERE {where} "
            "ORDER BY id DESC LIMIT ?",
            (*params, limit),
        )
        return rows[::-1]

    def chat_count(self, code: str, idx: int, reader: int | None = None) -> int:
        """The messages of game ``idx`` that ``reader`` reads (`_heard_by`)."""
        heard, extra = self._heard_by(reader)
        rows = self.db._query(
            f"SELECT COUNT(*) AS n FROM chat WHERE code = ? AND idx = ? AND {heard}",
            (code, idx, *extra),
        )
        return int(rows[0]["n"])

    def add_report(self, report: dict[str, Any]) -> bool:
        """Store a report with the table's last messages; False if this seat already reported
        that one at this table."""
        rows = self.db._query(
            "SELECT 1 FROM reports WHERE code = ? AND reporter_seat = ? AND target_seat = ?",
            (report["code"], report["reporter_seat"], report["target_seat"]),
        )
        if rows:
            return False
        self.db._tx(
            [
                (
                    "INSERT INTO reports (code, reporter_id, reporter_seat, target_id, "
                    "target_seat, target_name, messages, created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        report["code"],
                        report.get("reporter_id"),
                        report["reporter_seat"],
                        report.get("target_id"),
                        report["target_seat"],
                        report["target_name"],
                        json.dumps(report["messages"]),
                        time.time(),
                    ),
                )
            ]
        )
        return True

    def reports(self, code: str | None = None) -> list[dict[str, Any]]:
        """The reports (of table ``code``), newest first, their messages decoded: a
        moderator's reading."""
        where, params = ("WHERE code = ?", (code,)) if code else ("", ())
        rows = self.db._query(
            "SELECT id, code, reporter_id, reporter_seat, target_id, target_seat, target_name, "
            f"messages, created FROM reports {where} ORDER BY id DESC LIMIT 500",
            params,
        )
        for r in rows:
            r["messages"] = json.loads(r["messages"])
        return rows

    def block(self, player_id: int, blocked_id: int) -> None:
        sql = (
            "INSERT INTO blocks (player_id, blocked_id, created) VALUES (?, ?, ?) "
            "ON CONFLICT (player_id, blocked_id) DO NOTHING"
        )
        self.db._tx([(sql, (player_id, blocked_id, time.time()))])

    def unblock(self, player_id: int, blocked_id: int) -> None:
        sql = "DELETE FROM blocks WHERE player_id = ? AND blocked_id = ?"
        self.db._tx([(sql, (player_id, blocked_id))])

    def blocks_of(self, player_id: int) -> list[dict[str, Any]]:
        """The accounts ``player_id`` blocked: their player id and user name."""
        return self.db._query(
            "SELECT b.blocked_id AS player_id, a.username AS username FROM blocks b "
            "LEFT JOIN accounts a ON a.player_id = b.blocked_id WHERE b.player_id = ? "
            "ORDER BY b.created",
            (player_id,),
        )

    def is_blocked(self, sender: int, others: list[int]) -> bool:
        """Whether any of ``others`` blocked ``sender`` (the one block check: that ``a`` blocked
        ``b`` is ``is_blocked(b, [a])``)."""
        others = [o for o in others if o is not None]
        if not others:
            return False
        marks = ", ".join("?" * len(others))
        rows = self.db._query(
            f"SELECT 1 FROM blocks WHERE blocked_id = ? AND player_id IN ({marks}) LIMIT 1",
            (sender, *others),
        )
        return bool(rows)

    # ------------------------------------------------------------------ delete, export
    def seat_tables(self, player_id: int) -> list[str]:
        """The tables where ``player_id`` holds (or plays) a seat."""
        rows = self.db._query(
            "SELECT DISTINCT code FROM seats WHERE player_id = ? OR owner_id = ? ORDER BY code",
            (player_id, player_id),
        )
        return [r["code"] for r in rows]

    def delete_account(self, player_id: int, token_hash: str) -> None:
        """Delete the account and its data: its statistics, rating, quick-match request, the
        browsers it signed in from, sessions, recovery codes, blocks, follows, invitations,
        its e-mail address;
        its messages stay in the games' chat under `DELETED_NAME` (the seats are renamed
        under each table's lock by the caller, `account_care`); the profile row stays,
        nameless and with a new token nobody holds (the games' rows refer to it)."""
        pid = (player_id,)
        self.db._tx(
            [
                (
                    "UPDATE chat SET name = ?, player_id = NULL WHERE player_id = ?",
                    (DELETED_NAME, *pid),
                ),
                ("UPDATE reports SET reporter_id = NULL WHERE reporter_id = ?", pid),
                ("UPDATE reports SET target_id = NULL WHERE target_id = ?", pid),
                ("DELETE FROM results WHERE player_id = ?", pid),
                ("DELETE FROM ratings WHERE player_id = ?", pid),
                ("DELETE FROM rated_games WHERE player_id = ?", pid),
                ("DELETE FROM queue WHERE player_id = ?", pid),
                ("DELETE FROM devices WHERE player_id = ?", pid),
                ("DELETE FROM recovery_codes WHERE player_id = ?", pid),
                ("DELETE FROM blocks WHERE player_id = ? OR blocked_id = ?", (*pid, *pid)),
                ("DELETE FROM follows WHERE player_id = ? OR followed_id = ?", (*pid, *pid)),
                ("DELETE FROM invites WHERE from_id = ? OR to_id = ?", (*pid, *pid)),
                ("DELETE FROM presence WHERE player_id = ?", pid),
                ("DELETE FROM emails WHERE player_id = ?", pid),
                ("DELETE FROM mails_sent WHERE player_id = ?", pid),
                ("DELETE FROM sessions WHERE player_id = ?", pid),
                ("DELETE FROM accounts WHERE player_id = ?", pid),
                ("UPDATE tables SET host_player = NULL WHERE host_player = ?", pid),
                (
                    "UPDATE players SET name = ?, token_hash = ? WHERE id = ?",
                    (DELETED_NAME, token_hash, *pid),
                ),
            ]
        )

    def export(self, player_id: int) -> dict[str, Any]:
        """Everything stored about ``player_id``, as JSON-ready data (no hash, no token)."""
        pid = (player_id,)
        (player,) = self.db._query("SELECT id, name, created FROM players WHERE id = ?", pid) or [
            None
        ]
        account = self.db._query(
            "SELECT username, created, profile_visibility FROM accounts WHERE player_id = ?", pid
        )
        seats = self.db._query(
            "SELECT s.code AS code, s.seat AS seat, s.name AS name, s.away AS away, t.rules AS "
            "rules, t.created AS created FROM seats s JOIN tables t ON t.code = s.code "
            "WHERE s.player_id = ? OR s.owner_id = ? ORDER BY t.created",
            (*pid, *pid),
        )
        chat = self.db._query(
            "SELECT code, idx, seat, kind, body, created FROM chat WHERE player_id = ? ORDER BY id",
            pid,
        )
        sessions = self.db._query("SELECT created, seen FROM sessions WHERE player_id = ?", pid)
        return {
            "format": "yatzy-account-export/1",
            "exported": time.time(),
            "player": player,
            "account": account[0] if account else None,
            "results": self.db.players.results_of(player_id),
            "seats": seats,
            "chat": chat,
            "blocked": self.blocks_of(player_id),
            "following": self.db.friends.following(player_id),
            "email": self.db.mail.export(player_id),
            "reports_made": self.db._query(
                "SELECT code, target_seat, target_name, created FROM reports WHERE reporter_id = ?",
                pid,
            ),
            "recovery_codes_left": self.db.accounts.recovery_codes_left(player_id),
            "sessions": sessions,
        }
