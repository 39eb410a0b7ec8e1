"""Friends and invitations (issue 62): follow an account by its user name, see which
friends are online and at which open table, invite a friend to a table, and tables open to
the host's friends (and the invited) only.

Friends are two accounts that follow each other, neither having blocked the other
(`storage.friends.are_friends`). A follow alone shows whom you follow, never where they
are: presence and tables are a friend's only, so following is no way to watch a stranger.
Blocking wins over everything here: a player blocked either way cannot follow (the name
reads as unknown, so a block is not announced), is no friend, cannot invite or be invited,
and sees no presence. The limits are `Limits`'s (per account; the rate buckets are the
door's); a player is "online" when one of its pages asked for `overview` lately.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from yahtzee_env.web.errors import WebError, clean_code
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.people.accounts import clean_username
from yahtzee_env.web.storage import Storage

SEEN_EVERY_S = 30.0  # a player's presence is written at most this often (per process)


class Friends:
    """The friends of accounts, their invitations, and friends-only tables."""

    def __init__(self, storage: Storage, limits: Limits) -> None:
        self.storage, self.limits = storage, limits
        self.written: OrderedDict[int, float] = OrderedDict()  # player -> last presence write

    # ------------------------------------------------------------------ names
    def need_account(self, player_id: int) -> None:
        """Friends are accounts': a guest session's player has none."""
        if self.storage.accounts.account(player_id=player_id) is None:
            raise WebError("sign in first: this needs an account", 403, "no_account")

    def account_named(self, name: Any, asker: int) -> dict[str, Any]:
        """The account whose user name is ``name`` (checked like every user name), if
        neither it nor ``asker`` blocked the other; else 404 ``no_such_player``."""
        username = clean_username(name)
        row = self.storage.accounts.account(username=username)
        if row is None or self.storage.people.is_blocked(asker, [row["player_id"]]):
            raise WebError(f"no player is named {username!r}", 404, "no_such_player", name=username)
        return row

    # ------------------------------------------------------------------ follows
    def account_seated(self, code: Any, seat: Any, asker: int) -> dict[str, Any]:
        """The account playing seat ``seat`` of table ``code``, for an asker seated there
        too (a table's people are followed from the table without learning user names
        first); blocked either way reads as a seat without an account."""
        code = clean_code(code)
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise WebError("seat must be a seat number")
        if asker not in self.storage.tables.seat_owners(code):
            raise WebError("you have no seat at this table", 403, "not_your_seat")
        owner = self.storage.friends.seat_owner(code, seat)
        row = self.storage.accounts.account(player_id=owner) if owner is not None else None
        if row is None or self.storage.people.is_blocked(asker, [row["player_id"]]):
            raise WebError("that seat's player has no account to follow", 409, "not_followable")
        return row

    def follow(self, player_id: int, body: dict[str, Any]) -> dict[str, Any]:
        """Follow an account by ``name``, or by the ``seat`` it plays at table ``code``."""
        self.need_account(player_id)
        if "seat" in body:
            row = self.account_seated(body.get("code"), body.get("seat"), player_id)
        else:
            row = self.account_named(body.get("name"), player_id)
        if row["player_id"] == player_id:
            raise WebError("you cannot follow yourself", 400, "follow_self")
        if self.storage.people.is_blocked(row["player_id"], [player_id]):
            raise WebError(
                "you blocked that player: unblock them first",
                409,
                "blocked_them",
                name=row["username"],
            )
        if self.storage.friends.follows_count(player_id) >= self.limits.max_follows:
            raise WebError(
                f"you already follow {self.limits.max_follows} players",
                409,
                "too_many_follows",
                n=self.limits.max_follows,
            )
        self.storage.friends.follow(player_id, row["player_id"])
        mutual = self.storage.friends.are_friends(player_id, row["player_id"])
        return {"following": row["username"], "friend": mutual}

    def unfollow(self, player_id: int, body: dict[str, Any]) -> dict[str, Any]:
        self.need_account(player_id)
        username = clean_username(body.get("name"))
        row = self.storage.accounts.account(username=username)
        if row is not None:
            self.storage.friends.unfollow(player_id, row["player_id"])
        return {"unfollowed": username}

    # ------------------------------------------------------------------ the lobby's view
    def seen(self, player_id: int, now: float) -> None:
        """Mark ``player_id`` online (written at most every `SEEN_EVERY_S`; the memory of
        writes is bounded by ``Limits.max_keys``)."""
        last = self.written.get(player_id)
        if last is not None and 0 <= now - last < SEEN_EVERY_S:  # (a clock set back: write)
            return
        self.storage.friends.mark_seen(player_id)
        self.written[player_id] = now
        self.written.move_to_end(player_id)
        while len(self.written) > self.limits.max_keys:
            self.written.popitem(last=False)

    def overview(self, player_id: int | None, account: bool, now: float) -> dict[str, Any]:
        """What a page shows of the people around: how many are online and wait in quick
        match; for an account, whom it follows (a friend's presence and open tables) and
        the invitations it holds. Asking marks the asker online."""
        if player_id is not None:
            self.seen(player_id, now)
        lim, friends = self.limits, self.storage.friends
        out: dict[str, Any] = {
            "online": friends.online_count(lim.online_window_s),
            "waiting": self.storage.queue.waiting_total(),
            "following": [],
            "invites": [],
        }
        if player_id is None or not account:
            return out
        follows = friends.following(player_id)
        mutual = [f["player_id"] for f in follows if f["mutual"]]
        online = friends.seen_among(mutual, lim.online_window_s)
        tables = friends.open_tables_of(sorted(online), lim.invite_ttl_s)
        out["following"] = [
            {
                "name": f["username"],
                "friend": f["mutual"],
                "online": f["player_id"] in online,
                "tables": tables.get(f["player_id"], []),
            }
            for f in follows
        ]
        out["invites"] = friends.invites_to(player_id, lim.invite_ttl_s)
        return out

    # ------------------------------------------------------------------ invitations
    def invite(self, player_id: int, body: dict[str, Any]) -> dict[str, Any]:
        """Invite a friend by name to a table where the asker holds a seat."""
        self.need_account(player_id)
        code = clean_code(body.get("code"))
        row = self.account_named(body.get("name"), player_id)
        friends = self.storage.friends
        table = friends.table_of(code)
        if table is None or player_id not in self.storage.tables.seat_owners(code):
            raise WebError("you have no seat at this table", 403, "not_your_seat")
        if table["over"] or not table["online"]:
            raise WebError("only an open online table takes guests", 409, "not_invitable")
        if not friends.are_friends(player_id, row["player_id"]):
            raise WebError(
                f"{row['username']} is not your friend yet: you both follow each other first",
                403,
                "not_friends",
                name=row["username"],
            )
        lim = self.limits
        if not friends.invite(
            code, player_id, row["player_id"], lim.invites_per_invitee, lim.invite_ttl_s
        ):
            raise WebError(
                f"{row['username']} holds too many invitations now",
                429,
                "too_many_invites",
                name=row["username"],
            )
        return {"invited": row["username"], "code": code}

    def answer(self, player_id: int, body: dict[str, Any], accept: bool) -> dict[str, Any]:
        """Accept (the table then admits the asker even if open to friends only) or
        decline an invitation the asker holds."""
        code = clean_code(body.get("code"))
        if not self.storage.friends.invited(code, player_id, self.limits.invite_ttl_s):
            raise WebError("you hold no invitation to that table", 404, "no_invite")
        self.storage.friends.answer(code, player_id, accept)
        return {"code": code, "accepted": accept}

    # ------------------------------------------------------------------ friends-only tables
    def check_join(self, code: str, player_id: int | None) -> None:
        """A friends-only table seats its host's friends, the invited and its own players."""
        friends = self.storage.friends
        table = friends.table_of(code)
        if table is None or not table["friends_only"]:
            return
        host = table["host_player"]
        if player_id is not None and (
            player_id == host
            or player_id in self.storage.tables.seat_owners(code)
            or friends.are_friends(host, player_id)
            or friends.invited(code, player_id, self.limits.invite_ttl_s)
        ):
            return
        raise WebError(
            "this table is open to its host's friends and invited players only",
            403,
            "friends_only",
        )

    def sweep(self) -> None:
        lim = self.limits
        self.storage.friends.sweep(lim.invite_ttl_s, lim.online_window_s)


__all__ = ["Friends"]
