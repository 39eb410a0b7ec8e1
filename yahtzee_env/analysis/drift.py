"""How far a policy has moved from the network it started from, at a table of two.

A level fine-tuned from another one (the win level from hard: ``policy.init``) is measured on
the positions of 2-seat games that the reference plays against itself (seeded dice, every
decision of both seats): the mean KL divergence over the legal actions from the reference's
distribution to the model's (the quantity `yahtzee_agents.sb3.anchor` penalises), the two mean
entropies, and how often the two would make the same move (argmax); the same KL and
agreement by the mover's turn (1-13, from its open boxes), to see where in the game it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yahtzee_env.game.cpu import table_cards
from yahtzee_env.game.engine import Game
from yahtzee_env.game.observation import OPEN_SLICE, encode_seat, table_input
from yahtzee_env.game.rules import NUM_BOXES


def table_positions(reference: Any, games: int, seed: int, rules: str = "official"):
    """Every decision of ``games`` 2-seat games the reference plays against itself: the rows
    ``[N, 72]``, legal masks ``[N, A]`` and cards ``[N, 2, 4]`` (the mover's first)."""
    rng = np.random.default_rng(seed)
    rows, masks, cards = [], [], []
    for _ in range(games):
        game = Game(rules, num_players=2, canonical_holds=True)
        game.reset(rng)
        while not game.over:
            seat, mask = game.current, game.legal_action_mask()
            row = encode_seat(game, seat)
            rows.append(row)
            masks.append(mask)
            cards.append(table_cards(game, seat))
            game.step(reference.act(row, mask))
    return np.array(rows), np.array(masks, dtype=bool), np.array(cards)


def _log_policy(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    x = np.where(masks, logits.astype(np.float64), -np.inf)
    return x - np.logaddexp.reduce(x, axis=1, keepdims=True)


def _logits(policy: Any, rows: np.ndarray, cards: np.ndarray) -> np.ndarray:
    if getattr(policy, "reads_table", False):
        return policy.logits(table_input(rows, cards, policy.threshold))
    return policy.logits(rows)


def drift(reference: Any, model: Any, games: int = 200, seed: int = 0) -> dict[str, Any]:
    """KL(reference || model), entropies and argmax agreement (module docstring); both are
    `MLPPolicy`-like (``logits``), either may read the table."""
    if games < 1:
        raise ValueError(f"games: must be at least 1, got {games}")
    rows, masks, cards = table_positions(reference, games, seed)
    p = _log_policy(_logits(reference, rows, cards), masks)
    q = _log_policy(_logits(model, rows, cards), masks)
    gap = np.subtract(p, q, out=np.zeros_like(p), where=masks)  # illegal: probability 0
    kl = np.sum(np.exp(p) * gap, axis=1)

    def entropy(log: np.ndarray) -> np.ndarray:
        return -np.sum(np.exp(log) * np.where(masks, log, 0.0), axis=1)

    same = p.argmax(axis=1) == q.argmax(axis=1)
    turn = NUM_BOXES + 1 - np.rint(rows[:, OPEN_SLICE].sum(axis=1)).astype(np.int64)
    by_turn = [
        {
            "turn": t,
            "positions": int(at.sum()),
            "kl_mean": float(kl[at].mean()),
            "kl_share": float(kl[at].sum() / kl.sum()) if kl.sum() > 0 else 0.0,
            "same_move": float(same[at].mean()),
        }
        for t in range(1, NUM_BOXES + 1)
        if (at := turn == t).any()
    ]
    return {
        "games": games,
        "seed": seed,
        "positions": len(kl),
        "kl_mean": float(kl.mean()),
        "kl_median": float(np.median(kl)),
        "kl_p99": float(np.quantile(kl, 0.99)),
        "entropy_reference": float(entropy(p).mean()),
        "entropy_model": float(entropy(q).mean()),
        "same_move": float(same.mean()),
        "by_turn": by_turn,
    }
