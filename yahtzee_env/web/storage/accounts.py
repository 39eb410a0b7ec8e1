"""Accounts: user names and password hashes, sessions, the browsers each account signed
in from (devices), and recovery codes (all stored hashed)."""

from __future__ import annotations

import time
from typing import Any

from yahtzee_env.web.storage.base import Store, token_hash


class AccountStore(Store):
    """``storage.accounts``: accounts, sessions, devices, recovery codes."""

    def create_account(self, player_id: int, username: str, password_hash: str) -> bool:
        """Make ``player_id`` an account; False if the user name is taken."""
        if self.account(username=username) is not None:
            return False
        try:
            self.db._tx(
                [
                    (
                        "INSERT INTO accounts (player_id, username, password_hash, created) "
                        "VALUES (?, ?, ?, ?)",
                        (player_id, username, password_hash, self.db.clock()),
                    )
                ]
            )
        except Exception:  # the unique user name, taken meanwhile (either backend's error)
            if self.account(username=username) is not None:
                return False
            raise
        return True

    def account(self, *, username: str | None = None, player_id: int | None = None):
        """The account row (player_id, username, password_hash) by user name or player."""
        column, value = ("username", username) if username is not None else ("player_id", player_id)
        rows = self.db._query(
            f"SELECT player_id, username, password_hash FROM accounts WHERE {column} = ?",
            (value,),
        )
        return rows[0] if rows else None

    def set_password_hash(self, player_id: int, password_hash: str) -> None:
        sql = "UPDATE accounts SET password_hash = ? WHERE player_id = ?"
        self.db._tx([(sql, (password_hash, player_id))])

    def create_session(self, token: str, player_id: int) -> None:
        now = self.db.clock()
        sql = "INSERT INTO sessions (token_hash, player_id, created, seen) VALUES (?, ?, ?, ?)"
        self.db._tx([(sql, (token_hash(token), player_id, now, now))])

    def session_player(self, token: str, max_age_s: float) -> dict[str, Any] | None:
        """The player of a live session (id, name), or None."""
        rows = self.db._query(
            "SELECT p.id AS id, p.name AS name FROM sessions s JOIN players p "
            "ON p.id = s.player_id WHERE s.token_hash = ? AND s.created > ?",
            (token_hash(token), self.db.clock() - max_age_s),
        )
        return rows[0] if rows else None

    def delete_sessions(self, *, token: str | None = None, player_id: int | None = None) -> None:
        if token is not None:
            self.db._tx([("DELETE FROM sessions WHERE token_hash = ?", (token_hash(token),))])
        else:
            self.db._tx([("DELETE FROM sessions WHERE player_id = ?", (player_id,))])

    def expire_sessions(self, max_age_s: float, now: float | None = None) -> int:
        """Delete the sessions older than ``max_age_s``; return how many."""
        cutoff = (self.db.clock() if now is None else now) - max_age_s
        rows = self.db._query("SELECT COUNT(*) AS n FROM sessions WHERE created < ?", (cutoff,))
        if rows[0]["n"]:
            self.db._tx([("DELETE FROM sessions WHERE created < ?", (cutoff,))])
        return int(rows[0]["n"])

    def add_device(self, token: str, player_id: int) -> None:
        """Remember that a browser (its device cookie's ``token``) signed in as ``player_id``
        (now: a later sign-in from it renews the date)."""
        sql = (
            "INSERT INTO devices (token_hash, player_id, created) VALUES (?, ?, ?) "
            "ON CONFLICT (token_hash, player_id) DO UPDATE SET created = excluded.created"
        )
        self.db._tx([(sql, (token_hash(token), player_id, self.db.clock()))])

    def device_signed_in(self, token: str, player_id: int, max_age_s: float) -> bool:
        """Whether the browser ``token`` signed in as ``player_id`` within ``max_age_s``."""
        rows = self.db._query(
            "SELECT 1 AS x FROM devices WHERE token_hash = ? AND player_id = ? AND created > ?",
            (token_hash(token), player_id, self.db.clock() - max_age_s),
        )
        return bool(rows)

    def expire_devices(self, max_age_s: float) -> None:
        cutoff = self.db.clock() - max_age_s
        self.db._tx([("DELETE FROM devices WHERE created < ?", (cutoff,))])

    # ------------------------------------------------------------------ recovery codes
    def replace_recovery_codes(self, player_id: int, codes: list[tuple[str, str]]) -> None:
        """The account's recovery codes are now ``codes`` (selector, argon2id hash): the old
        ones, used or not, stop working."""
        now = time.time()
        insert = (
            "INSERT INTO recovery_codes (player_id, selector, code_hash, created) "
            "VALUES (?, ?, ?, ?)"
        )
        self.db._tx(
            [("DELETE FROM recovery_codes WHERE player_id = ?", (player_id,))]
            + [(insert, (player_id, sel, digest, now)) for sel, digest in codes]
        )

    def recovery_code(self, player_id: int, selector: str) -> dict[str, Any] | None:
        """The unused code of ``selector`` (its ``code_hash``), or None."""
        rows = self.db._query(
            "SELECT selector, code_hash FROM recovery_codes "
            "WHERE player_id = ? AND selector = ? AND used IS NULL",
            (player_id, selector),
        )
        return rows[0] if rows else None

    def use_recovery_code(self, player_id: int, selector: str) -> bool:
        """Spend the code: True for the one request that marks it used (two at once: one wins)."""
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "UPDATE recovery_codes SET used = ? WHERE player_id = ? AND selector = ? "
                "AND used IS NULL RETURNING selector",
                (time.time(), player_id, selector),
            )
        return bool(rows)

    def recovery_codes_left(self, player_id: int) -> int:
        rows = self.db._query(
            "SELECT COUNT(*) AS n FROM recovery_codes WHERE player_id = ? AND used IS NULL",
            (player_id,),
        )
        return int(rows[0]["n"])
