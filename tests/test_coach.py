"""The solver-backed coach: hints, regret of decisions, the end-of-game review, and the
terminal game's ``--coach`` / ``hint`` (issue 11)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from yahtzee_env.game.engine import Game, box_action
from yahtzee_env.play.terminal import Player, TerminalGame
from yahtzee_env.play.terminal_coach import CoachedTerminalGame
from yahtzee_env.policies.baselines import make_policy
from yahtzee_env.solver.coach import Coach, review
from yahtzee_env.solver.exact import load_or_solve, regret_of


@pytest.fixture(scope="module")
def coach():
    return Coach("official", load_or_solve("official"))


def test_hint_is_sorted_and_starts_with_the_optimal_move(coach):
    game = Game("official", num_players=1)
    game.reset(np.random.default_rng(5))
    table = coach.oracle.table
    for _ in range(6):
        options = coach.hint(game, 0)
        values = [o.value for o in options]
        assert values == sorted(values, reverse=True)
        card = game.player
        av = table.action_values(
            card.filled, card.upper_total, card.yahtzee_state, game.roll, game.rolls_left
        )
        assert options[0].value == pytest.approx(av.max(), abs=1e-3)
        kept = [o.label for o in options]
        assert len(set(kept)) == len(kept)  # one option per kept multiset
        game.step(options[-1].action)
        if game.over:
            break


def test_grade_is_the_solvers_regret(coach):
    game = Game("official", num_players=1)
    game.reset(np.random.default_rng(11))
    card = game.player
    av = coach.oracle.table.action_values(
        card.filled, card.upper_total, card.yahtzee_state, game.roll, game.rolls_left
    )
    for action in (0, 7, box_action(12)):
        decision = coach.grade(game, 0, action)
        assert decision.regret == pytest.approx(regret_of(av, action), abs=1e-3)
    best = coach.grade(game, 0, coach.hint(game, 0, top=1)[0].action)
    assert best.regret == pytest.approx(0.0, abs=1e-6) and "(best)" in best.text


def test_review_totals_and_costliest(coach):
    game = Game("official", num_players=1)
    game.reset(np.random.default_rng(2))
    greedy = make_policy("greedy")
    from yahtzee_env.game.observation import encode_seat

    decisions = []
    while not game.over:
        action = int(greedy.act(encode_seat(game, 0), game.legal_action_mask()))
        decisions.append(coach.grade(game, 0, action))
        game.step(action)
    summary = review(decisions)
    assert summary["decisions"] == len(decisions)
    assert summary["total_regret"] == pytest.approx(sum(d.regret for d in decisions), abs=1e-3)
    costs = [d["regret"] for d in summary["costliest"]]
    assert len(costs) == 3 and costs == sorted(costs, reverse=True)
    assert costs[0] == pytest.approx(max(d.regret for d in decisions), abs=1e-3)


def scripted(lines):
    feed = iter(lines)

    def read(prompt):
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    return read


def test_terminal_hint_and_regret(coach):
    out = io.StringIO()
    players = [Player("Ada"), Player("greedy", make_policy("greedy"))]
    game = CoachedTerminalGame(
        players,
        seed=3,
        input_fn=scripted([x for i in range(1, 14) for x in ("hint", f"score {i}")]),
        out=out,
        coach=coach,
    )
    game.run(first=0)
    text = out.getvalue()
    assert "Coach (expected final score" in text
    assert "coach: " in text
    assert "Coach: Ada gave up" in text and "against optimal play over 13 decisions" in text


def test_terminal_without_coach_explains_hint():
    out = io.StringIO()
    players = [Player("Ada"), Player("greedy", make_policy("greedy"))]
    TerminalGame(players, seed=3, input_fn=scripted(["hint"]), out=out).run(first=0)
    assert "the coach is off" in out.getvalue()
