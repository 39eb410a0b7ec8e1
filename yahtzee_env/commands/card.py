"""``yahtzee card LEVEL`` or ``yahtzee card ROW.json``: a Hugging Face Hub style model card
(README.md with YAML metadata) of a shipped level, from its manifest and its rows in results/,
or of any agent from its benchmark row (`yahtzee_env.analysis.cards`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from yahtzee_env.commands import shipped_levels

HELP = (
    "write a model card (README.md with the Hub's YAML metadata) of a level (method, what it "
    "knew, config and env-steps, benchmark rows, intended use, limits) or of your own agent "
    "from its benchmark row (ROW.json, as `yahtzee benchmark ... --json` writes it)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "level",
        metavar="LEVEL_OR_ROW",
        help=f"a level ({', '.join(shipped_levels())}) or a benchmark row ROW.json",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="the rows (default: results/ in the current folder, else the rows the package ships)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="write DIR/README.md (default: print it)"
    )


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.analysis.cards import model_card, row_card
    from yahtzee_env.analysis.results import RowError, read_row
    from yahtzee_env.commands import OutputPathError, check_output_dir
    from yahtzee_env.fileio import atomic_write

    try:
        if args.level.endswith(".json"):
            text = row_card(read_row(args.level), args.level)
        else:
            text = model_card(args.level, _rows_skipping_bad(_results_folder(args.results)))
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


def _results_folder(given: Path | None) -> Path | None:
    """``--results``, else results/ here, else the rows the package ships."""
    from yahtzee_env.analysis.results import shipped_rows_folder

    if given is not None:
        return given
    return Path("results") if Path("results").is_dir() else shipped_rows_folder()


def _rows_skipping_bad(folder: Path | None) -> list[dict]:
    """The rows of ``folder`` (none if it is not one); a row that does not read or check is
    left out with a warning naming it, so that one bad file does not stop a card."""
    from yahtzee_env.analysis.results import RowError, read_row

    if folder is None or not folder.is_dir():
        return []
    rows = []
    for path in sorted(p for p in folder.glob("*.json") if p.name != "schema.json"):
        try:
            rows.append(read_row(path))
        except RowError as err:
            print(f"yahtzee card: warning: skipped {path}: {err}", file=sys.stderr)
    return rows
