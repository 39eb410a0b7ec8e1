"""The turn clock: each table's deadline for the decision it waits on (a turn, or the
play-again vote), stored with the votes so that a restart plays a turn whose time ran out
while the server was down (`authority.Tables.timer`)."""

from __future__ import annotations

import json

from yahtzee_env.web.tables.table import Table


class TurnClock:
    """The turn deadlines of the tables of ``tables`` (the authority: `authority.Tables`);
    ``tables.clock`` is the wall clock (tests move it)."""

    def __init__(self, tables) -> None:
        self.tables, self.storage = tables, tables.storage

    def arm(self, table: Table, force: bool = False) -> None:
        """(Re)arm the turn clock for the decision the table waits on now (a new turn or
        a new vote gets ``turn_timer`` seconds; the same one keeps its deadline) and
        store it with the votes, when they changed."""
        key = table.decision()
        if key is None or not table.turn_timer:
            table.deadline = None
        elif key != table.armed:  # a new decision (the same one keeps its deadline, or none)
            table.deadline = self.tables.clock() + table.turn_timer
        table.armed = key
        saved = (table.deadline, json.dumps(sorted(table.votes, key=str)) if table.votes else "")
        if force or saved != table.saved_clock:
            self.storage.tables.set_clock(table.code, *saved)
            table.saved_clock = saved

    def _time_out(self, table: Table) -> bool:  # under the table's lock
        """If the table's deadline has passed: the computer plays the waited-on turn (and
        the seat is away), or, at a finished game, the next starts for those who
        confirmed (the others are away; with no confirmation at all nothing starts)."""
        if table.deadline is None or self.tables.clock() < table.deadline:
            return False
        game = table.game
        if True:
            if game.over:
                late = [
                    s
                    for s in table.seats
                    if s.kind == "human" and s.away is None and s.voter() not in table.votes
                ]
                if table.votes:
                    for s in late:
                        s.away = "timeout"
                    self.storage.tables.update_seats(table.code, [s.row() for s in late])
                    self.tables.next_game(table)
                else:  # nobody confirmed: no game starts; the table waits, without a clock
                    table.deadline = None
            else:
                seat = table.seats[game.current]
                seat.away = "timeout"
                self.storage.tables.update_seat(table.code, seat.row())
                first = len(table.log)
                self.tables.cpu_moves(table, timed_out=seat.seat)
                self.tables.commit(table, first)
            self.arm(table)
        return True

    def time_out(self, code: str) -> Table:
        """Play the table's timed-out decision, if its deadline has passed (the server's
        clock task calls this for the tables `Storage.due` lists)."""
        with self.tables.locked(code) as table:
            self._time_out(table)
        return table
