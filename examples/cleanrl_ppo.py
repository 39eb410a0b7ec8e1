"""A CleanRL-style PPO with action masking, in one file that reads top to bottom, on the
native vector env (`YahtzeeVectorEnv`, same-step autoreset). Graded by the benchmark.

    pip install -e '.[train]'      # from a clone (the package is not on PyPI yet)
    python examples/cleanrl_ppo.py --total-timesteps 500000
"""

import argparse
import time
from dataclasses import dataclass

import torch
from torch import nn
from torch.distributions import Categorical

import yahtzee_env
from yahtzee_env.analysis.leaderboard import format_benchmark
from yahtzee_env.envs.vector import YahtzeeVectorEnv


@dataclass
class Args:
    total_timesteps: int = 500_000
    """env-steps to train"""
    num_envs: int = 128
    num_steps: int = 64
    """steps per env per rollout"""
    learning_rate: float = 3e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 4
    num_minibatches: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    reward_scale: float = 0.01
    """rewards are points; ~250 per game is scaled to ~2.5"""
    games: int = 2_000
    """benchmark games at the end"""
    seed: int = 0


class Agent(nn.Module):
    def __init__(self, obs_size: int = 72, actions: int = 45) -> None:
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(obs_size, 256), nn.Tanh(), nn.Linear(256, 1))
        self.actor = nn.Sequential(nn.Linear(obs_size, 256), nn.Tanh(), nn.Linear(256, actions))

    def act(self, obs, mask, action=None):
        logits = self.actor(obs).masked_fill(~mask, -1e9)  # illegal actions get no mass
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(obs).squeeze(-1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, value in vars(Args()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = Args(**vars(parser.parse_args()))
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    envs = YahtzeeVectorEnv(num_envs=args.num_envs, canonical_holds=True)
    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    n, t = args.num_envs, args.num_steps
    obs_buf = torch.zeros((t, n, 72))
    mask_buf = torch.zeros((t, n, 45), dtype=torch.bool)
    act_buf, logp_buf, rew_buf, done_buf, val_buf = (torch.zeros((t, n)) for _ in range(5))

    next_obs = torch.as_tensor(envs.reset(seed=args.seed)[0])
    next_done = torch.zeros(n)
    start, step = time.time(), 0
    for _ in range(max(1, args.total_timesteps // (n * t))):
        for i in range(t):  # rollout
            obs_buf[i], done_buf[i] = next_obs, next_done
            mask_buf[i] = torch.tensor(envs.action_masks())  # a copy: the env keeps its own
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs, mask_buf[i])
            act_buf[i], logp_buf[i], val_buf[i] = action, logp, value
            obs, reward, terminated, truncated, _ = envs.step(action.numpy())
            rew_buf[i] = torch.as_tensor(reward * args.reward_scale)
            next_obs = torch.as_tensor(obs)  # a finished game's row is already the next game
            next_done = torch.as_tensor(terminated | truncated, dtype=torch.float32)
            step += n
        with torch.no_grad():  # GAE; a game's last step does not bootstrap
            next_value = agent.critic(next_obs).squeeze(-1)
            adv, last = torch.zeros_like(rew_buf), 0.0
            for i in reversed(range(t)):
                nonterminal = 1.0 - (next_done if i == t - 1 else done_buf[i + 1])
                value_after = next_value if i == t - 1 else val_buf[i + 1]
                delta = rew_buf[i] + args.gamma * value_after * nonterminal - val_buf[i]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[i] = last
            returns = adv + val_buf
        b = {"obs": obs_buf.reshape(-1, 72), "mask": mask_buf.reshape(-1, 45),
             "act": act_buf.reshape(-1), "logp": logp_buf.reshape(-1),
             "adv": adv.reshape(-1), "ret": returns.reshape(-1)}  # fmt: skip
        size = n * t
        for _ in range(args.update_epochs):  # PPO's clipped objective
            for idx in torch.randperm(size).split(size // args.num_minibatches):
                _, logp, entropy, value = agent.act(b["obs"][idx], b["mask"][idx], b["act"][idx])
                a = b["adv"][idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                ratio = (logp - b["logp"][idx]).exp()
                clipped = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(-a * ratio, -a * clipped).mean()
                v_loss = 0.5 * ((value - b["ret"][idx]) ** 2).mean()
                loss = pg_loss + args.vf_coef * v_loss - args.ent_coef * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
    print(f"trained {step:,} env-steps in {time.time() - start:.0f} s")

    def greedy(obs, mask):  # the benchmark's agent: argmax of the logits over legal actions
        with torch.no_grad():
            logits = agent.actor(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(mask), -1e9)
        return logits.argmax(dim=1).numpy()

    knew = {  # what this agent knew, for its row's track (docs/benchmark.md)
        "observation": "raw 72 floats",
        "reward": "game score only (scaled by a constant)",
        "actions": "canonical holds",
        "model": "none",
        "teacher": "none",
    }
    row = yahtzee_env.benchmark(greedy, games=args.games, name="cleanrl-ppo", knew=knew)
    print(format_benchmark(row))


if __name__ == "__main__":
    main()
