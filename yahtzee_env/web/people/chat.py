"""The people at a table (issue 32): chat and emotes, reports, blocked accounts, removing a
player.

- **Chat**: a seated player says plain text of at most `MAX_CHAT` characters (control
  characters dropped, never markup: the page shows it with ``textContent``), or one of the
  `EMOTES`, whose words are in each language's catalogue (``emote.<name>``). Each person
  has `CHAT_RATE` messages a second (bursts of `CHAT_BURST`), keyed by the seat's owner (a
  session's player) or its token, and a game holds at most `MAX_CHAT_PER_GAME` messages, so
  a stranger cannot make the server hold more. Messages are stored with the game (its
  index) and shown in its review; the table's sockets in this process get ``{"type":
  "chat", "message"}`` at once, and a page reads what it missed with ``after`` (pages on
  other processes of one PostgreSQL database read new messages with each state they get).
- **Mute** is the page's (per device, per table): the server sends every message.
- **Report**: a seated player reports another seat; the report is stored with the table's
  last `REPORT_CONTEXT` messages, once per reporter and target at a table, for a moderator
  (`storage.people.PeopleStore.reports`).
- **Block**: a signed-in player blocks the account at a seat: that account can no longer
  join a table where the blocker sits (it reads as a full table), and its messages at a
  table where the blocker sits are heard by nobody but itself: stored with the next id
  like any other, shown back to it (its sockets, its re-reads, its reviews), never to
  the others. Nothing it can see tells a block from a quiet table.
- **Kick**: the host removes a player; the computer (the table's fill level) takes the
  seat for the rest of the table's games, and the removed player cannot act there again.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from yahtzee_env.web.errors import WebError
from yahtzee_env.web.limits import RateLimiter
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.table import Seat

MAX_CHAT = 200  # characters of a message
CHAT_RATE, CHAT_BURST = 0.5, 5  # messages a second per person, and a burst
MAX_CHAT_PER_GAME = 300  # messages a game holds (then 429 chat_full)
REPORT_CONTEXT = 20  # messages kept with a report
MAX_BLOCKS = 500  # accounts one account may block
EMOTES = ("hello", "good_luck", "nice", "wow", "oops", "thanks", "good_game")


def clean_text(value: Any) -> str:
    """A chat message: a string of 1..`MAX_CHAT` characters once control characters are
    dropped and spaces trimmed (markup is kept as the characters it is: the page never
    renders it)."""
    if not isinstance(value, str):
        raise WebError("text must be a string", 400, "bad_chat")
    if len(value) > 4 * MAX_CHAT:
        raise WebError(f"a message has at most {MAX_CHAT} characters", 400, "chat_long", n=MAX_CHAT)
    text = "".join(c for c in value if unicodedata.category(c)[0] != "C" or c == " ").strip()
    text = " ".join(text.split())
    if not text:
        raise WebError("say something first", 400, "chat_empty")
    if len(text) > MAX_CHAT:
        raise WebError(f"a message has at most {MAX_CHAT} characters", 400, "chat_long", n=MAX_CHAT)
    return text


class Chat:
    """Chat, reports, blocks and kicks of the tables (`Tables`) over their storage; the
    methods run in worker threads under the table's lock (the server object's)."""

    def __init__(self, tables: Tables, max_keys: int = 50_000) -> None:
        self.tables, self.storage = tables, tables.storage
        self.rate = RateLimiter(CHAT_RATE, CHAT_BURST, max_keys)

    def _speaker(self, code: str, body: dict[str, Any], player_id: int | None):
        table = self.tables.load(code)
        seat = table.seat_of_token(body.get("seat"), body.get("token"), player_id)
        s = table.seats[seat]
        if s.kind != "human":
            raise WebError("only a seated player can do that", 403, "not_your_seat")
        return table, s

    def say(self, code: str, body: dict[str, Any], player_id: int | None) -> dict[str, Any]:
        """Store a message (``text``, or ``emote``) of the asker's seat; return it."""
        table, s = self._speaker(code, body, player_id)
        if "emote" in body:
            kind, text = "emote", body.get("emote")
            if text not in EMOTES:
                raise WebError(f"no emote {str(text)[:20]!r}", 400, "bad_emote")
        else:
            kind, text = "text", clean_text(body.get("text"))
        owner = s.owner_id if s.owner_id is not None else f"{code}:{s.seat}"
        idx = max(table.idx, 0)
        # the game's messages as the author reads them (its own hidden ones among them)
        if self.storage.people.chat_count(table.code, idx, s.owner_id) >= MAX_CHAT_PER_GAME:
            raise WebError("this game's chat is full", 429, "chat_full")
        if not self.rate.allow(("chat", owner)):
            raise WebError("you are chatting too fast: wait a moment", 429, "chat_budget")
        message = {"code": table.code, "idx": idx, "seat": s.seat, "player_id": s.owner_id}
        message.update(name=s.name, kind=kind, body=text)
        hidden = False
        if s.owner_id is not None:
            others = [o.owner_id for o in table.seats if o.owner_id not in (None, s.owner_id)]
            hidden = self.storage.people.is_blocked(s.owner_id, others)
        stored = self.storage.people.add_chat(message, hidden=hidden)
        # a block is not announced to the one blocked: its message is stored as any other
        # (the next id of the one sequence), and it reads it back, but nobody else does;
        # `Social.say` pops ``hidden`` and sends it to the author's sockets only
        return {**stored, "hidden": hidden}

    def messages(self, code: str, player_id: int | None, after: int = 0) -> list[dict[str, Any]]:
        """The table's messages after id ``after``, for the player of one of its seats (the
        session's): the code alone does not open the chat (a spectator gets it through
        the watch socket, a seat token through the table's socket). A blocked author reads
        its own messages too, which nobody else does."""
        table = self.tables.load(code)  # an unknown table is refused (and spends the budget)
        if not table.seats_of(player_id):
            raise WebError("only the table's players read its chat", 403, "not_your_seat")
        return self.storage.people.chat_of(code, after=after, reader=player_id)

    def report(self, code: str, body: dict[str, Any], player_id: int | None) -> dict[str, Any]:
        table, s = self._speaker(code, body, player_id)
        target = self._other(table, body.get("target"), s)
        last = self.storage.people.chat_of(table.code, limit=REPORT_CONTEXT, reader=s.owner_id)
        stored = self.storage.people.add_report(
            {
                "code": table.code,
                "reporter_id": s.owner_id,
                "reporter_seat": s.seat,
                "target_id": target.owner_id,
                "target_seat": target.seat,
                "target_name": target.name,
                "messages": last,
            },
        )
        return {"reported": target.seat, "new": stored, "messages": len(last)}

    def block(self, code: str, body: dict[str, Any], player_id: int | None) -> dict[str, Any]:
        """The asker (an account) blocks the account at seat ``target``."""
        if player_id is None or self.storage.accounts.account(player_id=player_id) is None:
            raise WebError("sign in to block a player", 403, "no_account")
        table, s = self._speaker(code, body, player_id)
        target = self._other(table, body.get("target"), s)
        blocked = target.owner_id
        if blocked is None or self.storage.accounts.account(player_id=blocked) is None:
            raise WebError("that player has no account to block", 409, "not_an_account")
        if len(self.storage.people.blocks_of(player_id)) >= MAX_BLOCKS:
            raise WebError(f"you have blocked {MAX_BLOCKS} accounts", 409, "blocks_full")
        self.storage.people.block(player_id, blocked)
        return {"blocked": target.seat}

    def check_join(self, code: str, player_id: int | None) -> None:
        """A blocked account does not join a table where one who blocked it sits."""
        if player_id is None:
            return
        if self.storage.people.is_blocked(player_id, self.storage.tables.seat_owners(code)):
            # the words of a full table: a block is not announced to the one blocked
            raise WebError("every seat at this table is taken", 409, "full")

    @staticmethod
    def _other(table, target: Any, asker: Seat) -> Seat:
        if isinstance(target, bool) or not isinstance(target, int):
            raise WebError("target must be a seat number")
        if not 0 <= target < len(table.seats) or target == asker.seat:
            raise WebError(f"no other seat {target} at this table")
        s = table.seats[target]
        if s.kind != "human":
            raise WebError("that seat is not a person's", 409, "not_a_player")
        return s

    def kick(self, code: str, body: dict[str, Any], player_id: int | None):
        """The host removes the player of seat ``target``: the computer of the fill level
        takes the seat (and plays on at once if it is that seat's turn)."""
        tables = self.tables
        with tables.locked(code) as table:
            tables.seating.check_host(table, body.get("seat"), body.get("token"), player_id)
            s = self._other(table, body.get("target"), table.seats[0])
            if s.owner_id is not None and s.owner_id == table.seats[0].owner_id:
                raise WebError("that seat is yours", 409, "not_a_player")
            level = table.fill_level
            table.seats[s.seat] = Seat(s.seat, level, level)
            self.storage.tables.update_seat(table.code, table.seats[s.seat].row())
            if table.started and table.game is not None:
                if table.game.over and table.online and table.all_confirmed():
                    tables.next_game(table)
                tables.run_cpus(table)
                tables.timer.arm(table)
            return table


def review_chat(storage, code: str, idx: int, reader: int | None = None) -> list[dict[str, Any]]:
    """The messages of game ``idx`` of table ``code`` that ``reader`` read, for its review."""
    return storage.people.chat_of(code, idx=idx, limit=MAX_CHAT_PER_GAME, reader=reader)


__all__ = ["EMOTES", "MAX_CHAT", "Chat", "clean_text", "review_chat"]
