"""`yahtzee_env.jax` against the numpy engine (issue 51): the same dice fed to both engines give
the same games, chance nodes carry the exact dice distribution, and the JAX PPO script exports
a model the benchmark reads. Skipped where the ``jax`` extra is not installed (``make test``
installs it)."""

from __future__ import annotations

import itertools
from collections import Counter
from functools import partial

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from gymnasium.vector import AutoresetMode  # noqa: E402

from yahtzee_env.envs.seat_view import encode_table, win_rewards  # noqa: E402
from yahtzee_env.envs.vector import YahtzeeVectorEnv  # noqa: E402
from yahtzee_env.game.dice import (  # noqa: E402
    COUNTS,
    DICE,
    HOLD_TO_KEEP,
    KEEP_COUNTS,
    KEEP_PROBS,
    KEEP_SIZE,
    NUM_KEEPS,
    ROLL_OUTCOMES,
)
from yahtzee_env.game.engine import NUM_ACTIONS, Game  # noqa: E402
from yahtzee_env.game.observation import (  # noqa: E402
    TABLE_INPUT_VERSION,
    encode_seat,
    model_input,
    strategy_features,
)
from yahtzee_env.game.rules import PRESETS  # noqa: E402
from yahtzee_env.jax import OPEN, Yahtzee  # noqa: E402

GAMES = 10_000  # per preset (issue 51)
MAX_ACTIONS = 39  # 13 turns of at most 3 actions


class FedDice:
    """The dice source both engines read: a stand-in for the numpy generator that hands out
    prepared uniform draws in [0, 7776) (``integers`` is the only call the engines make)."""

    def __init__(self, draws: np.ndarray) -> None:
        self.draws = draws.reshape(-1)
        self.used = 0

    def integers(self, low, high, size, dtype=np.int64):
        assert (low, high) == (0, ROLL_OUTCOMES)
        out = self.draws[self.used : self.used + size]
        assert len(out) == size, "the test prepared too few draws"
        self.used += size
        return out.astype(dtype)


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (rows with none: action 0)."""
    scores = np.where(mask, rng.random(mask.shape), -1.0)
    return scores.argmax(axis=1)


@pytest.fixture(scope="module")
def compiled():
    """One compiled step, observe and init per env, shared by the module's tests."""
    cache = {}

    def get(rules: str, canonical: bool = False, players: int = 1) -> tuple:
        key = (rules, canonical, players)
        if key not in cache:
            env = Yahtzee(rules, num_players=players, canonical_holds=canonical)
            cache[key] = (
                env,
                jax.jit(jax.vmap(env.init_with_draw)),
                jax.jit(jax.vmap(env.step_with_draw)),
                jax.jit(jax.vmap(env.observe, in_axes=(0, None))),
            )
        return cache[key]

    return get


@pytest.mark.parametrize("rules", list(PRESETS))
def test_same_dice_same_games_as_the_numpy_vector_env(rules, compiled):
    """10,000 random games per preset, fed the same draws: every step's observation, mask,
    reward, card and termination are equal, and so are the 86-float model inputs."""
    env, init, step, observe = compiled(rules)
    seed = list(PRESETS).index(rules)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, ROLL_OUTCOMES, size=(MAX_ACTIONS + 1, GAMES), dtype=np.uint16)
    venv = YahtzeeVectorEnv(GAMES, rules=rules, autoreset_mode=AutoresetMode.NEXT_STEP)
    venv.np_random = FedDice(draws)
    obs, infos = venv.reset()
    state = init(jnp.asarray(draws[0], dtype=jnp.int32))
    live = np.ones(GAMES, dtype=bool)
    np.testing.assert_array_equal(np.asarray(observe(state, None)), obs)
    np.testing.assert_array_equal(np.asarray(state.legal_action_mask), venv.action_masks())
    actions_rng = np.random.default_rng(1000 + seed)
    for t in range(1, MAX_ACTIONS + 1):
        actions = random_legal(actions_rng, venv.action_masks())
        obs, rewards, terminated, truncated, infos = venv.step(actions)
        state = step(state, jnp.asarray(actions, dtype=jnp.int32),
                     jnp.asarray(draws[t], dtype=jnp.int32))  # fmt: skip
        rows = np.flatnonzero(live)
        j_obs = np.asarray(observe(state, None))[rows]
        np.testing.assert_array_equal(j_obs, obs[rows], err_msg=f"{rules} step {t}")
        np.testing.assert_array_equal(np.asarray(state.rewards[:, 0])[rows], rewards[rows])
        np.testing.assert_array_equal(np.asarray(state.terminated)[rows], terminated[rows])
        assert not np.asarray(state.truncated).any() and not truncated.any()
        still = rows[~terminated[rows]]
        np.testing.assert_array_equal(
            np.asarray(state.legal_action_mask)[still], venv.action_masks()[still]
        )
        np.testing.assert_array_equal(np.asarray(state.scores[:, 0])[rows],
                                      infos["scorecard"][rows])  # fmt: skip
        np.testing.assert_array_equal(np.asarray(env.totals(state)[:, 0])[rows],
                                      infos["total"][rows])  # fmt: skip
        np.testing.assert_array_equal(np.asarray(state.yahtzee_bonus[:, 0])[rows],
                                      infos["yahtzee_bonus"][rows])  # fmt: skip
        if t in (1, 20, MAX_ACTIONS):  # the 14 strategy features, in JAX and in numpy
            j_in = np.asarray(env.model_input(jnp.asarray(j_obs), 2))
            np.testing.assert_allclose(j_in[:, 72:], strategy_features(obs[rows]), atol=1e-6)
        live &= ~terminated
    assert not live.any(), "every game ends within 39 actions"
    assert (np.asarray(state.scores) != OPEN).all()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_same_dice_same_games_as_the_numpy_engine_with_players(players, compiled):
    """Multi-player games against `Game` (the engine): per-player rewards, every seat's
    observation, the mask and the player to move are equal, from the same draws."""
    games, rules = 64, "official"
    env, init, step, observe = compiled(rules, players=players)
    rng = np.random.default_rng(players)
    steps = MAX_ACTIONS * players
    draws = rng.integers(0, ROLL_OUTCOMES, size=(steps + 1, games), dtype=np.uint16)
    numpy_games = []
    for i in range(games):
        game = Game(rules, num_players=players)
        # `DiceRoller` takes a block of 512 draws and pops from its end: hand each game's
        # draws over in a block, reversed, at its end.
        block = np.zeros(512, dtype=np.int64)
        block[512 - len(draws) :] = draws[::-1, i]
        game.reset(FedDice(block))
        numpy_games.append(game)
    state = init(jnp.asarray(draws[0], dtype=jnp.int32))
    view = jax.jit(jax.vmap(partial(env.observe, table=True), in_axes=(0, None)))
    actions_rng = np.random.default_rng(99)
    for t in range(1, steps + 2):
        masks = np.array([g.legal_action_mask() for g in numpy_games])
        over = np.array([g.over for g in numpy_games])
        np.testing.assert_array_equal(np.asarray(state.legal_action_mask)[~over], masks[~over])
        assert np.asarray(state.legal_action_mask)[over].all(), "all True once over (pgx)"
        np.testing.assert_array_equal(np.asarray(state.current_player),
                                      [g.current for g in numpy_games])  # fmt: skip
        np.testing.assert_array_equal(np.asarray(state.observation),
                                      np.asarray(observe(state, None)))  # fmt: skip
        for seat in range(players):
            expected = np.array([encode_seat(g, seat) for g in numpy_games])
            np.testing.assert_array_equal(np.asarray(observe(state, seat)), expected)
            # The win level's input: the seat's view of the table, YahtzeeVs-v0's floats.
            table = np.array([encode_table(g, seat) for g in numpy_games])
            j_table = np.asarray(view(state, seat))
            np.testing.assert_array_equal(j_table, table)
            if players == 2 and t in (1, 40):  # the 107 floats the win level reads
                j_in = np.asarray(env.model_input(jnp.asarray(j_table), TABLE_INPUT_VERSION))
                np_in = model_input(table, TABLE_INPUT_VERSION)
                np.testing.assert_allclose(j_in, np_in, atol=1e-6)
                np.testing.assert_array_equal(j_in[:, 86:], np_in[:, 86:])
        np.testing.assert_array_equal(np.asarray(env.totals(state)),
                                      [g.totals() for g in numpy_games])  # fmt: skip
        if t == steps + 1 or over.all():
            break
        actions = random_legal(actions_rng, masks)
        rewards = np.zeros((games, players))
        for i, (g, a) in enumerate(zip(numpy_games, actions, strict=True)):
            if not g.over:
                seat = g.current
                rewards[i, seat] = g.step(int(a))
        state = step(state, jnp.asarray(actions, dtype=jnp.int32),
                     jnp.asarray(draws[t], dtype=jnp.int32))  # fmt: skip
        np.testing.assert_array_equal(np.asarray(state.rewards), rewards)
    assert all(g.over for g in numpy_games)
    assert np.asarray(state.terminated).all()
    results = np.array([win_rewards(g.totals()) for g in numpy_games])
    np.testing.assert_array_equal(np.asarray(jax.vmap(env.win_rewards)(state)), results)


def _enumerated_weights(keep: int) -> np.ndarray:
    """Ordered re-rolls of the dice not in ``keep``, counted by the roll they make (out of
    7776), by brute force: the independent reference for the chance distribution."""
    kept = [face for face in range(1, 7) for _ in range(KEEP_COUNTS[keep][face - 1])]
    n = 5 - len(kept)
    roll_of = {tuple(int(c) for c in counts): i for i, counts in enumerate(COUNTS)}
    counter: Counter[int] = Counter()
    for faces in itertools.product(range(1, 7), repeat=n):
        counts = np.bincount(np.array(kept + list(faces), dtype=np.int64) - 1, minlength=6)
        counter[roll_of[tuple(int(c) for c in counts)]] += 6 ** (5 - n)
    weights = np.zeros(len(DICE), dtype=np.int64)
    for roll, count in counter.items():
        weights[roll] = count
    return weights


def test_chance_outcomes_are_the_exact_distribution():
    """For every keep: the weights are the brute-force count over the ordered re-rolls, the
    probabilities are the numpy engine's (to float32) and sum to 1; 252 outcomes with no die
    held, 126/56/21/6/1 with 1..5 held."""
    env = Yahtzee("official")
    weights_of = jax.jit(jax.vmap(env.chance_weights))
    outcomes_of = jax.jit(jax.vmap(env.chance_outcomes))
    keeps = jnp.arange(NUM_KEEPS, dtype=jnp.int32)
    base = env.init_with_draw(jnp.int32(0))
    after = jax.vmap(lambda k: base._replace(is_chance=jnp.bool_(True), keep=k))(keeps)
    weights = np.asarray(weights_of(after))
    outcomes, probs = (np.asarray(a) for a in outcomes_of(after))
    expected = np.stack([_enumerated_weights(k) for k in range(NUM_KEEPS)])
    np.testing.assert_array_equal(weights, expected)
    np.testing.assert_array_equal(outcomes, np.broadcast_to(np.arange(len(DICE)), outcomes.shape))
    np.testing.assert_array_equal(probs, KEEP_PROBS.astype(np.float32))
    np.testing.assert_allclose(probs.astype(np.float64).sum(axis=1), 1.0, atol=1e-6)
    support = {int(size): set() for size in KEEP_SIZE}
    for k in range(NUM_KEEPS):
        support[int(KEEP_SIZE[k])].add(int((weights[k] > 0).sum()))
    assert support == {0: {252}, 1: {126}, 2: {56}, 3: {21}, 4: {6}, 5: {1}}
    # Not at a chance node: no outcome has weight.
    assert int(env.chance_weights(base).sum()) == 0


def test_the_chance_split_is_step():
    """step_deterministic + step_stochastic(outcome of the draw) == step_with_draw, and the
    afterstate of a hold keeps exactly the held dice."""
    env = Yahtzee("official")
    state = env.init_with_draw(jnp.int32(4321))
    for action, draw in [(5, 17), (0, 7000), (32 + 12, 3)]:
        after = env.step_deterministic(state, action)
        if action < 32:
            assert bool(after.is_chance)
            assert int(after.keep) == int(HOLD_TO_KEEP[int(state.roll), action])
            assert np.asarray(after.legal_action_mask).all()  # no decision: never all False
        outcome = env.outcome_of_draw(after.keep, draw)
        _, probs = env.chance_outcomes(after)
        assert float(probs[outcome]) > 0
        via_chance = env.step_stochastic(after, outcome)
        direct = env.step_with_draw(state, action, draw)
        for a, b in zip(jax.tree.leaves(via_chance), jax.tree.leaves(direct), strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        state = direct


def test_illegal_actions_penalize_and_change_nothing():
    env = Yahtzee("official", illegal_penalty=-2.5, max_episode_steps=3)
    state = env.init(jax.random.key(0))
    state = env.step(state, 32, jax.random.key(1))  # fill aces
    again = env.step(state, 32, jax.random.key(2))  # aces again: illegal
    assert float(again.rewards[0]) == -2.5
    for name in ("roll", "rolls_left", "filled", "scores", "upper_total", "current_player"):
        np.testing.assert_array_equal(np.asarray(getattr(again, name)),
                                      np.asarray(getattr(state, name)))  # fmt: skip
    for bad in (-1, NUM_ACTIONS):
        assert float(env.step(state, bad, jax.random.key(3)).rewards[0]) == -2.5
    cut = env.step(again, 77, jax.random.key(4))  # the third action: truncated
    assert bool(cut.truncated) and not bool(cut.terminated)
    assert np.asarray(cut.legal_action_mask).all()  # over: all True, as pgx
    after = env.step(cut, 33, jax.random.key(5))  # once over, nothing happens, reward 0
    assert float(after.rewards[0]) == 0.0
    np.testing.assert_array_equal(np.asarray(after.scores), np.asarray(cut.scores))


def test_canonical_holds_mask_matches_the_numpy_env(compiled):
    _, init, step, _ = compiled("official", canonical=True)
    venv = YahtzeeVectorEnv(512, canonical_holds=True, autoreset_mode=AutoresetMode.NEXT_STEP)
    draws = np.random.default_rng(7).integers(0, ROLL_OUTCOMES, (MAX_ACTIONS + 1, 512))
    venv.np_random = FedDice(draws)
    venv.reset()
    state = init(jnp.asarray(draws[0], dtype=jnp.int32))
    rng = np.random.default_rng(8)
    for t in range(1, 4):
        np.testing.assert_array_equal(np.asarray(state.legal_action_mask), venv.action_masks())
        actions = random_legal(rng, venv.action_masks())
        venv.step(actions)
        state = step(state, jnp.asarray(actions, dtype=jnp.int32),
                     jnp.asarray(draws[t], dtype=jnp.int32))  # fmt: skip


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_players"):
        Yahtzee(num_players=5)
    with pytest.raises(ValueError, match="unknown rules"):
        Yahtzee("nope")
    with pytest.raises(ValueError, match="canonical_holds"):
        Yahtzee(canonical_holds=1)
    with pytest.raises(ValueError, match="input version"):
        Yahtzee().model_input(jnp.zeros((1, 72)), 3)


def test_jax_engine_writes_the_run_folder_that_export_and_benchmark_read(tmp_path, capsys):
    """``python -m yahtzee_agents.ppo_jax tiny-jax`` is ``yahtzee train tiny-jax`` (train.engine
    jax): the SB3 engine's run folder (config.yaml, meta.json saying the engine and what the
    agent knew, evals.jsonl graded like SB3's, best/, final/, checkpoints/); ``yahtzee export``
    and ``yahtzee benchmark`` read it as an SB3 run."""
    pytest.importorskip("optax")
    import json

    from yahtzee_agents import ppo_jax
    from yahtzee_env.commands.cli import main as yahtzee
    from yahtzee_env.policies.models import load_opponent, read_manifest

    assert ppo_jax.main(["tiny-jax", "--runs-dir", str(tmp_path), "--no-progress"]) == 0
    run = tmp_path / "tiny-jax"
    for name in ("config.yaml", "command.txt", "meta.json", "evals.jsonl", "sessions.jsonl",
                 "best/eval.json", "best/model.json", "final/model.json", "final/eval.json",
                 "checkpoints/ckpt_256.json", "checkpoints/ckpt_256.state.npz"):  # fmt: skip
        assert (run / name).exists(), name
    assert not any((run / n).exists() for n in ("progress.csv", "config.json", "state.npz"))
    meta = json.loads((run / "meta.json").read_text())
    assert meta["engine"] == "jax" and meta["method"] == "ppo"
    assert meta["knew"]["observation"].startswith("with hand-made features")
    evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
    assert [e["timesteps"] for e in evals] == [64, 128, 192, 256]
    assert all(e["games"] == 16 and e["seed"] == 12345 for e in evals)
    assert len(list((run / "checkpoints").glob("ckpt_*.state.npz"))) == 2  # keep_checkpoints
    manifest = read_manifest(run / "final" / "model.json")
    assert manifest.method == "ppo" and manifest.env_steps == 256
    assert manifest.raw["trained_on"].startswith("CPU")

    out = tmp_path / "out"
    assert yahtzee(["export", str(run), "--model", "final", "--out", str(out)]) == 0
    exported = json.loads((out / "tiny-jax.json").read_text())
    assert exported["source"] == "tiny-jax/final" and exported["method"] == "ppo"
    assert exported["evaluation"]["timesteps"] == 256
    assert load_opponent(out / "tiny-jax.json").weights[0][0].shape == (86, 16)
    assert yahtzee(["export", str(run), "--model", "192", "--out", str(out), "--name", "c"]) == 0
    report = tmp_path / "bench.json"
    args = ["benchmark", str(run), "--games", "8", "--workers", "1", "--no-progress"]
    assert yahtzee([*args, "--json", str(report)]) == 0
    row = json.loads(report.read_text())
    assert row["knew"] == meta["knew"] and 0 <= row["mean"] <= 1575


def test_jax_engine_resumes_bit_for_bit_after_sigterm(tmp_path):
    """A tiny JAX run stopped by SIGTERM mid-way (at its first evaluation) writes an exact
    checkpoint; resumed, it ends with the uninterrupted run's weights and evaluations."""
    pytest.importorskip("optax")
    import json
    import os
    import signal

    from yahtzee_agents.config import load_config
    from yahtzee_agents.run.folder import TrainingInterrupted
    from yahtzee_agents.shipped import resolve_config
    from yahtzee_agents.train import train

    cfg = load_config(resolve_config("tiny-jax"))
    whole, split = tmp_path / "whole", tmp_path / "split"
    train(cfg, whole, progress=False, argv=["test"])

    def sigterm(result, steps):
        os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(TrainingInterrupted) as stopped:
        train(cfg, split, progress=False, argv=["test"], on_eval=sigterm)
    assert stopped.value.reason == "SIGTERM" and stopped.value.steps == 64
    assert not (split / "final").exists()
    train(cfg, split, resume=True, progress=False, argv=["test"])
    final = [json.loads((d / "final" / "eval.json").read_text()) for d in (whole, split)]
    assert final[0]["weights_sha256"] == final[1]["weights_sha256"]
    assert (whole / "final" / "model.npz").read_bytes() == (
        split / "final" / "model.npz"
    ).read_bytes()
    assert (whole / "evals.jsonl").read_text() == (split / "evals.jsonl").read_text()
    assert len(json.loads((split / "meta.json").read_text())["sessions"]) == 2
