"""Training throughput of MaskablePPO on the native vector env (env steps/s, end to end).

    OPENBLAS_NUM_THREADS=1 python experiments/bench_train.py --config configs/expert.yaml

Always measures the reference setup (256x256 MLP, 512 envs, n_steps 32, batch 4096, 2
epochs), then each --config given (warm start, evaluation and checkpoints excluded).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from yahtzee_agents.bench import DISTRIBUTIONS, run_bench


def parse_setups(text: str) -> list[tuple[int, str]]:
    setups = []
    for item in text.split(","):
        threads, _, distribution = item.partition(":")
        if not threads.isdigit() or int(threads) < 1 or distribution not in DISTRIBUTIONS:
            raise argparse.ArgumentTypeError(
                f"{item!r}: expected THREADS:DISTRIBUTION, threads a positive number and "
                f"distribution one of {', '.join(DISTRIBUTIONS)}"
            )
        setups.append((int(threads), distribution))
    return setups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, action="append", default=[])
    parser.add_argument("--timesteps", type=int, default=200_000)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override applied to every config measured",
    )
    parser.add_argument(
        "--threads",
        type=lambda s: [int(x) for x in s.split(",")],
        help="torch thread counts to compare, e.g. 1,2 (interleaved A/B in this one run)",
    )
    parser.add_argument(
        "--setups",
        type=parse_setups,
        help="THREADS:DISTRIBUTION settings to compare, interleaved, e.g. 1:sb3,2:lean "
        "(sb3: sb3-contrib's masked distribution, as before the lean one)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="measurements per setting")
    parser.add_argument("--no-reference", action="store_true", help="skip the reference setup")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.repeats < 1 or any(n < 1 for n in args.threads or []):
        parser.error("--repeats and --threads must be positive")
    if args.threads and args.setups:
        parser.error("give --threads or --setups, not both")
    results = run_bench(
        args.config,
        args.timesteps,
        args.set,
        args.threads,
        args.repeats,
        not args.no_reference,
        args.setups,
    )
    for r in results:
        print(
            f"{r['config']:<16} net {r['net_arch']} envs {r['num_envs']} n_steps {r['n_steps']} "
            f"batch {r['batch_size']} epochs {r['n_epochs']} threads {r['torch_threads']} "
            f"{r['distribution']}: "
            f"{r['steps_per_second']:,.0f} env-steps/s ({r['steps']:,} steps, "
            f"{r['seconds']:.1f} s)"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
