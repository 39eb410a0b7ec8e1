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

from yahtzee_env.game.engine import Game, top_seats
from yahtzee_env.game.observation import OBS_SIZE, CardLayout, encode_seat, write_card

RewardMode = Literal["win", "score"]
REWARD_MODES = ("win", "score")
MIN_PLAYERS, MAX_PLAYERS = 2, 4

TOTAL_SCALE = 500.0  # totals are shown as min(total / 500, 1)
OWN_TOTAL_INDEX = OBS_SIZE  # [72]: the observer's own total / 500
OPPONENTS_START = OBS_SIZE + 1  # [73:]: one block per opponent
OPPONENT_SIZE = 20
# Offsets inside an opponent block (the scorecard entries of the `Yahtzee-v0` vector, + total).
OPP_OPEN = slice(0, 13)  # box open (1) / filled (0)
OPP_UPPER = 13  # upper total / threshold, capped at 1
OPP_UPPER_BONUS = 14  # upper bonus earned
OPP_YAHTZEE_BOX = slice(15, 18)  # yahtzee box open / 50 / 0, one-hot
OPP_PROGRESS = 18  # boxes filled / 13
OPP_TOTAL = 19  # total / 500, capped at 1
OPP_CARD = CardLayout(OPP_OPEN, OPP_UPPER, OPP_UPPER_BONUS, OPP_YAHTZEE_BOX, OPP_PROGRESS)


def observation_size(num_players: int) -> int:
    """Length of the table observation: 72 + 1 + 20 per opponent (93 for 2, 133 for 4)."""
    return OPPONENTS_START + OPPONENT_SIZE * (num_players - 1)


def _scaled_total(total: int) -> float:
    return min(total / TOTAL_SCALE, 1.0)


def encode_table(game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The table observation of ``seat`` (float32, all in [0, 1]; layout in the module doc)."""
    n = game.num_players
    obs = np.empty(observation_size(n), dtype=np.float32) if out is None else out
    obs[:OBS_SIZE] = encode_seat(game, seat)
    obs[OWN_TOTAL_INDEX] = _scaled_total(game.players[seat].total)
    threshold = game.rules.upper_bonus_threshold
    for k in range(1, n):
        card = game.players[(seat + k) % n]
        block = obs[OPPONENTS_START + OPPONENT_SIZE * (k - 1) : OPPONENTS_START + OPPONENT_SIZE * k]
        write_card(block, card.filled, card.upper_total, card.yahtzee_state, threshold, OPP_CARD)
        block[OPP_TOTAL] = _scaled_total(card.total)
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
