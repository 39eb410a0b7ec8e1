"""`YahtzeeVs-v0`: checker, opponents inside step, seats, determinism, masks, rewards,
illegal actions and opponent kinds."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import register
from gymnasium.utils.env_checker import check_env

import yahtzee_env  # noqa: F401  (registers Yahtzee-v0)
from yahtzee_env.analysis.tournament import play_game
from yahtzee_env.envs.versus import YahtzeeVsEnv
from yahtzee_env.envs.yahtzee import UnsupportedRenderModeError
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, IllegalActionError
from yahtzee_env.game.observation import OBS_SIZE
from yahtzee_env.game.rules import BOX_NAMES
from yahtzee_env.policies.baselines import make_policy
from yahtzee_env.policies.models import ModelFormatError, save_policy

if "YahtzeeVs-v0" not in gym.registry:
    register(id="YahtzeeVs-v0", entry_point="yahtzee_env.envs.versus:YahtzeeVsEnv")

CHANCE = BOX_ACTION_OFFSET + BOX_NAMES.index("chance")


def play(env, seed, policy_seed=0):
    """Random legal actions to the end; (observations, rewards, infos)."""
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    observations, rewards, infos = [obs], [], [info]
    terminated = False
    while not terminated:
        mask = env.unwrapped.action_masks()
        assert mask.any()
        assert np.array_equal(mask, info["action_mask"].astype(bool))
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not truncated
        observations.append(obs)
        rewards.append(reward)
        infos.append(info)
    assert not env.unwrapped.action_masks().any() and not info["action_mask"].any()
    return observations, rewards, infos


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"opponents": ["greedy", "random", "heuristic"], "seat": "random", "reward": "score"},
    ],
)
def test_check_env_without_warnings(kwargs, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("YahtzeeVs-v0", **kwargs)
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []
    capsys.readouterr()  # check_env renders the "human" mode


def test_opponents_move_inside_step_and_reset():
    env = YahtzeeVsEnv(opponents=["greedy"], seat=1)
    _, info = env.reset(seed=0)
    # greedy sits before the agent: it has played its first turn already.
    assert env.game.players[0].filled.bit_count() == 1 and info["totals"][0] > 0
    assert env.game.current == 1 and info["seat"] == 1
    env.step(CHANCE)
    assert env.game.players[0].filled.bit_count() == 2
    assert env.game.players[1].filled.bit_count() == 1
    assert env.game.current == 1

    env = YahtzeeVsEnv(opponents=["greedy", "greedy"], seat=0)
    env.reset(seed=0)
    assert all(p.filled == 0 for p in env.game.players)
    _, _, _, _, info = env.step(CHANCE)
    assert [p.filled.bit_count() for p in env.game.players] == [1, 1, 1]
    assert info["totals"].tolist() == env.game.totals()


def test_random_seat_and_observation_size():
    env = YahtzeeVsEnv(opponents=["greedy", "random", "greedy"], seat="random")
    assert env.observation_space.shape == (133,)
    seats = set()
    for seed in range(24):
        obs, info = env.reset(seed=seed)
        seats.add(info["seat"])
        assert env.game.current == info["seat"]
        assert obs.shape == (133,) and obs.dtype == np.float32
        assert env.observation_space.contains(obs)
    assert seats == {0, 1, 2, 3}


def test_determinism_with_seed_including_random_opponents():
    env = YahtzeeVsEnv(opponents=["random", "random"], seat="random")
    first = play(env, seed=7)
    second = play(env, seed=7)
    for a, b in zip(first[0], second[0], strict=True):
        assert np.array_equal(a, b)
    assert first[1] == second[1]
    assert [i["totals"].tolist() for i in first[2]] == [i["totals"].tolist() for i in second[2]]
    other = play(env, seed=8)
    assert [i["totals"].tolist() for i in other[2]] != [i["totals"].tolist() for i in first[2]]


@pytest.mark.parametrize("seat", [0, 1])
def test_win_reward_at_the_end(seat):
    env = YahtzeeVsEnv(opponents=["greedy"], seat=seat, reward="win")
    _, rewards, infos = play(env, seed=3)
    assert all(r == 0.0 for r in rewards[:-1])
    final = infos[-1]
    totals = final["totals"].tolist()
    best = max(totals)
    expected = (1.0 if totals.count(best) == 1 else 0.0) if totals[seat] == best else -1.0
    assert rewards[-1] == expected
    assert final["winners"].tolist() == [t == best for t in totals]
    assert final["total"] == totals[seat]
    assert all(p.complete for p in env.game.players)


def test_score_reward_sums_to_agent_total():
    env = YahtzeeVsEnv(opponents=["random", "greedy"], seat=2, reward="score")
    _, rewards, infos = play(env, seed=4)
    assert sum(rewards) == infos[-1]["total"] == env.game.players[2].total


def test_info_keys():
    env = YahtzeeVsEnv(opponents=["greedy"])
    _, info = env.reset(seed=0)
    assert {
        "dice",
        "rolls_left",
        "scorecard",
        "upper_total",
        "upper_bonus",
        "yahtzee_bonus",
        "total",
        "action_mask",
        "seat",
        "totals",
    } <= set(info)
    assert info["action_mask"].dtype == np.int8


def test_illegal_actions_raise_or_penalize():
    env = YahtzeeVsEnv(opponents=["greedy"])
    env.reset(seed=0)
    env.step(CHANCE)
    before = (env.game.roll, env.game.totals())
    with pytest.raises(IllegalActionError):
        env.step(CHANCE)
    assert (env.game.roll, env.game.totals()) == before
    with pytest.raises(IllegalActionError):
        env.step(45)

    env = YahtzeeVsEnv(opponents=["greedy"], illegal_action="penalize", illegal_penalty=-2.0)
    obs, _ = env.reset(seed=0)
    obs, _, _, _, _ = env.step(CHANCE)
    again, reward, terminated, _, info = env.step(CHANCE)
    assert reward == -2.0 and not terminated and info["illegal_action"]
    assert np.array_equal(obs, again)


def test_agent_policy_plays_the_same_game_as_the_engine():
    """The agent's first 72 entries are its `Yahtzee-v0` observation: a CPU policy in the
    agent's seat plays the engine's game exactly (same seed, seat 0 starts)."""
    heuristic, greedy = make_policy("heuristic"), make_policy("greedy")
    env = YahtzeeVsEnv(opponents=[greedy], seat=0, reward="score")
    obs, info = env.reset(seed=21)
    terminated = False
    while not terminated:
        action = heuristic.act(obs[:OBS_SIZE], env.action_masks())
        obs, _, terminated, _, info = env.step(action)
    assert info["totals"].tolist() == play_game(
        [heuristic, greedy], "official", np.random.default_rng(21)
    )


def test_opponent_kinds(tmp_path):
    rng = np.random.default_rng(0)
    weights = [
        (rng.normal(size=(72, 16)).astype(np.float32), np.zeros(16, np.float32)),
        (rng.normal(size=(16, 45)).astype(np.float32), np.zeros(45, np.float32)),
    ]
    path = save_policy(tmp_path, "tiny", weights, "relu", rules="official", config_sha256="0" * 64)
    env = YahtzeeVsEnv(opponents=[str(path), make_policy("greedy")], seat=1)
    assert env.opponent_names == [str(path), "GreedyPolicy"]
    play(env, seed=0)
    with pytest.raises(ValueError, match="opponents"):
        YahtzeeVsEnv(opponents=[])
    with pytest.raises(ValueError, match="unknown policy"):
        YahtzeeVsEnv(opponents=["nobody"])
    with pytest.raises(ValueError, match="seat"):
        YahtzeeVsEnv(opponents=["greedy"], seat=2)


def test_missing_level_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr("yahtzee_env.policies.models.LEVELS_DIR", tmp_path)  # an install without it
    with pytest.raises(ModelFormatError, match="not shipped"):
        YahtzeeVsEnv(opponents=["hard"])


def test_render():
    env = YahtzeeVsEnv(opponents=["greedy"], render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "agent" in text and "greedy" in text


def test_works_without_pettingzoo():
    """`YahtzeeVs-v0` needs gymnasium and numpy only: with every pettingzoo import failing it
    still makes and plays a whole game (pettingzoo is a dev extra, not a core dependency)."""
    code = textwrap.dedent(
        """
        import sys

        class BlockPettingZoo:
            def find_spec(self, name, path=None, target=None):
                if name == "pettingzoo" or name.startswith("pettingzoo."):
                    raise ImportError(f"{name} is blocked in this test")
                return None

        sys.meta_path.insert(0, BlockPettingZoo())
        try:
            import pettingzoo  # noqa: F401
        except ImportError:
            pass
        else:
            raise AssertionError("pettingzoo was not blocked")

        import gymnasium as gym
        import numpy as np
        import yahtzee_env  # noqa: F401

        env = gym.make("YahtzeeVs-v0", opponents=["greedy"])
        rng = np.random.default_rng(0)
        obs, info = env.reset(seed=0)
        terminated = False
        while not terminated:
            mask = env.unwrapped.action_masks()
            action = int(rng.choice(np.flatnonzero(mask)))
            obs, reward, terminated, truncated, info = env.step(action)
        assert obs.shape == (93,) and "winners" in info and reward in (-1.0, 0.0, 1.0)
        assert "yahtzee_env.envs.multiplayer" not in sys.modules
        assert not any(m.split(".")[0] == "pettingzoo" for m in sys.modules)
        print("game over", info["totals"])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("game over")


def test_unsupported_render_mode_is_a_value_and_type_error():
    # A TypeError too, so that SB3's make_vec_env retries without render_mode="rgb_array".
    for error in (UnsupportedRenderModeError, ValueError, TypeError):
        with pytest.raises(error, match="render_mode"):
            YahtzeeVsEnv(opponents=["greedy"], render_mode="rgb_array")
    with (
        pytest.warns(UserWarning, match="render_mode"),  # gymnasium's own note, then ours
        pytest.raises(TypeError, match="render_mode"),
    ):
        gym.make("YahtzeeVs-v0", opponents=["greedy"], render_mode="rgb_array")


def test_action_masks_is_a_writable_copy():
    env = YahtzeeVsEnv(opponents=["greedy"])
    env.reset(seed=0)
    mask = env.action_masks()
    assert mask.flags.writeable and mask.any()
    expected = mask.copy()
    mask[:] = False
    assert np.array_equal(env.action_masks(), expected)


def test_decisive_games_and_their_two_intervals() -> None:
    """The figures a peer who counts otherwise can compare: the draw rate, the win rate over
    decisive games, its CI paired by deal (the delta method's ratio-of-sums variance) and its
    binomial CI."""
    from yahtzee_env.analysis.evaluation import Z95
    from yahtzee_env.analysis.multiplayer import decisive

    results = np.array([[1, -1], [1, 1], [0, -1], [1, 0], [-1, -1], [1, -1]], dtype=np.int8)
    out = decisive(results)
    wins, played = np.array([1, 2, 0, 1, 0, 1.0]), np.array([2, 2, 1, 1, 2, 2.0])
    rate = wins.sum() / played.sum()  # 5 of 10 decisive games
    assert out["draw_rate"] == pytest.approx(2 / 12) and out["decisive_win_rate"] == 0.5
    deals = len(wins)
    paired = Z95 * np.sqrt(deals / (deals - 1) * ((wins - rate * played) ** 2).sum()) / 10
    assert out["decisive_ci95"] == pytest.approx(paired)
    assert out["decisive_ci95_binomial"] == pytest.approx(Z95 * np.sqrt(0.25 / 10))
    assert np.isnan(decisive(np.zeros((3, 2), dtype=np.int8))["decisive_win_rate"])


def test_a_versus_row_says_how_its_seats_and_intervals_were_made() -> None:
    from yahtzee_env.analysis.multiplayer import benchmark_versus, format_versus

    row = benchmark_versus("greedy", players=2, vs=["random"], deals=24)
    (o,) = row["opponents"]
    assert row["seats"].startswith("alternated") and "paired by deal" in row["interval"]
    games = o["wins"] + o["draws"] + o["losses"]
    assert o["draw_rate"] == pytest.approx(o["draws"] / games)
    assert o["decisive_win_rate"] == pytest.approx(o["wins"] / (o["wins"] + o["losses"]))
    text = format_versus(row)
    assert "over decisive games" in text and "binomial" in text and "seats alternated" in text


def test_a_versus_row_on_unseen_deals_is_replayed_at_its_own_seed(tmp_path) -> None:
    """``--deal-seed``: the same protocol on other deals (a check on deals no choice was made
    on); the row says its seed, is not the standard protocol's, and `yahtzee verify` replays
    it at that seed (by digests too); a forged seed does not hold."""
    import json

    from yahtzee_env.analysis.multiplayer import benchmark_versus
    from yahtzee_env.analysis.verify import RowError, verify_digests, verify_row

    standard = benchmark_versus("greedy", players=2, vs=["heuristic"], deals=2000)
    assert standard["seed"] == 0 and standard["standard"] is True
    row = benchmark_versus("greedy", players=2, vs=["heuristic"], deals=12, seed=7)
    assert row["seed"] == 7 and row["standard"] is False
    again = benchmark_versus("greedy", players=2, vs=["heuristic"], deals=12)
    assert row["provenance"]["dice_sha256"] != again["provenance"]["dice_sha256"]
    assert verify_row(row, "greedy").how == "exactly"
    assert verify_digests(row, "greedy").holds
    forged = json.loads(json.dumps(row))
    forged["seed"] = 8
    with pytest.raises(RowError, match="dice_sha256"):
        verify_digests(forged, "greedy")
    with pytest.raises(ValueError, match="seed: must be 0 to 2\\*\\*32 - 1, got -1"):
        benchmark_versus("greedy", players=2, vs=["heuristic"], deals=2, seed=-1)
    # the command line: --deal-seed for the multi-player protocol only, named in the error
    import contextlib
    import io

    from yahtzee_env.commands.cli import main

    def cli(*args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return code, out.getvalue(), err.getvalue()

    path = tmp_path / "row.json"
    flags = ["--players", "2", "--vs", "heuristic", "--deals", "12", "--deal-seed", "7"]
    code, out, err = cli("benchmark", "greedy", *flags, "--no-progress", "--json", str(path))
    assert code == 0, err
    assert "seed 7" in out and json.loads(path.read_text())["seed"] == 7
    code, _, err = cli("benchmark", "greedy", "--deal-seed", "7")
    assert code == 2 and "--deal-seed is for --players 2-4 --vs" in err
