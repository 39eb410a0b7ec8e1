"""Tournaments (`yahtzee_env.analysis.tournament`, `yahtzee tournament`): statistics,
reproducibility, seat
fairness, agreement of the batched tables with the engine, the CLI outputs."""

from __future__ import annotations

import argparse
import itertools
import json

import numpy as np
import pytest

from yahtzee_env.analysis.tournament import (
    Entrant,
    format_tournament,
    game_results,
    play_batched_games,
    play_game,
    play_match,
    run_tournament,
    score_matrix,
    seat_arrangements,
    tournament_tables,
    unique_names,
    wilson_interval,
)
from yahtzee_env.commands import non_negative_int, positive_int
from yahtzee_env.commands.cli import main
from yahtzee_env.policies.baselines import make_policy
from yahtzee_env.policies.models import save_policy


def entrants(*names, seed=0):
    return [Entrant(n, make_policy(n, seed=seed + i)) for i, n in enumerate(names)]


def without_speed(result):
    return {k: v for k, v in result.items() if k != "speed"}


def test_wilson_interval():
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0)


def test_game_results():
    totals = np.array([[200, 150, 90], [200, 200, 90], [10, 20, 30]])
    assert game_results(totals).tolist() == [[1, -1, -1], [0, 0, -1], [-1, -1, 1]]


def test_seat_arrangements_are_balanced():
    assert seat_arrangements(2) == [(0, 1), (1, 0)]
    for k in (3, 4):
        arrangements = seat_arrangements(k)
        assert len(arrangements) == 2 * k
        for entrant, seat in itertools.product(range(k), repeat=2):
            assert sum(a[seat] == entrant for a in arrangements) == 2
        for x, y in itertools.permutations(range(k), 2):
            before = sum(a.index(x) < a.index(y) for a in arrangements)
            assert before == k  # x precedes y in half of the arrangements


def test_tables_and_names():
    assert tournament_tables(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert tournament_tables(5, 4)[0] == (0, 1, 2, 3) and len(tournament_tables(5, 4)) == 5
    with pytest.raises(ValueError, match="at least 4 entrants"):
        tournament_tables(3, 4)
    assert unique_names(["hard", "hard", "easy", "hard"]) == ["hard", "hard#2", "easy", "hard#3"]


def test_small_tournament_fields_and_reproducibility():
    result = run_tournament(entrants("greedy", "random", "random"), games=100, seed=3)
    assert result["entrants"] == ["greedy", "random", "random#2"]
    assert result["config"]["games_per_table"] == 100 and result["config"]["ci"] == "wilson-95"
    assert len(result["head_to_head"]) == 3
    for row in result["head_to_head"]:
        assert row["games"] == row["wins"] + row["draws"] + row["losses"] == 100
        assert row["score"] == pytest.approx((row["wins"] + row["draws"] / 2) / 100)
        for rate, ci in [("score", "score_ci95"), ("win_rate", "win_ci95")]:
            assert ci in row and row[ci][0] <= row[rate] <= row[ci][1]
    greedy_random = result["head_to_head"][0]
    assert greedy_random["score"] > 0.9 and greedy_random["mean_a"] > greedy_random["mean_b"]
    for row in result["standings"]:
        assert row["games"] == 200
    again = run_tournament(entrants("greedy", "random", "random"), games=100, seed=3)
    assert without_speed(again) == without_speed(result)
    other = run_tournament(entrants("greedy", "random", "random"), games=100, seed=4)
    assert without_speed(other) != without_speed(result)
    text = format_tournament(result)
    assert "Head to head" in text and "greedy" in text and "games/s" in text
    matrix = score_matrix(result)
    assert np.isnan(matrix[0, 0]) and matrix[0, 1] + matrix[1, 0] == pytest.approx(1.0)


def test_same_policy_against_itself_is_even():
    result = run_tournament(entrants("greedy", "greedy"), games=4000, seed=0)
    row = result["head_to_head"][0]
    assert row["score_ci95"][0] < 0.5 < row["score_ci95"][1]
    assert 0.46 < row["score"] < 0.54
    seats = result["seats"]
    assert [s["games"] for s in seats] == [4000, 4000]
    assert all(0.45 < s["win_rate"] < 0.53 for s in seats)


def test_four_player_tables():
    result = run_tournament(entrants("greedy", "random", "greedy", "random"), players=4, games=16)
    assert result["config"]["games_per_table"] == 16
    assert len(result["head_to_head"]) == 6
    assert all(row["games"] == 16 for row in result["head_to_head"])
    win = sum(r["wins"] for r in result["standings"])
    draw_games = 16 - win
    assert 0 <= draw_games <= 16
    assert len(result["seats"]) == 4 and all(s["games"] == 16 for s in result["seats"])
    with pytest.raises(ValueError, match="entrants"):
        run_tournament(entrants("greedy", "random"), players=4, games=8)


def test_games_are_rounded_up_to_whole_arrangements():
    result = run_tournament(entrants("greedy", "random"), games=5)
    assert result["config"]["games_per_table"] == 6
    assert result["head_to_head"][0]["games"] == 6


def test_batched_tables_match_the_engine_in_distribution():
    greedy, rand = make_policy("greedy"), make_policy("random", seed=1)
    batched = play_batched_games([greedy, rand], 1000, seed=0, batch_size=256)
    assert batched.shape == (1000, 2)
    rng = np.random.default_rng(0)
    engine = np.array([play_game([greedy, rand], "official", rng) for _ in range(150)])
    for seat in range(2):
        assert abs(batched[:, seat].mean() - engine[:, seat].mean()) < 8.0
    # Seeded: the same seed gives the same games.
    assert np.array_equal(
        play_batched_games([greedy], 300, seed=5), play_batched_games([greedy], 300, seed=5)
    )


def test_play_match_on_the_engine():
    result = play_match(
        [make_policy("greedy"), make_policy("random", seed=0)], rng=np.random.default_rng(0)
    )
    assert result.winners == (0,) and result.wins[0] == 3 and len(result.game_totals) >= 3


def test_engine_games_need_a_seed_or_rng():
    policies = [make_policy("greedy"), make_policy("greedy")]
    with pytest.raises(TypeError, match="needs rng"):
        play_game(policies)
    with pytest.raises(TypeError, match="needs rng"):
        play_match(policies)
    seeded = play_game(policies, "official", 7)  # an int seed is a fresh Generator
    assert seeded == play_game(policies, "official", np.random.default_rng(7))
    assert play_match(policies, rng=3) == play_match(policies, rng=np.random.default_rng(3))


def test_argparse_integer_types():
    assert positive_int("3") == 3 and non_negative_int("0") == 0
    for text, parse, message in [
        ("0", positive_int, "expected a positive integer, got '0'"),
        ("x", positive_int, "expected a positive integer, got 'x'"),
        ("-1", non_negative_int, "expected a non-negative integer, got '-1'"),
        ("1.5", non_negative_int, "expected a non-negative integer, got '1.5'"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError) as err:
            parse(text)
        assert str(err.value) == message


@pytest.mark.parametrize(
    "argv",
    [
        ["tournament", "--policies", "greedy,random", "--no-progress", "--seed", "-1"],
        ["bench-env", "--steps", "10", "--seed", "-1"],
    ],
)
def test_negative_seed_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert "expected a non-negative integer, got '-1'" in err and "Traceback" not in err


def test_games_must_be_positive(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["tournament", "--policies", "greedy,random", "--games", "0"])
    assert exit_info.value.code == 2
    assert "expected a positive integer, got '0'" in capsys.readouterr().err


def test_cli_json_plot_and_model_path(tmp_path, capsys):
    rng = np.random.default_rng(0)
    weights = [
        (rng.normal(size=(72, 8)).astype(np.float32), np.zeros(8, np.float32)),
        (rng.normal(size=(8, 45)).astype(np.float32), np.zeros(45, np.float32)),
    ]
    model = save_policy(tmp_path, "tiny", weights, "tanh", rules="official", config_sha256="0" * 64)
    out_json, out_png = tmp_path / "t.json", tmp_path / "t.png"
    argv = ["tournament", "--policies", f"greedy,random,{model}", "--games", "40", "--seed", "1"]
    argv += ["--json", str(out_json), "--no-progress"]
    pytest.importorskip("matplotlib")
    assert main([*argv, "--plot", str(out_png)]) == 0
    text = capsys.readouterr().out
    assert "Head to head" in text and "tiny.json" in text  # named by the path given
    data = json.loads(out_json.read_text())
    assert data["config"]["players"] == 2 and len(data["head_to_head"]) == 3
    assert out_png.stat().st_size > 1000
    assert main(["tournament", "--policies", "greedy", "--no-progress"]) == 2
    assert main(["tournament", "--policies", "greedy,nobody", "--no-progress"]) == 2
