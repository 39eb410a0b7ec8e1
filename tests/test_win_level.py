"""The win level's pipeline (issue 52, item 2): PPO at a 2-seat table of `YahtzeeVs-v0`
from hard's weights (`configs/win.yaml`, `yahtzee_agents.sb3.versus_env`), its grading by the
multi-player protocol and `yahtzee verify`, and the decisions analysis. Tiny budgets only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from yahtzee_agents.config import ConfigError, apply_overrides, config_from_dict, load_config
from yahtzee_agents.sb3.versus_env import (
    OpponentMix,
    SnapshotPool,
    TableVecEnv,
    make_table_env,
    snapshot_policy,
)
from yahtzee_env.envs.seat_view import encode_table, win_rewards
from yahtzee_env.game.cpu import table_cards
from yahtzee_env.game.engine import Game
from yahtzee_env.game.observation import (
    OBS_SIZE,
    TABLE_INPUT_VERSION,
    encode_seat,
    model_input,
    table_input,
)
from yahtzee_env.policies.models import load_opponent

ROOT = Path(__file__).resolve().parents[1]
WIN = ROOT / "configs" / "win.yaml"
TINY = [
    "env.num_envs=8",
    "ppo.n_steps=16",
    "ppo.batch_size=64",
    "train.eval_interval=0",
    "train.eval_games=8",
    "train.checkpoint_interval=128",
    "versus.snapshot_interval=128",
    "versus.value_warmup=128",
    "versus.pool_size=2",
]


def tiny(*extra: str):
    return load_config(WIN, [*TINY, *extra])


def _hard_at_the_table(step: int = 0):
    """hard's network with zero rows for the table's 21 inputs, as a past self."""
    (w, b), *rest = load_opponent("hard").weights
    wide = np.vstack([w, np.zeros((21, w.shape[1]), dtype=w.dtype)])
    return snapshot_policy([(wide, b), *rest], "relu", 63, step)


def _raw() -> dict:
    import yaml

    return yaml.safe_load(WIN.read_text())


# ------------------------------------------------------------------------------ config
def test_the_win_config_validates_and_says_what_it_is():
    cfg = load_config(WIN)
    assert cfg.env.id == "YahtzeeVs-v0" and cfg.env.observation_version == TABLE_INPUT_VERSION
    assert cfg.teacher == "none" and cfg.warm_start.teacher == "none"
    assert cfg.policy.init == "hard" and cfg.env.shaping == "none"
    assert {o.name for o in cfg.versus.opponents} == {"hard", "optimal", "self"}
    # the new sections stay out of older configs' digests
    assert "versus" not in load_config(ROOT / "configs" / "ppo.yaml").to_dict()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["env.observation_version=2"], "env.observation_version: YahtzeeVs-v0 trains on"),
        (["env.id=Yahtzee-v0"], "env.observation_version: 3 reads a 2-seat table"),
        (["env.shaping=upper-bonus"], "env.shaping: YahtzeeVs-v0 learns from the result alone"),
        (["env.canonical_holds=false"], "env.canonical_holds"),
        (["policy.net_arch=[64, 64]"], "policy.init: 'hard' has hidden layers [256, 256]"),
        (["policy.activation=tanh"], "policy.init: 'hard' uses relu"),
        (["policy.init=nonesuch.json"], "policy.init: "),
        (["versus.pool_size=0"], "versus.pool_size: must be > 0"),
        (["versus.snapshot_interval=0"], "versus.snapshot_interval: must be > 0"),
        (["versus.eval_opponent=self"], "versus.eval_opponent: a fixed policy"),
        (["versus.opponents=[]"], "versus.opponents: at least one opponent"),
        (["versus.opponents=[{name: hard, weight: -1}]"], "versus.opponents[0].weight: must be"),
        (["versus.opponents=[{name: hard, weight: 0}]"], "versus.opponents: the weights sum to 0"),
        (
            ["versus.opponents=[{name: hard, weight: 1}, {name: hard, weight: 1}]"],
            "versus.opponents[1].name: empty or repeated",
        ),
        (["versus.opponents=[{name: hard}]"], "versus.opponents[0].weight: missing required key"),
        (["versus.oponents=[]"], "versus.oponents: unknown key"),
        (["warm_start.teacher=optimal"], "warm_start.teacher: the config's teacher is 'none'"),
    ],
)
def test_a_bad_win_config_is_refused_by_name(overrides, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        config_from_dict(apply_overrides(_raw(), overrides))


def test_a_versus_section_needs_the_table_and_the_table_needs_it():
    data = apply_overrides(_raw(), ["env.id=Yahtzee-v0", "env.observation_version=2"])
    data["policy"].pop("init")
    with pytest.raises(ConfigError, match=r"versus: a section for env\.id YahtzeeVs-v0 only"):
        config_from_dict(data)
    data = _raw()
    del data["versus"]
    with pytest.raises(ConfigError, match="versus: missing"):
        config_from_dict(data)


# ------------------------------------------------------------------------------ the env
def _random_tables(env: TableVecEnv, steps: int, seed: int):
    rng = np.random.default_rng(seed)
    obs = env.reset()
    seen = [obs]
    for _ in range(steps):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        env.step_async(actions)
        obs, rewards, dones, infos = env.step_wait()
        seen.append(obs)
        yield obs, rewards, dones, infos


def test_the_table_env_is_yahtzeevs_at_two_seats():
    cfg = tiny()
    env = make_table_env(cfg, seed=3)
    env.mix.pool.add(0, _hard_at_the_table())
    ended = 0
    for obs, rewards, dones, infos in _random_tables(env, 120, seed=1):
        for i, game in enumerate(env.games):  # the observation: YahtzeeVs-v0's, as the net reads
            seat = int(env.seats[i])
            assert game.current == seat and not game.over  # always the learner's move
            want = model_input(encode_table(game, seat)[None], TABLE_INPUT_VERSION, 63)[0]
            np.testing.assert_array_equal(obs[i], want)
        for i in np.flatnonzero(dones):
            info = infos[i]
            ended += 1
            totals = [0, 0]
            totals[info["seat"]], totals[1 - info["seat"]] = info["total"], info["opponent_total"]
            assert rewards[i] == win_rewards(totals)[info["seat"]] == info["result"]
            assert info["terminal_observation"].shape == obs[i].shape
        assert (rewards[~dones] == 0).all()
    assert ended >= 8  # every table finished a game of ~30 moves
    # the learner's seat alternates from game to game at each table
    assert set(env.seats.tolist()) <= {0, 1}


def test_the_opponent_pool_is_seeded_and_bounded():
    hard = load_opponent("hard")
    pool = SnapshotPool(2)
    for step in (0, 10, 20):
        pool.add(step, _hard_at_the_table(step))
    assert pool.steps() == [10, 20] and set(pool.members) == {10, 20}
    pool.add(30, _hard_at_the_table(30), live={10})
    assert pool.steps() == [20, 30] and set(pool.members) == {10, 20, 30}  # 10 still plays
    pool.add(40, _hard_at_the_table(40))
    assert set(pool.members) == {30, 40}
    mix = OpponentMix(["hard", "self"], [1.0, 3.0], {"hard": hard}, pool)
    draws = [mix.draw(np.random.default_rng(7)) for _ in range(3)]
    assert len(set(draws)) == 1  # the same seed, the same opponent
    many = [mix.draw(rng) for rng in [np.random.default_rng(1)] for _ in range(400)]
    assert set(many) == {"hard", "self@30", "self@40"}
    assert 0.65 < np.mean([m != "hard" for m in many]) < 0.85  # weight 3 of 4
    arrays, facts = pool.state()
    twin = SnapshotPool(1)
    twin.restore(arrays, json.loads(json.dumps(facts)))
    assert twin.steps() == pool.steps() and twin.size == 2
    obs = np.random.default_rng(0).random((5, OBS_SIZE + 21), dtype=np.float32)
    np.testing.assert_array_equal(twin.members[40].logits(obs), pool.members[40].logits(obs))
    with pytest.raises(ValueError, match="pool size"):
        SnapshotPool(0)


def test_a_stochastic_opponent_is_refused():
    cfg = tiny("versus.opponents=[{name: random, weight: 1}]")
    with pytest.raises(ValueError, match="'random' draws from a generator of its own"):
        make_table_env(cfg, seed=0)


def test_the_table_env_state_continues_exactly():
    cfg = tiny()
    a = make_table_env(cfg, seed=5)
    a.mix.pool.add(0, _hard_at_the_table())
    stream = _random_tables(a, 40, seed=2)
    for _ in range(25):
        next(stream)
    arrays, facts = a.get_state()
    pool_arrays, pool_facts = a.mix.pool.state()
    b = make_table_env(cfg, seed=99)
    b.mix.pool.restore(pool_arrays, pool_facts)
    b.set_state(arrays, json.loads(json.dumps(facts)))
    rng = np.random.default_rng(4)
    for _ in range(60):
        masks = a.action_masks()
        np.testing.assert_array_equal(masks, b.action_masks())
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        a.step_async(actions)
        b.step_async(actions)
        oa, ra, da, _ = a.step_wait()
        ob, rb, db, _ = b.step_wait()
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(da, db)


# ------------------------------------------------------------------------------ hard's weights
def test_the_widened_network_plays_exactly_as_hard_at_step_0():
    import torch

    from yahtzee_agents.export import numpy_policy
    from yahtzee_agents.sb3.train import build_model
    from yahtzee_agents.sb3.warm_start import init_policy

    cfg = tiny()
    env = make_table_env(cfg, seed=0)
    model = build_model(cfg, env, None)
    facts = init_policy(model, cfg)
    assert facts["zero_columns"] == 21 and facts["input_version"] == 2
    first = model.policy.mlp_extractor.policy_net[0].weight.detach().numpy()
    assert first.shape == (256, 107) and not first[:, 86:].any()
    hard, mine = load_opponent("hard"), numpy_policy(model, input_version=TABLE_INPUT_VERSION)
    rng = np.random.default_rng(0)
    rows, masks, cards = [], [], []
    for g in range(12):  # positions of 2-seat games: every box count, both seats
        game = Game("official", num_players=2, canonical_holds=True)
        game.reset(rng)
        while not game.over:
            seat, mask = game.current, game.legal_action_mask()
            if g % 3 == 0:
                rows.append(encode_seat(game, seat))
                masks.append(mask)
                cards.append(table_cards(game, seat))
            game.step(hard.act(encode_seat(game, seat), mask))
    rows, masks, cards = np.array(rows), np.array(masks), np.array(cards)
    want = hard.act_batch(rows, masks)
    np.testing.assert_array_equal(mine.act_batch_table(rows, masks, cards), want)
    # and the SB3 policy itself, deterministic, on the learner's input
    table = table_input(rows, cards, 63)
    with torch.no_grad():
        got, _ = model.predict(model_input(table, 3, 63), action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(
        mine.logits(table), hard.logits(rows), rtol=1e-5, atol=1e-4
    )  # the same logits, up to float32 summation order


# ------------------------------------------------------------------------------ a tiny run
def test_a_tiny_run_resumes_exactly_and_its_model_is_graded_and_verified(tmp_path):
    from yahtzee_agents.train import train
    from yahtzee_env.analysis.multiplayer import benchmark_versus
    from yahtzee_env.analysis.table_decisions import find_table_decisions, format_decisions
    from yahtzee_env.analysis.verify import verify_digests, verify_row

    whole = train(tiny("train.total_timesteps=512"), tmp_path / "a", progress=False, argv=[])
    first = train(tiny("train.total_timesteps=256"), tmp_path / "b", progress=False, argv=[])
    again = train(tiny("train.total_timesteps=512"), first, resume=True, progress=False, argv=[])
    digest = [json.loads((r / "final" / "eval.json").read_text()) for r in (whole, again)]
    assert digest[0]["weights_sha256"] == digest[1]["weights_sha256"]
    assert digest[0]["timesteps"] == 512 and "win_rate" in digest[0]
    assert json.loads((whole / "init.json").read_text())["init"] == "hard"
    evals = [json.loads(line) for line in (whole / "evals.jsonl").read_text().splitlines()]
    assert evals[0]["timesteps"] == 0 and evals[0]["opponent"] == "optimal"

    row = benchmark_versus(str(whole), players=2, vs=["optimal"], deals=6, duplicate=True)
    assert (
        row["opponents"][0]["wins"] + row["opponents"][0]["draws"] + row["opponents"][0]["losses"]
        == 12
    )
    assert row["knew"]["reward"].startswith("game result only")
    assert row["knew"]["teacher"] == "none (its policy network started from hard's weights)"
    row = json.loads(json.dumps(row))
    assert verify_row(row, str(whole)).how == "exactly"
    assert verify_digests(row, str(whole)).holds

    agent = load_opponent("hard")  # any policy: here the analysis's plumbing, not a result
    report = find_table_decisions(_TableHard(agent), games=2, seed=0)
    assert report["agent_moves"] > 40 and report["off_optimum_because_of_the_other_card"] == 0
    assert "moves off the solver's" in format_decisions(report)
    assert report["window"] == {
        "moves": 0, "p_win_higher": 0, "p_win_lower": 0, "p_win_equal": 0,
        "p_win_change": 0.0, "in_a_decided_game": 0,
    }  # fmt: skip


def test_the_window_summary_counts_what_each_move_does_to_the_chance_of_winning():
    from yahtzee_env.analysis.table_decisions import window_summary

    def decision(solver, agent):
        return {"solver": {"p_win": solver}, "agent": {"p_win": agent}}

    decisions = [
        decision(0.40, 0.45),  # raised
        decision(0.60, 0.50),  # lowered
        decision(1.00, 1.00),  # the same, in a decided game
        decision(0.005, 0.0),  # lowered, in a decided game (at most 0.01)
        decision(None, None),  # outside the window: not counted
    ]
    w = window_summary(decisions)
    assert (w["moves"], w["p_win_higher"], w["p_win_lower"], w["p_win_equal"]) == (4, 1, 2, 1)
    assert w["p_win_change"] == pytest.approx(0.05 - 0.10 - 0.005)
    assert w["in_a_decided_game"] == 2


class _TableHard:
    """hard, asked at a table (it ignores the cards)."""

    name = "hard"

    def __init__(self, hard):
        self.hard = hard

    def act_table(self, observation, action_mask, cards):
        return self.hard.act(observation, action_mask)


# ------------------------------------------------------------------------------ the KL anchor
def test_the_masked_kl_is_the_kl_over_the_legal_actions():
    import torch

    from yahtzee_agents.sb3.anchor import masked_kl

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(50, 12)), rng.normal(size=(50, 12))
    masks = rng.random((50, 12)) < 0.6
    masks[:, 0] = True
    want = []
    for x, y, m in zip(a, b, masks, strict=True):
        p = np.exp(x[m] - np.logaddexp.reduce(x[m]))
        q = y[m] - np.logaddexp.reduce(y[m])
        want.append(np.sum(p * (np.log(p) - q)))
    # the policy's logits as LeanMaskedCategorical holds them: masked at -1e8, normalised
    q = torch.where(torch.as_tensor(masks), torch.as_tensor(b), torch.tensor(-1e8))
    q = q - q.logsumexp(-1, keepdim=True)
    got = masked_kl(torch.as_tensor(a), q, torch.as_tensor(masks)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert (got >= 0).all()
    same = masked_kl(torch.as_tensor(b), q, torch.as_tensor(masks)).numpy()
    np.testing.assert_allclose(same, 0.0, atol=1e-12)


def test_the_anchor_needs_a_starting_network():
    with pytest.raises(ConfigError, match=r"ppo\.anchor_kl: needs policy\.init"):
        load_config(ROOT / "configs" / "tiny.yaml", ["ppo.anchor_kl=0.5"])
    with pytest.raises(ConfigError, match=r"ppo\.anchor_kl: must be >= 0"):
        tiny("ppo.anchor_kl=-1")
    # unset, it leaves the config's digest as it was (older runs keep theirs)
    assert "anchor_kl" not in tiny().to_dict()["ppo"]
    assert tiny("ppo.anchor_kl=0.5").to_dict()["ppo"]["anchor_kl"] == 0.5
    # the release: a number of turns the anchor lets go of, only with an anchor
    with pytest.raises(ConfigError, match=r"ppo\.anchor_release: must be 0-12 turns, got 13"):
        tiny("ppo.anchor_kl=0.5", "ppo.anchor_release=13")
    with pytest.raises(ConfigError, match=r"ppo\.anchor_release: must be 0-12 turns, got -1"):
        tiny("ppo.anchor_kl=0.5", "ppo.anchor_release=-1")
    with pytest.raises(ConfigError, match=r"ppo\.anchor_release: expected int, got 2.5"):
        tiny("ppo.anchor_kl=0.5", "ppo.anchor_release=2.5")
    with pytest.raises(ConfigError, match=r"ppo\.anchor_release: lets go of an anchor"):
        tiny("ppo.anchor_release=3")
    assert "anchor_release" not in tiny("ppo.anchor_kl=0.5").to_dict()["ppo"]
    assert tiny("ppo.anchor_kl=0.5", "ppo.anchor_release=3").to_dict()["ppo"]["anchor_release"] == 3


def test_the_anchor_lets_go_of_the_last_turns_by_the_open_boxes():
    import torch

    from yahtzee_agents.sb3.anchor import anchored_states

    rng = np.random.default_rng(3)
    game = Game("official", num_players=2, canonical_holds=True)
    game.reset(rng)
    rows, open_boxes = [], []
    while not game.over:
        rows.append(model_input(encode_table(game, game.current)[None], TABLE_INPUT_VERSION)[0])
        open_boxes.append(game.players[game.current].scores.count(None))
        legal = np.flatnonzero(game.legal_action_mask())
        game.step(int(rng.choice(legal)))
    obs, open_boxes = torch.as_tensor(np.array(rows)), np.array(open_boxes)
    assert set(open_boxes) == set(range(1, 14))
    for release in (0, 1, 3, 12):
        held = anchored_states(obs, release).numpy()
        np.testing.assert_array_equal(held, (open_boxes > release).astype(np.float32))


def _kl_to_hard(run: Path) -> float:
    """Mean KL(hard || the run's final policy) at the positions of 2-seat games."""
    from sb3_contrib import MaskablePPO

    from yahtzee_agents.export import numpy_policy
    from yahtzee_env.analysis.drift import drift

    model = MaskablePPO.load(run / "final" / "model.zip", device="cpu")
    mine = numpy_policy(model, input_version=TABLE_INPUT_VERSION)
    return drift(load_opponent("hard"), mine, games=4, seed=1)["kl_mean"]


def test_the_anchor_holds_the_policy_near_hard_and_resumes_exactly(tmp_path):
    from yahtzee_agents.train import train

    fast = ["train.total_timesteps=512", "ppo.learning_rate=0.003", "versus.value_warmup=0"]
    free = train(tiny(*fast), tmp_path / "free", progress=False, argv=[])
    held = train(tiny(*fast, "ppo.anchor_kl=20"), tmp_path / "held", progress=False, argv=[])
    drift, kept = _kl_to_hard(free), _kl_to_hard(held)
    print(f"KL to hard: free {drift:.4g}, held {kept:.4g}")
    assert drift > 0 and kept < 0.5 * drift, (drift, kept)
    # its rows say so: the anchor is in what it knew (not a teacher), its track names the prior
    from yahtzee_env.analysis.multiplayer import benchmark_versus

    row = benchmark_versus(str(held), players=2, vs=["optimal"], deals=2)
    assert row["knew"]["teacher"] == (
        "none (its policy network started from hard's weights; a KL penalty to them in its "
        "loss, coefficient 20)"
    )
    assert row["track"] == (
        "model-free with aids (features, canonical holds, started from hard's weights, KL-anchored)"
    )
    # the anchor is rebuilt from policy.init on resume: the continuation is the same run
    first = train(
        tiny(*fast[1:], "train.total_timesteps=256", "ppo.anchor_kl=20"),
        tmp_path / "part",
        progress=False,
        argv=[],
    )
    again = train(tiny(*fast, "ppo.anchor_kl=20"), first, resume=True, progress=False, argv=[])
    digest = [json.loads((r / "final" / "eval.json").read_text()) for r in (held, again)]
    assert digest[0]["weights_sha256"] == digest[1]["weights_sha256"]


def test_a_released_anchor_leaves_its_last_turns_out_of_the_penalty(tmp_path):
    """Released for 12 turns, the anchor holds only the first turn's states, 1/13 of the
    data: the run moves nearly as far from hard as a run with no anchor (0.37 with this
    tiny schedule), and far more than the same anchor on every state (0.05). (How far the
    held states pull the released ones through the shared network is what a real run
    measures by turn: `drift`'s ``by_turn``.)"""
    from yahtzee_agents.train import train
    from yahtzee_env.analysis.multiplayer import benchmark_versus

    fast = ["train.total_timesteps=512", "ppo.learning_rate=0.003", "versus.value_warmup=0"]
    runs = {
        release: train(
            tiny(*fast, "ppo.anchor_kl=20", f"ppo.anchor_release={release}"),
            tmp_path / f"release-{release}",
            progress=False,
            argv=[],
        )
        for release in (0, 12)
    }
    held, released = _kl_to_hard(runs[0]), _kl_to_hard(runs[12])
    print(f"KL to hard: every state anchored {held:.4g}, the last 12 turns released {released:.4g}")
    assert released > 3 * held, (held, released)
    row = benchmark_versus(str(runs[12]), players=2, vs=["optimal"], deals=2)
    assert row["knew"]["teacher"].endswith("coefficient 20, except in its last 12 turns)")


def test_the_drift_from_hard_is_zero_for_hard_and_grows_for_another_network():
    from yahtzee_env.analysis.drift import drift

    hard = load_opponent("hard")
    same = drift(hard, hard, games=3, seed=0)
    assert same["positions"] > 100 and same["same_move"] == 1.0
    assert same["kl_mean"] == pytest.approx(0.0, abs=1e-9)
    assert same["entropy_model"] == pytest.approx(same["entropy_reference"])
    # hard widened for the table (zero columns for the other card), as the win level starts
    wide = _hard_at_the_table()
    assert drift(hard, wide, games=3, seed=0)["kl_mean"] == pytest.approx(0.0, abs=1e-6)
    other = drift(hard, load_opponent("medium"), games=3, seed=0)
    assert other["positions"] == same["positions"]  # the same positions: hard's games
    assert other["kl_mean"] > 0.05 and other["same_move"] < 0.95
    # by the mover's turn: 3 games of 2 seats = 6 decisions' rows per turn at least, and the
    # turns' means weigh back to the whole
    turns = other["by_turn"]
    assert [t["turn"] for t in turns] == list(range(1, 14))
    assert sum(t["positions"] for t in turns) == other["positions"]
    assert all(t["positions"] >= 6 for t in turns)
    weighted = sum(t["kl_mean"] * t["positions"] for t in turns) / other["positions"]
    assert weighted == pytest.approx(other["kl_mean"])
    assert sum(t["kl_share"] for t in turns) == pytest.approx(1.0)
    assert all(t["same_move"] == 1.0 and t["kl_share"] == 0.0 for t in same["by_turn"])
    with pytest.raises(ValueError, match="games: must be at least 1, got 0"):
        drift(hard, hard, games=0)


def test_an_even_table_hides_the_other_card_and_table_reading_pairs_the_deals():
    from yahtzee_env.analysis.table_decisions import EvenTable, table_reading

    model = _hard_at_the_table()  # reads the table with zero weights: blind to it
    seen = []

    class Spy:
        reads_table, table_only, name, threshold = True, True, "spy", model.threshold

        def act_batch_table(self, observations, action_masks, cards):
            seen.append(np.array(cards))
            return model.act_batch_table(observations, action_masks, cards)

    even = EvenTable(Spy())
    cards = np.array([[[1, 2, 0, 10], [7, 9, 1, 60]]])
    game = Game("official", num_players=2, canonical_holds=True)
    game.reset(np.random.default_rng(0))
    even.act_batch_table(encode_seat(game, 0)[None], game.legal_action_mask()[None], cards)
    np.testing.assert_array_equal(seen[-1], [[[1, 2, 0, 10], [1, 2, 0, 10]]])
    np.testing.assert_array_equal(cards, [[[1, 2, 0, 10], [7, 9, 1, 60]]])  # not changed
    with pytest.raises(ValueError, match="does not read the table"):
        EvenTable(load_opponent("hard"))
    # a policy blind to the other card plays the same games on an even table: difference 0
    report = table_reading(model, "greedy", deals=6, seed=3)
    assert report["games"] == 12 and report["seed"] == 3
    assert report["with_the_table"] == report["on_an_even_table"]
    assert report["win_rate_difference"] == 0.0 and report["win_rate_difference_ci95"] == 0.0


# ------------------------------------------------------------------------------ the winner
WINNER = ROOT / "configs" / "winner.yaml"


def test_the_winner_distils_the_duelist_at_the_table(tmp_path):
    """configs/winner.yaml's warm start: the duelist plays the learner's seat, its moves are
    the targets, the game's result the value; the run says what it was taught."""
    from yahtzee_agents.sb3.warm_start import table_teacher_dataset
    from yahtzee_agents.train import train

    cfg = load_config(
        WINNER,
        [*TINY, "warm_start.games=6", "warm_start.epochs=1", "warm_start.batch_size=128",
         "warm_start.explore=0.1", "train.total_timesteps=0"],
    )  # fmt: skip
    data = table_teacher_dataset(cfg, seed=0)
    n = data["obs"].shape[0]
    assert data["obs"].shape == (n, 107) and n > 6 * 20  # about 35 decisions a game
    assert data["mask"][np.arange(n), data["target"].argmax(1)].all()  # a legal move each
    assert set(np.unique(data["value"]).tolist()) <= {-1.0, 0.0, 1.0}

    run = train(cfg, tmp_path / "winner", progress=False, argv=[])
    warm = json.loads((run / "warm_start.json").read_text())
    assert warm["teacher"] == "duelist" and warm["decisions"] > 6 * 20
    meta = json.loads((run / "meta.json").read_text())
    teacher = meta["knew"]["teacher"]
    assert teacher.startswith("solver (distilled from the duelist")
    assert "started from hard's weights" in teacher and meta["method"] == "distilled"
    from yahtzee_env.commands.cli import main

    assert main(["export", str(run), "--out", str(tmp_path / "out")]) in (0, None)
    manifest = json.loads((tmp_path / "out" / "winner.json").read_text())
    assert (manifest["objective"], manifest["teacher"]) == ("win", "duelist")


def test_the_duelist_teaches_only_at_a_table():
    with pytest.raises(ConfigError, match="the duelist teaches at a 2-seat table"):
        load_config(ROOT / "configs" / "tiny.yaml", ["warm_start.teacher=duelist"])
    with pytest.raises(ConfigError, match="at a 2-seat table the teacher is the duelist"):
        load_config(WINNER, ["teacher=optimal", "warm_start.teacher=optimal"])


def test_a_win_runs_checkpoint_exports_with_its_logged_win_rate(tmp_path):
    """`yahtzee export RUN --model STEPS` of a run graded by its win rate (no solitaire mean
    in its logs) takes the evaluation logged at that step, and a step with none gets none."""
    from yahtzee_agents.curves import evaluation_at

    rows = [
        {"timesteps": 2000, "games": 10, "deals": 5, "seed": 1, "opponent": "optimal",
         "win_rate": 0.5, "win_ci95": 0.3},
        {"timesteps": 4000, "games": 10, "deals": 5, "seed": 1, "opponent": "optimal",
         "win_rate": 0.6, "win_ci95": 0.3},
    ]  # fmt: skip
    (tmp_path / "evals.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert evaluation_at(tmp_path, 4000) == rows[1]
    assert evaluation_at(tmp_path, 3000) is None
