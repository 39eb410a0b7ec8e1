"""How much of a win-level model's result comes from reading the other card (issue 52,
item 2; docs/win-level.md): the model against an opponent by the multi-player protocol on the
deals of a seed it was never chosen on, and the same model shown an even table (the other card
replaced by a copy of its own) on the same deals; the two win rates and their difference,
paired by deal (`yahtzee_env.analysis.table_decisions.table_reading`).

    python experiments/win_even_table.py data/win/late/model/win.json --vs hard \\
        --deals 200000 --deal-seed 2 --out data/win/late/even-table.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from yahtzee_env.analysis.table_decisions import table_reading
from yahtzee_env.fileio import atomic_write
from yahtzee_env.policies.models import load_opponent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a win-level model's manifest (yahtzee export)")
    parser.add_argument("--vs", default="hard")
    parser.add_argument("--deals", type=int, default=200_000)
    parser.add_argument("--deal-seed", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    try:
        report = table_reading(load_opponent(args.model), args.vs, args.deals, args.deal_seed)
    except (ValueError, OSError) as err:
        parser.error(str(err))
    report["model"] = args.model
    report["command"] = (
        f"python experiments/win_even_table.py {args.model} --vs {args.vs} --deals "
        f"{args.deals} --deal-seed {args.deal_seed}"
    )
    for key in ("with_the_table", "on_an_even_table"):
        r = report[key]
        print(
            f"{key.replace('_', ' ')}: {100 * r['win_rate']:.2f}% ± {100 * r['win_ci95']:.2f} "
            f"(decisive {100 * r['decisive_win_rate']:.2f}% ± {100 * r['decisive_ci95']:.2f}), "
            f"margin {r['margin']:+.2f} ± {r['margin_ci95']:.2f}"
        )
    print(
        f"{args.model} against {args.vs}, {2 * args.deals:,} games each (deal seed "
        f"{args.deal_seed}): reading the table adds {100 * report['win_rate_difference']:+.3f} "
        f"± {100 * report['win_rate_difference_ci95']:.3f} points of win rate (paired by deal)"
    )
    if args.out:
        atomic_write(args.out, json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
