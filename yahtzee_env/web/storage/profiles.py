"""Profiles (issue 62): an account found by its user name with who may see its profile
(``accounts.profile_visibility``), that setting changed, and the account's rating after each
of its rated games (``rated_games``, written by `storage.ratings`), the profile's chart."""

from __future__ import annotations

from typing import Any

from yahtzee_env.web.storage.base import Store


class ProfileStore(Store):
    """``storage.profiles``: what a profile reads of the accounts and their rated games."""

    def account_named(self, username: str) -> dict[str, Any] | None:
        """The account of ``username`` (as stored: case-folded): player_id, username,
        created, visibility; None: no such account (or a deleted one)."""
        rows = self.db._query(
            "SELECT player_id, username, created, profile_visibility AS visibility "
            "FROM accounts WHERE username = ?",
            (username,),
        )
        return rows[0] if rows else None

    def visibility(self, player_id: int) -> str | None:
        """Who may see the account's profile (None: no such account)."""
        rows = self.db._query(
            "SELECT profile_visibility AS visibility FROM accounts WHERE player_id = ?",
            (player_id,),
        )
        return rows[0]["visibility"] if rows else None

    def set_visibility(self, player_id: int, visibility: str) -> None:
        self.db._tx(
            [
                (
                    "UPDATE accounts SET profile_visibility = ? WHERE player_id = ?",
                    (visibility, player_id),
                )
            ]
        )

    def rating_history(self, player_id: int) -> list[dict[str, Any]]:
        """The account's ``mu`` after each of its rated games, oldest first (code, idx,
        mu_after, finished)."""
        return self.db._query(
            "SELECT code, idx, mu_after, finished FROM rated_games WHERE player_id = ? "
            "ORDER BY finished, code, idx",
            (player_id,),
        )
