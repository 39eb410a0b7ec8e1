"""Swiss tournaments (issue 62): the pairing rules as plain functions (no rematch while one
can be avoided, the byes, the points), and a whole Swiss tournament of four accounts and
CPU places through Starlette's TestClient on both backends, across a restart."""

from __future__ import annotations

from itertools import combinations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient
from test_tournaments import play_round
from visitors import account, read, send

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.people.swiss import (
    DRAW,
    drawn,
    next_pairs,
    pair_round,
    points_of,
    seed_order,
    standings,
    swiss_rounds,
)

CPU = "greedy"  # a quick level


# ------------------------------------------------------------------ the rules, pure
def play_out(slots: list[int], seed: int, rounds: int, beats) -> list[dict]:
    """A Swiss tournament's matches over ``rounds``, each match won by ``beats(a, b)`` (a
    place, or `DRAW`)."""
    matches: list[dict] = []
    for rnd in range(1, rounds + 1):
        for a, b in next_pairs(slots, matches, seed):
            winner = a if b is None else beats(a, b)
            matches.append({"round": rnd, "a_slot": a, "b_slot": b, "winner_slot": winner})
    return matches


def test_the_rounds_are_ceil_log2_of_the_entrants():
    assert [swiss_rounds(n) for n in (2, 3, 4, 5, 8, 9, 16, 17, 32)] == [1, 2, 2, 3, 3, 4, 4, 5, 5]


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8, 11, 16, 23, 32])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_rematch_byes_to_the_lowest_without_one_and_the_points_add_up(n, seed):
    slots = list(range(n))
    rounds = swiss_rounds(n)
    matches = play_out(slots, seed, rounds, lambda a, b: min(a, b) if (a + b) % 3 else DRAW)
    played = [frozenset((m["a_slot"], m["b_slot"])) for m in matches if m["b_slot"] is not None]
    assert len(played) == len(set(played)), "a rematch"
    byes = [m["a_slot"] for m in matches if m["b_slot"] is None]
    assert len(byes) == (rounds if n % 2 else 0) and len(set(byes)) == len(byes)
    for rnd in range(1, rounds + 1):  # everyone plays every round (or sits out its bye)
        seen = [s for m in matches if m["round"] == rnd for s in (m["a_slot"], m["b_slot"])]
        assert sorted(s for s in seen if s is not None) == slots
    # a match shares out one point, a bye gives one
    points = points_of(matches)
    assert sum(points.values()) == len(matches)
    table = standings(slots, matches, seed)
    assert [r["rank"] for r in table] == list(range(1, n + 1))
    keys = [(-r["points"], -r["tiebreak"]) for r in table]
    assert keys == sorted(keys)  # points, then the tie-break
    assert sum(r["games"] for r in table) == 2 * len(played)
    assert next_pairs(slots, matches[: len(matches) // 2], seed) == next_pairs(
        slots, matches[: len(matches) // 2], seed
    )  # the same stored matches, the same pairs: any server draws them


def test_the_bye_goes_to_the_lowest_ranked_entrant_that_had_none():
    ranked = [4, 2, 0, 1, 3]
    assert pair_round(ranked, set(), set())[0] == (3, None)
    assert pair_round(ranked, set(), {3})[0] == (1, None)
    assert pair_round(ranked, set(), {3, 1, 0, 2, 4})[0] == (3, None)  # all had one: the last


def test_a_rematch_only_when_none_can_be_avoided():
    met = {frozenset((0, 1))}
    assert pair_round([0, 1, 2, 3], met, set()) == [(0, 2), (1, 3)]
    every = {frozenset(p) for p in combinations(range(4), 2)}
    pairs = pair_round([0, 1, 2, 3], every, set())  # everyone met: rematches, still a round
    assert sorted(s for p in pairs for s in p) == [0, 1, 2, 3]
    # backtracking: the greedy 0-1 would leave 2 and 3, who met
    assert pair_round([0, 1, 2, 3], {frozenset((2, 3))}, set()) == [(0, 2), (1, 3)]


def test_points_ties_and_the_buchholz_tie_break():
    matches = [
        {"a_slot": 0, "b_slot": 1, "winner_slot": 0},
        {"a_slot": 2, "b_slot": 3, "winner_slot": DRAW},
        {"a_slot": 4, "b_slot": None, "winner_slot": 4},
        {"a_slot": 0, "b_slot": 2, "winner_slot": 2},
        {"a_slot": 1, "b_slot": 4, "winner_slot": None},  # on: counts nowhere
    ]
    assert points_of(matches) == {0: 1.0, 2: 1.5, 3: 0.5, 4: 1.0}  # 1 has none
    table = {r["slot"]: r for r in standings(range(5), matches, 9)}
    assert table[2]["rank"] == 1 and table[2]["tiebreak"] == 1.5  # met 3 (½) and 0 (1)
    assert table[0]["tiebreak"] == 1.5 and table[4]["tiebreak"] == 0.0  # a bye adds none
    assert table[0]["rank"] < table[4]["rank"]  # one point each: Buchholz decides
    assert table[4]["games"] == 0 and table[0]["games"] == 2
    assert drawn([[150, 150]]) and not drawn([[150, 149]])
    assert drawn([[100, 50], [50, 100], [80, 80], [70, 70], [60, 60]])
    assert seed_order(range(8), 5) == seed_order(range(8), 5) != seed_order(range(8), 6)


# ------------------------------------------------------------------ over the API


def check_swiss(bracket: dict, entrants: int) -> None:
    """A finished Swiss bracket: every round played by everyone, no rematch, the standings'
    points those of the matches, the winner their top."""
    assert bracket["state"] == "over" and bracket["format"] == "swiss"
    rounds = swiss_rounds(entrants)
    assert bracket["rounds_total"] == rounds and len(bracket["rounds"]) == rounds
    met = []
    for r in bracket["rounds"]:
        seen = []
        for m in r["matches"]:
            seen += [m["a"]["slot"]] + ([m["b"]["slot"]] if m["b"] else [])
            if m["b"]:
                met.append(frozenset((m["a"]["slot"], m["b"]["slot"])))
                assert m["totals"] and m["winner"] in (m["a"]["slot"], m["b"]["slot"], DRAW)
                assert m["draw"] == (m["winner"] == DRAW)
        assert sorted(seen) == list(range(entrants))
    assert len(met) == len(set(met))
    table = bracket["standings"]
    assert [r["rank"] for r in table] == list(range(1, entrants + 1))
    assert sum(r["points"] for r in table) == sum(len(r["matches"]) for r in bracket["rounds"])
    assert bracket["winner"] == table[0]["name"]
    for r in table:
        assert set(r) >= {"rank", "slot", "name", "points", "tiebreak", "games"}


def test_four_accounts_and_cpus_play_a_swiss_tournament_across_a_restart(db, clock):
    first = create_app(db, clock=clock)
    with TestClient(first):
        people = [account(first, n) for n in ("ann", "bob", "cyd", "dee")]
        body = {"name": "Swiss Sunday", "format": "swiss", "places": 7, "fill": CPU,
                "start_in": 600}  # fmt: skip
        made = people[0].post("/api/tournaments", json=body)
        assert made.status_code == 200, made.text
        code = made.json()["code"]
        assert made.json()["format"] == "swiss" and made.json()["standings"] is None
        assert made.json()["rounds_total"] == 3
        for c in people[1:]:
            assert send(c, f"/api/tournaments/{code}/join", {}).status_code == 200
        listed = read(people[1], "/api/tournaments")["tournaments"]
        assert [(t["code"], t["format"]) for t in listed] == [(code, "swiss")]
        clock.now += 601  # the start: three CPUs fill the places, seven entrants, a bye
        bracket = read(people[1], f"/api/tournaments/{code}")
        assert bracket["state"] == "running" and bracket["round"] == 1
        first_round = bracket["rounds"][0]["matches"]
        assert len(first_round) == 4 and sum(m["b"] is None for m in first_round) == 1
        bye = next(m["a"]["slot"] for m in first_round if m["b"] is None)
        points = {r["slot"]: r["points"] for r in bracket["standings"]}
        assert points[bye] == 1.0 and sum(points.values()) <= 2  # the bye, a CPU match
        bracket = play_round(code, people, people[0])
        assert bracket["round"] == 2 and len(bracket["rounds"]) == 2
        cookies = [c.cookies for c in people]
    second = create_app(db, clock=clock)  # a restart: the next rounds from the database
    with TestClient(second):
        people = []
        for jar in cookies:
            c = TestClient(second)
            c.cookies = jar
            people.append(c)
        watcher = TestClient(second)  # no account: it only watches
        bracket = read(watcher, f"/api/tournaments/{code}")
        while bracket["state"] != "over":
            bracket = play_round(code, people, watcher)
            assert len(bracket["rounds"]) <= 3, bracket
        check_swiss(bracket, 7)
        storage = second.state.service.storage
        top = bracket["standings"][0]["slot"]
        champ = next(e for e in storage.tournaments.entrants(code) if e["slot"] == top)
        for name in ("ann", "bob", "cyd", "dee"):
            profile = read(watcher, f"/api/profiles/{name}")
            won = champ["name"] == name.title()
            assert profile["tournaments_won"] == int(won)
            badge = next(a for a in profile["achievements"] if a["id"] == "tournament_won")
            assert (badge["earned"] is not None) == won
        if champ["player_id"] is not None:
            assert storage.tournaments.won_by(champ["player_id"]) == 1


@pytest.mark.backends("sqlite")
def test_a_swiss_tournament_of_cpus_only_plays_itself_out_and_old_ones_stay_knockouts(app):
    with TestClient(app):
        ann = account(app, "ann")
        body = {"name": "Robots", "format": "swiss", "places": 5, "fill": CPU, "start_in": None}
        code = ann.post("/api/tournaments", json=body).json()["code"]
        bracket = send(ann, f"/api/tournaments/{code}/start", {}).json()
        while bracket["state"] != "over":  # ann's own matches are the only tables
            bracket = play_round(code, [ann], ann)
        check_swiss(bracket, 5)
        plain = ann.post("/api/tournaments", json={"name": "Cup", "places": 4, "fill": CPU})
        assert plain.json()["format"] == "knockout" and plain.json()["standings"] is None
        for bad in ("round robin", 3, None):
            reply = ann.post("/api/tournaments", json={"name": "X", "places": 4, "format": bad})
            assert reply.status_code == 400 and reply.json()["code"] == "bad_format"
            assert reply.json()["params"]["field"] == "format"
