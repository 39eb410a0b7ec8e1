"""Why PPO fine-tuning raises the distilled policy's regret: the noise in its advantages.

Plays games with the shipped `hard` level *sampling* from its softmax (as PPO's rollouts do)
and grades every decision with the exact solver. With the optimal value function V* as the
critic (the best a critic can be; hard's value head was distilled from it), GAE(lambda)
advantages are unbiased estimates of the true advantage Q*(s, a) - V*(s) (minus the regret of
the action): the script prints, for several lambdas, the noise of the estimate against the true
advantage and the number of samples needed before the mean advantage of a typical decision
is known to better than the regret differences PPO has to resolve.

    python experiments/advantage_noise.py --games 2000 --seed 0
"""

from __future__ import annotations

import argparse

import numpy as np

from yahtzee_env.analysis.evaluation import FirstGames
from yahtzee_env.envs.vector import YahtzeeVectorEnv
from yahtzee_env.policies.models import load_opponent
from yahtzee_env.solver.exact import load_or_solve
from yahtzee_env.solver.oracle import OptimalOracle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--level", default="hard")
    args = parser.parse_args()

    policy = load_opponent(args.level)
    oracle = OptimalOracle(load_or_solve("official"))
    env = YahtzeeVectorEnv(num_envs=args.games, canonical_holds=policy.canonical_holds)
    rng = np.random.default_rng(args.seed)
    games = FirstGames(env, args.seed)
    steps = []  # per decision: env ids, V*(s), Q*(s, a), reward, greedy regret
    for active, obs, masks in games:
        allowed = policy._allowed(obs, masks)
        logits = np.where(allowed, policy.logits(obs), -np.inf)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        actions = (probs.cumsum(axis=1) > rng.random((len(obs), 1))).argmax(axis=1)
        q = np.where(masks, oracle.action_values(obs), -np.inf)
        v = q.max(axis=1)
        rewards, _, _ = games.step(actions)
        steps.append(
            {
                "env": active,
                "v": v,
                "q": q[np.arange(len(obs)), actions],
                "r": rewards,
                "greedy_regret": v - q[np.arange(len(obs)), logits.argmax(axis=1)],
            }
        )
    # V*(s_{t+1}) for each decision: the value of the same env's next decision, 0 at the end.
    next_v = []
    for t, step in enumerate(steps):
        nv = np.zeros(len(step["env"]))
        if t + 1 < len(steps):
            pos = np.searchsorted(steps[t + 1]["env"], step["env"])
            pos = np.minimum(pos, len(steps[t + 1]["env"]) - 1)
            alive = steps[t + 1]["env"][pos] == step["env"]
            nv[alive] = steps[t + 1]["v"][pos[alive]]
        next_v.append(nv)
    true_adv = np.concatenate([s["q"] - s["v"] for s in steps])
    regret_sampled = -true_adv.sum() / args.games
    regret_greedy = np.concatenate([s["greedy_regret"] for s in steps]).sum() / args.games
    print(f"{args.level}: {args.games} games, {true_adv.size} decisions")
    print(f"  regret/game sampling from the softmax (PPO's rollouts): {regret_sampled:.2f}")
    print(f"  regret/game of the argmax policy (what is evaluated):    {regret_greedy:.2f}")
    nonzero = true_adv[true_adv < -1e-9]
    print(
        f"  decisions where the sampled action is not optimal: {nonzero.size / true_adv.size:.1%}"
        f", their median true advantage {np.median(nonzero):.3f} points"
    )
    print("  lambda | noise std of A_GAE - A_true (points) | samples to resolve 0.1 point")
    for lam in (0.0, 0.5, 0.9, 0.95, 1.0):
        adv = []
        running = {}
        gae_rev = []
        for t in reversed(range(len(steps))):
            s = steps[t]
            delta = s["r"] + next_v[t] - s["v"]
            carry = np.array([running.get(e, 0.0) for e in s["env"].tolist()])
            g = delta + lam * carry
            running = dict(zip(s["env"].tolist(), g.tolist(), strict=True))
            gae_rev.append(g)
        adv = np.concatenate(list(reversed(gae_rev)))
        noise = float(np.std(adv - true_adv))
        print(f"  {lam:6.2f} | {noise:8.2f} | {(1.96 * noise / 0.1) ** 2:12,.0f}")


if __name__ == "__main__":
    main()
