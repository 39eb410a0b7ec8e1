"""The turn clock: each table's deadline for the decision it waits on (a turn, or the
play-again vote), stored with the votes so that a restart plays a turn whose time ran out
while the server was down (`authority.Tables.timer`).

A table with a time bank (issue 62: ``bank_add`` seconds a turn, up to ``turn_timer``) keeps
one bank per seat, stored beside the deadline: a turn's start adds the increment (capped)
and sets the deadline at the bank's end; the turn's end keeps what is left. Only the
server's clock counts: nothing a client sends moves a bank."""

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
        now = self.tables.clock()
        if key != table.armed:
            self._bank_out(table, now)  # the turn that ended keeps what is left of its bank
        if key is None or not table.turn_timer:
            table.deadline = None
        elif key != table.armed:  # a new decision (the same one keeps its deadline, or none)
            table.deadline = now + self._bank_in(table, key)
        table.armed = key
        votes = json.dumps(sorted(table.votes, key=str)) if table.votes else ""
        banks = json.dumps(table.banks, separators=(",", ":")) if table.banks else ""
        saved = (table.deadline, votes, banks)
        if force or saved != table.saved_clock:
            self.storage.tables.set_clock(table.code, *saved)
            table.saved_clock = saved

    @staticmethod
    def banks_left(table: Table) -> list[float]:
        """Each seat's bank at the end of its last turn of the current game (full: the cap,
        before its first)."""
        banks = table.banks
        if banks.get("game") == table.idx and len(banks.get("left", ())) == len(table.seats):
            return [float(b) for b in banks["left"]]
        return [float(table.turn_timer)] * len(table.seats)

    def _bank_in(self, table: Table, key: tuple) -> float:
        """The seconds the decision ``key`` gets: a turn at a table with a time bank, its
        seat's bank plus the increment, up to the cap; else the fixed clock's."""
        if not table.bank_add or key[1] == "over":
            return float(table.turn_timer)
        return min(float(table.turn_timer), self.banks_left(table)[key[2]] + table.bank_add)

    def _bank_out(self, table: Table, now: float) -> None:
        """The turn ``table.armed`` ended at ``now``: its seat keeps the time left (none, when
        it timed out)."""
        key = table.armed
        if not table.bank_add or key is None or key[1] == "over" or table.deadline is None:
            return
        if key[0] != table.idx:
            return  # a game that ended: the next one starts with full banks
        left = self.banks_left(table)
        left[key[2]] = round(max(0.0, min(float(table.turn_timer), table.deadline - now)), 1)
        table.banks = {"game": table.idx, "left": left}

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
