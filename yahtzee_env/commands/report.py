"""``yahtzee report RUN_OR_ROW...``: runs or benchmark rows over seeds as a table of
interquartile means with stratified-bootstrap 95% CIs (rliable's method), in Markdown and
LaTeX, and a performance profile (`yahtzee_env.analysis.report`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = (
    "aggregate runs or benchmark rows over seeds: IQM and mean with stratified-bootstrap "
    "95 percent CIs (rliable's method) as Markdown and LaTeX tables, and a performance profile"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="RUN_OR_ROW",
        help="a run folder or a benchmark row (.json), optionally LABEL=PATH; inputs with "
        "the same label are one agent's runs (default label: the config name or the row's "
        "agent, without its -s<seed>)",
    )
    parser.add_argument(
        "--metric",
        choices=("expected", "mean", "regret"),
        default="expected",
        help="a row's expected score (default), mean or regret per game; a run folder's last "
        "evaluation mean (or regret)",
    )
    parser.add_argument("--markdown", type=Path, default=None, help="write the Markdown table")
    parser.add_argument("--latex", type=Path, default=None, help="write the LaTeX table")
    parser.add_argument("--plot", type=Path, default=None, help="the performance profile (PNG)")
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap resamples (2000)")
    parser.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (0)")


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.analysis.report import (
        aggregate,
        latex_table,
        load_scores,
        markdown_table,
        plot_profiles,
    )
    from yahtzee_env.commands import (
        OutputPathError,
        check_output_file,
        missing_extra_hint,
    )
    from yahtzee_env.fileio import atomic_write

    try:
        for path, option in ((args.markdown, "--markdown"), (args.latex, "--latex"),
                             (args.plot, "--plot")):  # fmt: skip
            check_output_file(path, option)
        if not 100 <= args.reps <= 100_000:
            raise ValueError(f"--reps must be in 100..100,000, got {args.reps}")
        rows = aggregate(load_scores(args.inputs, args.metric), args.reps, args.seed)
    except (ValueError, OutputPathError) as err:
        print(f"yahtzee report: error: {err}", file=sys.stderr)
        return 2
    table = markdown_table(rows)
    print(table)
    if args.markdown:
        atomic_write(args.markdown, table + "\n")
    if args.latex:
        atomic_write(args.latex, latex_table(rows))
    if args.plot:
        try:
            plot_profiles(rows, args.plot)
        except ImportError as err:
            print(f"yahtzee report: error: {missing_extra_hint(err)}", file=sys.stderr)
            return 2
    for path in (args.markdown, args.latex, args.plot):
        if path:
            print(f"wrote {path}")
    return 0
