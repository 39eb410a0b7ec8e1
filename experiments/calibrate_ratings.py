"""The CPU levels' fixed ratings for the web game (issue 32), fitted with openskill's
Plackett-Luce model from the ladder's recorded games against each other: the committed
``results/versus-2p-*.json`` rows (each a level's wins, draws and losses against ``hard`` and
``optimal`` over 8000 two-player games of the versus protocol).

    python experiments/calibrate_ratings.py --out yahtzee_env/web/people/cpu_ratings.json

The fit (`yahtzee_env.web.people.ratings.fit_levels`) runs over the games in a random order; it is
run with several seeds, and the file gets the mean of each level's mu over the seeds and the
largest sigma, with the spread printed beside them.
"""

from __future__ import annotations

import argparse
import glob
import json
from pathlib import Path

import numpy as np

from yahtzee_env.web.people.ratings import fit_levels, shown


def ladder_games(paths: list[str]) -> tuple[list[tuple[str, str, float]], list[str]]:
    """Every recorded game of the levels' rows: ``(agent, opponent, score of agent)``, and
    the rows read."""
    games: list[tuple[str, str, float]] = []
    kept = []
    for path in paths:
        row = json.loads(Path(path).read_text(encoding="utf-8"))
        if row["model"]["kind"] != "level":
            continue  # a model file (`versus-2p-win.json`): not a level the game offers
        kept.append(path)
        for o in row["opponents"]:
            if o["opponent"] == row["agent"]:
                continue  # a level against itself says nothing of its rating
            a, b = row["agent"], o["opponent"]
            games += [(a, b, 1.0)] * o["wins"] + [(a, b, 0.5)] * o["draws"]
            games += [(a, b, 0.0)] * o["losses"]
    return games, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="results/versus-2p-*.json", help="the ladder's rows")
    parser.add_argument("--seeds", type=int, default=5, help="fits, each in its own order")
    parser.add_argument("--passes", type=int, default=3, help="passes over the games per fit")
    parser.add_argument("--out", default=None, help="write the levels' ratings here (JSON)")
    args = parser.parse_args()
    games, paths = ladder_games(sorted(glob.glob(args.rows)))
    fits = [fit_levels(games, seed=s, passes=args.passes) for s in range(args.seeds)]
    levels = {}
    print(f"{len(games)} games from {len(paths)} rows, {args.seeds} seeds x {args.passes} passes")
    for agent in sorted(fits[0], key=lambda a: -fits[0][a]["mu"]):
        mus = np.array([f[agent]["mu"] for f in fits])
        sigma = max(f[agent]["sigma"] for f in fits)
        levels[agent] = {"mu": round(float(mus.mean()), 4), "sigma": round(float(sigma), 4)}
        print(
            f"{agent:>8}  mu {mus.mean():7.3f} (seeds {mus.min():.3f}..{mus.max():.3f})  "
            f"sigma {sigma:.3f}  shown {shown(mus.mean())}"
        )
    if args.out:
        out = {
            "model": "openskill PlackettLuce (defaults: mu 25, sigma 25/3)",
            "command": "python experiments/calibrate_ratings.py --out " + args.out,
            "rows": [Path(p).name for p in paths],
            "games": len(games),
            "seeds": args.seeds,
            "passes": args.passes,
            "levels": levels,
        }
        Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
