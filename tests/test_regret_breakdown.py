"""experiments/regret_breakdown.py (issue 34: what a policy's regret is made of): the parts add
up to the grader's regret, and an optimal player's breakdown is empty."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from yahtzee_env.analysis.evaluation import play_chunk
from yahtzee_env.analysis.leaderboard import load_agent
from yahtzee_env.solver.exact import load_or_solve

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def breakdown():
    spec = importlib.util.spec_from_file_location(
        "regret_breakdown", ROOT / "experiments" / "regret_breakdown.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def table():
    return load_or_solve("official")


def test_the_kinds_and_the_rounds_each_add_up_to_the_graders_regret(breakdown, table):
    played = breakdown.play(load_agent("greedy"), 64, 3, table)
    total = played["total"]
    assert total.mean() > 1.0  # greedy gives up points
    for group in ("kind", "round"):
        summed = sum(v for (g, _), v in played["per_game"].items() if g == group)
        np.testing.assert_allclose(summed, total, rtol=1e-9, atol=1e-9)
    # the same games and grades as the benchmark's harness
    graded = play_chunk(load_agent("greedy"), 64, 3, "official", table)
    np.testing.assert_allclose(graded.regret, total, rtol=1e-6, atol=1e-6)
    summary = breakdown.summarise(played, played, "greedy", 64, 3)
    shares = sum(e["share"] for e in summary["by_kind"].values() if e)
    assert abs(shares - 1.0) < 1e-9
    assert "| box at turn end |" in breakdown.markdown(summary)


def test_an_optimal_player_has_nothing_to_break_down(breakdown, table):
    played = breakdown.play(load_agent("optimal"), 32, 0, table)
    assert played["total"].max() < 1e-6
    assert not played["per_game"]
