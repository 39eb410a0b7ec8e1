"""Where the winner's moves differ from its teacher's (issue 61, item 2; docs/win-level.md):
the winner plays ``--games`` 2-seat games against the solver (seats alternated, dice of
``--seed``), and at each of its moves the duelist and the solver are asked the same position
(the same observation, mask and cards). Counted apart: inside the duelist's search window
(its last turns, where it may leave the solver's move) and outside it (where the duelist
plays the solver's move, so its moves there are the solver's).

    python experiments/winner_moves.py --games 2000 --seed 0 --out data/win/winner/level/moves.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from yahtzee_env.fileio import atomic_write
from yahtzee_env.game.cpu import cpu_action, table_cards
from yahtzee_env.game.engine import Game
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.game.rules import NUM_BOXES
from yahtzee_env.policies.baselines import make_policy
from yahtzee_env.policies.models import load_opponent


def in_window(game: Game, seat: int, window: int) -> bool:
    """The duelist's search applies: the mover has at most ``window`` boxes open and the
    other seat at least one fewer than that (`duel.DuelPolicy.act_batch_table`)."""
    mine = NUM_BOXES - game.players[seat].filled.bit_count()
    other = NUM_BOXES - game.players[1 - seat].filled.bit_count()
    return mine <= window and other >= mine - 1


def share(hits: int, total: int) -> dict:
    """A share with its normal 95% interval (moves of one game are not independent: the
    interval is a guide, not a test)."""
    p = hits / total if total else math.nan
    half = 1.96 * math.sqrt(p * (1 - p) / total) if total else math.nan
    return {"moves": total, "same": hits, "share": round(p, 5), "ci95": round(half, 5)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    winner, duelist = load_opponent("winner"), load_opponent("duelist")
    optimal = make_policy("optimal", rules="official")
    counts = {k: [0, 0, 0] for k in ("inside", "outside")}  # moves, = duelist, = solver
    rng = np.random.default_rng(args.seed)
    for g in range(args.games):
        game = Game("official", num_players=2, canonical_holds=True)
        game.reset(rng)
        me = g % 2  # seats alternated
        while not game.over:
            seat = game.current
            if seat != me:
                game.step(cpu_action(game, seat, optimal))
                continue
            obs, mask = encode_seat(game, seat), game.legal_action_mask()
            cards = table_cards(game, seat)
            action = winner.act_table(obs, mask, cards)
            where = counts["inside" if in_window(game, seat, duelist.window) else "outside"]
            where[0] += 1
            where[1] += action == duelist.act_table(obs, mask, cards)
            where[2] += action == optimal.act(obs, mask)
            game.step(action)
    report = {
        "command": f"python experiments/winner_moves.py --games {args.games} --seed {args.seed}",
        "games": args.games,
        "seed": args.seed,
        "opponent": "optimal",
        "interval": "normal 95% over moves (a guide: a game's moves are not independent)",
        **{
            where: {"as_the_duelist": share(c[1], c[0]), "as_the_solver": share(c[2], c[0])}
            for where, c in counts.items()
        },
    }
    print(json.dumps(report, indent=1))
    if args.out:
        atomic_write(args.out, json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
