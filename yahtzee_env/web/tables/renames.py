"""A seat's name at one table: told when it was changed to be unique, and changed on request.

Names at a table are unique (`tables.unique_names`: a second "Hostie" plays as "Hostie 2").
The join reply says so (`joined_as`: the name asked for, the name given, and ``renamed``),
and the player may pick another name for that table (`rename_seat`, the route
``POST /api/tables/CODE/rename {seat, token, name}``), refused with 409 ``name_taken`` when
someone else at the table already has it. The profile's own name is left as it is.
"""

from __future__ import annotations

from typing import Any

from yahtzee_env.web.errors import WebError, clean_name
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.table import Table


def joined_as(asked: Any, given: str) -> dict[str, Any]:
    """What the join reply says about the name: ``{asked, name, renamed}``."""
    asked = " ".join(asked.split()) if isinstance(asked, str) else given
    return {"asked": asked, "name": given, "renamed": asked.casefold() != given.casefold()}


def rename_seat(
    tables: Tables, code: Any, seat: Any, token: Any, player_id: int | None, name: Any
) -> Table:
    """Seat ``seat`` of table ``code`` plays as ``name`` from now on (the caller's seat)."""
    name = clean_name(name)
    with tables.locked(code) as table:
        table.seat_of_token(seat, token, player_id)
        mine = table.seats[seat]
        for other in table.seats:
            if (
                other is not mine
                and other.kind != "friend"
                and other.name.casefold() == name.casefold()
            ):
                raise WebError(
                    f"{name!r} is already playing at this table: choose another name",
                    409,
                    "name_taken",
                    name=name,
                )
        if mine.name != name:
            mine.name = name
            tables.storage.tables.update_seat(table.code, mine.row())
        return table


__all__ = ["joined_as", "rename_seat"]
