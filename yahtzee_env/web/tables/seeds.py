"""Client seeds (issue 58): each seated person adds a seed of their own to the dice, after
the server has shown its commitment and before the game's first roll, so that the server
alone does not pick the dice (`fair_dice.DICE_V2`).

A table made since issue 58 rolls by ``hmac-sha256-v2``; before its start the state shows
game 0's commitment (``dice_commitment``), and while a game has not rolled, that game's
client seeds are open (``client_seeds_open``). A seat sends ``{client_seed}``
(``POST /api/tables/CODE/client-seed``, or the socket's ``client_seed`` intent); the answer's
state lists the seeds sent (``client_seeds``, None for a seat that sent none: it rolls with
`fair_dice.DEFAULT_CLIENT_SEED`, as a CPU seat does) and their marks
(``client_seed_marks``, `fair_dice.client_seed_mark`). Once the game has rolled its seeds are
fixed: a seed sent then is refused (409 ``client_seed_late``). A game whose first roll is a
person's (the dice in the cup, issue 58 item 2) has not rolled until that person's Roll: a
seed sent before it re-deals the first roll, which nobody has seen, with the seeds sent.
Tables stored before roll by ``sha256-ctr-v1`` and take no seed (409 ``client_seed_v1``).

Once a game is over the next game's seeds are open (``client_seeds_game``: the game the
state's seeds are for; ``next_dice_commitment``: that game's commitment), so that a game a
CPU seat starts (a best-of-five passes the start on) rolls with the people's seeds too: each
page sends its seed for the next game before its vote to play it (the vote starts it).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from yahtzee_env.game.fair_dice import (
    DICE_V2,
    check_client_seed,
    client_seed_mark,
    commitment,
)
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.tables.deal import game_dice_seed


def seeds_game(table) -> int:
    """The game whose client seeds a state shows: game 0 before the start, the current game
    while it is on, the next one once it is over."""
    if not table.started or table.game is None:
        return 0
    return table.idx + 1 if table.game.over else table.idx


def open_game(table) -> int | None:
    """The game a client seed sent now is for: game 0 before the start, the current game
    while it has not rolled, the next game once the current is over; None when no game's
    seeds are open."""
    if table.dice != DICE_V2 or table.dice_secret is None:
        return None
    if not table.started:
        return 0
    game = table.game
    if game is None or game.seeded is None:
        return None
    if not game.over and game.seeded.seeds_fixed and not first_roll_in_cup(table):
        return None
    return seeds_game(table)


def first_roll_in_cup(table) -> bool:
    """The game's first roll is dealt but still in a person's cup (issue 58, item 2): no
    move made, nobody has seen a die; a seed sent now re-deals it (`take_client_seed`)."""
    return not table.log and table.in_cup


def client_seed_view(table) -> dict[str, Any]:
    """What a state says of the client seeds (nothing for a table without v2 dice)."""
    if table.dice != DICE_V2 or table.dice_secret is None:
        return {}
    idx = seeds_game(table)
    seeds = list(table.client_seeds.get(idx) or [None] * len(table.seats))
    secret, marks = _marks(table.dice_secret, idx, tuple(seeds))
    out: dict[str, Any] = {
        "dice_version": DICE_V2,
        "client_seeds": seeds,
        "client_seed_marks": list(marks),
        "client_seeds_open": open_game(table) is not None,
        "client_seeds_game": idx,
        "next_dice_commitment": None,
    }
    if table.game is None:  # before the start: the commitment the seeds are sent after
        out["dice_commitment"] = commitment(secret)
    elif table.game.over:  # the next game's, which its seeds are sent after
        out["next_dice_commitment"] = commitment(secret)
    return out


@functools.lru_cache(maxsize=4096)
def _marks(dice_secret: bytes, idx: int, seeds: tuple) -> tuple[bytes, tuple]:
    """Game ``idx``'s dice seed and the marks of its ``seeds``: the same for every state of
    the game, so worked out once (issue 60: three HMACs a move, in every state sent)."""
    secret = game_dice_seed(dice_secret, idx)
    marks = tuple(
        None if c is None else client_seed_mark(secret, idx, seat, c)
        for seat, c in enumerate(seeds)
    )
    return secret, marks


def take_client_seed(table, seat: int, client_seed: Any) -> str:
    """Seat ``seat``'s client seed for the open game (`open_game`); returns its mark."""
    if table.dice != DICE_V2 or table.dice_secret is None:
        raise WebError(
            "this table's dice roll by sha256-ctr-v1: they take no client seed",
            409,
            "client_seed_v1",
        )
    try:
        client_seed = check_client_seed(client_seed)
    except ValueError as err:
        raise WebError(str(err), 400, "client_seed_bad") from None
    idx = open_game(table)
    if idx is None:
        raise WebError(
            "the dice of this game have been rolled: its client seeds are fixed "
            "(send yours before the first roll)",
            409,
            "client_seed_late",
            seat=seat,
        )
    seeds = table.client_seeds.setdefault(idx, [None] * len(table.seats))
    seeds[seat] = client_seed
    if table.game is not None and table.idx == idx:
        if table.game.seeded.seeds_fixed:  # dealt, still in the cup: deal it with this seed
            table.begin_game(idx, first=table.game.current)
        else:
            table.game.seeded.set_client_seed(seat, client_seed)
    return client_seed_mark(game_dice_seed(table.dice_secret, idx), idx, seat, client_seed)


def dump(client_seeds: dict[int, list[str | None]]) -> str:
    return json.dumps({str(k): v for k, v in client_seeds.items()}, separators=(",", ":"))


def load(text: str | None) -> dict[int, list[str | None]]:
    return {int(k): list(v) for k, v in json.loads(text).items()} if text else {}


class ClientSeeds:
    """The client-seed intent (`authority.Tables.seeds`)."""

    def __init__(self, tables) -> None:
        self.tables, self.storage = tables, tables.storage

    def send(
        self,
        code: Any,
        seat: Any,
        token: Any,
        player_id: int | None = None,
        client_seed: Any = None,
    ):
        """Seat ``seat`` (its token, or the session's ``player_id``) sends ``client_seed``."""
        with self.tables.locked(code) as table:
            table.seat_of_token(seat, token, player_id)
            take_client_seed(table, seat, client_seed)
            self.storage.tables.set_client_seeds(table.code, dump(table.client_seeds))
            return table


__all__ = ["ClientSeeds", "client_seed_view", "open_game", "seeds_game", "take_client_seed"]
