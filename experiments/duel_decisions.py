"""Where the duelist leaves the solitaire optimum (issue 34, item 3; docs/learning.md).

Plays ``--games`` 2-seat games of the duelist against the solver (``optimal``), seats
alternated, on `engine.Game` with seeded dice, and records every move where the duelist's
choice is not the solver's: the position, both moves, what each is worth in expected points
(the solver's action values: the points the duelist gives up) and in probability of winning
(the duelist's exact search). Writes ``data/duel/decisions.json`` and prints a Markdown table
of the first ``--show`` of them.

    python experiments/duel_decisions.py --games 400 --show 8
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from shelf import DATA

from yahtzee_env.fileio import atomic_write
from yahtzee_env.game.cpu import table_cards
from yahtzee_env.game.engine import Game, describe_action
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.game.rules import BOX_NAMES, NUM_BOXES
from yahtzee_env.policies.baselines import OptimalPolicy
from yahtzee_env.policies.models import load_opponent


def _move(game: Game, action: int) -> str:
    """A move in words: the dice it keeps, or the box and its points."""
    dice = sorted(game.dice)
    if action < 32:
        kept = [dice[i] for i in range(5) if action >> i & 1]
        return f"keep {''.join(map(str, kept)) or 'nothing'}"
    box = action - 32
    _, points = game.player.options(game.roll)
    return f"{BOX_NAMES[box]} for {int(points[box])}"


def find(games: int, seed: int) -> list[dict]:
    duel = load_opponent("duelist")
    optimal = OptimalPolicy("official", table=duel.values)
    rng = np.random.default_rng(seed)
    found = []
    for g in range(games):
        seat = g % 2
        game = Game("official", num_players=2)
        game.reset(rng)
        while not game.over:
            obs, mask = encode_seat(game, game.current), game.legal_action_mask()
            if game.current != seat:
                game.step(optimal.act(obs, mask))
                continue
            cards = table_cards(game, seat)
            mine, solver = duel.act_table(obs, mask, cards), optimal.act(obs, mask)
            if mine != solver:
                me, other = game.players[seat], game.players[1 - seat]
                points = optimal.oracle.action_values(obs[None])[0]
                wins = duel.win_values(
                    me.filled, me.upper_total, me.yahtzee_state, me.total, cards[1],
                    game.roll, game.rolls_left,
                )  # fmt: skip
                found.append(
                    {
                        "game": g,
                        "seat": seat,
                        "dice": sorted(int(d) for d in game.dice),
                        "rolls_left": game.rolls_left,
                        "open": [BOX_NAMES[b] for b in range(NUM_BOXES) if not me.filled >> b & 1],
                        "total": me.total,
                        "opponent_total": other.total,
                        "opponent_open": [
                            BOX_NAMES[b] for b in range(NUM_BOXES) if not other.filled >> b & 1
                        ],
                        "solver": {"move": _move(game, solver), "action": describe_action(solver),
                                   "expected": float(points[solver]), "p_win": float(wins[solver])},
                        "duelist": {"move": _move(game, mine), "action": describe_action(mine),
                                    "expected": float(points[mine]), "p_win": float(wins[mine])},
                    }
                )  # fmt: skip
            game.step(mine)
    return found


def table(rows: list[dict]) -> str:
    lines = [
        "| dice (re-rolls left) | open boxes | score: own – theirs (their open boxes) "
        "| solver's move (exp. points to go, P(win)) "
        "| duelist's move (exp. points to go, P(win)) |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        s, d = r["solver"], r["duelist"]
        theirs = ", ".join(r["opponent_open"]) or "finished"
        lines.append(
            f"| {''.join(map(str, r['dice']))} ({r['rolls_left']}) | {', '.join(r['open'])} | "
            f"{r['total']} – {r['opponent_total']} ({theirs}) | {s['move']} ({s['expected']:.1f}, "
            f"{s['p_win']:.3f}) | {d['move']} ({d['expected']:.1f}, {d['p_win']:.3f}) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=8)
    parser.add_argument("--out", type=Path, default=DATA / "duel" / "decisions.json")
    args = parser.parse_args()
    rows = find(args.games, args.seed)
    summary = {
        "games": args.games,
        "seed": args.seed,
        "command": f"python experiments/duel_decisions.py --games {args.games} --seed {args.seed}",
        "decisions_changed": len(rows),
        "games_with_a_change": len({r["game"] for r in rows}),
        "decisions": rows,
    }
    atomic_write(args.out, json.dumps(summary, indent=2) + "\n")
    print(f"{len(rows)} moves off the solver's in {summary['games_with_a_change']} of "
          f"{args.games} games; wrote {args.out}")  # fmt: skip
    print(table(rows[: args.show]))


if __name__ == "__main__":
    main()
