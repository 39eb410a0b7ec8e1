"""The native vector env (`YahtzeeVectorEnv`) and its Stable-Baselines3 adapter.

The central check replays every game of the vector env through the engine (`Game`) with the
same dice: rewards, observations, masks and final scores must match exactly. Statistics of
many games are compared with the single env.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import yahtzee_env  # noqa: F401  (registers Yahtzee-v0)
from yahtzee_env.envs.vector import OPEN, YahtzeeVectorEnv, outcome_table
from yahtzee_env.envs.yahtzee import YahtzeeEnv
from yahtzee_env.game.dice import (
    CANONICAL_HOLDS,
    COUNTS,
    DICE,
    HOLD_TO_KEEP,
    KEEP_CDF,
    KEEP_PROBS,
    NUM_KEEPS,
    NUM_ROLLS,
    ROLL_OUTCOMES,
)
from yahtzee_env.game.engine import Game, IllegalActionError
from yahtzee_env.game.observation import encode_batch, encode_seat
from yahtzee_env.game.rules import PRESETS

ROLL_OF_DICE = {tuple(d): i for i, d in enumerate(DICE.tolist())}
_DICE_CODE = np.full(7**5, -1, dtype=np.intp)
_DICE_CODE[(DICE.astype(np.intp) * 7 ** np.arange(5)).sum(axis=1)] = np.arange(NUM_ROLLS)


def rolls_of(dice: np.ndarray) -> np.ndarray:
    """Roll indices of a batch of sorted dice ``[N, 5]``."""
    return _DICE_CODE[(dice.astype(np.intp) * 7 ** np.arange(5)).sum(axis=1)]


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    keys = np.where(masks, rng.random(masks.shape), -1.0)
    return keys.argmax(axis=1)


def make(num_envs: int, **kwargs) -> YahtzeeVectorEnv:
    env = gym.make_vec(
        "Yahtzee-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs
    )
    assert isinstance(env, YahtzeeVectorEnv)
    return env


class FedRoller:
    """Engine dice that come from the vector env: `roll` returns the next fed roll index."""

    def __init__(self) -> None:
        self.next: int | None = None

    def roll(self, keep: int = 0) -> int:
        roll, self.next = self.next, None
        assert roll is not None and KEEP_PROBS[keep, roll] > 0, "dice not reachable from keep"
        return roll


def new_engine_game(rules, roll: int) -> Game:
    game = Game(rules)
    game.reset(np.random.default_rng(0))
    game.roll = roll
    game.roller = FedRoller()
    return game


# ------------------------------------------------------------------ construction
def test_make_vec_returns_native_class_with_spaces():
    env = make(6, rules="free-joker")
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.num_envs == 6 and env.rules == PRESETS["free-joker"]
    assert env.single_action_space == gym.spaces.Discrete(45)
    assert env.action_space == gym.spaces.MultiDiscrete([45] * 6)
    assert env.single_observation_space.shape == (72,)
    assert env.observation_space.shape == (6, 72)
    obs, infos = env.reset(seed=0)
    assert obs.shape == (6, 72) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    masks = env.action_masks()
    assert masks.shape == (6, 45) and masks.dtype == bool
    assert infos["action_mask"].dtype == np.int8 and np.array_equal(infos["action_mask"], masks)
    assert infos["dice"].shape == (6, 5) and infos["scorecard"].shape == (6, 13)
    assert (infos["scorecard"] == OPEN).all() and (infos["rolls_left"] == 2).all()
    for key in ("total", "upper_total", "upper_bonus", "yahtzee_bonus"):
        assert infos[key].shape == (6,) and (infos[key] == 0).all()
    assert repr(env) == "YahtzeeVectorEnv(Yahtzee-v0, num_envs=6)"
    # the vector entry point is also the default vectorization mode
    assert isinstance(gym.make_vec("Yahtzee-v0", num_envs=2), YahtzeeVectorEnv)


def test_outcome_table_is_the_flattened_cdf_search():
    flat_cdf = (KEEP_CDF.astype(np.int64) + (np.arange(NUM_KEEPS) * ROLL_OUTCOMES)[:, None]).ravel()
    queries = np.arange(NUM_KEEPS * ROLL_OUTCOMES)
    keeps = queries // ROLL_OUTCOMES
    searched = np.searchsorted(flat_cdf, queries, side="right") - keeps * NUM_ROLLS
    assert np.array_equal(outcome_table(), searched)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": True}, "num_envs"),
        ({"rules": "house"}, "unknown rules"),
        ({"canonical_holds": "yes"}, "canonical_holds"),
        ({"render_mode": "video"}, "render_mode"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"illegal_penalty": 1.0}, "illegal_penalty"),
        ({"max_episode_steps": 0}, "max_episode_steps"),
        ({"max_episode_steps": True}, "max_episode_steps"),
        ({"autoreset_mode": "disabled"}, "autoreset_mode"),
    ],
)
def test_constructor_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        YahtzeeVectorEnv(**{"num_envs": 2, **kwargs})


# ------------------------------------------------------------------ exactness vs the engine
@pytest.mark.parametrize(
    ("preset", "canonical"),
    [
        ("official", False),
        ("free-joker", True),
        ("no-joker-no-bonus", False),
        ("upper-first", True),
    ],
)
def test_every_game_matches_the_engine_replayed_with_the_same_dice(preset, canonical):
    rules = PRESETS[preset]
    n, steps = 32, 400
    env = make(n, rules=preset, canonical_holds=canonical)
    rng = np.random.default_rng(1)
    obs, infos = env.reset(seed=7)
    games = [new_engine_game(rules, ROLL_OF_DICE[tuple(d)]) for d in infos["dice"].tolist()]
    for game in games:
        game.canonical_holds = canonical
    returns = np.zeros(n)
    finished = bonuses = 0
    for _ in range(steps):
        masks = env.action_masks()
        # mostly the Yahtzee-chasing policy (so bonuses and jokers happen), else random
        actions = np.where(
            rng.random(n) < 0.9,
            policy(rolls_of(infos["dice"]), obs, masks),
            random_legal(masks, rng),
        )
        # white-box: the step observation is exactly encode_batch of the state
        t = env._t
        ctx, values = rules.tables.context_batch(env._roll, env._filled, env._yahtzee_state)
        expected = encode_batch(
            env._roll, env._rolls_left, env._filled, env._upper_total, env._yahtzee_state,
            t.tables.legal[ctx, env._filled], t.tables.points[env._roll, values], t.threshold,
            rules.tables.yahtzee_bonus(env._roll, env._yahtzee_state) > 0,
        )  # fmt: skip
        assert np.array_equal(obs, expected)
        obs, rewards, terms, truncs, infos = env.step(actions)
        assert not truncs.any()
        returns += rewards
        for i, game in enumerate(games):
            assert np.array_equal(masks[i], game.legal_action_mask())
            if not terms[i]:
                game.roller.next = ROLL_OF_DICE[tuple(infos["dice"][i].tolist())]
            assert game.step(int(actions[i])) == rewards[i]
            card = game.players[0]
            if terms[i]:
                assert game.over
                final = infos["final_info"]
                assert infos["_final_obs"][i] and infos["_final_info"][i]
                assert np.array_equal(infos["final_obs"][i], encode_seat(game))
                assert final["total"][i] == card.total == returns[i]
                assert final["scorecard"][i].tolist() == card.scores
                assert final["upper_total"][i] == card.upper_total
                assert final["upper_bonus"][i] == card.upper_bonus
                assert final["yahtzee_bonus"][i] == card.yahtzee_bonus
                assert tuple(final["dice"][i].tolist()) == game.dice
                returns[i] = 0
                finished += 1
                bonuses += card.yahtzee_bonus > 0
                games[i] = game = new_engine_game(rules, ROLL_OF_DICE[tuple(infos["dice"][i])])
                game.canonical_holds = canonical
                card = game.players[0]
            elif "final_obs" in infos:
                assert infos["final_obs"][i] is None and not infos["_final_obs"][i]
            assert np.array_equal(obs[i], encode_seat(game))
            assert infos["rolls_left"][i] == game.rolls_left
            assert infos["total"][i] == card.total
            assert infos["upper_total"][i] == card.upper_total
            assert infos["upper_bonus"][i] == card.upper_bonus
            assert infos["yahtzee_bonus"][i] == card.yahtzee_bonus
            scores = [OPEN if s is None else s for s in card.scores]
            assert infos["scorecard"][i].tolist() == scores
        assert env.action_masks().any(axis=1).all()  # same-step autoreset: never all False
    assert finished >= n  # every env finished at least one game
    if rules.yahtzee_bonus:
        assert bonuses > 0  # the joker and bonus paths were exercised


# ------------------------------------------------------------------ API behaviour
def snapshot(env: YahtzeeVectorEnv):
    fields = ["_roll", "_rolls_left", "_filled", "_upper_total", "_yahtzee_state", "_total"]
    arrays = [getattr(env, f).copy() for f in fields] + [env._scores.copy(), env._obs.copy()]
    return arrays, env.np_random.bit_generator.state


def assert_same(a, b):
    assert all(np.array_equal(x, y) for x, y in zip(a[0], b[0], strict=True)) and a[1] == b[1]


def test_illegal_actions_raise_naming_envs_and_change_nothing():
    env = make(5)
    env.reset(seed=3)
    env.step(np.full(5, 31))
    env.step(np.full(5, 31))  # no re-rolls left anywhere now
    before = snapshot(env)
    actions = np.array([32, 3, 33, 34, 7])
    with pytest.raises(IllegalActionError, match=r"env indices \[1, 4\]") as err:
        env.step(actions)
    assert "no re-rolls left" in str(err.value)
    assert_same(snapshot(env), before)
    env.step(np.array([32, 32, 33, 34, 35]))
    with pytest.raises(IllegalActionError, match=r"env indices \[0\].*'aces' is filled"):
        env.step(np.array([32, 38, 39, 40, 41]))
    for bad, match in [
        (np.array([0, 0, 0, 0, 45]), "out of range"),
        (np.array([-1, 0, 0, 0, 0]), "out of range"),
        (np.zeros(5, dtype=np.float64), "integers"),
    ]:
        before = snapshot(env)
        with pytest.raises(IllegalActionError, match=match):
            env.step(bad)
        assert_same(snapshot(env), before)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(4, dtype=np.int64))


def test_step_before_reset_and_reset_options():
    env = YahtzeeVectorEnv(num_envs=2)
    with pytest.raises(IllegalActionError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="no reset options"):
        env.reset(options={"reset_mask": np.ones(2, bool)})


def test_seeded_runs_are_identical():
    def run(seed):
        env = make(64)
        rng = np.random.default_rng(0)
        obs, _ = env.reset(seed=seed)
        trace = [obs]
        for _ in range(60):
            obs, rewards, terms, _, infos = env.step(random_legal(env.action_masks(), rng))
            trace += [obs, rewards, terms, infos["dice"], infos["total"]]
        return trace

    a, b, c = run(5), run(5), run(6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def _arrays(infos: dict) -> dict:
    """Copies of the numeric arrays in (nested) infos."""
    out = {}
    for key, value in infos.items():
        if isinstance(value, dict):
            out.update({f"{key}/{k}": v for k, v in _arrays(value).items()})
        elif isinstance(value, np.ndarray) and value.dtype != object:
            out[key] = value.copy()
    return out


def test_returned_arrays_are_not_modified_by_later_steps():
    env = make(32)
    rng = np.random.default_rng(2)
    obs, infos = env.reset(seed=0)
    checked_final = False
    for _ in range(80):
        kept_obs, kept_infos = obs.copy(), _arrays(infos)
        new_obs, _, _, _, new_infos = env.step(random_legal(env.action_masks(), rng))
        assert not np.shares_memory(new_obs, obs)
        assert np.array_equal(obs, kept_obs)
        current = _arrays(infos)
        assert all(np.array_equal(current[k], v) for k, v in kept_infos.items())
        checked_final |= any(k.startswith("final_info/") for k in kept_infos)
        obs, infos = new_obs, new_infos
    assert checked_final


def test_same_step_autoreset_and_record_episode_statistics():
    env = gym.wrappers.vector.RecordEpisodeStatistics(make(16))
    rng = np.random.default_rng(4)
    env.reset(seed=1)
    ended = 0
    for _ in range(120):
        obs, _, terms, _, infos = env.step(random_legal(env.unwrapped.action_masks(), rng))
        if terms.any():
            done = np.flatnonzero(terms)
            ended += len(done)
            assert np.array_equal(infos["episode"]["r"][done], infos["final_info"]["total"][done])
            # the returned observation is the next game's first roll
            assert (infos["rolls_left"][done] == 2).all()
            assert (infos["scorecard"][done] == OPEN).all() and (infos["total"][done] == 0).all()
            assert (obs[done, 36:39] == [0, 0, 1]).all() and (obs[done, 39:52] == 1).all()
            # the final observation shows the full scorecard
            for i in done:
                assert (infos["final_obs"][i][39:52] == 0).all() and infos["final_obs"][i][71] == 1
            assert (infos["final_info"]["scorecard"][done] >= 0).all()
    assert ended >= 16


def test_canonical_holds_masks():
    env = make(20, canonical_holds=True)
    _, infos = env.reset(seed=0)
    rolls = rolls_of(infos["dice"])
    assert np.array_equal(env.action_masks()[:, :32], CANONICAL_HOLDS[rolls])
    hold = np.array([np.flatnonzero(~CANONICAL_HOLDS[r])[0] for r in rolls])
    with pytest.raises(IllegalActionError, match="canonical"):
        env.step(hold)


def test_upper_first_rules_through_make_vec():
    env = make(4, rules="upper-first")
    _, infos = env.reset(seed=0)
    assert infos["action_mask"][:, 32:38].all() and not infos["action_mask"][:, 38:].any()


# ------------------------------------------------------------------ statistics vs single env
def _mode_holds() -> np.ndarray:
    """Per roll: hold the dice showing the most common face (the highest face on ties)."""
    mode_face = 6 - COUNTS[:, ::-1].argmax(axis=1)
    held = mode_face[:, None] == DICE
    return (held * (1 << np.arange(5))).sum(axis=1)


MODE_HOLD = _mode_holds()
IS_YAHTZEE = COUNTS.max(axis=1) == 5


def policy(rolls: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Keep the most common face twice, then fill the best-scoring legal box (ties: first)."""
    best_box = np.where(masks[:, 32:], obs[:, 52:65], -1.0).argmax(axis=1)
    can_roll = masks[:, 0] & ~IS_YAHTZEE[rolls]
    return np.where(can_roll, MODE_HOLD[rolls], 32 + best_box)


def chi2_homogeneity(a: np.ndarray, b: np.ndarray) -> float:
    table = np.stack([a, b]).astype(float)
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0) / table.sum()
    return float(((table - expected) ** 2 / expected).sum())


def test_statistics_match_single_env():
    games = 3000
    # single env
    env = gym.make("Yahtzee-v0")
    single_scores, single_bonus, single_faces = [], [], np.zeros(6, dtype=np.int64)
    masks = env.unwrapped.action_masks
    for g in range(games):
        obs, info = env.reset(seed=10_000 + g)
        terminated = False
        while not terminated:
            roll = ROLL_OF_DICE[tuple(info["dice"].tolist())]
            if info["rolls_left"] == 2:
                single_faces += COUNTS[roll]
            action = policy(np.array([roll]), obs[None], masks()[None])[0]
            obs, _, terminated, _, info = env.step(int(action))
        single_scores.append(info["total"])
        single_bonus.append(info["yahtzee_bonus"] // 100)
    # vector env: the first game of each of `games` envs (39 steps finish every game)
    venv = make(games)
    obs, infos = venv.reset(seed=99)
    vec_scores = np.full(games, -1)
    vec_bonus = np.full(games, -1)
    vec_faces = np.zeros(6, dtype=np.int64)
    for _ in range(39):
        rolls = rolls_of(infos["dice"])
        first = (infos["rolls_left"] == 2) & (vec_scores < 0)
        vec_faces += COUNTS[rolls[first]].sum(axis=0)
        obs, _, terms, _, infos = venv.step(policy(rolls, obs, venv.action_masks()))
        new = terms & (vec_scores < 0)
        if new.any():
            vec_scores[new] = infos["final_info"]["total"][new]
            vec_bonus[new] = infos["final_info"]["yahtzee_bonus"][new] // 100
    assert (vec_scores >= 0).all()

    single_scores = np.array(single_scores)
    se = np.sqrt(single_scores.var() / games + vec_scores.var() / games)
    assert abs(single_scores.mean() - vec_scores.mean()) < 4 * se
    assert 150 < vec_scores.mean() < 250  # a sane score for this policy
    assert chi2_homogeneity(single_faces, vec_faces) < 25.7  # 5 dof, p = 1e-4
    bonus_hist = [np.bincount(np.minimum(b, 2), minlength=3) for b in (single_bonus, vec_bonus)]
    assert bonus_hist[0][1:].sum() > 50  # the policy makes bonuses common enough to compare
    assert chi2_homogeneity(*bonus_hist) < 18.4  # 2 dof, p = 1e-4


# ------------------------------------------------------------------ SB3 adapter
def test_sb3_adapter_api():
    pytest.importorskip("stable_baselines3")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor

    from yahtzee_agents.sb3.vec_env import SB3VecEnv

    env = SB3VecEnv(num_envs=6, rules="official", seed=3, info_keys=("total",))
    assert isinstance(env, VecEnv) and env.num_envs == 6
    assert env.observation_space.shape == (72,) and env.action_space.n == 45
    obs = env.reset()
    assert obs.shape == (6, 72) and obs.dtype == np.float32
    assert is_masking_supported(env)
    masks = get_action_masks(env)
    assert masks.shape == (6, 45) and masks.dtype == bool
    assert len(env.env_method("action_masks", indices=[1, 2])) == 2
    assert env.get_attr("rules") == [PRESETS["official"]] * 6
    env.set_attr("canonical_holds", False)
    from stable_baselines3.common.monitor import Monitor

    assert env.env_is_wrapped(Monitor) == [True] * 6  # episode statistics are built in
    assert env.env_is_wrapped(gym.wrappers.TimeLimit) == [False] * 6
    with pytest.raises(AttributeError, match="action_masks"):
        env.env_method("render")
    rng = np.random.default_rng(0)
    returns = np.zeros(6)
    episodes = 0
    for _ in range(150):
        obs, rewards, dones, infos = env.step(random_legal(get_action_masks(env), rng))
        assert obs.shape == (6, 72) and rewards.dtype == np.float32 and dones.dtype == bool
        assert isinstance(infos, list) and len(infos) == 6
        returns += rewards
        for i in np.flatnonzero(dones):
            info = infos[i]
            assert info["terminal_observation"].shape == (72,)
            assert info["terminal_observation"][71] == 1.0  # all 13 boxes filled
            assert info["episode"]["r"] == returns[i] == info["total"]
            assert 13 <= info["episode"]["l"] <= 39
            assert info["TimeLimit.truncated"] is False
            returns[i] = 0
            episodes += 1
        for i in np.flatnonzero(~dones):
            assert set(infos[i]) == {"total"}
    assert episodes >= 6
    # seeding: the same seed gives the same first observation
    assert env.seed(11) == [11] * 6
    first = env.reset()
    env.seed(11)
    assert np.array_equal(env.reset(), first)
    with pytest.warns(UserWarning, match="already wrapped with a `Monitor`"):
        monitored = VecMonitor(env)  # its statistics replace the built-in ones
    monitored.reset()
    monitored.step(random_legal(get_action_masks(env), rng))
    env.close()


def test_maskable_ppo_trains_on_the_adapter():
    pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from yahtzee_agents.sb3.vec_env import SB3VecEnv

    torch.set_num_threads(1)
    env = SB3VecEnv(num_envs=8, seed=0)
    with warnings.catch_warnings():
        # no warnings from our code (third-party deprecations are not this test's business)
        warnings.filterwarnings("error", module=r"(agents|yahtzee_env)(\.|$)")
        model = MaskablePPO(
            "MlpPolicy",
            env,
            n_steps=64,
            batch_size=128,
            n_epochs=1,
            policy_kwargs={"net_arch": [16]},
            seed=0,
            device="cpu",
        )
        model.learn(2048)
    assert model.num_timesteps >= 2048
    assert len(model.ep_info_buffer) > 10
    assert all(13 <= ep["l"] <= 39 for ep in model.ep_info_buffer)


def test_single_env_class_used_by_the_registry():
    assert gym.spec("Yahtzee-v0").entry_point == "yahtzee_env.envs.yahtzee:YahtzeeEnv"
    assert isinstance(gym.make("Yahtzee-v0").unwrapped, YahtzeeEnv)
    assert HOLD_TO_KEEP.shape == (NUM_ROLLS, 32)


# ------------------------------------------------------------------ benchmark helpers
def test_batch_mask_sampler_is_uniform_over_legal_actions():
    from yahtzee_env.analysis.bench import BatchMaskSampler

    sampler = BatchMaskSampler()
    n = 60_000
    masks = np.zeros((n, 45), dtype=bool)
    masks[:, [33, 40, 44]] = True
    masks[: n // 2, :32] = True  # first half: re-rolls left, 35 legal actions
    actions = sampler.sample(masks, np.random.default_rng(0).random(n, dtype=np.float32))
    assert masks[np.arange(n), actions].all()
    with_holds = np.bincount(actions[: n // 2], minlength=45)[masks[0]]
    boxes_only = np.bincount(actions[n // 2 :], minlength=45)[[33, 40, 44]]
    for counts in (with_holds, boxes_only):
        expected = counts.sum() / len(counts)
        assert ((counts - expected) ** 2 / expected).sum() < len(counts) + 6 * np.sqrt(
            2 * len(counts)
        )


def test_bench_env_command_smoke(tmp_path, capsys):
    import json

    from yahtzee_env.commands.cli import main

    out = tmp_path / "bench.json"
    args = ["bench-env", "--steps", "2000", "--num-envs", "32", "--repeats", "1"]
    assert main([*args, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "steps/s" in text and "env-steps/s" in text and "pyhtzee" in text
    data = json.loads(out.read_text())
    for key in ("single_sampled", "single_step", "vector_sampled", "vector_step"):
        assert data[key] > 0
    assert data["num_envs"] == 32 and data["vector_env_steps"] == 32 * 100
