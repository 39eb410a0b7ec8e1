"""Where the win level leaves the solitaire optimum because of the other card (issue 52,
item 2; docs/win-level.md): `yahtzee_env.analysis.table_decisions` on a model, written to
JSON, the first ``--show`` decisions printed as a Markdown table.

    python experiments/win_decisions.py data/win/model/win.json --games 2000 --show 8
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from shelf import DATA

from yahtzee_env.analysis.table_decisions import find_table_decisions, format_decisions
from yahtzee_env.fileio import atomic_write
from yahtzee_env.policies.resolve import resolve_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a table-reading model's manifest (yahtzee export)")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=8)
    parser.add_argument("--out", type=Path, default=DATA / "win" / "decisions.json")
    args = parser.parse_args()
    agent = resolve_policy(args.model, "official", 0)
    report = find_table_decisions(agent, args.games, args.seed)
    report["command"] = (
        f"python experiments/win_decisions.py {args.model} --games {args.games} --seed {args.seed}"
    )
    atomic_write(args.out, json.dumps(report, indent=2) + "\n")
    print(format_decisions(report, args.show))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
