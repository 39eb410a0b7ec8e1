"""How far a win-level model has moved from hard, the network it started from (issue 52,
item 2; docs/win-level.md): `yahtzee_env.analysis.drift` at the positions of 2-seat games
hard plays against itself, in all and by the mover's turn, printed and written to JSON.

    python experiments/win_drift.py data/win/model/win.json --games 200 --out data/win/drift.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from yahtzee_env.analysis.drift import drift
from yahtzee_env.fileio import atomic_write
from yahtzee_env.policies.models import load_opponent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a model's manifest (yahtzee export) or a level's name")
    parser.add_argument("--reference", default="hard")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    try:
        reference, model = load_opponent(args.reference), load_opponent(args.model)
        report = drift(reference, model, args.games, args.seed)
    except (ValueError, OSError) as err:  # a model file that is not one, a bad count
        parser.error(str(err))
    report["reference"], report["model"] = args.reference, args.model
    report["command"] = (
        f"python experiments/win_drift.py {args.model} --reference {args.reference} "
        f"--games {args.games} --seed {args.seed}"
    )
    print(
        f"{args.model} against {args.reference}, {report['positions']:,} positions of "
        f"{args.games} games: KL mean {report['kl_mean']:.4f} (median {report['kl_median']:.4f}, "
        f"99th percentile {report['kl_p99']:.3f}), entropy {report['entropy_reference']:.3f} "
        f"-> {report['entropy_model']:.3f}, the same move at {report['same_move']:.1%}"
    )
    print("turn  positions  KL mean  share of the KL  the same move")
    for row in report["by_turn"]:
        print(
            f"{row['turn']:>4}  {row['positions']:>9,}  {row['kl_mean']:>7.4f}  "
            f"{row['kl_share']:>15.1%}  {row['same_move']:>13.1%}"
        )
    if args.out:
        atomic_write(args.out, json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
