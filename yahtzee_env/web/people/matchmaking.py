"""Quick match: strangers asking for the same game are seated at one table (issue 32).

A player (a guest session or an account; an API client by its player token) asks for a game
of N seats (2-4) under a rules preset, with a CPU level and a wait (`WAIT_RANGE` seconds).
The request is one row of the ``queue`` table (`Storage` migration 7), so that server
processes sharing a PostgreSQL database pair players across processes. Every change of the
queue runs in one transaction holding the queue's lock (PostgreSQL: an advisory lock; SQLite:
its write lock), so two processes never seat one player twice.

Pairing (`Matchmaker.advance`, run at each request and each poll of the page): the waiting
rows of one request (seats, rules), oldest first, that were polled in the last `STALE_S`
seconds. When there are N of them, the N oldest are seated together; when the oldest has
waited its chosen wait, it is seated with those waiting now and the computer takes the free
seats at its level. A group is claimed in the queue first (``table_code`` ``~`` and a claim
id), then its table is made (`tables.Tables.create`, `join`, `start`: an online table with a
turn timer, so an absent player's turns are played), then each row learns its table; a
failure between hands the rows back to the queue.

Held against abuse: one row per player (a second request is refused, 409 ``already_queued``),
at most ``Limits.queue_per_address`` rows per client address (429 ``queue_address``) and
``Limits.queue_total`` in all (503 ``queue_full``); cancelling deletes the row, a matched row
is deleted when its player reads it, and `sweep` deletes rows nobody polls any more. Each
request spends the asker's token bucket (`service.Service.spend`).
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.game.rules import PRESETS
from yahtzee_env.web.errors import WebError, clean_name
from yahtzee_env.web.storage import Storage, token_hash
from yahtzee_env.web.storage.queue import CLAIMED, matched
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.table import DEFAULT_FILL, MAX_SEATS, MIN_SEATS, cpu_levels

WAIT_RANGE = (10, 300)  # seconds a player may choose to wait for people
WAITS = (15, 30, 60, 120)  # the lobby's suggestions
DEFAULT_WAIT = 30
STALE_S = 15.0  # a waiting row not polled for this long is never seated (and swept)
KEPT_S = 120.0  # a matched (or claimed) row its player never read is swept after this
QUICK_TURN_TIMER = 60  # seconds per turn at a quick-match table (absent players are played)
log = logging.getLogger("yahtzee.web")


def _int_in(body: dict[str, Any], key: str, default: int, low: int, high: int, code: str) -> int:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise WebError(f"{key} must be an integer from {low} to {high}", 400, code)
    return value


def parse_request(body: dict[str, Any]) -> dict[str, Any]:
    """The request's seats, rules, CPU level and wait, checked (WebError names the field)."""
    seats = _int_in(body, "seats", 2, MIN_SEATS, MAX_SEATS, "bad_seats")
    wait = _int_in(body, "wait", DEFAULT_WAIT, *WAIT_RANGE, "bad_wait")
    rules = body.get("rules", "official")
    if not isinstance(rules, str) or rules not in PRESETS:
        raise WebError(f"unknown rules {str(rules)[:30]!r}; presets: {', '.join(PRESETS)}")
    fill = body.get("fill", DEFAULT_FILL)
    levels = cpu_levels()
    if not isinstance(fill, str) or fill not in levels:
        raise WebError(f"unknown CPU level {str(fill)[:30]!r}; choose one of {levels}")
    duplicate = body.get("duplicate", False)
    if not isinstance(duplicate, bool):
        raise WebError("duplicate must be true or false")
    return {
        "seats": seats,
        "rules": rules,
        "fill_level": fill,
        "wait": wait,
        "duplicate": duplicate,
    }


class Matchmaker:
    """The quick-match queue of one server process (the queue itself is in the database)."""

    def __init__(
        self, storage: Storage, tables: Tables, per_address: int = 40, total: int = 5000
    ) -> None:
        self.storage, self.tables = storage, tables
        self.per_address, self.total = per_address, total

    def clock(self) -> float:
        return self.tables.clock()  # the tables' wall clock (tests move it)

    # ----------------------------------------------------------------- the intents
    def request(
        self, body: dict[str, Any], player: dict[str, Any], address: str, device: str | None
    ) -> dict[str, Any]:
        """Queue ``player`` for the game ``body`` asks for; the status (`status`)."""
        want = parse_request(body)
        name = clean_name(body.get("name"), default=player["name"])
        self.tables.check_caps(player["id"], None)  # a host of too many tables cannot host one
        now = self.clock()
        row = {
            "player_id": player["id"],
            "addr_hash": token_hash(f"addr:{address}"),
            "device": device,
            "seats": want["seats"],
            "rules": want["rules"],
            "fill_level": want["fill_level"],
            "name": name,
            "created": now,
            "deadline": now + want["wait"],
            "seen": now,
            "duplicate": int(want["duplicate"]),
        }
        refused = self.storage.queue.add(row, self.per_address, self.total)
        if refused == "already_queued":
            raise WebError(
                "you are already waiting for a game: cancel it first", 409, "already_queued"
            )
        if refused == "queue_address":
            raise WebError(
                f"{self.per_address} players from your network are already waiting",
                429,
                "queue_address",
            )
        if refused == "queue_full":
            raise WebError("the quick-match queue is full: try again soon", 503, "queue_full")
        return self.status(player)

    def cancel(self, player: dict[str, Any]) -> dict[str, Any]:
        """Leave the queue: the row is deleted (a player already seated keeps the table)."""
        row = self.storage.queue.take(player["id"])
        if row is not None and matched(row):
            return {"state": "matched", "code": row["table_code"], "seat": row["seat"]}
        return {"state": "idle"}

    def status(self, player: dict[str, Any]) -> dict[str, Any]:
        """Where ``player`` stands: ``idle`` (not queued), ``waiting`` (with the seconds
        left and how many wait for the same game), or ``matched`` (the table's code and
        seat: read once, then the row is gone). Pairs the queue first (`advance`)."""
        row = self.storage.queue.poll(player["id"], self.clock())
        if row is None:
            return {"state": "idle"}
        code = row["table_code"]
        if matched(row):
            return {"state": "matched", "code": code, "seat": row["seat"]}
        if not code:
            self.advance(row["seats"], row["rules"])
            return self._waiting(player)
        return {"state": "matching"}

    def _waiting(self, player: dict[str, Any]) -> dict[str, Any]:
        row = self.storage.queue.waiting(player["id"], self.clock() - STALE_S)
        if row is None:
            return {"state": "idle"}
        code = row["table_code"]
        if matched(row):
            return {"state": "matched", "code": code, "seat": row["seat"]}
        return {
            "state": "waiting" if not code else "matching",
            "seats": row["seats"],
            "rules": row["rules"],
            "fill": row["fill_level"],
            "wait_left": round(max(0.0, row["deadline"] - self.clock()), 1),
            "waiting": row["waiting"],
        }

    # ----------------------------------------------------------------- pairing
    def _claim(self, seats: int, rules: str) -> tuple[str, list[dict[str, Any]]] | None:
        """Claim the next group of request (seats, rules), if one is due: the claim id and
        its rows, oldest first."""
        now = self.clock()
        claim = CLAIMED + secrets.token_hex(8)

        def due(rows: list[dict[str, Any]]) -> bool:  # a full group, or the oldest waited
            return len(rows) >= seats or rows[0]["deadline"] <= now

        rows = self.storage.queue.claim(seats, rules, now, now - STALE_S, claim, due)
        if rows is None:
            return None
        return claim, rows

    def advance(self, seats: int, rules: str) -> list[str]:
        """Seat every group of request (seats, rules) that is due; their tables' codes."""
        made = []
        while True:
            claimed = self._claim(seats, rules)
            if claimed is None:
                return made
            claim, rows = claimed
            try:
                code, placed = self._seat(rows)
            except WebError as err:  # the host may not host one more (its caps): it leaves
                log.warning("quick match: player %s cannot host: %s", rows[0]["player_id"], err)
                self._release(claim, drop=rows[0]["player_id"])
                continue
            except Exception:
                self._release(claim)
                raise
            self.storage.queue.place(claim, code, placed)
            made.append(code)

    def _release(self, claim: str, drop: int | None = None) -> None:
        """Hand a claimed group back to the queue (but the player ``drop``, whose row goes)."""
        self.storage.queue.release(claim, drop)

    def _seat(self, rows: list[dict[str, Any]]) -> tuple[str, dict[int, int]]:
        """The table of a claimed group: the oldest hosts, the others join, the computer
        takes the free seats at the host's level, and it starts at once."""
        host = rows[0]
        people = [{"id": r["player_id"], "name": r["name"]} for r in rows]
        body = {
            "seats": ["human"] + ["friend"] * (host["seats"] - 1),
            "online": True,
            "rules": host["rules"],
            "fill": host["fill_level"],
            "turn_timer": QUICK_TURN_TIMER,
            "name": host["name"],
            # duplicate dice are a preference: the queue does not split on it (asking never
            # makes the wait longer); the table has them when everyone matched asked
            "duplicate": all(bool(r.get("duplicate")) for r in rows),
        }
        table, _ = self.tables.create(body, None, people[0])
        placed = {host["player_id"]: 0}
        for person, row in zip(people[1:], rows[1:], strict=True):
            _, seat, _ = self.tables.seating.join(table.code, {"name": row["name"]}, person)
            placed[row["player_id"]] = seat
        self.tables.seating.start(table.code, 0, None, host["player_id"])
        devices = [(table.code, placed[r["player_id"]], r["device"]) for r in rows if r["device"]]
        self.storage.tables.note_devices(devices)
        return table.code, placed

    # ----------------------------------------------------------------- housekeeping
    def sweep(self) -> int:
        """Delete the rows nobody polls any more, and matched rows never read; how many."""
        now = self.clock()
        return self.storage.queue.sweep(now - STALE_S * 4, now - KEPT_S)

    def size(self) -> int:
        return self.storage.queue.size()


async def note_seats(storage, code: str, seats: list[int], device: str | None) -> None:
    """Record the browser ``device`` (its hashed id) with the seats it took at table ``code``."""
    if device and seats:
        devices = [(code, s, device) for s in seats]
        await run_in_threadpool(storage.tables.note_devices, devices)


__all__ = [
    "DEFAULT_WAIT",
    "WAITS",
    "WAIT_RANGE",
    "Matchmaker",
    "note_seats",
    "parse_request",
]
