"""``yahtzee card LEVEL``: a Hugging Face Hub style model card (README.md with YAML metadata)
of a shipped level, from its manifest and its rows in results/ (`yahtzee_env.analysis.cards`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from yahtzee_env.commands import shipped_levels

HELP = (
    "write a level's model card (README.md with the Hub's YAML metadata: method, what it "
    "knew, config and env-steps, benchmark rows, intended use, limits)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("level", metavar="LEVEL", help=f"one of {', '.join(shipped_levels())}")
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="the rows (default results/)"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="write DIR/README.md (default: print it)"
    )


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.analysis.cards import model_card
    from yahtzee_env.analysis.results import RowError, load_rows
    from yahtzee_env.commands import OutputPathError, check_output_dir
    from yahtzee_env.fileio import atomic_write

    try:
        rows = load_rows(args.results) if args.results.is_dir() else []
        text = model_card(args.level, rows)
        check_output_dir(args.out, "--out")
    except (RowError, ValueError, OutputPathError) as err:
        print(f"yahtzee card: error: {err}", file=sys.stderr)
        return 2
    if args.out is None:
        sys.stdout.write(text)
        return 0
    atomic_write(args.out / "README.md", text)
    print(f"wrote {args.out / 'README.md'}")
    return 0
