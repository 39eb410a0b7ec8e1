"""Games played in the page (issue 50), taken in for "My statistics".

The page plays a solo game against the offline levels with its own engine, with the network
off or, when the player chose it, online (the server then only records the result), and
sends the finished game as a record: how it was played (``"played"``: ``"offline"``, the
default, or ``"in_page"``), its rules preset, its seats (``"human"`` then offline levels),
the dice it dealt (uniform integers in ``[0, 6**5)``, `engine.DiceRoller`'s draws, in order)
and every move (``[seat, action]``). The server trusts none of it but its shape: it replays
the record with the Python engine (every move legal, the dice exactly those dealt, the game
played to its end, every CPU seat's move the one its level's network plays on those dice:
`plays_as`) and takes the result from its own replay, not from anything the page said. It
cannot know the dice were fair (the page dealt them), so a game played in the page counts
only in its own rows of the player's statistics, marked unverified, and is never rated
(issue 57).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from yahtzee_env.game.dice import ROLL_OUTCOMES
from yahtzee_env.game.engine import (
    NUM_ACTIONS,
    NUM_TURNS,
    ROLLS_PER_TURN,
    DiceRoller,
    Game,
    IllegalActionError,
    top_seats,
)
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.game.rules import PRESETS
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.tables.table import MAX_SEATS

MAX_GAMES_PER_REQUEST = 20
# A 4-seat game is at most 156 draws and 156 moves (~2 KB of JSON): 20 of them fit, and a
# stranger's body is bounded all the same (every other request: `service.MAX_BODY`).
MAX_BODY_BYTES = 64 * 1024
MAX_OFFLINE_GAMES_PER_DAY = 200  # per player: what one person can play in a day, and more
# How a game in the page was played: with the network off, or online by choice.
PLAYED = ("offline", "in_page")
GAME_ID = re.compile(r"[A-Za-z0-9-]{1,64}")


class ReplayDraws:
    """What `Game.reset` takes for a generator, dealing the page's draws in order (the
    engine's `DiceRoller` asks for one block and deals from its end)."""

    def __init__(self, draws: list[int]) -> None:
        self.draws = draws
        self.asked = False

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        if self.asked or len(self.draws) > size:
            raise ValueError("more dice than a game deals")
        self.asked = True
        return np.array([0] * (size - len(self.draws)) + self.draws[::-1], dtype=np.int64)


def dealt(game: Game) -> int:
    """How many draws the game's roller has dealt from its one block."""
    return DiceRoller.BLOCK - len(game.roller._pending)


def plays_as(level: str, game: Game, seat: int, action: int) -> bool:
    """Whether ``action`` is what ``level`` plays for ``seat`` (to move) in ``game``: its
    masked argmax, or within `web_levels.TIE_TOLERANCE` of it (the page's network adds in
    another order: a near tie may go either way)."""
    from yahtzee_env.policies.resolve import shared_policy
    from yahtzee_env.policies.web_levels import TIE_TOLERANCE

    policy = shared_policy(level)
    obs = encode_seat(game, seat)[None]
    allowed = policy._allowed(obs, game.legal_action_mask()[None])[0]
    if not allowed[action]:
        return False
    logits = np.where(allowed, policy.logits(obs)[0], -np.inf)
    return bool(logits.max() - logits[action] < TIE_TOLERANCE)


def _refuse(message: str) -> WebError:
    return WebError(message, 400, "bad_offline_game")


def replay(record: Any, offline_levels: list[str]) -> dict[str, Any]:
    """The checked result of one game record: ``{id, played, rules, opponents, score,
    outcome, yahtzees, upper_bonus}`` of its human seat (seat 0); `WebError` (400) naming
    what is wrong otherwise."""
    if not isinstance(record, dict):
        raise _refuse("an offline game must be an object")
    game_id, rules, seats = record.get("id"), record.get("rules"), record.get("seats")
    draws, actions = record.get("draws"), record.get("actions")
    played = record.get("played", "offline")
    if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
        raise _refuse("an offline game's id must be 1-64 letters, digits or '-'")
    if played not in PLAYED:
        raise _refuse(f"played must be one of {', '.join(PLAYED)}")
    if rules not in PRESETS:
        raise _refuse(f"unknown rules {str(rules)[:30]!r}")
    if (
        not isinstance(seats, list)
        or not 2 <= len(seats) <= MAX_SEATS
        or seats[0] != "human"
        or not all(s in offline_levels for s in seats[1:])
    ):
        raise _refuse(f"seats must be 'human' then offline levels ({', '.join(offline_levels)})")
    n = len(seats)
    if (
        not isinstance(draws, list)
        or len(draws) > n * NUM_TURNS * ROLLS_PER_TURN
        or not all(type(d) is int and 0 <= d < ROLL_OUTCOMES for d in draws)
    ):
        raise _refuse(f"draws must be at most {n * NUM_TURNS * ROLLS_PER_TURN} ints in 0..7775")
    if not isinstance(actions, list) or len(actions) > n * NUM_TURNS * ROLLS_PER_TURN:
        raise _refuse("too many moves for one game")
    game = Game(rules, n)
    rng = ReplayDraws(draws)
    game.reset(rng)
    for move in actions:
        if (
            not isinstance(move, list)
            or len(move) != 2
            or not all(type(v) is int for v in move)
            or not 0 <= move[1] < NUM_ACTIONS
        ):
            raise _refuse("a move must be [seat, action]")
        seat, action = move
        if game.over or seat != game.current:
            raise _refuse("a move out of turn")
        if seat != 0 and not plays_as(seats[seat], game, seat, action):
            raise _refuse(
                f"seat {seat}'s move {action} (dice {list(game.dice)}) is not what "
                f"{seats[seat]} plays there: the computer's moves must be the level's"
            )
        try:
            game.step(action)
        except IllegalActionError as err:
            raise _refuse(f"an illegal move: {err}") from None
        if dealt(game) > len(draws):
            raise _refuse("the game needs more dice than were sent")
    if not game.over:
        raise _refuse("the game is not finished")
    if dealt(game) != len(draws):
        raise _refuse("more dice were sent than the game dealt")
    totals = game.totals()
    top = top_seats(totals)
    card = game.players[0]
    outcome = "loss" if 0 not in top else "draw" if len(top) > 1 else "win"
    return {
        "id": game_id,
        "played": played,
        "rules": rules,
        "opponents": "+".join(sorted(seats[1:])),
        "score": totals[0],
        "outcome": outcome,
        "yahtzees": card.yahtzees,
        "upper_bonus": int(card.upper_bonus > 0),
    }


__all__ = ["MAX_GAMES_PER_REQUEST", "MAX_OFFLINE_GAMES_PER_DAY", "PLAYED", "replay"]
