"""The games of a table from its seed: game ``idx`` rolls its dice from
``default_rng([seed, idx])``, first the roll for first player, then the game.

One writer for the live tables (`tables.Table.begin_game`, and so every replay after a
restart) and the game reviews (`review.review_game`): both rebuild a game the same way, so
a review replays exactly the dice that were played.
"""

from __future__ import annotations

import numpy as np

from yahtzee_env.game.engine import Game, roll_for_first_player
from yahtzee_env.game.rules import RuleSet


def new_game(
    rules: RuleSet, seed: int, idx: int, seats: int, first: int | None = None
) -> tuple[Game, int]:
    """Game ``idx`` of a table with ``seed``, dealt, and its first seat: the roll of the dice
    for first player is always made (so the dice stream is the same), but ``first``, when
    given, overrides it (later games of a match pass the start to the next seat)."""
    rng = np.random.default_rng([seed, idx])
    rolled = roll_for_first_player(seats, rng)
    first = rolled if first is None else first
    game = Game(rules, num_players=seats)
    game.reset(rng, first=first)
    return game, first


__all__ = ["new_game"]
