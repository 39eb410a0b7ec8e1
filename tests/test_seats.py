"""One policy resolver and one CPU move for every caller (issue 16): the terminal, the web
tables, tournaments and `YahtzeeVs-v0` seat CPUs the same way, built for the table's rules."""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_env.analysis.tournament import play_game
from yahtzee_env.game.cpu import cpu_action, cpu_move
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, Game, IllegalActionError
from yahtzee_env.game.rules import Box, RuleSet
from yahtzee_env.policies.baselines import make_policy
from yahtzee_env.policies.resolve import (
    policy_label,
    resolve_policy,
    shared_policy,
    trained_for_other_rules,
)


class Always:
    """A broken CPU: always answers ``action``."""

    name = "broken"

    def __init__(self, action):
        self.action = action

    def act(self, observation, action_mask):
        return self.action


@pytest.mark.parametrize("bad", [44, 45, -1, 3.5, None, "chance", True])
def test_cpu_move_refuses_an_illegal_answer_naming_the_player(bad):
    game = Game("official", num_players=2)
    game.reset(np.random.default_rng(0))
    before = (game.current, list(game.dice), game.rolls_left)
    if bad == 44:  # fill chance, made illegal by filling it first
        game.players[game.current].scores[Box.CHANCE] = 0  # pretend chance is filled
        game.players[game.current].filled |= 1 << Box.CHANCE
    with pytest.raises(IllegalActionError, match="CPU Ada chose the illegal action"):
        cpu_move(game, game.current, Always(bad), "Ada")
    assert (game.current, list(game.dice), game.rolls_left) == before  # nothing applied


def test_cpu_move_applies_through_the_callers_hook():
    game = Game("official", num_players=1)
    game.reset(np.random.default_rng(1))
    seen = []
    action = cpu_move(game, 0, make_policy("heuristic"), "h", apply=seen.append)
    assert seen == [action] and game.rolls_left == 2  # the hook applied nothing
    assert cpu_action(game, 0, Always(action)) == action
    with pytest.raises(IllegalActionError, match="not to move"):
        cpu_action(game, 1, Always(action))


def test_every_caller_raises_the_same_error():
    with pytest.raises(IllegalActionError, match="CPU seat 0 chose the illegal action 45"):
        play_game([Always(45)], "official", 0)
    gym = pytest.importorskip("gymnasium")
    import yahtzee_env  # noqa: F401  (registers the env ids)

    env = gym.make("YahtzeeVs-v0", opponents=[Always(45)], seat=1)
    with pytest.raises(IllegalActionError, match="CPU opponent 'broken' \\(seat 0\\) chose"):
        env.reset(seed=0)
    from yahtzee_env.play.terminal import Player, TerminalGame

    game = TerminalGame(
        [Player("Bo", Always(45)), Player("Cy", Always(45))],
        "official",
        0,
        input_fn=lambda prompt: "quit",
    )
    with pytest.raises(IllegalActionError, match="CPU Bo chose the illegal action 45"):
        game.run()


def test_resolver_builds_rule_aware_policies_for_the_rules_and_labels_trained_ones():
    upper_first = RuleSet.from_spec("upper-first")
    assert make_policy("heuristic", rules=upper_first).rules == upper_first
    assert resolve_policy("heuristic", "upper-first").rules == upper_first
    hard = resolve_policy("hard", "upper-first")
    assert trained_for_other_rules(hard, "upper-first") == "official"
    assert trained_for_other_rules(hard, "official") is None
    assert policy_label("hard", hard, "upper-first") == "hard (trained for official rules)"
    assert policy_label("hard", hard, None) == "hard"
    assert policy_label("greedy", resolve_policy("greedy", "no-joker"), "no-joker") == "greedy"
    # cached per (name, rules): one object per pair, another for other rules
    assert shared_policy("heuristic", "upper-first") is shared_policy("heuristic", upper_first)
    assert shared_policy("heuristic", "upper-first") is not shared_policy("heuristic", "official")
    assert shared_policy("heuristic", "no-joker").rules == RuleSet.from_spec("no-joker")


def test_engine_counts_yahtzees_whatever_the_bonus_is_worth():
    """The engine counts Yahtzees as they are scored (the web divided bonus points by the
    bonus value)."""
    from dataclasses import replace

    for rules in (RuleSet.from_spec("no-joker"), replace(RuleSet(), yahtzee_bonus_value=7)):
        game = Game(rules, num_players=1)
        game.reset(np.random.default_rng(0))
        card = game.players[0]
        five = next(r for r in range(252) if len(set(_dice(r))) == 1)
        card.place(Box.YAHTZEE, five)
        assert card.yahtzees == 1
        card.place(_dice(five)[0] - 1, five)  # a bonus Yahtzee, in its face's upper box
        assert card.yahtzees == 2
        other = next(r for r in range(252) if len(set(_dice(r))) == 2)
        card.place(Box.FULL_HOUSE, other)
        assert card.yahtzees == 2


def test_a_scratched_yahtzee_box_counts_no_later_yahtzee():
    game = Game("official", num_players=1)
    game.reset(np.random.default_rng(0))
    card = game.players[0]
    card.place(Box.YAHTZEE, next(r for r in range(252) if len(set(_dice(r))) == 2))
    five = next(r for r in range(252) if len(set(_dice(r))) == 1)
    card.place(_dice(five)[0] - 1, five)
    assert card.yahtzees == 0


def _dice(roll):
    from yahtzee_env.game.dice import DICE

    return tuple(int(d) for d in DICE[roll])


# ------------------------------------------------------------------ web CPU seats
@pytest.mark.slow
def test_web_optimal_seat_plays_the_tables_rules(tmp_path):
    """At an upper-first table the `optimal` CPU seat's every decision is the upper-first
    solver's (the web used to build it for the official rules)."""
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    from yahtzee_env.game.fair_dice import DICE_ALGORITHM
    from yahtzee_env.game.observation import encode_seat
    from yahtzee_env.solver.coach import Coach
    from yahtzee_env.web.door.app import create_app
    from yahtzee_env.web.storage import open_storage
    from yahtzee_env.web.tables.deal import new_game
    from yahtzee_env.web.tables.seeds import load as client_seeds

    db = tmp_path / "web.sqlite3"
    with TestClient(create_app(db)) as client:
        reply = client.post(
            "/api/tables", json={"seats": ["human", "optimal"], "rules": "upper-first"}
        )
        assert reply.status_code == 200, reply.text
        body = reply.json()
        code, token, state = body["code"], body["tokens"]["0"], body["state"]
        while not state["over"]:
            if state.get("cup"):  # a person's turn starts with the dice in the cup: the tap
                action = {"type": "roll", "hold": []}
            else:
                action = {"type": "score", "box": max(state["options"], key=state["options"].get)}
            move = {"seat": 0, "token": token, "action": action}
            if "seq" in state:
                move["seq"] = state["seq"]
            reply = client.post(f"/api/tables/{code}/act", json=move)
            assert reply.status_code == 200, reply.text
            state = reply.json()
    storage = open_storage(db, migrate=False)
    row = storage.tables.load_table(code)
    storage.close()
    rules = RuleSet.from_spec("upper-first")
    coach = Coach(rules)
    official = make_policy("optimal", rules="official")
    # the game as the server dealt it: its seed, dice derivation and the seats' client seeds
    # (who started is stored: solo, the human rolls first; the draw is still made)
    game, _ = new_game(
        rules, row["seed"], 0, 2, row["games"][0]["first"],
        secret=bytes.fromhex(row["dice_secret"]), dice=row.get("dice") or DICE_ALGORITHM,
        client_seeds=client_seeds(row.get("client_seeds")).get(0),
    )  # fmt: skip
    # (-1: a person's tap on Roll, the dealt first roll brought out of the cup: no engine step)
    actions = [(seat, action) for seat, action, _regret in row["actions"][0] if action >= 0]
    cpu_decisions = differs = 0
    for seat, action in actions:
        if seat == 1:
            cpu_decisions += 1
            assert coach.grade(game, 1, action).regret < 1e-9
            mask = game.legal_action_mask()
            differs += official.act(encode_seat(game, 1), mask) != action
        game.step(action)
    assert game.over and cpu_decisions >= 13
    assert differs > 0  # the official strategy would have played otherwise: the test can fail
    assert sum(a >= BOX_ACTION_OFFSET for s, a in actions if s == 1) == 13
