"""A CPU seat moves: the one writer of "a policy plays a seat of an `engine.Game`".

Every caller that lets a policy play a seat (tournaments' move-by-move reference, the
terminal, the web tables, the opponents of `YahtzeeVs-v0`) calls `cpu_move`: the seat's own
`Yahtzee-v0` observation (`observation.encode_seat`), the engine's mask, the policy's
``act`` (or ``act_table``, with every seat's card, for a policy that ``reads_table``),
the check that the action is legal, and the step. A policy that answers with an
illegal or malformed action raises `engine.IllegalActionError` naming the player, the
action and the dice, wherever it plays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from yahtzee_env.game.engine import Game, IllegalActionError, action_id
from yahtzee_env.game.observation import encode_seat


def cpu_action(game: Game, seat: int, policy: Any, who: str | None = None) -> int:
    """The legal action ``policy`` chooses for ``seat`` (which must be the seat to move),
    checked against the engine's mask; raises `IllegalActionError` otherwise."""
    if game.over:
        raise IllegalActionError("the game is over: no CPU move to make")
    if seat != game.current:
        raise IllegalActionError(f"seat {seat} is not to move (seat {game.current} is)")
    mask = game.legal_action_mask()
    if getattr(policy, "reads_table", False):  # a policy that plays the table (`duelist`)
        raw = policy.act_table(encode_seat(game, seat), mask, table_cards(game, seat))
    else:
        raw = policy.act(encode_seat(game, seat), mask)
    who = who or f"seat {seat}"
    try:
        action = action_id(raw)
    except IllegalActionError:
        action = None
    if action is None or not mask[action]:
        raise IllegalActionError(
            f"CPU {who} chose the illegal action {raw!r} (dice {list(game.dice)}, "
            f"{game.rolls_left} re-rolls left)"
        )
    return action


def table_cards(game: Game, seat: int) -> list[tuple[int, int, int, int]]:
    """Every seat's card as a table-reading policy's ``act_table`` gets it: (filled mask,
    upper total, yahtzee box state, total), ``seat``'s own first, then the others in seat
    order after it."""
    n = game.num_players
    cards = [game.players[(seat + k) % n] for k in range(n)]
    return [(c.filled, c.upper_total, c.yahtzee_state, c.total) for c in cards]


def cpu_move(
    game: Game,
    seat: int,
    policy: Any,
    who: str | None = None,
    apply: Callable[[int], Any] | None = None,
) -> int:
    """Let ``policy`` make one move for ``seat``: choose (`cpu_action`), then apply it with
    ``apply(action)`` (default: ``game.step``, for callers that narrate or log the move
    themselves). Returns the action."""
    action = cpu_action(game, seat, policy, who)
    (apply or game.step)(action)
    return action


__all__ = ["cpu_action", "cpu_move", "table_cards"]
