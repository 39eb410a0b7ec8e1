"""The move log beside the card (issue 32): every move of a table's current game, as the
events the table's states carry (a catalogue key and its values, ``msg``, which the page
narrates in its language), newest first.

A state carries the last `tables.EVENTS_KEPT` events only; the log replays the game's whole
action log on a scratch copy of the table (`tables.Table.apply`, the one writer of the
narration), so a page opened late in a game of four still shows every move.
"""

from __future__ import annotations

from typing import Any

from yahtzee_env.web.tables.secrecy import events_for
from yahtzee_env.web.tables.table import Seat, Table


def game_events(table: Table) -> list[dict[str, Any]]:
    """Every event of ``table``'s current game, oldest first (empty before the start)."""
    if not table.started or table.game is None or not table.games:
        return []
    seats = [Seat(s.seat, s.kind, s.name) for s in table.seats]
    scratch = Table(
        table.code, table.rules, table.seed, table.online, table.match, False,
        table.fill_level, seats, dice_secret=table.dice_secret, duplicate=table.duplicate,
        dice=table.dice, client_seeds=table.client_seeds,
    )  # fmt: skip
    scratch.games = list(table.games)
    scratch.begin_game(table.idx, table.games[-1]["first"])
    events = []
    for seat, action, regret in table.log:
        scratch.apply(seat, action, regret)
        events.append(scratch.events[-1])
    return events


def move_log(table: Table, seats: list[int] = ()) -> dict[str, Any]:
    """The log as the page asks for it: the game, its ``seq`` and the events, newest first;
    a duplicate game in play's as a viewer of ``seats`` (none: a spectator) may see it
    (`secrecy`: no die of a roll the viewer has not made)."""
    events = game_events(table)
    if table.duplicate and table.game is not None and not table.game.over:
        events = events_for(table, events, seats, table.progress())
    return {"code": table.code, "game": table.idx, "seq": len(table.log), "events": events[::-1]}


__all__ = ["game_events", "move_log"]
