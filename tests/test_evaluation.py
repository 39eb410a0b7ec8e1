"""The evaluation harness: statistics, determinism, grading against optimal, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from yahtzee_env.analysis.evaluation import evaluate_policy, format_table, play_games
from yahtzee_env.commands.cli import main
from yahtzee_env.game.rules import BOX_NAMES
from yahtzee_env.policies.baselines import make_policy

OPTIMAL_OFFICIAL = 254.5877

RESULT_KEYS = {
    "policy", "rules", "games", "seed", "mean", "ci95", "std", "median", "p5", "p95", "min",
    "max", "upper_bonus_rate", "yahtzee_rate", "yahtzee_bonus_mean", "box_means", "decisions",
    "regret", "histogram", "seconds",
}  # fmt: skip


def _strip_time(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "seconds"}


def test_same_seed_same_results_whatever_the_workers() -> None:
    greedy = make_policy("greedy")
    one = evaluate_policy(greedy, 3000, seed=5, regret="no", workers=1)
    again = evaluate_policy(greedy, 3000, seed=5, regret="no", workers=1)
    two = evaluate_policy(greedy, 3000, seed=5, regret="no", workers=2)
    assert _strip_time(one) == _strip_time(again) == _strip_time(two)
    other = evaluate_policy(greedy, 3000, seed=6, regret="no", workers=1)
    assert other["mean"] != one["mean"]


def test_random_policy_is_reproducible_across_chunks_and_workers() -> None:
    random = make_policy("random", seed=123)
    kwargs = {"games": 9000, "seed": 0, "regret": "no"}  # three chunks of <= 4096 games
    one = evaluate_policy(random, workers=1, **kwargs)
    two = evaluate_policy(random, workers=2, **kwargs)
    again = evaluate_policy(random, workers=1, **kwargs)
    assert _strip_time(one) == _strip_time(two) == _strip_time(again)


def test_statistics_are_consistent() -> None:
    records = play_games(make_policy("heuristic"), 500, seed=1, regret="no")
    assert records.scores.shape == (500,)
    # The final total is the boxes plus both bonuses, game by game.
    np.testing.assert_array_equal(
        records.scores, records.box_scores.sum(axis=1) + records.upper_bonus + records.yahtzee_bonus
    )
    assert set(np.unique(records.upper_bonus)) <= {0, 35}
    assert (records.yahtzee_bonus % 100 == 0).all()


def test_optimal_play_matches_the_solver_and_has_zero_regret() -> None:
    """10,000 optimal games: mean within its 95% CI of the exact 254.5877; regret exactly 0."""
    result = evaluate_policy(make_policy("optimal"), 10_000, seed=2026, workers=1)
    assert abs(result["mean"] - OPTIMAL_OFFICIAL) <= result["ci95"]
    assert result["regret"]["mean"] == 0.0 and result["regret"]["ci95"] == 0.0


def test_regret_grades_a_weaker_policy() -> None:
    result = evaluate_policy(make_policy("greedy"), 300, seed=0, workers=1)
    assert result["regret"]["mean"] > 50  # greedy never re-rolls: it gives up a lot
    assert 0 < result["regret"]["per_decision"] < result["regret"]["mean"]


def test_cli_json_and_plot(tmp_path: Path, capsys) -> None:
    out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
    code = main(
        [
            "evaluate",
            "--policy",
            "random,greedy",
            "--games",
            "300",
            "--seed",
            "3",
            "--json",
            str(out_json),
            "--plot",
            str(out_png),
            "--no-progress",
            "--workers",
            "1",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "random" in printed and "greedy" in printed and "regret/game" in printed
    results = json.loads(out_json.read_text())["results"]
    assert [r["policy"] for r in results] == ["random", "greedy"]
    for r in results:
        assert set(r) == RESULT_KEYS
        assert r["games"] == 300 and r["seed"] == 3 and r["rules"] == "official"
        assert set(r["box_means"]) == set(BOX_NAMES)
        assert set(r["regret"]) == {"mean", "ci95", "per_decision"}
        assert sum(r["histogram"]["counts"]) == 300
        assert r["p5"] <= r["median"] <= r["p95"]
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "random" in format_table(results)


def test_cli_labels_a_level_played_under_other_rules(capsys) -> None:
    """One resolver (issue 16): a trained level under other rules plays, labelled."""
    assert (
        main(
            [
                "evaluate",
                "--policy",
                "easy",
                "--rules",
                "no-joker",
                "--games",
                "20",
                "--no-regret",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "easy (trained for official rules)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "greedy", "--games", "0"], "positive integer"),
        (["--policy", "greedy", "--games", "many"], "positive integer"),
        (["--policy", "nobody"], "unknown policy"),
        (["--policy", "greedy", "--rules", "yatzy"], "invalid choice"),
        (["--policy", "/nonexistent/model.json"], "cannot read"),
        (["--policy", "greedy", "--seed", "-1"], "non-negative integer"),
        (["--policy", ","], "names no policy"),
        (["--policy", "greedy", "--json", "/tmp"], "is a directory"),
    ],
)
def test_cli_bad_arguments(argv: list[str], message: str, capsys) -> None:
    try:
        code = main(["evaluate", *argv, "--no-progress"])
    except SystemExit as exit_:  # argparse errors
        code = exit_.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_oracle_handles_batches_larger_than_its_cache() -> None:
    import pickle

    from yahtzee_env.envs.vector import YahtzeeVectorEnv
    from yahtzee_env.solver.exact import load_or_solve
    from yahtzee_env.solver.oracle import OptimalOracle

    table = load_or_solve("official")
    env = YahtzeeVectorEnv(num_envs=3000)
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(40):
        masks = env.action_masks()
        obs, *_ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    small = OptimalOracle(table, max_states=50)
    values = small.action_values(obs)  # far more distinct turn states than 50
    np.testing.assert_array_equal(values, OptimalOracle(table).action_values(obs))
    assert len(pickle.dumps(small)) < table.table.nbytes + 1_000_000  # the cache stays home
