"""``yahtzee bench-env``: steps per second of the single env and of the native vector env.

Run with ``OPENBLAS_NUM_THREADS=1`` (the Makefile and README set it); this command sets
nothing global. What each figure times is in `yahtzee_env.bench`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from yahtzee_env.commands import non_negative_int, positive_int

HELP = "time Yahtzee-v0: single env (gym.make) steps/s and native vector env env-steps/s"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from yahtzee_env.bench import DEFAULT_NUM_ENVS, DEFAULT_STEPS, MIN_VECTOR_BATCHES

    parser.add_argument(
        "--steps",
        type=positive_int,
        default=DEFAULT_STEPS,
        help=f"env-steps per timed run of each env (default {DEFAULT_STEPS:,}; the vector env "
        f"runs whole batches, at least {MIN_VECTOR_BATCHES})",
    )
    parser.add_argument(
        "--num-envs",
        type=positive_int,
        default=DEFAULT_NUM_ENVS,
        help=f"games in the vector env (default {DEFAULT_NUM_ENVS})",
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the games and actions"
    )
    parser.add_argument(
        "--repeats", type=positive_int, default=3, help="timed runs per figure; the best counts"
    )
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="write results")


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.bench import format_report, run_benchmarks

    result = run_benchmarks(
        steps=args.steps, num_envs=args.num_envs, seed=args.seed, repeats=args.repeats
    )
    print(format_report(result))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result.to_dict(), indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0
