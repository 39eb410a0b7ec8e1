"""PPO on the JAX env, end to end in JAX: one file, read top to bottom (CleanRL / PureJaxRL).

    python -m yahtzee_agents.ppo_jax --config configs/ppo.yaml --out runs/ppo-jax-s0

The recipe is the config's (``configs/ppo.yaml`` by default: reward-only masked PPO, MLP 256x256
for the policy and another for the value, input version 2, canonical holds, upper-bonus shaping,
512 games x 32 steps per update, 3 epochs of 4096-sample minibatches, the learning rate's
40 M-step schedule), read by the same typed loader as ``yahtzee train``. What differs from the
SB3 trainer is only where it runs: acting, the env, GAE and the updates between two
checkpoints are one compiled XLA program (`jax.lax.scan` over updates), on CPU or an
accelerator.

Every ``train.checkpoint_interval`` env-steps the run folder gets ``state.npz`` (everything
needed to resume exactly: ``--resume``) and ``policy-STEPS.{npz,json}``, the policy head in
the numpy model format (`yahtzee_env.policies.models`), which ``yahtzee benchmark`` grades like
any other model file; its manifest says what the agent knew and what it trained on. Greedy
evaluation games (``train.eval_games``, in JAX) are logged to ``progress.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from yahtzee_agents.config import RunConfig, Schedule, load_config
from yahtzee_env.fileio import atomic_write
from yahtzee_env.game.engine import NUM_ACTIONS
from yahtzee_env.game.observation import INPUT_SIZES, UPPER_BONUS_INDEX, UPPER_INDEX
from yahtzee_env.jax import Yahtzee
from yahtzee_env.policies.knowledge import knowledge_of_training
from yahtzee_env.policies.models import save_policy

MASKED = -1e8  # the logit of an illegal action (as sb3-contrib's masked distribution)


@dataclass
class Args:
    config: str = "configs/ppo.yaml"
    """the run config (the recipe: env, policy, ppo and train sections)"""
    out: str = "runs/ppo-jax"
    """the run folder (checkpoints, exported policies, progress.csv)"""
    seed: int | None = None
    """the run's seed (default: the config's train.seed)"""
    total_timesteps: int | None = None
    """env-steps to train (default: the config's train.total_timesteps)"""
    resume: bool = False
    """continue the run in --out from its state.npz"""


# ---------------------------------------------------------------------------- the network
def orthogonal(key: jax.Array, shape: tuple[int, int], gain: float) -> jax.Array:
    return jax.nn.initializers.orthogonal(gain)(key, shape, jnp.float32)


def init_mlp(key: jax.Array, sizes: list[int], last_gain: float) -> list[dict[str, jax.Array]]:
    """Layers (w [in, out], b [out]) with SB3's initialisation: orthogonal, gain sqrt(2) for
    the hidden layers, ``last_gain`` for the head, zero biases."""
    keys = jax.random.split(key, len(sizes) - 1)
    gains = [np.sqrt(2)] * (len(sizes) - 2) + [last_gain]
    return [
        {"w": orthogonal(k, (a, b), g), "b": jnp.zeros(b, jnp.float32)}
        for k, a, b, g in zip(keys, sizes[:-1], sizes[1:], gains, strict=True)
    ]


def mlp(layers: list[dict[str, jax.Array]], x: jax.Array, activation) -> jax.Array:
    for layer in layers[:-1]:
        x = activation(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def init_params(key: jax.Array, cfg: RunConfig) -> dict[str, Any]:
    k_pi, k_vf = jax.random.split(key)
    inputs = INPUT_SIZES[cfg.env.observation_version]
    vf_arch = cfg.policy.vf_arch or cfg.policy.net_arch
    return {
        "pi": init_mlp(k_pi, [inputs, *cfg.policy.net_arch, NUM_ACTIONS], 0.01),
        "vf": init_mlp(k_vf, [inputs, *vf_arch, 1], 1.0),
    }


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    return jnp.where(mask, logits, MASKED)


# ---------------------------------------------------------------------------- the learner
class Transition(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


class Runner(NamedTuple):
    params: Any
    opt_state: Any
    env_state: Any
    potential: jax.Array  # the shaping potential of each game's current state
    key: jax.Array
    update: jax.Array  # updates done


def make_train(cfg: RunConfig, env: Yahtzee):
    """The compiled pieces of a run: ``init(key) -> Runner``, ``train(runner, n) -> (runner,
    metrics)`` (n updates, one XLA program), ``evaluate(params, key, games) -> scores``
    (greedy games, as many as ``games`` has rows), and the env-steps of one update."""
    ppo, n_envs = cfg.ppo, cfg.env.num_envs
    batch = n_envs * ppo.n_steps
    n_minibatches = batch // ppo.batch_size
    activation = {"relu": jax.nn.relu, "tanh": jnp.tanh}[cfg.policy.activation]
    version = cfg.env.observation_version
    shaping = cfg.env.shaping_weight * env.rules.upper_bonus_value
    shaping = shaping if cfg.env.shaping == "upper-bonus" else 0.0
    scale = cfg.env.reward_scale
    lr = ppo.learning_rate
    total = cfg.train.total_timesteps

    def learning_rate(count: jax.Array) -> jax.Array:
        # The config's schedule over env-steps, at the steps collected when the update runs.
        steps = (count // (ppo.n_epochs * n_minibatches) + 1) * batch
        if isinstance(lr, Schedule):
            done = jnp.clip(steps / lr.length(total), 0.0, 1.0)
            return lr.start + (lr.end - lr.start) * done
        return jnp.float32(lr)

    optimizer = optax.chain(
        optax.clip_by_global_norm(ppo.max_grad_norm),
        optax.scale_by_adam(eps=1e-5),
        optax.scale_by_schedule(lambda count: -learning_rate(count)),
    )
    env_init = jax.vmap(env.init)
    env_step = jax.vmap(env.step)

    def net_input(obs: jax.Array) -> jax.Array:
        return env.model_input(obs, version)

    def potential(obs: jax.Array) -> jax.Array:
        earned = obs[:, UPPER_BONUS_INDEX] > 0.5
        return shaping * jnp.where(earned, 0.0, obs[:, UPPER_INDEX])

    def init(key: jax.Array) -> Runner:
        k_params, k_env, key = jax.random.split(key, 3)
        params = init_params(k_params, cfg)
        state = env_init(jax.random.split(k_env, n_envs))
        return Runner(params, optimizer.init(params), state, potential(state.observation), key,
                      jnp.int32(0))  # fmt: skip

    def env_step_autoreset(state, action, key):
        k_step, k_reset = jax.random.split(key)
        state = env_step(state, action, jax.random.split(k_step, n_envs))
        reward = state.rewards[:, 0]
        done = state.terminated | state.truncated
        fresh = env_init(jax.random.split(k_reset, n_envs))
        state = jax.tree.map(
            lambda new, old: jnp.where(done.reshape((-1,) + (1,) * (old.ndim - 1)), new, old),
            fresh, state,
        )  # fmt: skip
        return state, reward, done

    def rollout_step(runner: Runner, _):
        key, k_act, k_env = jax.random.split(runner.key, 3)
        state = runner.env_state
        obs = state.observation
        x = net_input(obs)
        logits = masked_logits(mlp(runner.params["pi"], x, activation), state.legal_action_mask)
        value = mlp(runner.params["vf"], x, activation)[:, 0]
        action = jax.random.categorical(k_act, logits)
        log_prob = jax.nn.log_softmax(logits)[jnp.arange(n_envs), action]
        state, reward, done = env_step_autoreset(state, action, k_env)
        phi = potential(state.observation)
        after = jnp.where(done, 0.0, phi)  # a finished game's next state is terminal
        shaped = (reward + after - runner.potential) * scale
        transition = Transition(x, state.legal_action_mask, action, log_prob, value, shaped, done)
        # The mask that was used is the state's before the step: keep that one.
        transition = transition._replace(mask=runner.env_state.legal_action_mask)
        runner = runner._replace(env_state=state, potential=jnp.where(done, 0.0, phi), key=key)
        return runner, transition

    def gae(traj: Transition, last_value: jax.Array) -> tuple[jax.Array, jax.Array]:
        def back(carry, t):
            advantage, next_value = carry
            not_done = 1.0 - t.done
            delta = t.reward + ppo.gamma * next_value * not_done - t.value
            advantage = delta + ppo.gamma * ppo.gae_lambda * not_done * advantage
            return (advantage, t.value), advantage

        _, advantages = jax.lax.scan(
            back, (jnp.zeros_like(last_value), last_value), traj, reverse=True
        )
        return advantages, advantages + traj.value

    def loss_fn(params, mb: Transition, advantages, returns):
        logits = masked_logits(mlp(params["pi"], mb.obs, activation), mb.mask)
        log_probs = jax.nn.log_softmax(logits)
        log_prob = jnp.take_along_axis(log_probs, mb.action[:, None], axis=1)[:, 0]
        value = mlp(params["vf"], mb.obs, activation)[:, 0]
        adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        ratio = jnp.exp(log_prob - mb.log_prob)
        pg = -jnp.minimum(
            adv * ratio, adv * jnp.clip(ratio, 1 - ppo.clip_range, 1 + ppo.clip_range)
        ).mean()
        value_loss = jnp.mean((returns - value) ** 2)
        probs = jnp.exp(log_probs)
        entropy = -jnp.sum(jnp.where(mb.mask, probs * log_probs, 0.0), axis=1).mean()
        loss = pg + ppo.vf_coef * value_loss - ppo.ent_coef * entropy
        clip_fraction = jnp.mean(jnp.abs(ratio - 1) > ppo.clip_range)
        return loss, (pg, value_loss, entropy, clip_fraction)

    def update(runner: Runner, _):
        runner, traj = jax.lax.scan(rollout_step, runner, None, ppo.n_steps)
        x = net_input(runner.env_state.observation)
        last_value = mlp(runner.params["vf"], x, activation)[:, 0]
        advantages, returns = gae(traj, last_value)
        flat = jax.tree.map(lambda a: a.reshape((batch, *a.shape[2:])),
                            (traj, advantages, returns))  # fmt: skip

        def epoch(carry, key):
            def minibatch(carry, idx):
                params, opt_state = carry
                mb, adv, ret = jax.tree.map(lambda a: a[idx], flat)
                grads, aux = jax.grad(loss_fn, has_aux=True)(params, mb, adv, ret)
                updates, opt_state = optimizer.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), aux

            order = jax.random.permutation(key, batch).reshape(n_minibatches, ppo.batch_size)
            return jax.lax.scan(minibatch, carry, order)

        key, k_epochs = jax.random.split(runner.key)
        (params, opt_state), aux = jax.lax.scan(
            epoch, (runner.params, runner.opt_state), jax.random.split(k_epochs, ppo.n_epochs)
        )
        metrics = {
            "policy_loss": aux[0].mean(),
            "value_loss": aux[1].mean(),
            "entropy": aux[2].mean(),
            "clip_fraction": aux[3].mean(),
            "games_done": traj.done.sum(),
        }
        runner = runner._replace(params=params, opt_state=opt_state, key=key,
                                 update=runner.update + 1)  # fmt: skip
        return runner, metrics

    @partial_jit_static_n
    def train(runner: Runner, n: int):
        return jax.lax.scan(update, runner, None, n)

    @jax.jit
    def evaluate(params, key: jax.Array, games: jax.Array) -> jax.Array:
        """Greedy (argmax) games from ``key``: the total of each (int32[games])."""
        state = env_init(jax.random.split(key, games.shape[0]))

        def play(carry, _):
            state, key = carry
            key, k = jax.random.split(key)
            logits = mlp(params["pi"], net_input(state.observation), activation)
            action = jnp.argmax(masked_logits(logits, state.legal_action_mask), axis=1)
            state = env_step(state, action, jax.random.split(k, games.shape[0]))
            return (state, key), None

        (state, _), _ = jax.lax.scan(play, (state, key), None, 39 * env.num_players)
        return env.totals(state)[:, 0]

    return init, train, evaluate, batch


def partial_jit_static_n(fn):
    return jax.jit(fn, static_argnums=1)


# ---------------------------------------------------------------------------- checkpoints
def save_state(path: Path, runner: Runner, facts: dict[str, Any]) -> None:
    """Everything to resume: the runner's leaves (params, optimizer, env states, key) and
    ``facts`` (JSON) in one npz, written atomically."""
    leaves = jax.tree.leaves(runner)
    arrays = {f"leaf{i}": np.asarray(jax.random.key_data(x) if _is_key(x) else x)
              for i, x in enumerate(leaves)}  # fmt: skip
    arrays["facts"] = np.frombuffer(json.dumps(facts).encode(), dtype=np.uint8)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)


def load_state(path: Path, like: Runner) -> tuple[Runner, dict[str, Any]]:
    data = np.load(path, allow_pickle=False)
    leaves, treedef = jax.tree.flatten(like)
    saved = sum(name.startswith("leaf") for name in data.files)
    if saved != len(leaves):  # e.g. written before the env state carried its observation
        raise ValueError(
            f"{path}: {saved} arrays, but this version's runner has {len(leaves)}: the "
            "checkpoint was written by another version of the JAX env or of this script"
        )
    restored = []
    for i, leaf in enumerate(leaves):
        value = data[f"leaf{i}"]
        if _is_key(leaf):
            restored.append(jax.random.wrap_key_data(jnp.asarray(value)))
        else:
            if value.shape != leaf.shape:
                raise ValueError(f"{path}: leaf {i} has shape {value.shape}, not {leaf.shape}")
            restored.append(jnp.asarray(value, dtype=leaf.dtype))
    return jax.tree.unflatten(treedef, restored), json.loads(bytes(data["facts"]).decode())


def _is_key(x: Any) -> bool:
    return jnp.issubdtype(getattr(x, "dtype", None), jax.dtypes.prng_key)


def export_policy(out: Path, runner: Runner, cfg: RunConfig, env_steps: int) -> Path:
    """The policy head as ``policy-STEPS.npz/.json`` (the numpy model format)."""
    weights = [(np.asarray(layer["w"]), np.asarray(layer["b"])) for layer in runner.params["pi"]]
    knew = knowledge_of_training(
        observation_version=cfg.env.observation_version,
        shaping=cfg.env.shaping if cfg.env.shaping_weight else "none",
        canonical_holds=cfg.env.canonical_holds,
        ppo_steps=env_steps,
    )
    extra = {
        "method": "reward-only",
        "objective": "score",
        "teacher": None,
        "env_steps": int(env_steps),
        "knew": knew,
        "trained_with": "yahtzee_agents.ppo_jax (PPO in JAX on yahtzee_env.jax)",
        "trained_on": f"{jax.default_backend().upper()}: {jax.devices()[0].device_kind}, "
        f"jax {jax.__version__}, {platform.machine()}",
    }
    return save_policy(
        out, f"policy-{env_steps}", weights, cfg.policy.activation, rules=cfg.env.rules,
        config_sha256=cfg.digest(), canonical_holds=cfg.env.canonical_holds,
        input_version=cfg.env.observation_version, extra=extra,
    )  # fmt: skip


# ---------------------------------------------------------------------------- throughput
def throughput(cfg: RunConfig, min_steps: int, seed: int = 0) -> dict[str, Any]:
    """PPO env-steps a second of this script's compiled loop for ``cfg`` (no evaluation, no
    checkpoints): the first call (tracing and XLA compilation) timed apart, then at least one
    update and ``min_steps`` env-steps timed (`experiments/bench_jax.py`)."""
    env = Yahtzee(cfg.env.rules, canonical_holds=cfg.env.canonical_holds)
    init, train, _, batch = make_train(cfg, env)
    updates = max(1, -(-min_steps // batch))
    t0 = time.perf_counter()
    runner = init(jax.random.key(seed))
    compiled = train.lower(runner, updates).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    runner, _ = compiled(runner)
    jax.block_until_ready(runner.params)
    seconds = time.perf_counter() - t0
    return {"compile_s": compile_s, "steps": updates * batch, "seconds": seconds,
            "steps_per_s": updates * batch / seconds}  # fmt: skip


# ---------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, field in Args.__dataclass_fields__.items():
        flag = "--" + name.replace("_", "-")
        if field.type == "bool":
            parser.add_argument(flag, action="store_true")
        else:
            kind = int if "int" in str(field.type) else str
            parser.add_argument(flag, type=kind, default=field.default)
    args = Args(**vars(parser.parse_args(argv)))
    overrides = []
    if args.seed is not None:
        overrides.append(f"train.seed={args.seed}")
    if args.total_timesteps is not None:
        overrides.append(f"train.total_timesteps={args.total_timesteps}")
    cfg = load_config(args.config, overrides)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = Yahtzee(cfg.env.rules, canonical_holds=cfg.env.canonical_holds)
    init, train, evaluate, batch = make_train(cfg, env)
    every = max(1, cfg.train.checkpoint_interval // batch)  # updates per compiled chunk
    eval_every = max(1, cfg.train.eval_interval // batch)
    chunk = min(every, eval_every)
    total_updates = -(-cfg.train.total_timesteps // batch)

    runner = init(jax.random.key(cfg.train.seed))
    state_path = out / "state.npz"
    if args.resume:
        runner, facts = load_state(state_path, runner)
        print(f"resumed at {facts['env_steps']:,} env-steps", flush=True)
    else:
        atomic_write(out / "config.json", json.dumps(cfg.to_dict(), indent=2).encode())
        command = " ".join(["python -m yahtzee_agents.ppo_jax", *sys.argv[1:]])
        atomic_write(out / "command.txt", (command + "\n").encode())
    progress = out / "progress.csv"
    new_file = not progress.exists()
    with progress.open("a", newline="") as fh:
        writer = csv.writer(fh)
        if new_file:
            writer.writerow(["env_steps", "seconds", "steps_per_s", "eval_mean", "eval_games",
                             "policy_loss", "value_loss", "entropy", "clip_fraction"])  # fmt: skip
        started = time.perf_counter()
        done_updates = int(runner.update)
        eval_key = jax.random.key(cfg.train.seed + 1_000_003)
        eval_games = jnp.zeros(cfg.train.eval_games)
        while done_updates < total_updates:
            n = min(chunk, total_updates - done_updates)
            t0 = time.perf_counter()
            runner, metrics = train(runner, n)
            jax.block_until_ready(runner.params)
            seconds = time.perf_counter() - t0
            done_updates = int(runner.update)
            env_steps = done_updates * batch
            scores = evaluate(runner.params, eval_key, eval_games)
            mean = float(scores.mean())
            m = {k: float(v.mean()) for k, v in metrics.items()}
            writer.writerow([env_steps, round(time.perf_counter() - started, 1),
                             round(n * batch / seconds), round(mean, 2), len(scores),
                             m["policy_loss"], m["value_loss"], m["entropy"],
                             m["clip_fraction"]])  # fmt: skip
            fh.flush()
            print(f"{env_steps:>11,} env-steps  {n * batch / seconds:>8,.0f}/s  "
                  f"greedy mean {mean:6.1f} ({len(scores)} games)  "
                  f"entropy {m['entropy']:.3f}", flush=True)  # fmt: skip
            if done_updates % every == 0 or done_updates == total_updates:
                save_state(state_path, runner, {"env_steps": env_steps})
                export_policy(out, runner, cfg, env_steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
