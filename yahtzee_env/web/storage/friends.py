"""Friends and invitations (issue 62): who follows whom, who was seen lately (presence),
invitations to a table, and tables open to friends only (the tables of migration 17).

Friends are two accounts that follow each other with no block either way: `FriendStore.are_friends`
and `FriendStore.friends_of` are the one reading of it (a profile page asks them too)."""

from __future__ import annotations

from typing import Any

from yahtzee_env.web.storage.base import Store

# Neither blocked the other: ``{a}`` and ``{b}`` are the two player-id columns.
NO_BLOCK = (
    "NOT EXISTS (SELECT 1 FROM blocks x WHERE (x.player_id = {a} AND x.blocked_id = {b}) "
    "OR (x.player_id = {b} AND x.blocked_id = {a}))"
)


class FriendStore(Store):
    """``storage.friends``: follows, presence, invitations, friends-only tables."""

    # ------------------------------------------------------------------ follows
    def follow(self, player_id: int, followed_id: int) -> None:
        sql = (
            "INSERT INTO follows (player_id, followed_id, created) VALUES (?, ?, ?) "
            "ON CONFLICT (player_id, followed_id) DO NOTHING"
        )
        self.db._tx([(sql, (player_id, followed_id, self.db.clock()))])

    def unfollow(self, player_id: int, followed_id: int) -> None:
        sql = "DELETE FROM follows WHERE player_id = ? AND followed_id = ?"
        self.db._tx([(sql, (player_id, followed_id))])

    def follows_count(self, player_id: int) -> int:
        rows = self.db._query("SELECT COUNT(*) AS n FROM follows WHERE player_id = ?", (player_id,))
        return int(rows[0]["n"])

    def following(self, player_id: int) -> list[dict[str, Any]]:
        """The accounts ``player_id`` follows, oldest first: player id, user name, and
        ``mutual`` (a friend: they follow back and neither blocked the other)."""
        no_block = NO_BLOCK.format(a="f.player_id", b="f.followed_id")
        rows = self.db._query(
            "SELECT f.followed_id AS player_id, a.username AS username, "
            "(SELECT COUNT(*) FROM follows g WHERE g.player_id = f.followed_id AND "
            f"g.followed_id = f.player_id AND {no_block}) AS mutual "
            "FROM follows f JOIN accounts a ON a.player_id = f.followed_id "
            "WHERE f.player_id = ? ORDER BY f.created",
            (player_id,),
        )
        for r in rows:
            r["mutual"] = bool(r["mutual"])
        return rows

    def are_friends(self, a: int | None, b: int | None) -> bool:
        """Whether ``a`` and ``b`` follow each other and neither blocked the other."""
        if a is None or b is None or a == b:
            return False
        rows = self.db._query(
            "SELECT 1 FROM follows f JOIN follows g ON g.player_id = f.followed_id AND "
            "g.followed_id = f.player_id WHERE f.player_id = ? AND f.followed_id = ? AND "
            + NO_BLOCK.format(a="f.player_id", b="f.followed_id"),
            (a, b),
        )
        return bool(rows)

    def friends_of(self, player_id: int) -> list[dict[str, Any]]:
        """``player_id``'s friends (`are_friends`): player id and user name, by name."""
        return [
            {"player_id": r["player_id"], "username": r["username"]}
            for r in sorted(self.following(player_id), key=lambda r: r["username"])
            if r["mutual"]
        ]

    # ------------------------------------------------------------------ presence
    def mark_seen(self, player_id: int) -> None:
        sql = (
            "INSERT INTO presence (player_id, seen) VALUES (?, ?) "
            "ON CONFLICT (player_id) DO UPDATE SET seen = excluded.seen"
        )
        self.db._tx([(sql, (player_id, self.db.clock()))])

    def online_count(self, window_s: float) -> int:
        """The players seen within the last ``window_s`` seconds."""
        rows = self.db._query(
            "SELECT COUNT(*) AS n FROM presence WHERE seen >= ?", (self.db.clock() - window_s,)
        )
        return int(rows[0]["n"])

    def seen_among(self, player_ids: list[int], window_s: float) -> set[int]:
        """Which of ``player_ids`` were seen within the last ``window_s`` seconds."""
        if not player_ids:
            return set()
        marks = ", ".join("?" * len(player_ids))
        rows = self.db._query(
            f"SELECT player_id FROM presence WHERE player_id IN ({marks}) AND seen >= ?",
            (*player_ids, self.db.clock() - window_s),
        )
        return {r["player_id"] for r in rows}

    def open_tables_of(self, player_ids: list[int], window_s: float) -> dict[int, list]:
        """The unfinished online tables where each of ``player_ids`` holds a seat, moved
        within ``window_s`` seconds, newest first: code, started, free seats."""
        if not player_ids:
            return {}
        marks = ", ".join("?" * len(player_ids))
        rows = self.db._query(
            "SELECT DISTINCT s.owner_id AS player_id, t.code AS code, t.started AS started, "
            "t.updated AS updated, (SELECT COUNT(*) FROM seats f WHERE f.code = t.code AND "
            "f.kind = 'friend') AS free FROM seats s JOIN tables t ON t.code = s.code "
            f"WHERE s.owner_id IN ({marks}) AND t.over = 0 AND t.online = 1 AND t.updated >= ? "
            "ORDER BY t.updated DESC",
            (*player_ids, self.db.clock() - window_s),
        )
        out: dict[int, list] = {}
        for r in rows:
            mine = out.setdefault(r["player_id"], [])
            if len(mine) < 3:
                mine.append({"code": r["code"], "started": bool(r["started"]), "free": r["free"]})
        return out

    # ------------------------------------------------------------------ invitations
    def invite(self, code: str, from_id: int, to_id: int, cap: int, ttl_s: float) -> bool:
        """Invite ``to_id`` to table ``code`` (again: the invitation is renewed); False if
        ``to_id`` already holds ``cap`` live invitations to other tables.

        Only those `invites_to` shows count (unanswered, to a table not over, from one
        neither blocked): invitations the invitee can neither see nor decline, a blocked
        friend's above all, must not keep everyone else's out for their hour."""
        now = self.db.clock()
        with self.db.transaction() as conn:
            rows = self.db._exec(
                conn,
                "SELECT COUNT(*) AS n FROM invites i JOIN tables t ON t.code = i.code "
                "WHERE i.to_id = ? AND i.created >= ? AND i.code <> ? AND i.accepted = 0 "
                "AND t.over = 0 AND " + NO_BLOCK.format(a="i.from_id", b="i.to_id"),
                (to_id, now - ttl_s, code),
            )
            if int(rows[0]["n"]) >= cap:
                return False
            self.db._exec(
                conn,
                "INSERT INTO invites (code, from_id, to_id, created, accepted) "
                "VALUES (?, ?, ?, ?, 0) ON CONFLICT (code, to_id) DO UPDATE SET "
                "from_id = excluded.from_id, created = excluded.created, accepted = 0",
                (code, from_id, to_id, now),
            )
        return True

    def invites_to(self, to_id: int, ttl_s: float) -> list[dict[str, Any]]:
        """The live invitations ``to_id`` has not answered, newest first: code, the
        inviter's user name, created."""
        return self.db._query(
            "SELECT i.code AS code, a.username AS from_name, i.created AS created "
            "FROM invites i JOIN accounts a ON a.player_id = i.from_id "
            "JOIN tables t ON t.code = i.code WHERE i.to_id = ? AND i.accepted = 0 AND "
            "i.created >= ? AND t.over = 0 AND "
            + NO_BLOCK.format(a="i.from_id", b="i.to_id")
            + " ORDER BY i.created DESC LIMIT 20",
            (to_id, self.db.clock() - ttl_s),
        )

    def invited(self, code: str, to_id: int, ttl_s: float) -> bool:
        """Whether ``to_id`` holds a live invitation to table ``code`` (answered or not)."""
        rows = self.db._query(
            "SELECT 1 FROM invites WHERE code = ? AND to_id = ? AND created >= ?",
            (code, to_id, self.db.clock() - ttl_s),
        )
        return bool(rows)

    def answer(self, code: str, to_id: int, accept: bool) -> None:
        """Accept (kept: it admits to a friends-only table) or decline (deleted)."""
        if accept:
            sql = "UPDATE invites SET accepted = 1 WHERE code = ? AND to_id = ?"
        else:
            sql = "DELETE FROM invites WHERE code = ? AND to_id = ?"
        self.db._tx([(sql, (code, to_id))])

    def sweep(self, ttl_s: float, window_s: float) -> None:
        """Forget the invitations older than ``ttl_s`` and presence older than ``window_s``."""
        now = self.db.clock()
        self.db._tx(
            [
                ("DELETE FROM invites WHERE created < ?", (now - ttl_s,)),
                ("DELETE FROM presence WHERE seen < ?", (now - window_s,)),
            ]
        )

    def seat_owner(self, code: str, seat: int) -> int | None:
        """The player who may act for seat ``seat`` of table ``code`` (None: nobody)."""
        rows = self.db._query(
            "SELECT owner_id FROM seats WHERE code = ? AND seat = ?", (code, seat)
        )
        return rows[0]["owner_id"] if rows else None

    # ------------------------------------------------------------------ friends-only tables
    def set_friends_only(self, code: str, on: bool) -> None:
        sql = "UPDATE tables SET friends_only = ? WHERE code = ?"
        self.db._tx([(sql, (int(on), code))])

    def table_of(self, code: str) -> dict[str, Any] | None:
        """Table ``code``'s friends_only, host_player, over, online and started (None: no
        such table)."""
        rows = self.db._query(
            "SELECT friends_only, host_player, over, online, started FROM tables WHERE code = ?",
            (code,),
        )
        return rows[0] if rows else None


__all__ = ["FriendStore"]
