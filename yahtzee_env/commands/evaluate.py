"""``yahtzee evaluate``: play N games of one or more policies and report statistics."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from yahtzee_env.commands import (
    MODEL_FILES,
    add_backend_arguments,
    int_in_range,
    non_negative_int,
    shipped_levels,
)
from yahtzee_env.game.rules import PRESETS

HELP = (
    f"play N games of policies (random, greedy, heuristic, optimal, {', '.join(shipped_levels())}"
    f", 'levels' for all of them, or {MODEL_FILES}) and report score statistics and regret "
    "against optimal"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--policy", required=True, help="comma-separated policy names or model manifest paths"
    )
    from yahtzee_env.analysis.evaluation import MAX_GAMES

    parser.add_argument(
        "--games",
        type=int_in_range(1, MAX_GAMES),
        default=10_000,
        help=f"games per policy (default 10,000; at most {MAX_GAMES:,}: every game's record "
        "is kept for the medians and percentiles)",
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the games (and policies)"
    )
    parser.add_argument("--rules", default="official", choices=list(PRESETS))
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--plot", type=Path, default=None, help="write a PNG plot here")
    parser.add_argument(
        "--workers",
        type=int_in_range(1, 256),
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
    from yahtzee_env.analysis.evaluation import evaluate_policy, format_table, plot_results
    from yahtzee_env.analysis.ray_backend import RayMissingError
    from yahtzee_env.commands import (
        OutputPathError,
        backend_runner,
        check_backend,
        check_output_file,
        missing_extra_hint,
        policy_names,
        progress_bar,
    )
    from yahtzee_env.fileio import atomic_write
    from yahtzee_env.policies.models import ModelFormatError
    from yahtzee_env.policies.resolve import policy_label, resolve_policy

    names = policy_names(args.policy)
    try:
        if not names:
            raise ValueError("--policy names no policy")
        check_output_file(args.json, "--json")  # fail before the games, not after them
        check_output_file(args.plot, "--plot")
        if args.plot is not None:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                raise ValueError(
                    "--plot needs matplotlib (pip install 'yahtzee-rl[plot]')"
                ) from None
        check_backend(args)
        policies = []
        for n in names:
            policy = resolve_policy(n, args.rules, args.seed)
            policies.append((policy_label(n, policy, args.rules), policy))
    except (ValueError, ModelFormatError, OutputPathError, RayMissingError) as err:
        print(f"yahtzee evaluate: error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        print(f"yahtzee evaluate: error: {missing_extra_hint(err)}", file=sys.stderr)
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
