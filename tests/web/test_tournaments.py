"""Knockout tournaments (issue 62) through Starlette's TestClient, on both backends: four
accounts and four CPU places play to a winner, byes, best-of-five CPU matches, the tie
break, two servers on one database stepping one tournament, and the checks of every input.
The ``test_attack_*`` tests attack each defence as one who read the code would
(docs/security.md)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient
from visitors import account, read, send

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.people.tournaments import decide, first_round

CPU = "greedy"  # a quick level


def create(client, **extra):
    body = {"name": "Friday cup", "places": 8, "fill": CPU, "start_in": 600, **extra}
    return client.post("/api/tournaments", json=body)


def play_table(players: list[TestClient], code: str) -> dict:
    """Play table ``code`` to its end, each seat by whichever of ``players`` holds it."""
    state = read(players[0], f"/api/tables/{code}")
    while not state["over"]:
        seat, seq, game = state["current"], state["seq"], state["game"]
        if state["cup"]:
            action = {"type": "roll", "hold": []}
        else:
            action = {"type": "score", "box": max(state["options"], key=state["options"].get)}
        body = {"seat": seat, "seq": seq, "game": game, "action": action}
        for c in players:
            r = send(c, f"/api/tables/{code}/act", body)
            if r.status_code == 200:
                state = r.json()
                break
        else:
            raise AssertionError(f"nobody holds seat {seat}: {r.text}")
    return state


def play_round(tourney: str, people: list[TestClient], watcher: TestClient) -> dict:
    """Play every table of the current round; the bracket after."""
    bracket = read(watcher, f"/api/tournaments/{tourney}")
    for match in bracket["rounds"][-1]["matches"]:
        if match["table"] and match["winner"] is None:
            play_table(people, match["table"])
    return read(watcher, f"/api/tournaments/{tourney}")


# ------------------------------------------------------------------ the whole tournament
def test_four_accounts_and_four_cpus_play_a_knockout_to_its_winner(app, clock):
    with TestClient(app):
        ann, bob, cy, dee = (account(app, n) for n in ("ann", "bob", "cyd", "dee"))
        made = create(ann)
        assert made.status_code == 200, made.text
        code = made.json()["code"]
        assert made.json()["state"] == "open" and made.json()["mine"] == 0
        for c in (bob, cy, dee):
            assert c.post(f"/api/tournaments/{code}/join", json={}).status_code == 200
        listed = read(bob, "/api/tournaments")["tournaments"]
        assert [(t["code"], t["entrants"]) for t in listed] == [(code, 4)]
        watcher = TestClient(app)  # a third browser, no account: it only watches
        assert read(watcher, f"/api/tournaments/{code}")["state"] == "open"
        clock.now += 601  # the start time comes: CPUs fill the other four places
        bracket = read(watcher, f"/api/tournaments/{code}")
        assert bracket["state"] == "running" and bracket["round"] >= 1
        assert sum(e["cpu"] for e in bracket["entrants"]) == 4
        assert len(bracket["rounds"][0]["matches"]) == 4
        people = [ann, bob, cy, dee]
        seen_rounds = []
        while bracket["state"] != "over":
            seen_rounds.append(bracket["round"])
            bracket = play_round(code, people, watcher)
            assert len(seen_rounds) <= 3, bracket
        final = bracket["rounds"][-1]["matches"]
        assert len(bracket["rounds"]) == 3 and len(final) == 1
        winner = final[0]["winner"]
        assert bracket["winner"] == next(
            e["name"] for e in bracket["entrants"] if e["slot"] == winner
        )
        for rnd in bracket["rounds"]:
            for m in rnd["matches"]:  # every match has its winner and totals
                assert m["winner"] in (m["a"]["slot"], m["b"]["slot"]) and m["totals"]
        # the winner's tally, for the profiles
        storage = app.state.service.storage
        champ = next(e for e in storage.tournaments.entrants(code) if e["slot"] == winner)
        if champ["player_id"] is not None:  # a person won: the profile shows it
            assert storage.tournaments.won_by(champ["player_id"]) == 1
            username = storage.accounts.account(player_id=champ["player_id"])["username"]
            assert read(watcher, f"/api/profiles/{username}")["tournaments_won"] == 1
        assert read(watcher, "/api/profiles/ann")["tournaments_won"] == (
            1 if champ["name"] == "Ann" else 0
        )


def test_a_full_tournament_starts_at_once_with_byes_and_cpu_matches_decided_by_the_server(app):
    with TestClient(app):
        ann = account(app, "ann")
        code = create(ann, places=5, start_in=None, best_of=5).json()["code"]
        bob = account(app, "bob")
        bracket = bob.post(f"/api/tournaments/{code}/join", json={}).json()
        assert bracket["state"] == "open"  # two of five: not full, and no start time
        for name in ("cyd", "dee", "eve"):
            account(app, name).post(f"/api/tournaments/{code}/join", json={})
        bracket = bob.get(f"/api/tournaments/{code}").json()
        assert bracket["state"] == "running"
        first = bracket["rounds"][0]["matches"]
        assert len(first) == 4 and sum(m["b"] is None for m in first) == 3  # byes to 8
        for m in first:
            assert (m["b"] is None) == (m["winner"] == m["a"]["slot"] and m["table"] is None)
        table = next(m["table"] for m in first if m["b"] is not None)
        state = bob.get(f"/api/tables/{table}").json()
        assert state["match"] is True and not state.get("coach")  # best of five, no coach


def test_first_round_gives_byes_and_the_tie_break_is_the_total_then_a_coin():
    pairs = first_round([0, 1, 2, 3, 4, 5], seed=7)
    assert len(pairs) == 4 and sum(b is None for _, b in pairs) == 2
    assert sorted(s for p in pairs for s in p if s is not None) == [0, 1, 2, 3, 4, 5]
    assert pairs == first_round([0, 1, 2, 3, 4, 5], seed=7)  # the seed decides it
    assert decide([[200, 150]], 1, "1:0") == (0, (200, 150))
    assert decide([[150, 150], [150, 150], [150, 150], [150, 150], [140, 160]], 1, "1:0")[0] == 1
    coins = {decide([[150, 150]], seed, "1:0")[0] for seed in range(20)}
    assert coins == {0, 1}  # a tie on everything: the coin, from the seed
    assert decide([[150, 150]], 3, "1:0") == decide([[150, 150]], 3, "1:0")


def test_two_servers_on_one_database_step_a_tournament_once(db, clock):
    first, second = create_app(db, clock=clock), create_app(db, clock=clock)
    with TestClient(first), TestClient(second):
        ann = account(first, "ann")
        code = create(ann, places=4, start_in=60).json()["code"]
        clock.now += 61
        one = first.state.service.tourneys.tournaments
        two = second.state.service.tourneys.tournaments
        one.advance(code)
        two.advance(code)
        two.advance(code)
        storage = first.state.service.storage
        matches = storage.tournaments.matches(code)
        assert [m["round"] for m in matches].count(1) == 2  # one round one, not two
        tables = [m["table_code"] for m in matches if m["table_code"] and m["round"] == 1]
        assert len(tables) == len(set(tables)) == 1  # ann's table, made once
        assert len(storage.tournaments.entrants(code)) == 4


def test_a_tournament_carries_on_after_a_restart(db, clock):
    """Its state is in the database: a new server on it plays the next round."""
    first = create_app(db, clock=clock)
    with TestClient(first):
        ann, bob = account(first, "ann"), account(first, "bob")
        code = create(ann, places=4, fill=CPU, start_in=None).json()["code"]
        bob.post(f"/api/tournaments/{code}/join", json={})
        started = ann.post(f"/api/tournaments/{code}/start", json={}).json()
        assert started["state"] == "running"
        cookies = {"ann": ann.cookies, "bob": bob.cookies}
    second = create_app(db, clock=clock)  # the restart
    with TestClient(second):
        people = []
        for name in ("ann", "bob"):
            c = TestClient(second)
            c.cookies = cookies[name]
            people.append(c)
        bracket = read(people[0], f"/api/tournaments/{code}")
        assert bracket["state"] == "running" and bracket["round"] == 1
        while bracket["state"] != "over":
            bracket = play_round(code, people, people[0])
        assert bracket["winner"] and len(bracket["rounds"]) == 2


@pytest.mark.backends("sqlite")
def test_a_tournament_that_never_fills_closes_after_a_week(app, clock):
    with TestClient(app):
        ann = account(app, "ann")
        waiting = create(ann, start_in=None).json()["code"]
        timed = create(ann, start_in=600, fill=None).json()["code"]
        tourneys = app.state.service.tourneys.tournaments
        clock.now += 6 * 86_400
        tourneys.sweep()
        tourneys.advance_due()
        assert ann.get(f"/api/tournaments/{waiting}").json()["state"] == "open"
        clock.now += 2 * 86_400
        tourneys.sweep()  # the server's sweep
        tourneys.advance_due()
        closed = ann.get(f"/api/tournaments/{waiting}").json()
        assert closed["state"] == "over" and closed["winner"] is None
        # the timed one came to its time alone: it closed, and nobody won it
        alone = ann.get(f"/api/tournaments/{timed}").json()
        assert alone["state"] == "over" and alone["winner"] is None
        assert ann.get("/api/profiles/ann").json()["tournaments_won"] == 0
        assert [t["code"] for t in ann.get("/api/tournaments").json()["tournaments"]] == []


# ------------------------------------------------------------------ the checks
@pytest.mark.backends("sqlite")
def test_every_choice_is_checked_and_the_error_names_the_field(app):
    with TestClient(app):
        ann = account(app, "ann")
        for extra, code, field in (
            ({"name": ""}, "name_empty", "name"),
            ({"name": "x" * 41}, "name_long", None),
            ({"name": 5}, "name_empty", "name"),
            ({"places": 3}, "bad_places", "places"),
            ({"places": 33}, "bad_places", "places"),
            ({"places": True}, "bad_places", "places"),
            ({"best_of": 3}, "bad_best_of", "best_of"),
            ({"fill": "nobody"}, "bad_fill", "fill"),
            ({"start_in": 5}, "bad_start", "start_in"),
            ({"rules": "nope"}, "bad_rules", "rules"),
        ):
            reply = create(ann, **extra)
            assert reply.status_code == 400 and reply.json()["code"] == code, (extra, reply.text)
            if field:
                assert reply.json()["params"]["field"] == field
        assert ann.get("/api/tournaments/ABCDEFGH").status_code == 404


@pytest.mark.backends("sqlite")
def test_attack_tournaments_need_an_account_and_a_place_is_taken_once(app):
    with TestClient(app):
        ann = account(app, "ann")
        code = create(ann, places=4, fill=None).json()["code"]
        guest = TestClient(app)
        guest.post("/api/session", json={"name": "Guest"})
        assert create(guest).json()["code"] == "no_account"
        assert guest.post(f"/api/tournaments/{code}/join", json={}).json()["code"] == "no_account"
        reply = ann.post(f"/api/tournaments/{code}/join", json={})
        assert reply.status_code == 409 and reply.json()["code"] == "already_entered"
        for name in ("bob", "cyd", "dee"):
            assert (
                account(app, name).post(f"/api/tournaments/{code}/join", json={}).status_code == 200
            )
        late = account(app, "eve")
        reply = late.post(f"/api/tournaments/{code}/join", json={})
        assert reply.status_code == 409 and reply.json()["code"] == "tourney_started"
        assert len(app.state.service.storage.tournaments.entrants(code)) == 4


@pytest.mark.backends("sqlite")
def test_attack_nobody_reports_a_result_or_moves_a_round_on(app):
    """Results come only from the server's own tables: no route takes one, and a stranger
    at a match's table is refused like at any other table."""
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        code = create(ann, places=4, start_in=None).json()["code"]
        for name in ("bob", "cyd", "dee")[1:]:
            account(app, name).post(f"/api/tournaments/{code}/join", json={})
        bob.post(f"/api/tournaments/{code}/join", json={})
        mallory = account(app, "mallory")
        for path in ("result", "advance", "report", "winner"):
            body = {"winner": 0, "round": 1}
            assert mallory.post(f"/api/tournaments/{code}/{path}", json=body).status_code in (
                404,
                405,
            )
        bracket = mallory.get(f"/api/tournaments/{code}").json()
        table = next(m["table"] for m in bracket["rounds"][0]["matches"] if m["table"])
        state = mallory.get(f"/api/tables/{table}").json()
        body = {"seat": state["current"], "seq": state["seq"], "game": state["game"],
                "action": {"type": "roll", "hold": []}}  # fmt: skip
        assert mallory.post(f"/api/tables/{table}/act", json=body).status_code == 403
        after = mallory.get(f"/api/tournaments/{code}").json()
        assert after["round"] == 1 and all(
            m["winner"] is None for m in after["rounds"][0]["matches"] if m["table"]
        )


@pytest.mark.backends("sqlite")
def test_attack_creation_is_capped_and_rate_limited_per_account(db):
    limits = Limits(tournaments_per_account=2, tournament_burst=3, tournament_join_burst=2)
    app = create_app(db, limits=limits)
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        assert create(ann).status_code == 200 and create(ann).status_code == 200
        reply = create(ann)
        assert reply.status_code == 409 and reply.json()["code"] == "too_many_tournaments"
        reply = create(ann)  # the third try of the burst spent: the bucket refuses
        assert reply.status_code == 429 and reply.json()["code"] == "tourney_budget"
        code = create(bob).json()["code"]  # per account: bob's own bucket
        cyd = account(app, "cyd")
        assert cyd.post(f"/api/tournaments/{code}/join", json={}).status_code == 200
        assert cyd.post(f"/api/tournaments/{code}/join", json={}).status_code == 409
        reply = cyd.post(f"/api/tournaments/{code}/join", json={})  # the burst of two spent
        assert reply.status_code == 429 and reply.json()["code"] == "join_budget"


@pytest.mark.backends("sqlite")
def test_attack_only_the_creator_starts_a_tournament_early(app):
    with TestClient(app):
        ann, bob = account(app, "ann"), account(app, "bob")
        code = create(ann, places=8, fill=None).json()["code"]
        reply = ann.post(f"/api/tournaments/{code}/start", json={})
        assert reply.status_code == 409 and reply.json()["code"] == "too_few_entrants"
        bob.post(f"/api/tournaments/{code}/join", json={})
        reply = bob.post(f"/api/tournaments/{code}/start", json={})
        assert reply.status_code == 403 and reply.json()["code"] == "not_creator"
        started = ann.post(f"/api/tournaments/{code}/start", json={}).json()
        assert started["state"] == "running" and len(started["entrants"]) == 2
        assert [len(r["matches"]) for r in started["rounds"]] == [1]  # ann against bob
        reply = ann.post(f"/api/tournaments/{code}/start", json={})
        assert reply.status_code == 409 and reply.json()["code"] == "tourney_started"


@pytest.mark.backends("sqlite")
def test_a_best_of_five_match_is_the_tables_match(app):
    with TestClient(app):
        ann = account(app, "ann")
        code = create(ann, places=4, best_of=5, start_in=None).json()["code"]
        bracket = ann.post(f"/api/tournaments/{code}/start", json={}).json()
        mine = next(m for m in bracket["rounds"][0]["matches"] if m["table"])
        table = mine["table"]
        state = play_table([ann], table)
        games = 1
        while not state["match_state"]["decided"]:
            on = read(ann, f"/api/tournaments/{code}")["rounds"][0]["matches"]
            assert on[mine["idx"]]["winner"] is None  # the match is on: no winner yet
            body = {"seat": 0, "seq": state["seq"], "game": state["game"],
                    "action": {"type": "next"}}  # fmt: skip
            assert send(ann, f"/api/tables/{table}/act", body).status_code == 200
            state = play_table([ann], table)
            games += 1
        assert 3 <= games <= 5
        after = read(ann, f"/api/tournaments/{code}")
        done = after["rounds"][0]["matches"][mine["idx"]]
        # the table's seat 0 is ann's (the person hosts it), her place is 0
        other = mine["b"]["slot"] if mine["a"]["slot"] == 0 else mine["a"]["slot"]
        seats = state["match_state"]["msg"]["seats"]  # the match's winner(s) at the table
        if len(seats) == 1:
            assert done["winner"] == (0 if seats == [0] else other)
        points = state["match_state"]["points"]
        assert sorted(done["totals"]) == sorted(points)
        assert done["totals"][0 if mine["a"]["slot"] == 0 else 1] == points[0]
