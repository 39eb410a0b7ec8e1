"""``yahtzee evaluate``: play N games of one or more policies and report statistics."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from yahtzee_env.commands import add_backend_arguments, non_negative_int, positive_int
from yahtzee_env.rules import PRESETS

HELP = (
    "play N games of policies (random, greedy, heuristic, optimal, easy, medium, hard, "
    "or a model .json) and report score statistics and regret against optimal"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--policy", required=True, help="comma-separated policy names or model manifest paths"
    )
    parser.add_argument("--games", type=positive_int, default=10_000, help="games per policy")
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the games (and policies)"
    )
    parser.add_argument("--rules", default="official", choices=list(PRESETS))
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--plot", type=Path, default=None, help="write a PNG plot here")
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=min(2, os.cpu_count() or 1),
        help="worker processes of the local backend (default: 2 or the CPU count if lower)",
    )
    add_backend_arguments(parser)
    parser.add_argument(
        "--no-regret",
        action="store_true",
        help="skip grading decisions against the optimal strategy",
    )
    parser.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.commands import backend_runner, check_backend, progress_bar
    from yahtzee_env.evaluation import evaluate_policy, format_table, plot_results
    from yahtzee_env.fileio import atomic_write
    from yahtzee_env.opponents import ModelFormatError
    from yahtzee_env.policies import resolve_policy
    from yahtzee_env.ray_backend import RayMissingError

    names = [n.strip() for n in args.policy.split(",") if n.strip()]
    try:
        if not names:
            raise ValueError("--policy names no policy")
        for out in (args.json, args.plot):  # fail before the games, not after them
            if out is not None and out.is_dir():
                raise ValueError(f"{out} is a directory; give a file name")
        if args.plot is not None:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                raise ValueError(
                    "--plot needs matplotlib (pip install 'yahtzee-rl[plot]')"
                ) from None
        check_backend(args)
        policies = [(n, resolve_policy(n, args.rules, args.seed)) for n in names]
    except (ValueError, ModelFormatError, RayMissingError) as err:
        print(f"yahtzee evaluate: error: {err}", file=sys.stderr)
        return 2
    results = []
    with backend_runner(args) as runner:
        for name, policy in policies:
            progress = progress_bar(name, "games", not args.no_progress)
            result = evaluate_policy(
                policy,
                args.games,
                args.seed,
                args.rules,
                name=name,
                workers=args.workers,
                regret="no" if args.no_regret else "yes",
                progress=progress,
                runner=runner,
            )
            results.append(result)
    print(format_table(results))
    if args.json:
        atomic_write(args.json, json.dumps({"results": results}, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.plot:
        plot_results(results, args.plot)
        print(f"wrote {args.plot}")
    return 0
