"""Replicas: this process's copy of each table, kept equal to the database's (rebuilt from
the log, caught up with another process's new actions, or following the change a
notification carried) (`authority.Tables.replicas`)."""

from __future__ import annotations

import json

from yahtzee_env.game.fair_dice import DICE_ALGORITHM
from yahtzee_env.game.rules import RuleSet
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.tables import seeds
from yahtzee_env.web.tables.table import MAX_NEWS, Seat, Table


def load_banks(text: str | None) -> dict:
    """The seats' time banks as stored (`clock.TurnClock`; "" or None: none yet)."""
    if not text:
        return {}
    banks = json.loads(text)
    if not isinstance(banks, dict) or not isinstance(banks.get("left"), list):
        raise ValueError("time banks: a game and a list of seconds per seat")
    return banks


class Replicas:
    """The copies in memory (``tables.loaded``) of the tables of ``tables`` (the authority:
    `authority.Tables`)."""

    def __init__(self, tables) -> None:
        self.tables, self.storage = tables, tables.storage

    def refresh(self, code: str, rev: int | None = None) -> Table:
        """Table ``code`` at revision ``rev`` or newer, as a notification from another process
        announced it (None: at whatever the database holds, when notifications may have been
        lost). A copy in memory already there costs nothing; one behind catches up at once
        (one round trip: no query first for the database's ``rev``, which is known to be
        ahead)."""
        table = self.tables.loaded.get(code)
        if table is None:
            return self.tables.load(code)
        if rev is None or table.rev < rev:
            table = self.catch_up(table)
        self.tables.keep(table)
        return table

    def build(self, code: str) -> Table:
        """Rebuild table ``code`` from the database (its rows, then its log replayed)."""
        row = self.storage.tables.load_table(code)
        if row is None:
            self.tables.loaded.pop(code, None)
            raise WebError(f"no table has the code {code!r}", 404, "unknown_table")
        seats = [
            Seat(
                s["seat"],
                s["kind"],
                s["name"],
                s["player_id"],
                s["token_hash"],
                s.get("owner_id"),
                s.get("away"),
            )
            for s in row["seats"]
        ]
        table = Table(
            code,
            RuleSet.from_spec(row["rules"]),
            row["seed"],
            bool(row["online"]),
            bool(row["match"]),
            bool(row["coach"]),
            row["fill_level"],
            seats,
            started=bool(row["started"]),
            public=bool(row.get("public", 0)),
            rev=int(row["rev"]),
            turn_timer=int(row.get("turn_timer") or 0),
            deadline=row.get("deadline"),
            votes=set(json.loads(row["votes"])) if row.get("votes") else set(),
            dice_secret=bytes.fromhex(row["dice_secret"]) if row.get("dice_secret") else None,
            duplicate=bool(row.get("duplicate") or 0),
            dice=row.get("dice") or DICE_ALGORITHM,
            client_seeds=seeds.load(row.get("client_seeds")),
            bank_add=int(row.get("bank_add") or 0),
            banks=load_banks(row.get("banks")),
        )
        for g in row["games"]:
            table.begin_game(g["idx"], g["first"])
            table.games.append({k: g[k] for k in ("idx", "match_no", "first")})
            auto = row["auto"].get(g["idx"], set())
            for seq, (seat, action, regret) in enumerate(row["actions"].get(g["idx"], [])):
                decision = None
                graded = regret is not None and table.coach
                grader = self.tables.grader(table.rules) if graded else None
                if grader is not None:
                    decision = grader.grade(table.game, seat, action)
                table.apply(seat, action, regret, decision, auto=seq in auto)
            if table.game.over:
                table.finished.append(table.game.totals())
        table.armed = table.decision()  # the stored deadline is the current decision's
        table.saved_clock = (table.deadline, row.get("votes") or "", row.get("banks") or "")
        self.tables.keep(table)
        return table

    def catch_up(self, table: Table) -> Table:
        """``table`` brought to the database's state: the new actions of its current game
        applied, if nothing else changed (another process's move: the common case), else
        rebuilt from the whole log."""
        new = self.storage.tables.table_changes(table.code, table.idx, len(table.log))
        if new is None:
            return self.build(table.code)  # gone: raises 404
        same = (
            bool(new["started"]) == table.started
            and int(new["games"]) == len(table.games)
            and table.game is not None
            and seeds.load(new.get("client_seeds")) == table.client_seeds
            and [tuple(s.values()) for s in new["seats"]]
            == [tuple(s.row().values()) for s in table.seats]
        )
        if not same:
            return self.build(table.code)
        try:
            for seat, action, regret in new["actions"]:
                decision = None
                graded = regret is not None and table.coach
                grader = self.tables.grader(table.rules) if graded else None
                if grader is not None:
                    decision = grader.grade(table.game, seat, action)
                table.apply(seat, action, regret, decision, auto=len(table.log) in new["auto"])
        except Exception:
            return self.build(table.code)  # a copy that cannot follow the log: start over
        if new["actions"] and table.game.over:
            table.finished.append(table.game.totals())
        table.deadline, votes = new["deadline"], new["votes"] or ""  # the clock, as stored
        banks = new.get("banks") or ""
        table.votes = set(json.loads(votes)) if votes else set()
        table.banks = load_banks(banks)
        table.saved_clock, table.armed = (table.deadline, votes, banks), table.decision()
        table.rev = int(new["rev"])
        return table

    @staticmethod
    def shape(table: Table) -> tuple:
        """What of a table a change can alter besides its current game's log and clock."""
        return table.started, len(table.games), [s.row() for s in table.seats]

    def news(self, table: Table, shape: tuple, seq: int) -> str | None:
        """A change of ``table`` (that had ``shape`` and ``seq`` actions in its current game)
        as the other processes' copies can follow it without reading the database: the
        actions it appended and the clock, as JSON. None when anything else changed (a seat,
        a new game) or it is too long for a notification: they read the database then."""
        if self.shape(table) != shape or len(table.log) < seq or table.saved_clock is None:
            return None
        deadline, votes, banks = table.saved_clock
        news = {"idx": table.idx, "seq": seq, "actions": table.log[seq:]}
        news["auto"] = sorted(n for n in table.auto if n >= seq)
        news.update(deadline=deadline, votes=votes, banks=banks)
        text = json.dumps(news, separators=(",", ":"))
        return text if len(text) < MAX_NEWS else None

    def follow(self, code: str, rev: int, news: str) -> Table | None:
        """Table ``code`` after another process's change to ``rev``, followed from its
        `_news` by the copy in memory if that copy is at ``rev - 1``: no database read, and
        cheap (the engine steps a few actions), so it may run on the event loop while no
        thread works on the table. None if the copy cannot follow (absent, at another rev, a
        coach's table, news of another game): `refresh` reads the database then."""
        table = self.tables.loaded.get(code)
        if table is None or table.rev != rev - 1 or table.coach or table.game is None:
            return None
        try:
            new = json.loads(news)
            actions = [(int(seat), int(action), None) for seat, action, _ in new["actions"]]
            auto = {int(n) for n in new.get("auto", ())}
            if new["idx"] != table.idx or new["seq"] != len(table.log):
                return None
            votes, banks = new["votes"], new.get("banks") or ""
            clock = (new["deadline"], votes, banks, set(json.loads(votes)) if votes else set())
            loaded_banks = load_banks(banks)
        except (ValueError, KeyError, TypeError):
            return None
        try:
            for seat, action, regret in actions:
                table.apply(seat, action, regret, auto=len(table.log) in auto)
        except Exception:
            self.tables.loaded.pop(code, None)  # a copy that cannot follow: rebuilt at its next use
            return None
        if actions and table.game.over:
            table.finished.append(table.game.totals())
        table.deadline, table.votes, table.banks = clock[0], clock[3], loaded_banks
        table.saved_clock, table.armed = clock[:3], table.decision()
        table.rev = rev
        self.tables.keep(table)
        return table
