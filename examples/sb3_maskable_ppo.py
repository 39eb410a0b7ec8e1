"""sb3-contrib MaskablePPO on the native vector env, then graded by the benchmark.

pip install -e '.[train]'      # from a clone (the package is not on PyPI yet)
python examples/sb3_maskable_ppo.py --timesteps 200000 --games 2000
"""

import argparse

import torch
from sb3_contrib import MaskablePPO

import yahtzee_env
from yahtzee_agents.sb3.vec_env import SB3VecEnv
from yahtzee_env.analysis.leaderboard import format_benchmark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=200_000)
    parser.add_argument("--games", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)

    env = SB3VecEnv(num_envs=64, rules="official", canonical_holds=True, seed=args.seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=1024, seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.timesteps)

    def act(obs, mask):  # the benchmark's agent: the policy's greedy action under the mask
        return model.predict(obs, action_masks=mask, deterministic=True)[0]

    knew = {  # what this agent knew, for its row's track (docs/benchmark.md)
        "observation": "raw 72 floats",
        "reward": "game score only",
        "actions": "canonical holds",
        "model": "none",
        "teacher": "none",
    }
    row = yahtzee_env.benchmark(act, games=args.games, name="maskable-ppo", knew=knew)
    print(format_benchmark(row))


if __name__ == "__main__":
    main()
