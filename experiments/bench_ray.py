"""Evaluation throughput of a level (regret graded) with the local backend (1 and 2 worker
processes) and the Ray backend (a private local Ray instance with 1 and 2 CPUs), in games/s,
with and without the time it takes to start and stop Ray. Every run must give the same
numbers (checked).

    OPENBLAS_NUM_THREADS=1 nice -n 15 python experiments/bench_ray.py --games 20000
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import numpy as np

from yahtzee_env.analysis.evaluation import play_games
from yahtzee_env.analysis.ray_backend import RayRunner, ray_session
from yahtzee_env.policies.resolve import resolve_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="hard")
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--chunk-size", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    policy = resolve_policy(args.policy, "official", args.seed)
    common = {"seed": args.seed, "chunk_size": args.chunk_size}
    play_games(policy, 64, **common)  # the solver table is loaded (cached) before timing
    rows, reference = [], None
    for workers in (int(w) for w in args.workers.split(",")):
        t0 = time.perf_counter()
        records = play_games(policy, args.games, workers=workers, **common)
        seconds = time.perf_counter() - t0
        rows.append({"backend": "local", "workers": workers, "seconds": seconds, "total": seconds})
        reference = reference if reference is not None else records.scores
        assert np.array_equal(records.scores, reference)
    for workers in (int(w) for w in args.workers.split(",")):
        t0 = time.perf_counter()
        with ray_session(num_cpus=workers):
            started = time.perf_counter()
            records = play_games(policy, args.games, runner=RayRunner(), **common)
            seconds = time.perf_counter() - started
        total = time.perf_counter() - t0
        rows.append({"backend": "ray", "workers": workers, "seconds": seconds, "total": total})
        assert np.array_equal(records.scores, reference), "Ray gave other numbers"
    print(f"{args.policy}, {args.games} games in chunks of {args.chunk_size}, regret graded")
    print(f"{'backend':<8} {'workers':>7} {'games/s':>9} {'with start/stop':>16} {'overhead':>9}")
    for r in rows:
        r["games_per_second"] = args.games / r["seconds"]
        r["games_per_second_total"] = args.games / r["total"]
        print(
            f"{r['backend']:<8} {r['workers']:>7} {r['games_per_second']:>9,.0f} "
            f"{r['games_per_second_total']:>16,.0f} {r['total'] - r['seconds']:>8.1f}s"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"policy": args.policy, "games": args.games, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
