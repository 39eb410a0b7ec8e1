"""Grade your own agent by the benchmark protocol (docs/benchmark.md, "Evaluate your agent").

    python examples/evaluate_your_agent.py --games 10000 --json row.json

The same from the shell: `yahtzee benchmark examples.evaluate_your_agent:fill_best_box`
(run from the repository root) or with your own `package.module:function`.
"""

import argparse
import json

import numpy as np

import yahtzee_env
from yahtzee_env.analysis.leaderboard import format_benchmark

POINTS = slice(52, 65)  # the observation's points on offer per box, / 50 (docs/env.md)


def fill_best_box(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """obs float32[N, 72], mask bool[N, 45] -> actions[N]: fill the box that pays most now
    (never re-rolls): a greedy agent in four lines."""
    values = np.full(mask.shape, -np.inf)
    values[:, 32:] = np.where(mask[:, 32:], obs[:, POINTS], -np.inf)
    return np.argmax(values, axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--json", default=None, help="write the leaderboard row here")
    args = parser.parse_args()
    knew = {  # what the agent knew, for the leaderboard (docs/benchmark.md)
        "observation": "raw 72 floats",
        "reward": "none (hand-made: the most points now)",
        "actions": "all 32 holds (it never holds)",
        "model": "none",
        "teacher": "none",
    }
    row = yahtzee_env.benchmark(fill_best_box, games=args.games, name="fill-best-box", knew=knew)
    print(format_benchmark(row))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: v for k, v in row.items() if k != "evaluation"}, f, indent=2)


if __name__ == "__main__":
    main()
