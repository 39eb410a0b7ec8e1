"""Duplicate tables keep the next dice secret (issue 58).

At a duplicate table every seat draws the same dice for the same (turn, roll), and the seats
still play in turn: a later seat would see its own future dice in an earlier seat's rolls.
So, as in duplicate bridge, a seat sees another seat's roll only once it has made that roll
itself, and another seat's scored box only once it has scored that turn itself:

- a roll event of seat ``s`` for (``turn``, ``roll``) — and the dice it shows — is shown to a
  viewer whose every seat has *passed* that roll: it has filled more than ``turn`` boxes, or
  it is on ``turn`` and has made more than ``roll`` rolls of it (the derivation never draws
  (turn, roll) again for a seat that made it: `fair_dice.stream`);
- a score event (``roll`` = 3, the turn's end), and the box it filled on the seat's card, is
  shown once every seat of the viewer has filled more than ``turn`` boxes;
- the dice on the table (``dice``, ``held``, ``options``) are those of the current seat's last
  roll: hidden by the same rule; the coach's ``regret`` is of the viewer's own seats only.

Until then an event goes as ``{"type": "hidden", "seq", "seat", "turn", "roll"}`` with its
narration key ``narr.hidden``, and a card shows its seat's first turns only. A viewer's own
seats are never hidden from it. A spectator (no seat) gets the strictest view: another
seat's turn once every human seat but the mover's has passed it (a player opening the watch
link of their own table learns nothing more there). A CPU seat knows nothing it could tell.

`Table.state` returns a duplicate game's state as the spectator's view (`Sealed`): anything
that sends it without asking for a seat's view sends nothing secret; `viewer_state` gives
the view of a seat's page. A finished game, and a table that is not duplicate, show all.
"""

from __future__ import annotations

from typing import Any

from yahtzee_env.game.engine import ROLLS_PER_TURN

END_OF_TURN = ROLLS_PER_TURN  # the ``roll`` of a score event: after the turn's last roll


def passed(progress: tuple[int, int], turn: int, roll: int) -> bool:
    """A seat at ``progress`` (boxes filled, rolls made of its current turn) has made roll
    ``roll`` of its turn ``turn`` (``END_OF_TURN``: scored that turn) or is past it."""
    filled, made = progress
    return turn < filled or (turn == filled and roll < made)


def hidden_event(event: dict[str, Any], name: str) -> dict[str, Any]:
    """What a viewer gets of an event it may not see yet: who moved, and when."""
    out = {k: event[k] for k in ("seq", "seat", "turn", "roll") if k in event}
    out.update(
        type="hidden",
        text=f"{name} plays a turn you have not played yet",
        msg={"key": "narr.hidden", "name": name},
    )
    return out


class Secrecy:
    """What a duplicate game's state holds, taken when the state is made, and each
    viewer's share of it (`view`)."""

    def __init__(self, table, state: dict[str, Any], progress: list[tuple[int, int]]) -> None:
        self.progress = progress
        self.humans = frozenset(s.seat for s in table.seats if not s.is_cpu)
        self.names = [s.name for s in table.seats]
        self.events = {e["seq"]: e for e in state.get("events", ())}
        self.cards = list(state["cards"])
        self.history = [list(h) for h in table.card_history]  # seat -> card after k turns
        self.table_dice = {k: state[k] for k in ("dice", "held", "options") if k in state}
        self.current = state.get("current")
        self.regret = state.get("regret")

    def visible(self, seat: int, turn: int, roll: int, seats: frozenset[int]) -> bool:
        """Whether a viewer of ``seats`` (none: a spectator) may see ``seat``'s roll."""
        if seat in seats:
            return True
        watchers = seats or self.humans - {seat}
        return all(passed(self.progress[v], turn, roll) for v in watchers)

    def event(self, event: dict[str, Any], seats: frozenset[int]) -> dict[str, Any]:
        seat = event["seat"]
        if "turn" in event and not self.visible(seat, event["turn"], event["roll"], seats):
            return hidden_event(event, self.names[seat])
        if "next_dice" in event and not self.visible(
            event["next_seat"], event["next_turn"], 0, seats
        ):
            event = {k: v for k, v in event.items() if k != "next_dice"}
        return event

    def card(self, seat: int, seats: frozenset[int]) -> dict[str, Any]:
        """``seat``'s card with the turns the viewer may see."""
        if seat in seats:
            return self.cards[seat]
        watchers = seats or self.humans - {seat}
        history = self.history[seat]
        shown = min([len(history) - 1, *(self.progress[v][0] for v in watchers)])
        return history[shown]

    def view(self, state: dict[str, Any], seats: frozenset[int]) -> None:
        """Make ``state`` (a copy of the table's) the view of a viewer of ``seats``."""
        state["events"] = [self.event(self.events[e["seq"]], seats) for e in state["events"]]
        state["cards"] = [self.card(s, seats) for s in range(len(self.cards))]
        if self.current is not None and "dice" in self.table_dice:
            state.update(self.table_dice)
            filled, made = self.progress[self.current]
            if made and not self.visible(self.current, filled, made - 1, seats):
                state.update(dice=[], held=[], options={})
        if self.regret is not None:
            state["regret"] = {k: v for k, v in self.regret.items() if int(k) in seats}


class Sealed(dict):
    """A duplicate game's state as a spectator sees it (JSON like any dict); `for_seats`
    makes a seat's view of it (a plain dict: a copy of a view is no more than that view)."""

    __slots__ = ("secrecy",)

    def for_seats(self, seats) -> dict[str, Any]:
        out = dict(self)
        self.secrecy.view(out, frozenset(seats))
        return out


def seal(table, state: dict[str, Any], progress: list[tuple[int, int]]) -> dict[str, Any]:
    """``state`` of a duplicate game in play as the spectator's view (`Sealed`)."""
    secrecy = Secrecy(table, state, progress)
    sealed = Sealed(state)
    sealed.secrecy = secrecy
    secrecy.view(sealed, frozenset())
    return sealed


def viewer_state(state: dict[str, Any], seats) -> dict[str, Any]:
    """``state`` as the page of ``seats`` (none: a spectator) may see it."""
    if isinstance(state, Sealed):
        return state.for_seats(seats or ())
    return state


def events_for(table, events: list[dict[str, Any]], seats, progress) -> list[dict[str, Any]]:
    """A duplicate game's ``events`` (the move log) as a viewer of ``seats`` may see them."""
    secrecy = Secrecy(table, {"events": events, "cards": []}, progress)
    seats = frozenset(seats or ())
    return [secrecy.event(e, seats) for e in events]


__all__ = ["Sealed", "events_for", "passed", "seal", "viewer_state"]
