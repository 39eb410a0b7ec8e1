"""Per-decision latency of the shipped CPU levels (numpy only), one observation at a time
(``act``, a CPU seat's call; and the same row through ``act_batch``, the batch path, for
comparison) and batched.

    OPENBLAS_NUM_THREADS=1 python experiments/bench_levels.py
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from yahtzee_env.envs.vector import YahtzeeVectorEnv
from yahtzee_env.policies.models import LEVELS, load_opponent


def recorded_states(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    env = YahtzeeVectorEnv(num_envs=n, rules="official")
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(int(rng.integers(5, 20))):
        masks = env.action_masks()
        obs, *_ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    return obs, env.action_masks().copy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    obs, masks = recorded_states(4096, args.seed)
    print(
        f"{'level':<8} {'hidden':<16} {'single (µs/decision)':>22} "
        f"{'one row by act_batch':>22} {'batched 4096 (µs/decision)':>28}"
    )
    for level in LEVELS:
        policy = load_opponent(level)
        hidden = str(list(policy.manifest.hidden))
        best_single = best_row = best_batch = float("inf")
        for _ in range(3):  # interleaved, the best of three of each
            t0 = time.perf_counter()
            for i in range(args.decisions):
                j = i % len(obs)
                policy.act(obs[j], masks[j])
            best_single = min(best_single, (time.perf_counter() - t0) / args.decisions)
            t0 = time.perf_counter()
            for i in range(args.decisions):
                j = i % len(obs)
                policy.act_batch(obs[j : j + 1], masks[j : j + 1])
            best_row = min(best_row, (time.perf_counter() - t0) / args.decisions)
            t0 = time.perf_counter()
            policy.act_batch(obs, masks)
            best_batch = min(best_batch, (time.perf_counter() - t0) / len(obs))
        print(
            f"{level:<8} {hidden:<16} {best_single * 1e6:>22.1f} {best_row * 1e6:>22.1f} "
            f"{best_batch * 1e6:>28.2f}"
        )


if __name__ == "__main__":
    main()
