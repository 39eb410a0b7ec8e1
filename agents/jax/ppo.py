"""The JAX engine (``train.engine: jax``): PPO end to end in JAX, read top to bottom (CleanRL /
PureJaxRL).

    yahtzee train ppo --set train.engine=jax          # the recipe of configs/ppo.yaml, in JAX
    python -m yahtzee_agents.ppo_jax ppo              # the same (an alias)

The recipe is the config's, read by the same typed loader as the SB3 engine (masked PPO, MLP
policy and value networks, the input version, canonical holds, upper-bonus shaping, rollouts,
epochs and minibatches, the learning rate's schedule). What differs is only where it runs:
acting, the env, GAE and the updates between two evaluations or checkpoints are one compiled
XLA program (`jax.lax.scan` over updates), on CPU or an accelerator.

The run folder is the SB3 engine's, written by `yahtzee_agents.run.folder` (this engine writes
no file itself: it hands the run its models and its state's arrays): ``config.yaml``,
``meta.json``, ``evals.jsonl`` (greedy games of the exported numpy policy, graded by the solver
as SB3 runs are), ``best/``, ``final/`` and ``checkpoints/``; a model is the numpy model format
(``model.json`` + ``model.npz``, `yahtzee_env.policies.models`), so ``yahtzee benchmark`` and
``yahtzee export`` read the run as any other. Beside each checkpoint, ``ckpt_<steps>.state.npz``
holds the whole learner (params, Adam, every env's game, the key): a run stopped by SIGTERM,
SIGINT or its time limit resumes bit for bit (on the same machine).
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from yahtzee_env.game.engine import NUM_ACTIONS
from yahtzee_env.game.observation import INPUT_SIZES
from yahtzee_env.jax import Yahtzee
from yahtzee_env.policies.models import MLPPolicy

from ..config import RunConfig
from ..run import folder
from ..run.folder import EvalHook, NumpyModel, RunPaths, StopRequests, TrainingInterrupted
from ..run.schedule import scheduled
from ..run.shaping import potential_weight, shaped_rewards, upper_bonus_potential

ENGINE = "jax"
STATE_FORMAT = "yahtzee-rl-jax-state-1"
MASKED = -1e8  # the logit of an illegal action (as sb3-contrib's masked distribution)


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
    weight = potential_weight(cfg.env, env.rules.upper_bonus_value)
    scale = cfg.env.reward_scale
    total = cfg.train.total_timesteps

    def learning_rate(count: jax.Array) -> jax.Array:
        # The config's schedule over env-steps, at the steps collected when the update runs.
        steps = (count // (ppo.n_epochs * n_minibatches) + 1) * batch
        return scheduled(ppo.learning_rate, steps, total, xp=jnp)

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
        return upper_bonus_potential(obs, weight, xp=jnp)

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
        shaped, phi = shaped_rewards(
            reward, state.observation, done, runner.potential, weight, scale, xp=jnp
        )
        transition = Transition(x, state.legal_action_mask, action, log_prob, value, shaped, done)
        # The mask that was used is the state's before the step: keep that one.
        transition = transition._replace(mask=runner.env_state.legal_action_mask)
        runner = runner._replace(env_state=state, potential=phi, key=key)
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
def training_state(runner: Runner, facts: dict[str, Any]) -> dict[str, np.ndarray]:
    """Everything to resume, as the state file's arrays: the runner's leaves (params,
    optimizer, env states, key) and ``facts`` (JSON)."""
    leaves = jax.tree.leaves(runner)
    arrays = {f"leaf{i}": np.asarray(jax.random.key_data(x) if _is_key(x) else x)
              for i, x in enumerate(leaves)}  # fmt: skip
    arrays["facts"] = np.frombuffer(
        json.dumps({"format": STATE_FORMAT, **facts}).encode(), dtype=np.uint8
    )
    return arrays


def load_state(path: Path, like: Runner) -> tuple[Runner, dict[str, Any]]:
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    facts = json.loads(bytes(arrays.pop("facts")).decode())
    if facts.get("format") != STATE_FORMAT:
        raise ValueError(f"{path}: not a JAX training state ({facts.get('format')!r})")
    leaves, treedef = jax.tree.flatten(like)
    if len(arrays) != len(leaves):  # e.g. written before the env state carried its observation
        raise ValueError(
            f"{path}: {len(arrays)} arrays, but this version's runner has {len(leaves)}: the "
            "checkpoint was written by another version of the JAX env or of this engine"
        )
    restored = []
    for i, leaf in enumerate(leaves):
        value = arrays[f"leaf{i}"]
        if _is_key(leaf):
            restored.append(jax.random.wrap_key_data(jnp.asarray(value)))
        else:
            if value.shape != leaf.shape:
                raise ValueError(f"{path}: leaf {i} has shape {value.shape}, not {leaf.shape}")
            restored.append(jnp.asarray(value, dtype=leaf.dtype))
    return jax.tree.unflatten(treedef, restored), facts


def _is_key(x: Any) -> bool:
    return jnp.issubdtype(getattr(x, "dtype", None), jax.dtypes.prng_key)


def policy_weights(params: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """The policy head's (W [in, out], b) pairs, hidden layers first: the numpy model's."""
    return [(np.asarray(layer["w"]), np.asarray(layer["b"])) for layer in params["pi"]]


def weights_sha256(params: Any) -> str:
    """sha256 over every parameter (policy then value, layer order, float32 bytes): two runs
    that trained the same weights have the same digest."""
    digest = hashlib.sha256()
    for leaf in jax.tree.leaves(params):
        digest.update(np.asarray(leaf, dtype=np.float32).tobytes())
    return digest.hexdigest()


def numpy_policy(params: Any, cfg: RunConfig, env: Yahtzee) -> MLPPolicy:
    """The numpy player of the policy head (what evaluations grade and exports ship)."""
    return MLPPolicy(
        policy_weights(params),
        cfg.policy.activation,
        name=cfg.name,
        canonical_holds=cfg.env.canonical_holds,
        input_version=cfg.env.observation_version,
        threshold=env.rules.upper_bonus_threshold,
    )


def trained_on() -> str:
    return (
        f"{jax.default_backend().upper()}: {jax.devices()[0].device_kind}, "
        f"jax {jax.__version__}, {platform.machine()}"
    )


def run_model(params: Any, cfg: RunConfig, env_steps: int) -> NumpyModel:
    """The policy head as the run writes it (the numpy model format): its manifest says how it
    was made and what the agent knew (`yahtzee_agents.run.folder.model_facts`), and where."""
    facts = {
        "trained_with": "yahtzee_agents.jax.ppo (PPO in JAX on yahtzee_env.jax)",
        "trained_on": trained_on(),
    }
    return NumpyModel(policy_weights(params), cfg, env_steps, facts)


def libraries() -> dict[str, str | None]:
    """The engine's libraries, as ``meta.json`` names them."""
    from importlib import metadata

    found: dict[str, str | None] = {}
    for name in ("jax", "jaxlib", "optax"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


# ---------------------------------------------------------------------------- throughput
def throughput(cfg: RunConfig, min_steps: int, seed: int = 0) -> dict[str, Any]:
    """PPO env-steps a second of this engine's compiled loop for ``cfg`` (no evaluation, no
    checkpoints): the first call (tracing and XLA compilation) timed apart, then at least one
    update and ``min_steps`` env-steps timed (`experiments/bench_jax.py`,
    `experiments/bench_train.py`)."""
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


# ---------------------------------------------------------------------------- the run
def _next(steps: int, interval: int) -> int | None:
    """The first multiple of ``interval`` past ``steps`` (None: never)."""
    return (steps // interval + 1) * interval if interval else None


def train(
    cfg: RunConfig,
    run_dir: str | Path,
    *,
    resume: bool = False,
    progress: bool = True,
    argv: list[str] | None = None,
    on_eval: EvalHook | None = None,
    time_limit: float | None = None,
    handle_signals: bool = True,
) -> Path:
    """Train ``cfg`` into ``run_dir`` with PPO in JAX, or continue it (``resume``): the
    options, the run folder, the stops and what a resume does are `yahtzee_agents.train.train`'s
    (`yahtzee_agents.run.folder`). Evaluations and checkpoints are taken at the first update
    boundary at or past each multiple of ``train.eval_interval`` and
    ``train.checkpoint_interval`` (one update is ``env.num_envs * ppo.n_steps`` env-steps), and
    so are stops: the updates between two boundaries are one compiled program."""
    session_start = time.perf_counter()
    paths = RunPaths(Path(run_dir))
    ckpt = folder.open_run(cfg, paths, resume)
    env = Yahtzee(cfg.env.rules, canonical_holds=cfg.env.canonical_holds)
    init, train_updates, _, batch = make_train(cfg, env)
    runner = init(jax.random.key(cfg.train.seed))
    total_updates = -(-cfg.train.total_timesteps // batch)
    if ckpt is not None:
        runner, _ = load_state(paths.state_of(ckpt), runner)
        steps = int(runner.update) * batch
        if total_updates <= int(runner.update) and folder.finished_at(paths.root) == steps:
            print(
                f"{cfg.name} already finished at {steps} steps: nothing to do "
                "(extend it with --set train.total_timesteps=N)"
            )
            return paths.root
        folder.keep_evals_until(paths, steps)
        print(f"resuming {cfg.name} from {ckpt.name} at {steps} steps")
    folder.write_run_metadata(paths, cfg, argv if argv is not None else sys.argv, libraries())
    folder.say_if_no_regret(cfg)
    t = cfg.train
    best = folder.best_merit(paths)

    def evaluate(steps: int) -> dict[str, Any]:
        nonlocal best
        result = folder.evaluate(numpy_policy(runner.params, cfg, env), cfg)
        model = run_model(runner.params, cfg, steps)
        best = folder.record_evaluation(paths, steps, result, best, ENGINE, model)
        if progress:
            print(f"{steps:>11,} env-steps  greedy mean {result['mean']:6.1f} "
                  f"({result['games']} games)", flush=True)  # fmt: skip
        if on_eval is not None:
            on_eval(result, steps)
        return result

    def checkpoint(steps: int) -> Path:
        state = training_state(runner, {"env_steps": steps})
        model = run_model(runner.params, cfg, steps)
        return folder.write_checkpoint(paths, steps, ENGINE, model, state, t.keep_checkpoints)

    steps = int(runner.update) * batch
    next_eval, next_ckpt = _next(steps, t.eval_interval), _next(steps, t.checkpoint_interval)
    stop = StopRequests(time_limit, session_start)
    if handle_signals:
        stop.install()
    t0 = time.perf_counter()
    try:
        while int(runner.update) < total_updates:
            due = [x for x in (next_eval, next_ckpt) if x is not None]
            target = min([-(-x // batch) for x in due] + [total_updates])
            runner, _ = train_updates(runner, target - int(runner.update))
            jax.block_until_ready(runner.params)
            steps = int(runner.update) * batch
            if int(runner.update) == total_updates:
                break  # the final model is evaluated and saved below
            if next_eval is not None and steps >= next_eval:
                evaluate(steps)
                next_eval = _next(steps, t.eval_interval)
            written = None
            if steps >= next_ckpt:
                written = checkpoint(steps)
                next_ckpt = _next(steps, t.checkpoint_interval)
            reason = stop.requested()
            if reason is not None:
                written = written or checkpoint(steps)
                folder.record_session(paths, session_start, time.perf_counter() - t0, steps)
                raise TrainingInterrupted(reason, steps, written)
        elapsed = time.perf_counter() - t0
    finally:
        stop.uninstall()
    steps = int(runner.update) * batch
    folder.write_model(paths.model_in(paths.final, ENGINE), run_model(runner.params, cfg, steps))
    result = evaluate(steps)  # the final weights (also a candidate for "best")
    checkpoint(steps)
    folder.write_final(
        paths, result, steps,
        weights_sha256=weights_sha256(runner.params), train_seconds_this_session=elapsed,
    )  # fmt: skip
    folder.record_session(paths, session_start, elapsed, steps)
    return paths.root
