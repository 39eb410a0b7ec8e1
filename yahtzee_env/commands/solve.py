"""``yahtzee solve``: compute (or load from the cache) the optimal-strategy table."""

from __future__ import annotations

import argparse
import time

from yahtzee_env.game.rules import PRESETS

HELP = "compute the exact optimal solitaire strategy table (cached) and print its value"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules",
        default="official",
        choices=list(PRESETS),
        help="rules preset (default: official, forced joker)",
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        help="cache directory (default: $YAHTZEE_CACHE_DIR, else the XDG cache)",
    )
    parser.add_argument(
        "--force", action="store_true", help="recompute even if a valid cached table exists"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.commands import progress_bar
    from yahtzee_env.solver import exact as solver

    path = solver.cache_path(args.rules, args.cache_dir)
    t0 = time.perf_counter()
    progress = progress_bar(args.rules, "layers", enabled=not args.no_progress)
    if args.force:  # the old table stays until the new one replaces it (atomic save)
        table = solver.solve(args.rules, progress=progress)
        solver.save_table(table, path)
    else:
        table = solver.load_or_solve(args.rules, cache_dir=args.cache_dir, progress=progress)
    elapsed = time.perf_counter() - t0
    print(f"rules: {args.rules}")
    print(f"expected score under optimal play: {table.expected_score:.4f}")
    print(f"table: {path} ({elapsed:.1f} s)")
    return 0
