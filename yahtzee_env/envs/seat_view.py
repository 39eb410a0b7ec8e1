"""The multi-player observation layout: one seat's view of a table of two to four players.

Shared by `yahtzee_v0` (`yahtzee_env.envs.multiplayer`, PettingZoo) and `YahtzeeVs-v0`
(`yahtzee_env.envs.versus`, Gymnasium); it needs numpy only, so `YahtzeeVs-v0` works without
PettingZoo. For seat ``s`` of an ``N``-player `yahtzee_env.game.engine.Game` the observation is
float32, all in [0, 1], of length ``D = 73 + 20 * (N - 1)`` (93 for two players, 133 for four)::

    [0:72]              the seat's own `Yahtzee-v0` vector (`observation.encode_seat`)
    [72]                the seat's total / 500, capped at 1
    [73 + 20k + 0:13]   opponent k: box open (1) / filled (0)
    [73 + 20k + 13]     opponent k: upper total / upper-bonus threshold, capped at 1
    [73 + 20k + 14]     opponent k: upper bonus earned
    [73 + 20k + 15:18]  opponent k: yahtzee box open / holds 50 / holds 0, one-hot
    [73 + 20k + 18]     opponent k: boxes filled / 13
    [73 + 20k + 19]     opponent k: total / 500, capped at 1

Opponent ``k = 0, 1, ..`` is the player ``k + 1`` seats after the observer (in seat order).
Also here: the end-of-game win rewards
(`win_rewards`), which both envs give the same way (the per-seat info dict is
`yahtzee_env.envs.info.card_info`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from yahtzee_env.game.cpu import table_cards
from yahtzee_env.game.engine import Game, top_seats
from yahtzee_env.game.observation import (
    OBS_SIZE,
    OPP_CARD,
    OPP_TOTAL,  # noqa: F401 (the layout, read from here too)
    OPPONENT_SIZE,
    TABLE_TOTAL_SCALE,
    encode_seat,
    write_table,
)

RewardMode = Literal["win", "score"]
REWARD_MODES = ("win", "score")
MIN_PLAYERS, MAX_PLAYERS = 2, 4

# The layout of the table floats lives with their one writer, `observation.write_table`.
TOTAL_SCALE = TABLE_TOTAL_SCALE  # totals are shown as min(total / 500, 1)
OWN_TOTAL_INDEX = OBS_SIZE  # [72]: the observer's own total / 500
OPPONENTS_START = OBS_SIZE + 1  # [73:]: one block per opponent
# Offsets inside an opponent block (the scorecard entries of the `Yahtzee-v0` vector, + total).
OPP_OPEN = OPP_CARD.open  # box open (1) / filled (0)
OPP_UPPER = OPP_CARD.upper  # upper total / threshold, capped at 1
OPP_UPPER_BONUS = OPP_CARD.upper_bonus  # upper bonus earned
OPP_YAHTZEE_BOX = OPP_CARD.yahtzee_box  # yahtzee box open / 50 / 0, one-hot
OPP_PROGRESS = OPP_CARD.progress  # boxes filled / 13


def observation_size(num_players: int) -> int:
    """Length of the table observation: 72 + 1 + 20 per opponent (93 for 2, 133 for 4)."""
    return OPPONENTS_START + OPPONENT_SIZE * (num_players - 1)


def encode_table(game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The table observation of ``seat`` (float32, all in [0, 1]; layout in the module doc)."""
    obs = np.empty(observation_size(game.num_players), dtype=np.float32) if out is None else out
    obs[:OBS_SIZE] = encode_seat(game, seat)
    write_table(obs[OBS_SIZE:], table_cards(game, seat), game.rules.upper_bonus_threshold)
    return obs


def win_rewards(totals: list[int]) -> list[float]:
    """+1 to a sole top scorer, 0 to players tied on top (a draw), -1 to everyone else."""
    top = top_seats(totals)
    first = 1.0 if len(top) == 1 else 0.0
    return [first if seat in top else -1.0 for seat in range(len(totals))]


__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "OPPONENTS_START",
    "OPPONENT_SIZE",
    "OWN_TOTAL_INDEX",
    "REWARD_MODES",
    "TOTAL_SCALE",
    "RewardMode",
    "encode_table",
    "observation_size",
    "win_rewards",
]
