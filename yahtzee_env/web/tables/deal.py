"""The games of a table from its seeds: game ``idx`` makes the roll for first player from
``default_rng([seed, idx])``, and rolls its dice from its dice seed,
``sha256(secret ‖ idx)`` (`game_dice_seed`, ``idx`` 4 bytes big-endian) with the table's
32-byte ``secret``, by `yahtzee_env.game.fair_dice`: the players see the seed's commitment
before the first roll and the seed itself in the game's review, and can check every die.
A table stored before the commitment (issue 49) has no secret: its games roll from the same
``default_rng`` and their reviews say they predate it.

Issue 58: a table made since rolls by ``hmac-sha256-v2`` (`fair_dice.DICE_V2`): each seat's
client seed, sent after the commitment and before the game's first roll, is mixed into every
roll, and the draw for first player is derived from the game's dice seed
(`fair_dice.first_draw`). Tables stored before keep ``sha256-ctr-v1``.

One writer for the live tables (`tables.Table.begin_game`, and so every replay after a
restart) and the game reviews (`review.review_game`): both rebuild a game the same way, so
a review replays exactly the dice that were played.
"""

from __future__ import annotations

import hashlib

import numpy as np

from yahtzee_env.game.engine import Game, roll_for_first_player
from yahtzee_env.game.fair_dice import DICE_ALGORITHM, DICE_V2, check_seed, first_draw
from yahtzee_env.game.rules import RuleSet


def game_dice_seed(secret: bytes, idx: int) -> bytes:
    """Game ``idx``'s dice seed: revealing it reveals nothing of the table's other games."""
    return hashlib.sha256(check_seed(secret) + idx.to_bytes(4, "big")).digest()


def new_game(
    rules: RuleSet,
    seed: int,
    idx: int,
    seats: int,
    first: int | None = None,
    *,
    secret: bytes | None = None,
    duplicate: bool = False,
    dice: str = DICE_ALGORITHM,
    client_seeds: list[str | None] | None = None,
) -> tuple[Game, int]:
    """Game ``idx`` of a table with ``seed`` (and dice ``secret``), dealt, and its first
    seat: the roll of the dice for first player is always made (so the dice stream is the
    same), but ``first``, when given, overrides it (later games of a match pass the start to
    the next seat). ``duplicate``: every seat draws the same dice (it needs a secret).
    ``dice``: the derivation (v2: with the seats' ``client_seeds``, None where a seat sent
    none, and the draw for first player from the dice seed)."""
    if duplicate and secret is None:
        raise ValueError("a duplicate table needs a dice secret")
    rng = np.random.default_rng([seed, idx])
    rolled = roll_for_first_player(seats, rng)
    game_seed = None if secret is None else game_dice_seed(secret, idx)
    v2 = game_seed is not None and dice == DICE_V2
    if v2:
        rolled = first_draw(game_seed, idx, seats)
    first = rolled if first is None else first
    game = Game(rules, num_players=seats, duplicate=duplicate)
    if v2:
        game.reset(rng, first=first, seed=game_seed, dice=dice, game=idx, client_seeds=client_seeds)
    else:
        game.reset(rng, first=first, seed=game_seed)
    return game, first


__all__ = ["game_dice_seed", "new_game"]
