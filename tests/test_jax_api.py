"""`yahtzee_env.jax` in its ecosystem (issue 59): pgx's shape (``make``, ``auto_reset``,
``state.observation``, a mask that never leaves a policy without an action, illegal actions
that end the game), gymnax's interface under a PureJaxRL-structured trainer, and a room that
imports no Gymnasium. Small batches and few steps: the equality with the numpy engine is
tests/test_jax.py's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import yahtzee_env.jax as yjax  # noqa: E402
from yahtzee_env.game.engine import NUM_ACTIONS  # noqa: E402
from yahtzee_env.jax import Yahtzee, auto_reset, make, make_gymnax  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_the_jax_room_imports_no_gymnasium():
    """With Gymnasium blocked (as tests/test_engine.py blocks it for the engine) the JAX env
    imports, plays and loads no ``gymnasium`` module; with it installed, importing the JAX
    room adds no Gymnasium module to those the package's root (the Gymnasium ids'
    registration) loads, and no module of ``yahtzee_env.envs``."""
    blocked = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'gymnasium':\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import jax, yahtzee_env.jax as yjax\n"
        "env = yjax.make('Yahtzee-v0', num_players=2, table=True)\n"
        "state = env.step(env.init(jax.random.key(0)), 44, jax.random.key(1))\n"
        "gym = sorted(m for m in sys.modules if m.split('.')[0] == 'gymnasium')\n"
        "assert not gym, gym\n"
        "print(state.observation.shape[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["93"]
    installed = (
        "import sys\n"
        "import yahtzee_env\n"
        "before = {m for m in sys.modules if m.split('.')[0] == 'gymnasium'}\n"
        "import yahtzee_env.jax, yahtzee_env.jax.gymnax_env\n"
        "added = {m for m in sys.modules if m.split('.')[0] == 'gymnasium'} - before\n"
        "assert not added, sorted(added)\n"
        "envs = [m for m in sys.modules if m.startswith('yahtzee_env.envs.') and\n"
        "        m != 'yahtzee_env.envs.checks']\n"
        "assert not envs, envs\n"
    )
    out = subprocess.run([sys.executable, "-c", installed], capture_output=True, text=True,
                         cwd=ROOT)  # fmt: skip
    assert out.returncode == 0, out.stderr


def test_make_and_the_env_facts():
    env = make("Yahtzee-v0", num_players=2, table=True, canonical_holds=True)
    assert isinstance(env, Yahtzee) and env.num_players == 2 and env.canonical_holds
    assert (env.id, env.version, env.num_actions) == ("Yahtzee-v0", "v0", NUM_ACTIONS)
    assert env.observation_shape == (93,)
    assert make().observation_shape == (72,)
    assert make(num_players=4, table=True).observation_shape == (133,)
    state = env.init(jax.random.key(0))
    assert state.observation.shape == env.observation_shape
    assert state.legal_action_mask.shape == (env.num_actions,)
    with pytest.raises(ValueError, match="unknown env id"):
        make("Yahtzee-v9")
    with pytest.raises(ValueError, match="illegal_action"):
        make(illegal_action="raise")
    with pytest.raises(ValueError, match="table"):
        make(table=1)


def _rollout_masks(env: Yahtzee, key: jax.Array, num_envs: int, steps: int):
    """Random legal play through the chance split, without reset: the mask and the kind of
    every state met (0 a decision, 1 a chance node, 2 over), and each step's observation
    beside `observe` of its state."""
    det = jax.vmap(env.step_deterministic)
    sto = jax.vmap(env.step_stochastic)
    observe = jax.vmap(env.observe)

    def one(state, key):
        k_act, k_roll = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k_act, logits)
        after = det(state, action)
        outcome = jax.vmap(lambda s, k: env.outcome_of_draw(s.keep, yjax.draw_of(k)))(
            after, jax.random.split(k_roll, num_envs)
        )
        new = sto(after, outcome)
        kinds = []
        for s in (state, after):
            kinds.append(jnp.where(s.terminated | s.truncated, 2, s.is_chance.astype(jnp.int32)))
        masks = jnp.stack([state.legal_action_mask, after.legal_action_mask])
        same = (new.observation == observe(new)).all()
        return new, (masks, jnp.stack(kinds), same)

    state = jax.vmap(env.init)(jax.random.split(key, num_envs))
    _, (masks, kinds, same) = jax.lax.scan(one, state, jax.random.split(key, steps))
    return masks.reshape(-1, NUM_ACTIONS), kinds.reshape(-1), same


def test_a_masked_log_softmax_is_never_nan():
    """Through whole games (decisions, chance nodes, the end): ``log_softmax`` of logits
    masked with ``-inf`` has no NaN anywhere, and ``state.observation`` is `observe`."""
    env = make(num_players=2)
    masks, kinds, same = jax.jit(_rollout_masks, static_argnums=(0, 2, 3))(
        env, jax.random.key(3), 4, 2 * 39 + 4
    )
    assert set(np.asarray(kinds).tolist()) == {0, 1, 2}, "met decisions, chance nodes, ends"
    logits = jax.random.normal(jax.random.key(4), masks.shape)
    log_probs = jax.nn.log_softmax(jnp.where(masks, logits, -jnp.inf))
    assert not np.isnan(np.asarray(log_probs)).any()
    assert np.asarray(masks)[np.asarray(kinds) > 0].all()  # chance nodes and ends: all True
    assert bool(np.asarray(same).all())


def test_an_illegal_action_ends_the_game_as_a_loss_with_lose():
    """``illegal_action="lose"`` (pgx): an illegal action ends the game at once, the mover
    gets ``illegal_penalty``, each other player minus it; then every step changes nothing."""
    env = make(illegal_action="lose", illegal_penalty=-1.0)
    state = env.step(env.init(jax.random.key(0)), 32, jax.random.key(1))  # fill aces
    lost = env.step(state, 32, jax.random.key(2))  # aces again: illegal
    assert bool(lost.terminated) and not bool(lost.truncated)
    assert np.asarray(lost.rewards).tolist() == [-1.0]
    assert np.asarray(lost.legal_action_mask).all()
    np.testing.assert_array_equal(np.asarray(lost.scores), np.asarray(state.scores))
    after = env.step(lost, 33, jax.random.key(3))
    assert float(after.rewards[0]) == 0.0 and bool(after.terminated)
    for bad in (-1, NUM_ACTIONS):
        assert float(env.step(state, bad, jax.random.key(4)).rewards[0]) == -1.0
    two = make(num_players=2, illegal_action="lose")
    state = two.step(two.init(jax.random.key(0)), 32, jax.random.key(1))  # seat 0 fills aces
    state = two.step(state, 32, jax.random.key(2))  # seat 1 fills aces
    lost = two.step(state, 32, jax.random.key(3))  # seat 0: aces again
    assert bool(lost.terminated) and np.asarray(lost.rewards).tolist() == [-1.0, 1.0]
    # The default ("penalize"): the same action costs the penalty and the game goes on.
    state = make().step(make().init(jax.random.key(0)), 32, jax.random.key(1))
    again = make().step(state, 32, jax.random.key(2))
    assert float(again.rewards[0]) == -1.0 and not bool(again.terminated)


def test_a_step_at_a_chance_node_rolls_the_dice():
    """At an afterstate nobody decides: any action is ignored (reward 0, not counted) and
    `step` lets the dice land, as `step_stochastic` would."""
    env = make()
    state = env.init(jax.random.key(0))
    after = env.step_deterministic(state, 0)  # re-roll every die
    rolled = env.step_with_draw(after, 44, jnp.int32(1234))
    assert not bool(rolled.is_chance) and float(rolled.rewards[0]) == 0.0
    assert int(rolled.step_count) == int(after.step_count) == 1
    direct = env.step_stochastic(after, env.outcome_of_draw(after.keep, 1234))
    for a, b in zip(jax.tree.leaves(rolled), jax.tree.leaves(direct), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_auto_reset_starts_a_new_game_where_one_ends():
    """pgx's ``auto_reset``: the state handed back at the end is a fresh game that still says
    ``terminated`` and carries the last reward; the next step plays that fresh game."""
    env = make()
    step = jax.jit(auto_reset(env.step, env.init))
    state = env.init(jax.random.key(0))
    key = jax.random.key(1)
    earned = 0.0
    for _ in range(13):  # fill a box every action: 13 actions, one game
        key, k = jax.random.split(key)
        action = 32 + int(np.flatnonzero(np.asarray(state.legal_action_mask)[32:])[0])
        state = step(state, action, k)
        earned += float(state.rewards[0])
    assert bool(state.terminated) and int(state.step_count) == 0
    assert (np.asarray(state.scores) == yjax.OPEN).all()  # a fresh card
    assert earned > 0
    state = step(state, 44, jax.random.key(7))  # chance: the new game's first fill
    assert not bool(state.terminated) and int(state.step_count) == 1
    assert int(state.scores[0, 12]) >= 5


def test_a_purejaxrl_make_train_runs_on_the_gymnax_adapter():
    """A PureJaxRL-structured ``make_train`` (tests/purejaxrl_ppo.py: it knows only gymnax's
    API) trains on ``make_gymnax("Yahtzee-v0")`` unchanged: 2 updates of 8 envs x 16 steps,
    finite losses and episode metrics, the adapter's spaces, and its auto-reset."""
    from purejaxrl_ppo import make_train

    env, params = make_gymnax("Yahtzee-v0", illegal_action="lose")
    assert env.action_space(params).n == NUM_ACTIONS
    assert env.observation_space(params).shape == (72,)
    assert make_gymnax(input_version=2)[0].observation_space().shape == (86,)
    config = {"LR": 2.5e-4, "NUM_ENVS": 8, "NUM_STEPS": 16, "TOTAL_TIMESTEPS": 2 * 8 * 16,
              "UPDATE_EPOCHS": 2, "NUM_MINIBATCHES": 2, "GAMMA": 0.99, "GAE_LAMBDA": 0.95,
              "CLIP_EPS": 0.2, "ENT_COEF": 0.01, "VF_COEF": 0.5, "MAX_GRAD_NORM": 0.5,
              "HIDDEN": 32}  # fmt: skip
    out = jax.jit(make_train(config, env, params))(jax.random.key(0))
    info, losses = out["metrics"]
    assert np.asarray(info["returned_episode"]).shape == (2, 16, 8)
    for leaf in jax.tree.leaves((info["returned_episode_returns"], losses)):
        assert np.isfinite(np.asarray(leaf)).all()
    # An untrained policy picks illegal actions: with "lose" some games end early, at -1.
    assert np.asarray(info["returned_episode"]).any()
    assert np.asarray(losses[0]).shape == (2, 2, 2)


def test_the_gymnax_step_resets_where_a_game_ends():
    env, params = make_gymnax("Yahtzee-v0", illegal_action="lose")
    obs, state = env.reset(jax.random.key(0), params)
    assert obs.shape == (72,) and env.observation_space(params).contains(obs)
    state = state._replace(legal_action_mask=state.legal_action_mask.at[44].set(False))
    obs2, state2, reward, done, info = env.step(jax.random.key(1), state, 44, params)
    assert bool(done) and float(reward) == -1.0 and float(info["discount"]) == 0.0
    assert not bool(state2.terminated) and int(state2.step_count) == 0  # a new game
    np.testing.assert_array_equal(np.asarray(obs2), np.asarray(state2.observation))
    np.testing.assert_array_equal(np.asarray(info["legal_action_mask"]),
                                  np.asarray(state2.legal_action_mask))  # fmt: skip
    short = params._replace(max_steps_in_episode=1)  # truncation read at run time
    _, _, _, done, info = env.step(jax.random.key(2), state, 0, short)
    assert bool(done) and bool(info["truncated"]) and float(info["discount"]) == 1.0
    with pytest.raises(ValueError, match="one seat"):
        make_gymnax(num_players=2)
