"""Three players at one table with PettingZoo (`yahtzee_v0`, AEC API): a masked random
agent in every seat.

    pip install -e '.[multiplayer]'      # from a clone (the package is not on PyPI yet)
    python examples/pettingzoo_multiplayer.py --games 3
"""

import argparse

import numpy as np

from yahtzee_env.envs.multiplayer import env as yahtzee_v0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = yahtzee_v0(num_players=args.players)
    rng = np.random.default_rng(args.seed)
    wins = {agent: 0.0 for agent in env.possible_agents}
    for game in range(args.games):
        env.reset(seed=args.seed + game)
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                wins[agent] += reward > 0
                action = None
            else:
                action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            env.step(action)
    print("wins per seat:", {agent: int(w) for agent, w in wins.items()})


if __name__ == "__main__":
    main()
