"""A masked random agent on `Yahtzee-v0`: the smallest complete loop.

python examples/masked_random_agent.py --episodes 5
"""

import argparse

import gymnasium as gym
import numpy as np

import yahtzee_env  # noqa: F401  (registers the env ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = gym.make("Yahtzee-v0", rules="official")
    rng = np.random.default_rng(args.seed)
    scores = []
    for episode in range(args.episodes):
        _obs, info = env.reset(seed=args.seed + episode)
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])  # holds 0..31, boxes 32..44
            _obs, _reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
            done = terminated or truncated
        scores.append(info["total"])
    print(f"masked random agent: {np.mean(scores):.1f} over {len(scores)} games")


if __name__ == "__main__":
    main()
