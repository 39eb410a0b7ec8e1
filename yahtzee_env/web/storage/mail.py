"""E-mail (issue 62): an account's address and its choices, the "your turn" and invitation
mails sent (at most one per player, table and kind per few hours) and the confirmations
sent per address (the tables of migration 19).

The confirmation link's token is kept as its hash, with an expiry, and forgotten once used;
the unsubscribe key is the capability of the mails' one-click link (it only stops mail) and
changes with the address. An address is counted by its hash (`token_hash` of its lower
case): the cap on confirmations outlives an address removed again."""

from __future__ import annotations

from typing import Any

from yahtzee_env.web.storage.base import Store


class MailStore(Store):
    """``storage.mail``: addresses, choices, the mails sent, the confirmations per address."""

    def set_address(
        self, player_id: int, address: str, confirm_hash: str, expires: float, key: str, lang: str
    ) -> None:
        """A new (unconfirmed) address for ``player_id``: its confirmation's hash and expiry,
        a new unsubscribe key; the choices kept (on, for a first address)."""
        sql = (
            "INSERT INTO emails (player_id, address, confirmed, confirm_hash, confirm_expires, "
            "lang, unsubscribe, updated) VALUES (?, ?, 0, ?, ?, ?, ?, ?) ON CONFLICT (player_id) "
            "DO UPDATE SET address = excluded.address, confirmed = 0, "
            "confirm_hash = excluded.confirm_hash, confirm_expires = excluded.confirm_expires, "
            "lang = excluded.lang, unsubscribe = excluded.unsubscribe, updated = excluded.updated"
        )
        now = self.db.clock()
        self.db._tx([(sql, (player_id, address, confirm_hash, expires, lang, key, now))])

    def renew_confirmation(self, player_id: int, confirm_hash: str, expires: float) -> None:
        """A new confirmation link for the (unconfirmed) address (the old one stops working)."""
        sql = (
            "UPDATE emails SET confirm_hash = ?, confirm_expires = ? "
            "WHERE player_id = ? AND confirmed = 0"
        )
        self.db._tx([(sql, (confirm_hash, expires, player_id))])

    def of(self, player_id: int) -> dict[str, Any] | None:
        """``player_id``'s address, confirmed, turns, invites, lang, unsubscribe (None: none)."""
        rows = self.db._query(
            "SELECT address, confirmed, confirm_expires, turns, invites, lang, unsubscribe "
            "FROM emails WHERE player_id = ?",
            (player_id,),
        )
        if not rows:
            return None
        row = rows[0]
        for key in ("confirmed", "turns", "invites"):
            row[key] = bool(row[key])
        return row

    def confirm(self, confirm_hash: str) -> int | None:
        """Confirm the address whose link's token hashes to ``confirm_hash``, unexpired; the
        token is forgotten (a link works once). The player, or None."""
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "SELECT player_id FROM emails WHERE confirm_hash = ? AND confirm_expires >= ?",
                (confirm_hash, self.db.clock()),
            )
            if not rows:
                return None
            self.db._exec(
                conn,
                "UPDATE emails SET confirmed = 1, confirm_hash = NULL, confirm_expires = NULL "
                "WHERE player_id = ?",
                (rows[0]["player_id"],),
            )
        return rows[0]["player_id"]

    def set_choices(
        self, player_id: int, turns: bool, invites: bool, lang: str, key: str | None = None
    ) -> None:
        """The mails ``player_id`` wants, in ``lang``; ``key``: a new unsubscribe key."""
        sql = (
            "UPDATE emails SET turns = ?, invites = ?, lang = ?, "
            "unsubscribe = COALESCE(?, unsubscribe) WHERE player_id = ?"
        )
        self.db._tx([(sql, (int(turns), int(invites), lang, key, player_id))])

    def unsubscribe(self, player_id: int, key: str) -> bool:
        """Turn off every mail of ``player_id`` if ``key`` is its unsubscribe key."""
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "SELECT 1 FROM emails WHERE player_id = ? AND unsubscribe = ?",
                (player_id, key),
            )
            if rows:
                self.db._exec(
                    conn,
                    "UPDATE emails SET turns = 0, invites = 0 WHERE player_id = ?",
                    (player_id,),
                )
        return bool(rows)

    def remove(self, player_id: int) -> None:
        """Forget ``player_id``'s address and the mails sent to it."""
        self.db._tx(
            [
                ("DELETE FROM emails WHERE player_id = ?", (player_id,)),
                ("DELETE FROM mails_sent WHERE player_id = ?", (player_id,)),
            ]
        )

    def claim(self, player_id: int, code: str, kind: str, every_s: float) -> bool:
        """Note a mail of ``kind`` to ``player_id`` about table ``code``; False (nothing
        noted) if one went within the last ``every_s`` seconds."""
        now = self.db.clock()
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "SELECT sent FROM mails_sent WHERE player_id = ? AND code = ? AND kind = ?",
                (player_id, code, kind),
            )
            if rows and 0 <= now - rows[0]["sent"] < every_s:
                return False
            self.db._exec(
                conn,
                "INSERT INTO mails_sent (player_id, code, kind, sent) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (player_id, code, kind) DO UPDATE SET sent = excluded.sent",
                (player_id, code, kind, now),
            )
        return True

    def claim_confirmation(self, address_hash: str, cap: int, window_s: float) -> bool:
        """Note a confirmation mail to the address hashing to ``address_hash``; False
        (nothing noted) if ``cap`` went there within ``window_s`` seconds, whoever asked."""
        now = self.db.clock()
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "SELECT COUNT(*) AS n FROM confirmations_sent WHERE address_hash = ? AND sent >= ?",
                (address_hash, now - window_s),
            )
            if int(rows[0]["n"]) >= cap:
                return False
            self.db._exec(
                conn,
                "INSERT INTO confirmations_sent (address_hash, sent) VALUES (?, ?)",
                (address_hash, now),
            )
        return True

    def export(self, player_id: int) -> dict[str, Any] | None:
        """What an account's export shows of its address (no token, no key)."""
        row = self.of(player_id)
        if row is None:
            return None
        return {k: row[k] for k in ("address", "confirmed", "turns", "invites", "lang")}

    def sweep(self, window_s: float) -> None:
        """Forget the mails and confirmations sent more than ``window_s`` seconds ago."""
        since = self.db.clock() - window_s
        self.db._tx(
            [
                ("DELETE FROM mails_sent WHERE sent < ?", (since,)),
                ("DELETE FROM confirmations_sent WHERE sent < ?", (since,)),
            ]
        )


__all__ = ["MailStore"]
