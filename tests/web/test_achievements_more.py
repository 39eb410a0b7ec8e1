"""The achievements of a clean game and of a tournament won (issue 62): the rules as plain
functions, a game played move by move as the solver would (clean) and one played greedily
(not), graded once by the server after they end, on both backends; the ``test_attack_*``
tests try to earn them with a game the page dealt, a coached game, and a tournament someone
else won (docs/security.md)."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient
from visitors import account, read, send

from yahtzee_env.game.engine import BOX_ACTION_OFFSET
from yahtzee_env.game.rules import BOX_NAMES, RuleSet
from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.people.achievements import achievement_ids, earned
from yahtzee_env.web.tables.review import ERROR_LABELS, best_action, label_of

LEVELS = ["easy", "medium", "hard", "expert", "random"]
FAST = {"rate": 10_000.0, "burst": 10_000, "token_rate": 10_000.0, "token_burst": 10_000}


@pytest.fixture
def app(db):
    """The app over ``db``, with budgets no game at a test's pace spends, and no background
    grading (the tests grade when they choose, but one)."""
    return create_app(db, limits=Limits(**FAST, grade_every_s=3600.0))


def row(n: int = 0, **extra) -> dict:
    """A stored result row as `results_of` reads it (dealt by the server, unaided)."""
    base = {"code": f"T{n}", "idx": 0, "score": 150, "outcome": "loss", "yahtzees": 0,
            "upper_bonus": 0, "opponents": "easy", "online": 0, "finished": 1000.0 + n,
            "offline": 0, "assisted": 0, "errors": None}  # fmt: skip
    return {**base, **extra}


def got(rows, won=()) -> dict:
    return {a["id"]: a for a in earned(rows, [], LEVELS, lambda mu: 1000, won)}


# ------------------------------------------------------------------ the rules
def test_a_clean_game_is_a_graded_unaided_game_of_the_server_with_no_error():
    assert ERROR_LABELS == ("mistake", "blunder")
    assert label_of(3.0) == "inaccuracy" and label_of(3.01) == "mistake"  # the bound: 3 points
    assert (
        got([row(0, errors=1), row(1, errors=None), row(2, errors=-1)])["clean_game"]["earned"]
        is None
    )  # an error, not graded, could not be graded
    clean = got([row(0, errors=2), row(1, errors=0), row(2, errors=0)])["clean_game"]
    assert clean["earned"] == 1001.0 and clean["game_id"] == "T1-0"
    for helped in ({"assisted": 1}, {"assisted": None}, {"offline": 1}, {"offline": 2}):
        assert got([row(0, errors=0, **helped)])["clean_game"]["earned"] is None, helped


def test_a_tournament_won_is_dated_by_the_first_one_won():
    ids = achievement_ids(LEVELS)
    assert "clean_game" in ids and ids[-1] == "tournament_won"
    assert got([])["tournament_won"]["earned"] is None
    won = [{"code": "AAAA", "finished": 500.0}, {"code": "BBBB", "finished": 900.0}]
    badge = got([], won)["tournament_won"]
    assert badge["earned"] == 500.0 and badge["game_id"] is None


# ------------------------------------------------------------------ over the API


def warm(app) -> None:
    """The official rules' coach ready (the server grades only with a coach it has ready,
    as ``yahtzee serve`` prepares them at start-up)."""
    tables = app.state.service.tables
    deadline = time.monotonic() + 120
    while tables.grader(RuleSet.from_spec("official")) is None:
        assert time.monotonic() < deadline, "the coach never came"
        time.sleep(0.2)


def solver_intent(app, code: str, seat: int) -> dict:
    """The move the solver would make at table ``code`` now, as the page sends it."""
    tables = app.state.service.tables
    table = tables.load(code)
    coach = None
    while coach is None:  # the coach of the rules: from the disk cache, or solved
        coach = tables.grader(table.rules)
        time.sleep(0 if coach else 0.2)
    action = best_action(coach.action_values(table.game, seat))
    if action >= BOX_ACTION_OFFSET:
        return {"type": "score", "box": BOX_NAMES[action - BOX_ACTION_OFFSET]}
    return {"type": "roll", "hold": [i for i in range(5) if action >> i & 1]}


def greedy_intent(state: dict) -> dict:
    """Score the best box now, never reroll (the review finds errors in that)."""
    return {"type": "score", "box": max(state["options"], key=state["options"].get)}


def play(app, c: TestClient, code: str, solver: bool) -> dict:
    """Play the session's seat 0 of table ``code`` to the end."""
    state = read(c, f"/api/tables/{code}")
    while not state["over"]:
        if state["cup"]:
            action = {"type": "roll", "hold": []}
        else:
            action = solver_intent(app, code, 0) if solver else greedy_intent(state)
        body = {"seat": 0, "seq": state["seq"], "game": state["game"], "action": action}
        r = send(c, f"/api/tables/{code}/act", body)
        assert r.status_code == 200, r.text
        state = r.json()
    return state


def solo(app, c: TestClient, solver: bool, **extra) -> str:
    made = c.post("/api/tables", json={"seats": ["human", "easy"], **extra})
    assert made.status_code == 200, made.text
    play(app, c, made.json()["code"], solver)
    return made.json()["code"]


def errors_of(app, username: str) -> list:
    storage = app.state.service.storage
    me = storage.accounts.account(username=username)["player_id"]
    return [r["errors"] for r in storage.players.results_of(me)]


def badge(c, username: str, key: str) -> dict:
    return next(a for a in read(c, f"/api/profiles/{username}")["achievements"] if a["id"] == key)


def test_a_game_played_as_the_solver_would_is_clean_and_a_greedy_one_is_not(app):
    with TestClient(app):
        ada = account(app, "ada")
        greedy = solo(app, ada, solver=False)
        assert errors_of(app, "ada") == [None]  # not graded yet: nothing earned
        assert badge(ada, "ada", "clean_game")["earned"] is None
        reviews = app.state.service.tables.reviews
        if not app.state.service.tables.coach_ready("official"):
            assert reviews.grade_pending() == 0  # no coach ready: graded later, no solve
        warm(app)
        assert reviews.grade_pending() == 1 and reviews.grade_pending() == 0  # once
        [errors] = errors_of(app, "ada")
        review = ada.post(f"/api/games/{greedy}-0", json={}).json()
        assert errors == sum(review["labels"]["0"][k] for k in ERROR_LABELS) > 0
        assert badge(ada, "ada", "clean_game")["earned"] is None
        clean = solo(app, ada, solver=True)
        assert reviews.grade_pending() == 1
        assert errors_of(app, "ada") == [errors, 0]
        mine = badge(ada, "ada", "clean_game")
        assert mine["earned"] is not None and mine["game_id"] == f"{clean}-0"
        review = ada.post(f"/api/games/{clean}-0", json={}).json()
        assert all(review["labels"]["0"][k] == 0 for k in ERROR_LABELS)
        stranger = account(app, "bob")  # others see the date, not the game
        theirs = badge(stranger, "ada", "clean_game")
        assert theirs["earned"] == mine["earned"] and theirs["game_id"] is None


def test_grading_is_for_accounts_and_within_a_cpu_budget(app):
    """Issue 60: a review costs tens of milliseconds, so only the games of accounts (a guest
    has no profile to show it on) are graded, and a step begins no game once its budget is
    spent (the first always: grading never stalls), the rest left to the next steps."""
    with TestClient(app):
        guest = TestClient(app)
        gus = guest.post("/api/session", json={"name": "Gus"}).json()["player"]["id"]
        solo(app, guest, solver=False)
        ada = account(app, "ada")
        for _ in range(2):
            solo(app, ada, solver=False)
        warm(app)
        reviews = app.state.service.tables.reviews
        assert reviews.grade_pending(budget_s=0.0) == 1  # the budget spent after one game
        assert reviews.grade_pending(budget_s=0.0) == 1
        assert reviews.grade_pending() == 0  # the guest's game is never graded
        storage = app.state.service.storage
        assert [r["errors"] for r in storage.players.results_of(gus)] == [None]
        assert [e > 0 for e in errors_of(app, "ada")] == [True, True]
        assert storage.players.ungraded(0.0, 10) == []


@pytest.mark.backends("sqlite")
def test_the_server_grades_a_game_in_the_background_once_it_ends(db):
    app = create_app(db, limits=Limits(**FAST, grade_every_s=0.05))
    with TestClient(app):
        ada = account(app, "ada")
        warm(app)
        solo(app, ada, solver=False)
        deadline = time.monotonic() + 60
        while errors_of(app, "ada") == [None] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert errors_of(app, "ada")[0] > 0


@pytest.mark.backends("sqlite")
def test_attack_a_page_game_or_a_coached_game_earns_no_clean_game(app):
    with TestClient(app):
        ada = account(app, "ada")
        storage = app.state.service.storage
        me = storage.accounts.account(username="ada")["player_id"]
        forged = {"score": 300, "outcome": "win", "yahtzees": 1, "upper_bonus": 1}
        storage.players.add_offline_results(  # as if a forged record had passed the replay
            me, [{"id": "g1", "opponents": "easy", **forged}]
        )
        solo(app, ada, solver=True, coach=True)  # perfect, with the coach on: helped
        assert app.state.service.tables.reviews.grade_pending() == 0  # neither is graded
        assert errors_of(app, "ada") == [None, None]
        assert badge(ada, "ada", "clean_game")["earned"] is None
        # a page game's body has no say in it: an errors field is not read
        body = {"games": [{"id": "g2", "errors": 0, "score": 1}]}
        ada.post("/api/offline-games", json=body)
        assert all(e is None for e in errors_of(app, "ada"))
        assert badge(ada, "ada", "clean_game")["earned"] is None


@pytest.mark.backends("sqlite")
def test_attack_a_tournament_someone_else_won_earns_nothing(app):
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        body = {"name": "Cup", "places": 4, "fill": "greedy", "start_in": None}
        code = ann.post("/api/tournaments", json=body).json()["code"]
        assert send(bob, f"/api/tournaments/{code}/join", {}).status_code == 200
        assert send(ann, f"/api/tournaments/{code}/start", {}).json()["state"] == "running"
        store = app.state.service.storage.tournaments
        bob_slot = next(e["slot"] for e in store.entrants(code) if e["name"] == "Bob")
        store.finish(code, bob_slot)  # bob won it (as the last round's result would say)
        assert badge(ann, "ann", "tournament_won")["earned"] is None
        assert read(ann, "/api/profiles/ann")["tournaments_won"] == 0
        won = badge(ann, "bob", "tournament_won")
        assert won["earned"] is not None and won["game_id"] is None
        assert read(ann, "/api/profiles/bob")["tournaments_won"] == 1
        # one closed with no winner, or won by a computer, earns nobody anything
        other = ann.post("/api/tournaments", json={**body, "name": "Cup 2"}).json()["code"]
        send(ann, f"/api/tournaments/{other}/start", {})
        cpu = next(e["slot"] for e in store.entrants(other) if e["player_id"] is None)
        store.finish(other, cpu)
        assert badge(ann, "ann", "tournament_won")["earned"] is None
        bob_id = next(e["player_id"] for e in store.entrants(code) if e["name"] == "Bob")
        assert [w["code"] for w in store.wins_of(bob_id)] == [code]
