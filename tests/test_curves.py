"""The learning-curve tables (`yahtzee_agents.curves`): the marks, the seeds they average,
and the runs of one recipe."""

from __future__ import annotations

import pytest

from yahtzee_agents import curves


def row(run: str, steps: int, mean: float, regret: float = 5.0) -> dict:
    return {
        "run": run,
        "seed": 0,
        "steps": steps,
        "games": steps // 37,
        "wall_seconds": steps / 1e4,
        "mean": mean,
        "ci95": 1.8,
        "regret": regret,
        "upper_bonus_rate": 0.6,
        "yahtzee_rate": 0.33,
    }


ROWS = [
    row("ppo-long", 9_900_000, 230.0),
    row("ppo-long", 20_100_000, 240.0),  # within 2% of 20 M: counts for it
    row("ppo-long", 120_000_000, 249.0),
    row("ppo-long-s1", 10_000_000, 234.0),
    row("ppo-long-s1", 19_000_000, 238.0),  # below 20 M, within 10%: its 20 M row
]


def test_a_recipe_is_its_runs_without_the_seed():
    assert curves.recipe_of("ppo-long-s1") == curves.recipe_of("ppo-long") == "ppo-long"
    assert curves.recipe_of("ppo-s12") == "ppo"
    assert curves.recipe_of("model-based") == "model-based"


def test_marks_every_seed_reached_by_default():
    marks = [10_000_000, 20_000_000, 120_000_000]
    summary = curves.summarize(ROWS, marks)
    assert [s["steps"] for s in summary] == marks[:2]
    assert [s["runs"] for s in summary] == [2, 2]
    assert summary[0]["mean"] == pytest.approx(232.0)
    assert (summary[1]["mean_min"], summary[1]["mean_max"]) == (238.0, 240.0)


def test_any_run_keeps_the_marks_one_seed_reached_and_says_so():
    marks = [10_000_000, 20_000_000, 120_000_000]
    summary = curves.summarize(ROWS, marks, every_run=False)
    assert [(s["steps"], s["runs"]) for s in summary] == [
        (10_000_000, 2),
        (20_000_000, 2),
        (120_000_000, 1),
    ]
    assert summary[2]["mean"] == 249.0
    table = curves.markdown_table(summary, "ppo-long")
    assert "| ppo-long | 120 M |" in table and "| 1 | 249.0 ± 1.8 |" in table
