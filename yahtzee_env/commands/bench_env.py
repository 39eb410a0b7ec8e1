"""``yahtzee bench-env``: steps per second of the single env and of the native vector env.

Run with ``OPENBLAS_NUM_THREADS=1`` (the Makefile and README set it); this command sets
nothing global. What each figure times is in `yahtzee_env.bench`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "time Yahtzee-v0: single env (gym.make) steps/s and native vector env env-steps/s"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from yahtzee_env.bench import DEFAULT_NUM_ENVS, DEFAULT_STEPS, MIN_VECTOR_BATCHES

    parser.add_argument(
        "--steps",
        type=_positive_int,
        default=DEFAULT_STEPS,
        help=f"env-steps per timed run of each env (default {DEFAULT_STEPS:,}; the vector env "
        f"runs whole batches, at least {MIN_VECTOR_BATCHES})",
    )
    parser.add_argument(
        "--num-envs",
        type=_positive_int,
        default=DEFAULT_NUM_ENVS,
        help=f"games in the vector env (default {DEFAULT_NUM_ENVS})",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the games and actions")
    parser.add_argument(
        "--repeats", type=_positive_int, default=3, help="timed runs per figure; the best counts"
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
