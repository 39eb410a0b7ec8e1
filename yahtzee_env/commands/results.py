"""``yahtzee results``: check every row of a results folder against the schema, print the
leaderboard tables, and (``--update FILE...``) rewrite the tables marked in Markdown files:
the one writer of the README's and docs/benchmark.md's leaderboards
(`yahtzee_env.analysis.results`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = (
    "check the rows of a results folder against the schema and print (or --update in "
    "Markdown files) the leaderboard tables generated from them"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir", type=Path, default=Path("results"), help="the results folder (default results/)"
    )
    parser.add_argument(
        "--update",
        type=Path,
        nargs="*",
        default=None,
        metavar="FILE",
        help="rewrite the marked tables in these Markdown files (and DIR/schema.json)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a marked table in the --update files (or DIR/schema.json) is not the "
        "one the rows give, or if two rows name one network's weights as different agents "
        "without saying so (changes nothing)",
    )


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.analysis.results import (
        RowError,
        leaderboard_table,
        load_rows,
        same_weights_problems,
        schema_text,
        update_text,
        versus_table,
    )
    from yahtzee_env.fileio import atomic_write

    if not args.dir.is_dir():
        print(f"yahtzee results: error: --dir {args.dir}: not a folder", file=sys.stderr)
        return 2
    try:
        rows = load_rows(args.dir)
    except RowError as err:
        print(f"yahtzee results: error: {err}", file=sys.stderr)
        return 2
    problems = same_weights_problems(rows)
    for problem in problems:
        print(f"yahtzee results: error: {args.dir}: {problem}", file=sys.stderr)
    if problems:
        return 1 if args.check else 2
    if args.update is None:
        print(leaderboard_table(rows, "docs"))
        print()
        print(versus_table(rows))
        return 0
    stale = []
    targets = [(args.dir / "schema.json", None), *((p, p) for p in args.update)]
    for path, markdown in targets:
        try:
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            new = schema_text() if markdown is None else update_text(old, rows)
        except (OSError, ValueError) as err:
            print(f"yahtzee results: error: {path}: {err}", file=sys.stderr)
            return 2
        if new != old:
            stale.append(path)
            if not args.check:
                atomic_write(path, new)
    for path in stale:
        print(f"{path}: {'out of date' if args.check else 'rewritten'}")
    return 1 if args.check and stale else 0
