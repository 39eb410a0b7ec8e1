"""A stored table's first game replayed through the engine, as the server deals it: its
seed, its dice secret, its dice derivation (a table stored before issue 58 has none:
``sha256-ctr-v1``) and the seats' client seeds (`tables.deal.new_game`, the one dealer)."""

from __future__ import annotations

from typing import Any

from yahtzee_env.game.engine import Game
from yahtzee_env.game.fair_dice import DICE_ALGORITHM
from yahtzee_env.web.tables import seeds
from yahtzee_env.web.tables.deal import new_game
from yahtzee_env.web.tables.table import FIRST_ROLL


def deal_row(row: dict[str, Any], idx: int = 0) -> Game:
    """Game ``idx`` of the stored table ``row`` (`TableStore.load_table`), dealt."""
    game, _ = new_game(
        row["rules"],  # a preset's name, which the engine takes
        row["seed"],
        idx,
        len(row["seats"]),
        row["games"][idx]["first"],
        secret=bytes.fromhex(row["dice_secret"]),
        duplicate=bool(row.get("duplicate") or 0),
        dice=row.get("dice") or DICE_ALGORITHM,
        client_seeds=seeds.load(row.get("client_seeds")).get(idx),
    )
    return game


def replay_row(row: dict[str, Any], idx: int = 0) -> list[int]:
    """The engine's totals of game ``idx`` of the stored table ``row``, its logged actions
    replayed."""
    game = deal_row(row, idx)
    for _seat, action, _regret in row["actions"][idx]:
        if action == FIRST_ROLL:  # a person's tap on Roll: the dealt first roll comes out
            continue
        game.step(action)
    return game.totals()
