"""Warm start: supervised pre-training of a MaskablePPO policy from a teacher, before PPO.

The teacher plays ``warm_start.games`` games on the native vector env (taking a random legal
action with probability ``explore``, for more varied states). Every decision becomes one
training example:

* ``optimal`` teacher: the target is ``softmax(Q / temperature)`` over the legal actions,
  where Q are the exact solver's action values (expected final-score-to-go, in points); the
  value target is the best Q (the optimal value of the state), times ``env.reward_scale``.
* ``heuristic`` teacher: the target is the heuristic's action; the value target is the
  return actually obtained from that decision on, times ``env.reward_scale``.
* ``duelist`` teacher (a 2-seat table, `table_teacher_dataset`): the duelist plays the
  learner's seat of `versus_env.TableVecEnv` tables against ``versus.opponents`` (``self``
  there is the duelist itself: no past selves exist yet); the target is the duelist's move
  (the solver's, or its exact win-probability search's in its last turns), the value target
  the game's result (+1, 0, -1) times ``env.reward_scale``.

The policy head is trained by cross-entropy against the target over legal actions, the value
head by mean squared error, with Adam; PPO then starts from these weights.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from yahtzee_env.game.engine import NUM_ACTIONS

from ..config import RunConfig


def teacher_dataset(cfg: RunConfig, seed: int) -> dict[str, np.ndarray]:
    """Play the teacher's games and record (obs, mask, target distribution, value target)."""
    if cfg.warm_start.teacher == "duelist":
        return table_teacher_dataset(cfg, seed)
    from yahtzee_env.analysis.evaluation import FirstGames
    from yahtzee_env.envs.vector import YahtzeeVectorEnv
    from yahtzee_env.policies.baselines import make_policy
    from yahtzee_env.solver.exact import load_or_solve
    from yahtzee_env.solver.oracle import OptimalOracle

    w = cfg.warm_start
    rng = np.random.default_rng(seed)
    oracle = OptimalOracle(load_or_solve(cfg.env.rules)) if w.teacher == "optimal" else None
    heuristic = make_policy("heuristic", rules=cfg.env.rules) if w.teacher == "heuristic" else None
    chunks: list[dict[str, np.ndarray]] = []
    per_chunk = 4096
    for lo in range(0, w.games, per_chunk):
        n = min(per_chunk, w.games - lo)
        env = YahtzeeVectorEnv(
            num_envs=n, rules=cfg.env.rules, canonical_holds=cfg.env.canonical_holds
        )
        games = FirstGames(env, int(rng.integers(2**31)))
        steps: list[dict[str, np.ndarray]] = []
        for active, o, m in games:
            if oracle is not None:
                q = oracle.action_values(o)
                q = np.where(m, q, -np.inf)
                act = np.argmax(q, axis=1)
                z = (q - q.max(axis=1, keepdims=True)) / w.temperature
                target = np.exp(z)
                target /= target.sum(axis=1, keepdims=True)
                value = q.max(axis=1)
            else:
                act = heuristic.act_batch(o, m)
                target = np.zeros((active.size, m.shape[1]), dtype=np.float32)
                target[np.arange(active.size), act] = 1.0
                value = np.zeros(active.size)
            explore = rng.random(active.size) < w.explore
            if explore.any():
                u = rng.random(m[explore].shape) * m[explore]
                act[explore] = np.argmax(u, axis=1)
            rewards, _, _ = games.step(act)
            steps.append(
                {
                    "env": active,
                    "obs": o,
                    "mask": m,
                    "target": target.astype(np.float16),
                    "value": value.astype(np.float32),
                    "reward": rewards,
                }
            )
        env.close()
        if heuristic is not None:  # Monte-Carlo return-to-go of each recorded decision
            to_go = np.zeros(n)
            for step in reversed(steps):
                to_go[step["env"]] += step["reward"]
                step["value"] = to_go[step["env"]].astype(np.float32)
        chunks.append(
            {k: np.concatenate([s[k] for s in steps]) for k in ("obs", "mask", "target", "value")}
        )
    return {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}


def table_teacher_dataset(cfg: RunConfig, seed: int) -> dict[str, np.ndarray]:
    """The duelist at the learner's seat of 2-seat tables: ``warm_start.games`` games, each
    of the learner's decisions recorded with the table's model input (``obs``: input
    version 3, ready for the network), its mask, the duelist's move (one-hot ``target``) and
    the game's result (``value``). With probability ``explore`` the move played is a random
    legal one (the target stays the duelist's)."""
    from yahtzee_env.game.cpu import table_cards
    from yahtzee_env.game.observation import encode_seat
    from yahtzee_env.policies.resolve import resolve_policy

    from .versus_env import SELF, OpponentMix, TableVecEnv

    w, v = cfg.warm_start, cfg.versus
    rng = np.random.default_rng(seed)
    teacher = resolve_policy("duelist", cfg.env.rules, seed)
    names = [o.name for o in v.opponents]
    fixed = {n: resolve_policy(n, cfg.env.rules, seed) for n in names if n != SELF}
    names = ["duelist" if n == SELF else n for n in names]
    fixed.setdefault("duelist", teacher)
    mix = OpponentMix(names, [o.weight for o in v.opponents], fixed, None)
    env = TableVecEnv(min(cfg.env.num_envs, w.games), mix, rules=cfg.env.rules, seed=seed)
    obs = env.reset()
    rows: list[dict[str, np.ndarray]] = []
    game_of = np.arange(env.num_envs)  # the game each table plays (its decisions' results)
    results: dict[int, float] = {}
    started = env.num_envs
    while len(results) < w.games:
        masks = env.action_masks()
        seats = [int(s) for s in env.seats]
        solo = np.stack([encode_seat(g, s) for g, s in zip(env.games, seats, strict=True)])
        cards = np.array(
            [table_cards(g, s) for g, s in zip(env.games, seats, strict=True)], dtype=np.int64
        )
        act = np.asarray(teacher.act_batch_table(solo, masks, cards), dtype=np.int64)
        rows.append({"obs": obs, "mask": masks, "act": act, "game": game_of.copy()})
        played = act.copy()
        explore = rng.random(act.size) < w.explore
        if explore.any():
            played[explore] = np.argmax(rng.random(masks[explore].shape) * masks[explore], axis=1)
        obs, _, dones, infos = env.step(played)
        for i in np.flatnonzero(dones):
            results[int(game_of[i])] = float(infos[i]["result"])
            game_of[i] = started
            started += 1
    obs = np.concatenate([r["obs"] for r in rows])
    games = np.concatenate([r["game"] for r in rows])
    act = np.concatenate([r["act"] for r in rows])
    keep = np.array([g in results for g in games.tolist()])  # games left unfinished: out
    target = np.zeros((keep.sum(), NUM_ACTIONS), dtype=np.float16)
    target[np.arange(keep.sum()), act[keep]] = 1.0
    value = np.array([results[g] for g in games[keep].tolist()], dtype=np.float32)
    return {
        "obs": obs[keep].astype(np.float32),
        "mask": np.concatenate([r["mask"] for r in rows])[keep],
        "target": target,
        "value": value,
    }


def warm_start(model: Any, cfg: RunConfig) -> dict[str, Any]:
    """Pre-train ``model.policy`` on the teacher's decisions; return training statistics."""
    import torch

    w = cfg.warm_start
    t0 = time.perf_counter()
    data = teacher_dataset(cfg, seed=cfg.train.seed)
    gen_seconds = time.perf_counter() - t0
    policy = model.policy
    from yahtzee_env.game.observation import model_input
    from yahtzee_env.game.rules import RuleSet

    threshold = RuleSet.from_spec(cfg.env.rules).upper_bonus_threshold
    if cfg.versus is None:
        obs = torch.as_tensor(model_input(data["obs"], cfg.env.observation_version, threshold))
    else:  # a table's observations are the model's input already
        obs = torch.as_tensor(data["obs"])
    masks = torch.as_tensor(data["mask"])
    target = torch.as_tensor(data["target"].astype(np.float32))
    value = torch.as_tensor(data["value"] * cfg.env.reward_scale)
    n = obs.shape[0]
    optimizer = torch.optim.Adam(policy.parameters(), lr=w.learning_rate)
    gen = torch.Generator().manual_seed(cfg.train.seed)
    history = []
    steps_per_epoch = (n + w.batch_size - 1) // w.batch_size
    total_steps = steps_per_epoch * w.epochs
    step = 0
    policy.train()
    for epoch in range(w.epochs):
        perm = torch.randperm(n, generator=gen)
        sums = {"policy_loss": 0.0, "value_loss": 0.0, "agree": 0.0}
        for lo in range(0, n, w.batch_size):
            idx = perm[lo : lo + w.batch_size]
            lr = w.learning_rate * 0.5 * (1 + np.cos(np.pi * step / total_steps))
            for group in optimizer.param_groups:
                group["lr"] = lr
            features = policy.extract_features(obs[idx])
            latent_pi, latent_vf = policy.mlp_extractor(features)
            logits = policy.action_net(latent_pi).masked_fill(~masks[idx], -1e8)
            log_probs = torch.log_softmax(logits, dim=1)
            policy_loss = -(target[idx] * log_probs).sum(dim=1).mean()
            value_loss = torch.nn.functional.mse_loss(
                policy.value_net(latent_vf).squeeze(1), value[idx]
            )
            loss = policy_loss + cfg.ppo.vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            k = idx.numel()
            sums["policy_loss"] += policy_loss.item() * k
            sums["value_loss"] += value_loss.item() * k
            sums["agree"] += (logits.argmax(1) == target[idx].argmax(1)).float().sum().item()
        epoch_stats = {key: v / n for key, v in sums.items()}
        history.append(epoch_stats)
        print(
            f"warm start epoch {epoch + 1}/{w.epochs}: "
            + ", ".join(f"{k} {v:.4f}" for k, v in epoch_stats.items()),
            flush=True,
        )
    policy.eval()
    return {
        "teacher": w.teacher,
        "games": w.games,
        "decisions": int(n),
        "generate_seconds": gen_seconds,
        "train_seconds": time.perf_counter() - t0 - gen_seconds,
        "epochs": history,
    }


def init_policy(model: Any, cfg: RunConfig) -> dict[str, Any]:
    """Copy the policy network of ``policy.init`` (a level or a manifest) into ``model``'s
    policy path (hidden layers and action head). A first layer that reads more inputs than
    the model's (a later input version, which extends the earlier one) gets zero columns for
    the new inputs, so the network computes the same logits as the model: it plays exactly as
    the model at step 0. The value network is left as built. Returns what was copied."""
    import torch.nn as nn

    from yahtzee_env.policies.models import load_opponent

    source = load_opponent(cfg.policy.init, cfg.env.rules)
    policy = model.policy
    layers = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    layers.append(policy.action_net)
    widened = copy_weights(layers, source.weights, cfg.policy.init)
    manifest = getattr(source, "manifest", None)
    return {
        "init": cfg.policy.init,
        "weights_sha256": getattr(manifest, "weights_sha256", None),
        "input_version": source.input_version,
        "zero_columns": widened,
    }


def copy_weights(layers: list[Any], weights: list[tuple[np.ndarray, np.ndarray]], name: str) -> int:
    """Copy numpy ``weights`` (``[in, out]`` matrices and biases, a level's format) into torch
    ``layers``; a first layer with more inputs gets zero columns for the extra ones. Returns
    how many columns were added."""
    import torch

    if len(layers) != len(weights):
        raise ValueError(
            f"policy.init: {name!r} has {len(weights)} layers, the model {len(layers)}"
        )
    widened = 0
    with torch.no_grad():
        for k, (layer, (w, b)) in enumerate(zip(layers, weights, strict=True)):
            w = torch.as_tensor(np.ascontiguousarray(w.T))  # numpy format: [in, out]
            out_features, in_features = layer.weight.shape
            if (
                w.shape[0] != out_features
                or w.shape[1] > in_features
                or (k > 0 and w.shape[1] != in_features)
            ):
                raise ValueError(
                    f"policy.init: layer {k} of {name!r} is {tuple(w.shape)}, the "
                    f"model's {tuple(layer.weight.shape)}"
                )
            layer.weight.zero_()
            layer.weight[:, : w.shape[1]] = w
            layer.bias.copy_(torch.as_tensor(b))
            widened += in_features - w.shape[1]
    return widened
