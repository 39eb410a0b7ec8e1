"""A PPO trainer in the shape of PureJaxRL's single-file ``ppo.py``, for the gymnax test.

Only the structure is PureJaxRL's (``make_train(config) -> train(rng)``; a ``LogWrapper``
over a gymnax env; ``_update_step`` scanning ``_env_step`` then ``_update_epoch`` /
``_update_minbatch``; GAE by a reverse scan; metrics out of ``jax.lax.scan``), written again
here with plain JAX and optax (no flax, no distrax), and it knows nothing of Yahtzee: it reads
``env.action_space(params).n`` and ``env.observation_space(params).shape`` and nothing else.
tests/test_jax_api.py runs it, unchanged, on `yahtzee_env.jax.make_gymnax`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax


# ---------------------------------------------------------------------------- wrappers.py
class LogEnvState(NamedTuple):
    env_state: Any
    episode_returns: jax.Array
    episode_lengths: jax.Array
    returned_episode_returns: jax.Array
    returned_episode_lengths: jax.Array


class LogWrapper:
    """Episode returns and lengths in ``info`` (PureJaxRL's ``LogWrapper``)."""

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    def reset(self, key, params=None):
        obs, env_state = self._env.reset(key, params)
        zero = jnp.float32(0.0)
        return obs, LogEnvState(env_state, zero, jnp.int32(0), zero, jnp.int32(0))

    def step(self, key, state, action, params=None):
        obs, env_state, reward, done, info = self._env.step(key, state.env_state, action, params)
        returns = state.episode_returns + reward
        lengths = state.episode_lengths + 1
        state = LogEnvState(
            env_state,
            returns * (1 - done),
            lengths * (1 - done),
            jnp.where(done, returns, state.returned_episode_returns),
            jnp.where(done, lengths, state.returned_episode_lengths),
        )
        info = dict(info)
        info["returned_episode_returns"] = state.returned_episode_returns
        info["returned_episode_lengths"] = state.returned_episode_lengths
        info["returned_episode"] = done
        return obs, state, reward, done, info


# ---------------------------------------------------------------------------- the network
def _dense(key, n_in, n_out, scale):
    w = jax.nn.initializers.orthogonal(scale)(key, (n_in, n_out), jnp.float32)
    return {"w": w, "b": jnp.zeros(n_out, jnp.float32)}


def init_actor_critic(key, n_obs, n_actions, hidden):
    k = jax.random.split(key, 6)
    return {
        "actor": [_dense(k[0], n_obs, hidden, np.sqrt(2)), _dense(k[1], hidden, hidden, np.sqrt(2)),
                  _dense(k[2], hidden, n_actions, 0.01)],
        "critic": [_dense(k[3], n_obs, hidden, np.sqrt(2)),
                   _dense(k[4], hidden, hidden, np.sqrt(2)), _dense(k[5], hidden, 1, 1.0)],
    }  # fmt: skip


def _mlp(layers, x):
    for layer in layers[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def apply_actor_critic(params, obs):
    """(logits, value): a categorical policy and a value head (PureJaxRL's ``ActorCritic``)."""
    return _mlp(params["actor"], obs), _mlp(params["critic"], obs)[..., 0]


# ---------------------------------------------------------------------------- ppo.py
class Transition(NamedTuple):
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array
    info: Any


def make_train(config, env, env_params):
    config = dict(config)
    config["NUM_UPDATES"] = config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]
    config["MINIBATCH_SIZE"] = config["NUM_ENVS"] * config["NUM_STEPS"] // config["NUM_MINIBATCHES"]
    env = LogWrapper(env)

    def linear_schedule(count):
        frac = (
            1.0
            - (count // (config["NUM_MINIBATCHES"] * config["UPDATE_EPOCHS"]))
            / config["NUM_UPDATES"]
        )
        return config["LR"] * frac

    def train(rng):
        # INIT NETWORK
        n_actions = env.action_space(env_params).n
        n_obs = int(np.prod(env.observation_space(env_params).shape))
        rng, _rng = jax.random.split(rng)
        params = init_actor_critic(_rng, n_obs, n_actions, config["HIDDEN"])
        tx = optax.chain(
            optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
            optax.adam(learning_rate=linear_schedule, eps=1e-5),
        )
        opt_state = tx.init(params)

        # INIT ENV
        rng, _rng = jax.random.split(rng)
        reset_rng = jax.random.split(_rng, config["NUM_ENVS"])
        obsv, env_state = jax.vmap(env.reset, in_axes=(0, None))(reset_rng, env_params)

        # TRAIN LOOP
        def _update_step(runner_state, unused):
            # COLLECT TRAJECTORIES
            def _env_step(runner_state, unused):
                params, opt_state, env_state, last_obs, rng = runner_state
                rng, _rng = jax.random.split(rng)
                logits, value = apply_actor_critic(params, last_obs)
                action = jax.random.categorical(_rng, logits)
                log_prob = jax.nn.log_softmax(logits)[jnp.arange(action.shape[0]), action]

                rng, _rng = jax.random.split(rng)
                rng_step = jax.random.split(_rng, config["NUM_ENVS"])
                obsv, env_state, reward, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                    rng_step, env_state, action, env_params
                )
                transition = Transition(done, action, value, reward, log_prob, last_obs, info)
                runner_state = (params, opt_state, env_state, obsv, rng)
                return runner_state, transition

            runner_state, traj_batch = jax.lax.scan(
                _env_step, runner_state, None, config["NUM_STEPS"]
            )

            # CALCULATE ADVANTAGE
            params, opt_state, env_state, last_obs, rng = runner_state
            _, last_val = apply_actor_critic(params, last_obs)

            def _calculate_gae(traj_batch, last_val):
                def _get_advantages(gae_and_next_value, transition):
                    gae, next_value = gae_and_next_value
                    done, value, reward = transition.done, transition.value, transition.reward
                    delta = reward + config["GAMMA"] * next_value * (1 - done) - value
                    gae = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - done) * gae
                    return (gae, value), gae

                _, advantages = jax.lax.scan(
                    _get_advantages, (jnp.zeros_like(last_val), last_val), traj_batch,
                    reverse=True, unroll=16,
                )  # fmt: skip
                return advantages, advantages + traj_batch.value

            advantages, targets = _calculate_gae(traj_batch, last_val)

            # UPDATE NETWORK
            def _update_epoch(update_state, unused):
                def _update_minbatch(train_state, batch_info):
                    params, opt_state = train_state
                    traj_batch, advantages, targets = batch_info

                    def _loss_fn(params, traj_batch, gae, targets):
                        logits, value = apply_actor_critic(params, traj_batch.obs)
                        log_probs = jax.nn.log_softmax(logits)
                        log_prob = jnp.take_along_axis(
                            log_probs, traj_batch.action[:, None], axis=1
                        )[:, 0]
                        value_pred_clipped = traj_batch.value + (value - traj_batch.value).clip(
                            -config["CLIP_EPS"], config["CLIP_EPS"]
                        )
                        value_losses = jnp.square(value - targets)
                        value_losses_clipped = jnp.square(value_pred_clipped - targets)
                        value_loss = 0.5 * jnp.maximum(value_losses, value_losses_clipped).mean()
                        ratio = jnp.exp(log_prob - traj_batch.log_prob)
                        gae = (gae - gae.mean()) / (gae.std() + 1e-8)
                        loss_actor1 = ratio * gae
                        loss_actor2 = (
                            jnp.clip(ratio, 1.0 - config["CLIP_EPS"], 1.0 + config["CLIP_EPS"])
                            * gae
                        )
                        loss_actor = -jnp.minimum(loss_actor1, loss_actor2).mean()
                        entropy = -(jnp.exp(log_probs) * log_probs).sum(-1).mean()
                        total_loss = (
                            loss_actor + config["VF_COEF"] * value_loss
                            - config["ENT_COEF"] * entropy
                        )  # fmt: skip
                        return total_loss, (value_loss, loss_actor, entropy)

                    grad_fn = jax.value_and_grad(_loss_fn, has_aux=True)
                    total_loss, grads = grad_fn(params, traj_batch, advantages, targets)
                    updates, opt_state = tx.update(grads, opt_state, params)
                    return (optax.apply_updates(params, updates), opt_state), total_loss

                params, opt_state, traj_batch, advantages, targets, rng = update_state
                rng, _rng = jax.random.split(rng)
                batch_size = config["MINIBATCH_SIZE"] * config["NUM_MINIBATCHES"]
                permutation = jax.random.permutation(_rng, batch_size)
                batch = (traj_batch, advantages, targets)
                batch = jax.tree.map(lambda x: x.reshape((batch_size, *x.shape[2:])), batch)
                shuffled = jax.tree.map(lambda x: jnp.take(x, permutation, axis=0), batch)
                minibatches = jax.tree.map(
                    lambda x: jnp.reshape(x, (config["NUM_MINIBATCHES"], -1, *x.shape[1:])),
                    shuffled,
                )
                (params, opt_state), total_loss = jax.lax.scan(
                    _update_minbatch, (params, opt_state), minibatches
                )
                update_state = (params, opt_state, traj_batch, advantages, targets, rng)
                return update_state, total_loss

            update_state = (params, opt_state, traj_batch, advantages, targets, rng)
            update_state, loss_info = jax.lax.scan(
                _update_epoch, update_state, None, config["UPDATE_EPOCHS"]
            )
            params, opt_state = update_state[0], update_state[1]
            metric = traj_batch.info
            rng = update_state[-1]
            runner_state = (params, opt_state, env_state, last_obs, rng)
            return runner_state, (metric, loss_info)

        rng, _rng = jax.random.split(rng)
        runner_state = (params, opt_state, env_state, obsv, _rng)
        runner_state, metrics = jax.lax.scan(
            _update_step, runner_state, None, config["NUM_UPDATES"]
        )
        return {"runner_state": runner_state, "metrics": metrics}

    return train
