"""``yahtzee bench-env``: steps per second of the single env and of the native vector env.

Run with ``OPENBLAS_NUM_THREADS=1`` (the Makefile sets it); this command sets
nothing global. What each figure times is in `yahtzee_env.analysis.bench`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from yahtzee_env.commands import int_in_range, non_negative_int, positive_int

# Upper limits, refused up front: the benchmark holds ``num_envs x max(steps / num_envs, 100)``
# random numbers (and the single env ``steps`` of them as Python floats) in memory.
MAX_STEPS = 10_000_000
MAX_NUM_ENVS = 131_072

HELP = "time Yahtzee-v0: single env (gym.make) steps/s and native vector env env-steps/s"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from yahtzee_env.analysis.bench import DEFAULT_NUM_ENVS, DEFAULT_STEPS, MIN_VECTOR_BATCHES

    parser.add_argument(
        "--steps",
        type=int_in_range(1, MAX_STEPS),
        default=DEFAULT_STEPS,
        help=f"env-steps per timed run of each env (default {DEFAULT_STEPS:,}; the vector env "
        f"runs whole batches, at least {MIN_VECTOR_BATCHES})",
    )
    parser.add_argument(
        "--num-envs",
        type=int_in_range(1, MAX_NUM_ENVS),
        default=DEFAULT_NUM_ENVS,
        help=f"games in the vector env (default {DEFAULT_NUM_ENVS}, at most {MAX_NUM_ENVS:,})",
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the games and actions"
    )
    parser.add_argument(
        "--repeats", type=positive_int, default=3, help="timed runs per figure; the best counts"
    )
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="write results")


def run(args: argparse.Namespace) -> int:
    import sys

    from yahtzee_env.analysis.bench import format_report, run_benchmarks
    from yahtzee_env.commands import OutputPathError, check_output_file
    from yahtzee_env.fileio import atomic_write

    try:
        check_output_file(args.json, "--json")
    except OutputPathError as err:
        print(f"yahtzee bench-env: error: {err}", file=sys.stderr)
        return 2
    result = run_benchmarks(
        steps=args.steps, num_envs=args.num_envs, seed=args.seed, repeats=args.repeats
    )
    print(format_report(result))
    if args.json is not None:
        atomic_write(args.json, json.dumps(result.to_dict(), indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0
