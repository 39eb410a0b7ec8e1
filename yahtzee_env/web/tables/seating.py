"""Seating: who sits where at a table, and who plays each seat (`authority.Tables.seating`).

Joining and starting a table, a player leaving it or taking their seat back from the
computer, and the host handing a seat over (to the computer, or removing it before the
start: `Seating.hand_over`). Each change runs under the table's lock (`Tables.locked`).
"""

from __future__ import annotations

import secrets
from typing import Any

from yahtzee_env.web.errors import WebError, clean_name
from yahtzee_env.web.storage import token_hash
from yahtzee_env.web.tables.table import AWAY_REASONS, MIN_SEATS, Seat, Table, unique_names


class Seating:
    """The seats of the tables of ``tables`` (the authority: `authority.Tables`)."""

    def __init__(self, tables) -> None:
        self.tables, self.storage = tables, tables.storage

    def join(self, code: Any, body: dict[str, Any], session=None) -> tuple[Table, int, str | None]:
        """Take the first free seat; returns the table, the seat and its token (None with
        a ``session``: the seat is bound to the session's player)."""
        player = self.tables.who(body, session)
        name = clean_name(body.get("name"), default=player["name"] if player else "Friend")
        with self.tables.locked(code) as table:
            return self._join(table, player, name, session)

    def _join(self, table: Table, player, name: str, session=None) -> tuple[Table, int, str | None]:
        if table.started:
            raise WebError("this table has already started: no seat is free", 409, "started")
        if player and any(s.player_id == player["id"] for s in table.seats):
            raise WebError("you already have a seat at this table", 409, "already_seated")
        free = [s for s in table.seats if s.kind == "friend"]
        if not free:
            raise WebError("every seat at this table is taken", 409, "full")
        seat = free[0]
        seat.kind, seat.name = "human", name
        seat.player_id = seat.owner_id = player["id"] if player else None
        token = None
        if session is None:
            token = secrets.token_urlsafe(18)
            seat.token_hash = token_hash(token)
        unique_names(table.seats, keep=[s.seat for s in table.seats if s is not seat])
        self.storage.tables.update_seat(table.code, seat.row())
        return table, seat.seat, token

    def start(self, code: Any, seat: Any, token: Any, player_id: int | None = None) -> Table:
        with self.tables.locked(code) as table:
            return self._start(table, seat, token, player_id)

    def _start(self, table: Table, seat: Any, token: Any, player_id: int | None = None) -> Table:
        table.seat_of_token(seat, token, player_id)
        if seat != 0:
            raise WebError("only the host (seat 1) can start the table", 403, "host_only")
        if table.started:
            raise WebError("the table has already started", 409, "started")
        counts: dict[str, int] = {}
        for s in table.seats:
            if s.is_cpu:
                counts[s.kind] = counts.get(s.kind, 0) + 1
        for s in table.seats:
            if s.kind == "friend":
                counts[table.fill_level] = counts.get(table.fill_level, 0) + 1
                n = counts[table.fill_level]
                s.kind = table.fill_level
                s.name = table.fill_level if n == 1 else f"{table.fill_level} #{n}"
        unique_names(table.seats, keep=[s.seat for s in table.seats if not s.is_cpu])
        table.started = True
        first = table.begin_game(0, first=0)  # the host rolls first
        table.games.append({"idx": 0, "match_no": 0, "first": first})
        self.storage.tables.start_table(table.code, [s.row() for s in table.seats], first)
        self.tables.run_cpus(table)
        self.tables.timer.arm(table)
        return table

    def take_back(self, table: Table, seats: list[int], reasons=AWAY_REASONS) -> bool:
        """Take ``seats`` back from the computer (those away for one of ``reasons``)."""
        back = [table.seats[i] for i in seats if table.seats[i].away in reasons]
        for s in back:
            s.away = None
        if back:
            self.storage.tables.update_seats(table.code, [s.row() for s in back])
            self.tables.run_cpus(table)
            self.tables.timer.arm(table)
        return bool(back)

    def _caller_seats(
        self, table: Table, seat: Any, token: Any, player_id: int | None
    ) -> list[int]:
        if token is None and seat is None and player_id is not None:
            seats = table.seats_of(player_id)
            if not seats:
                raise WebError("you have no seat at this table", 403, "not_your_seat")
            return seats
        return [table.seat_of_token(seat, token, player_id)]

    def back(self, code: Any, seat: Any, token: Any, player_id: int | None = None) -> Table:
        """The caller takes their seat(s) back from the computer."""
        with self.tables.locked(code) as table:
            self.take_back(table, self._caller_seats(table, seat, token, player_id))
        return table

    def reconnected(self, table: Table, seats: list[int]) -> bool:
        """A seated socket opened: seats the computer took for a timeout or the host come
        back (a seat its player left is taken back only by asking: `back`)."""
        return self.take_back(table, seats, ("timeout", "host"))

    def leave(self, code: Any, seat: Any, token: Any, player_id: int | None = None) -> Table:
        """The caller leaves: before the start their seat is free again (the host's seat
        cannot be left); after it, the computer plays it (they may take it back)."""
        with self.tables.locked(code) as table:
            seats = self._caller_seats(table, seat, token, player_id)
            if not table.started:
                if 0 in seats:
                    raise WebError(
                        "the host cannot leave a table before it starts", 409, "host_leaves"
                    )
                for i in seats:
                    table.seats[i] = Seat(i, "friend", f"(seat {i + 1} free)")
                self.storage.tables.update_seats(table.code, [table.seats[i].row() for i in seats])
                return table
            left = [table.seats[i] for i in seats if table.seats[i].kind == "human"]
            for s in left:
                s.away = "left"
            self.storage.tables.update_seats(table.code, [s.row() for s in left])
            if self.tables.on_leave is not None and not table.game.over:
                self.tables.on_leave(table, [s.seat for s in left])
            if table.game.over and table.online and table.all_confirmed():
                self.tables.next_game(table)  # the others had all confirmed: they need not wait
            self.tables.run_cpus(table)
            self.tables.timer.arm(table)
            return table

    def check_host(self, table: Table, seat: Any, token: Any, player_id: int | None) -> None:
        if token is None and seat is None:
            seat = 0
        table.seat_of_token(seat, token, player_id)
        if seat != 0:
            raise WebError("only the host (seat 1) can do that", 403, "not_host")

    def _target(self, table: Table, target: Any) -> Seat:
        if isinstance(target, bool) or not isinstance(target, int):
            raise WebError("target must be a seat number")
        if not 0 < target < len(table.seats):
            raise WebError(f"no seat {target} to hand over (1..{len(table.seats) - 1})")
        return table.seats[target]

    def hand_over(
        self,
        code: Any,
        target: Any,
        seat: Any = None,
        token: Any = None,
        player_id: int | None = None,
        present: frozenset = frozenset(),
        remove: bool = False,
    ) -> Table:
        """The host hands seat ``target`` over: to the computer (before the start a free or
        absent seat becomes a CPU of the fill level; during a game an absent player's seat
        is played by the computer until they come back), or, with ``remove``, to nobody
        (before the start only: the seats after it move up; two seats at least remain).
        ``present``: seats with an open socket (a connected player's seat is not taken
        from them)."""
        with self.tables.locked(code) as table:
            self.check_host(table, seat, token, player_id)
            s = self._target(table, target)
            if remove:
                return self._remove(table, s, present)
            return self._to_cpu(table, s, present)

    def _to_cpu(self, table: Table, s: Seat, present: frozenset) -> Table:
        if s.is_cpu:
            raise WebError("the computer already plays that seat", 409, "already_cpu")
        if s.kind == "human" and s.owner_id is not None and s.owner_id == table.seats[0].owner_id:
            pass  # the host's own second seat (one screen): theirs to give
        elif s.seat in present:
            raise WebError(
                "that player is here: only an absent seat goes to the computer",
                409,
                "player_present",
            )
        if not table.started:
            counts = sum(o.kind == table.fill_level for o in table.seats)
            table.seats[s.seat] = Seat(s.seat, table.fill_level, table.fill_level)
            if counts:
                table.seats[s.seat].name = f"{table.fill_level} #{counts + 1}"
            self.storage.tables.update_seat(table.code, table.seats[s.seat].row())
            return table
        if s.away is None:
            s.away = "host"
            self.storage.tables.update_seat(table.code, s.row())
        if table.game.over and table.online and table.all_confirmed():
            self.tables.next_game(table)
        self.tables.run_cpus(table)
        self.tables.timer.arm(table)
        return table

    def _remove(self, table: Table, s: Seat, present: frozenset) -> Table:
        if table.started:
            raise WebError("the game has started: hand the seat to the computer instead", 409)
        if s.seat in present:
            raise WebError("that player is here", 409, "player_present")
        if len(table.seats) <= MIN_SEATS:
            raise WebError(f"a table keeps {MIN_SEATS} seats at least", 409, "min_seats")
        del table.seats[s.seat]
        for i, other in enumerate(table.seats):
            other.seat = i
            if other.kind == "friend":
                other.name = f"(seat {i + 1} free)"
        self.storage.tables.update_seats(table.code, [o.row() for o in table.seats], replace=True)
        return table
