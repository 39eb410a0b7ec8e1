"""Play against a CPU level with `YahtzeeVs-v0`: your agent (here the built-in heuristic,
acting on the table observation's own part) against `hard`, reward +1 / 0 / -1 for a
win / draw / loss.

    python examples/play_against_a_level.py --games 20 --level hard
"""

import argparse

import gymnasium as gym
import numpy as np

import yahtzee_env  # noqa: F401


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--level", default="hard")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = gym.make("YahtzeeVs-v0", opponents=[args.level], reward="win", seat="random")
    rng = np.random.default_rng(args.seed)
    results = []
    for game in range(args.games):
        _obs, info = env.reset(seed=args.seed + game)
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            boxes = legal[legal >= 32]  # a simple agent: fill a box when it can't re-roll,
            action = rng.choice(boxes) if info["rolls_left"] == 0 else rng.choice(legal)
            _obs, reward, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        results.append(reward)
    wins = np.mean(np.asarray(results) > 0)
    print(f"random-ish agent vs {args.level}: won {100 * wins:.0f}% of {args.games} games")


if __name__ == "__main__":
    main()
