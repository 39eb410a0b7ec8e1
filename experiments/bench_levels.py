"""Per-decision latency of the shipped CPU levels (numpy only), one observation at a time
(``act``, a CPU seat's call; and the same row through ``act_batch``, the batch path, for
comparison) and batched; for a level that reads the table (the duelist, the winner), also
one move at a 2-seat table (``act_table`` with both cards, as a web table's CPU seat calls it).

    OPENBLAS_NUM_THREADS=1 python experiments/bench_levels.py
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from yahtzee_env.envs.vector import YahtzeeVectorEnv
from yahtzee_env.game.cpu import table_cards
from yahtzee_env.game.engine import Game
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.policies.models import LEVELS, load_opponent


def recorded_states(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    env = YahtzeeVectorEnv(num_envs=n, rules="official")
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(int(rng.integers(5, 20))):
        masks = env.action_masks()
        obs, *_ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    return obs, env.action_masks().copy()


def table_states(n: int, seed: int) -> list[tuple]:
    """``n`` decisions of 2-seat games played with random legal moves: (the mover's
    observation, its mask, every seat's card)."""
    rng, states = np.random.default_rng(seed), []
    while len(states) < n:
        game = Game("official", num_players=2, canonical_holds=True)
        game.reset(rng)
        while not game.over and len(states) < n:
            seat, mask = game.current, game.legal_action_mask()
            states.append((encode_seat(game, seat), mask, table_cards(game, seat)))
            game.step(int(np.flatnonzero(mask)[rng.integers(mask.sum())]))
    return states


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    obs, masks = recorded_states(4096, args.seed)
    tables = table_states(2048, args.seed)
    print(
        f"{'level':<8} {'hidden':<16} {'single (µs/decision)':>22} "
        f"{'one row by act_batch':>22} {'batched 4096 (µs/decision)':>28} "
        f"{'at a table of 2 (µs/move)':>27}"
    )
    for level in LEVELS:
        policy = load_opponent(level)
        hidden = str(list(policy.manifest.hidden))
        best_single = best_row = best_batch = best_table = float("inf")
        moves = args.decisions if getattr(policy, "reads_table", False) else 0
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
            if moves:
                t0 = time.perf_counter()
                for i in range(moves):
                    policy.act_table(*tables[i % len(tables)])
                best_table = min(best_table, (time.perf_counter() - t0) / moves)
        table = f"{best_table * 1e6:.1f}" if moves else "–"
        print(
            f"{level:<8} {hidden:<16} {best_single * 1e6:>22.1f} {best_row * 1e6:>22.1f} "
            f"{best_batch * 1e6:>28.2f} {table:>27}"
        )


if __name__ == "__main__":
    main()
