"""Profiles and achievements (issue 62, items 3 and 4), over the API on both storage
backends: what a profile shows (the rating and its chart, the games by level and kind, the
dice, the recent games, the achievements), who sees it (public, friends, nobody), what
earns an achievement (the games the server dealt, played unaided) and what does not (a
game played in the page, a coached one), a deleted account's profile, the name's checks and
the budget of profile reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("openskill", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

import visitors
from starlette.testclient import TestClient
from visitors import PASSWORD, send

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.people.achievements import achievement_ids, counts, earned
from yahtzee_env.web.people.profiles import VISIBILITIES, may_see_profile
from yahtzee_env.web.people.ratings import shown

LEVELS = ["easy", "medium", "hard", "expert", "random"]


@pytest.fixture
def app(db):
    """The app over ``db`` with budgets of requests no game played at a test's pace spends
    (the budgets themselves: tests/web/test_hardening.py)."""
    fast = Limits(rate=10_000.0, burst=10_000, token_rate=10_000.0, token_burst=10_000)
    return create_app(db, limits=fast)


def browser_of(app, name: str, account: bool = True) -> TestClient:
    """A browser on the server: its own cookies (an account ``name.lower()``, or a guest)."""
    return visitors.account(app, name.lower(), name) if account else visitors.guest(app, name)


def play_out(c: TestClient, code: str) -> dict:
    """Play the session's seat to the end: keep the most common face, then the best box."""
    state = c.get(f"/api/tables/{code}").json()
    while not state["over"]:
        seat, seq, game = state["current"], state["seq"], state["game"]
        if state["cup"]:  # a person's turn starts with the dice in the cup: the tap on Roll
            action = {"type": "roll", "hold": []}
        elif state["rolls_left"] > 0 and len(set(state["dice"])) > 1:
            dice = state["dice"]
            face = max(set(dice), key=lambda f: (dice.count(f), f))
            action = {"type": "roll", "hold": [i for i, d in enumerate(dice) if d == face]}
        else:
            action = {"type": "score", "box": max(state["options"], key=state["options"].get)}
        body = {"seat": seat, "seq": seq, "game": game, "action": action}
        r = send(c, f"/api/tables/{code}/act", body)  # the player's token bucket: 20 a second
        assert r.status_code == 200, r.text
        state = r.json()
    return state


def solo_game(c: TestClient, level: str = "easy", **extra) -> None:
    code = c.post("/api/tables", json={"seats": ["human", level], **extra}).json()["code"]
    play_out(c, code)


def result(score=150, outcome="loss", yahtzees=0, bonus=0, opponents="easy", **extra) -> dict:
    """A stored result row as `results_of` reads it (dealt by the server, unaided)."""
    n = extra.pop("n", 0)
    row = {
        "code": f"T{n}",
        "idx": 0,
        "score": score,
        "outcome": outcome,
        "yahtzees": yahtzees,
        "upper_bonus": bonus,
        "opponents": opponents,
        "online": 0,
        "finished": 1000.0 + n,
        "offline": 0,
        "assisted": 0,
    }
    row.update(extra)
    return row


def ids_earned(achievements) -> set[str]:
    return {a["id"] for a in achievements if a["earned"] is not None}


# ------------------------------------------------------------------ the achievements' rules
def test_each_achievement_is_earned_by_its_game_and_dated_by_the_first():
    rows = [
        result(n=1, score=120, yahtzees=1),
        result(n=2, score=260, bonus=1, outcome="win"),
        result(n=3, score=310, yahtzees=2, bonus=1, outcome="win", opponents="easy+hard"),
        result(n=4, score=200, outcome="win", opponents="humans"),
        result(n=5, score=180, outcome="win", opponents="random"),
    ]
    rated = [{"code": "T4", "idx": 0, "mu_after": 26.0, "finished": 1004.0}]
    got = {a["id"]: a for a in earned(rows, rated, LEVELS, shown)}
    assert list(got) == achievement_ids(LEVELS)
    assert got["yatzy"]["earned"] == 1001.0 and got["yatzy"]["game_id"] == "T1-0"
    assert got["upper_bonus"]["game_id"] == "T2-0" and got["score_250"]["game_id"] == "T2-0"
    assert got["bonus_and_yatzy"]["game_id"] == "T3-0" and got["two_yatzys"]["game_id"] == "T3-0"
    assert got["score_300"]["game_id"] == "T3-0"
    assert got["beat_easy"]["game_id"] == "T2-0" and got["beat_hard"]["game_id"] == "T3-0"
    assert got["beat_medium"]["earned"] is None and got["beat_expert"]["earned"] is None
    assert got["beat_people"]["game_id"] == "T4-0"  # rated: a win against people
    assert got["three_in_a_row"]["game_id"] == "T4-0"  # wins 2, 3, 4
    assert got["rating_1100"]["earned"] is None  # 26 * 40 = 1040
    rated.append({"code": "T9", "idx": 0, "mu_after": 27.6, "finished": 1009.0})
    got = {a["id"]: a for a in earned(rows, rated, LEVELS, shown)}
    assert got["rating_1100"]["game_id"] == "T9-0" and got["rating_1100"]["earned"] == 1009.0


def test_a_win_against_people_counts_only_when_rated_and_a_streak_breaks_on_a_loss():
    rows = [
        result(n=1, outcome="win", opponents="humans"),  # own seats: never rated
        result(n=2, outcome="win"),
        result(n=3, outcome="loss"),
        result(n=4, outcome="win"),
        result(n=5, outcome="win"),
        result(n=6, outcome="loss", assisted=1),  # left, the computer finished it: no skip
        result(n=7, outcome="win"),
        result(n=8, outcome="loss", offline=1),  # a page's game: not the server's, no part
        result(n=9, outcome="win"),
    ]
    assert ids_earned(earned(rows, [], LEVELS, shown)) == {"beat_easy"}
    rows.append(result(n=10, outcome="win"))
    got = {a["id"]: a for a in earned(rows, [], LEVELS, shown)}
    assert got["three_in_a_row"]["game_id"] == "T10-0"


def test_only_dealt_unaided_games_earn_achievements():
    big = {"score": 320, "yahtzees": 3, "bonus": 1, "outcome": "win"}
    forged = [
        result(n=1, offline=1, **big),  # played offline in the page: its dice are the page's
        result(n=2, offline=2, **big),  # online in the page: the same
        result(n=3, assisted=1, **big),  # the coach, or the computer for the seat
        result(n=4, assisted=None, **big),  # stored before the column: unknown
    ]
    assert not any(counts(r) for r in forged)
    assert ids_earned(earned(forged, [], LEVELS, shown)) == set()
    assert counts(result())


def test_visibility_rule_in_one_function():
    owner, other = 7, 8
    for visibility in VISIBILITIES:
        assert may_see_profile(owner, owner, visibility)
    assert may_see_profile(other, owner, "public") and may_see_profile(None, owner, "public")
    for visibility in ("friends", "nobody", "anything else"):
        assert not may_see_profile(other, owner, visibility)
        assert not may_see_profile(None, owner, visibility)
    friends = lambda a, b: {a, b} == {owner, other}  # noqa: E731
    assert may_see_profile(other, owner, "friends", friends)
    assert not may_see_profile(9, owner, "friends", friends)
    assert not may_see_profile(None, owner, "friends", friends)
    assert not may_see_profile(other, owner, "nobody", friends)


def test_attack_a_friends_profile_shows_to_friends_only(app):
    """'friends' is the friends store's reading: both follow and neither blocked. A one-way
    follow (a stranger's) sees nothing, a friend sees it, a block takes it away."""
    ada, bob, eve = browser_of(app, "Ada"), browser_of(app, "Bob"), browser_of(app, "Eve")
    solo_game(ada)
    assert ada.post("/api/account/profile", json={"visibility": "friends"}).status_code == 200
    follow = lambda c, name: c.post("/api/friends/follow", json={"name": name})  # noqa: E731
    assert follow(eve, "ada").status_code == 200  # eve follows ada; ada does not follow eve
    assert follow(bob, "ada").status_code == 200 and follow(ada, "bob").status_code == 200
    assert eve.get("/api/profiles/ada").json()["code"] == "no_profile"
    seen = bob.get("/api/profiles/ada")
    assert seen.status_code == 200 and seen.json()["overall"]["games"] == 1
    storage = app.state.service.storage
    a, b = (storage.accounts.account(username=n)["player_id"] for n in ("ada", "bob"))
    storage.people.block(a, b)  # ada blocks bob (as a table's Block button does)
    assert bob.get("/api/profiles/ada").json()["code"] == "no_profile"


# ------------------------------------------------------------------ the profile over the API
def test_a_profile_shows_the_rating_chart_and_an_achievement_earned_in_those_games(app):
    ada, bob = browser_of(app, "Ada"), browser_of(app, "Bob")
    games = 0
    while games < 30:  # a game earns one about every other game: a Yatzy, a win...
        solo_game(ada)
        games += 1
        prof = bob.get("/api/profiles/ada").json()
        if ids_earned(prof["achievements"]):
            break
    assert ids_earned(prof["achievements"]), "thirty games and no achievement"
    assert prof["name"] == "ada" and not prof["mine"] and "visibility" not in prof
    assert len(prof["chart"]) == games == prof["rating"]["games"] == prof["overall"]["games"]
    assert prof["chart"][-1]["rating"] == prof["rating"]["rating"]
    assert [p["at"] for p in prof["chart"]] == sorted(p["at"] for p in prof["chart"])
    assert prof["by_level"]["easy"]["games"] == games == prof["by_kind"]["solo"]["games"]
    assert prof["rolls"]["games"] == games and sum(prof["rolls"]["faces"]) > 0
    assert len(prof["recent"]) == min(games, 10) and all(g["counted"] for g in prof["recent"])
    # the earned achievement is dated by a game of the profile's, and its review opens
    got = next(a for a in prof["achievements"] if a["earned"] is not None)
    rows = app.state.service.storage.players.results_of(
        app.state.service.storage.accounts.account(username="ada")["player_id"]
    )
    assert all(r["assisted"] == 0 for r in rows)
    assert got["game_id"] is None and all(g["game_id"] is None for g in prof["recent"])
    mine = ada.get("/api/profiles/ada").json()  # the owner's view: the games' ids
    got = next(a for a in mine["achievements"] if a["id"] == got["id"])
    assert got["game_id"] in {f"{r['code']}-{r['idx']}" for r in rows}
    review = ada.post(f"/api/games/{got['game_id']}", json={})
    assert review.status_code == 200, review.text
    assert ada.get("/api/profiles/ADA").json()["mine"]  # the name in any case


def test_a_coached_game_counts_in_the_figures_but_earns_nothing(app):
    ada = browser_of(app, "Ada")
    solo_game(ada, coach=True)
    storage = app.state.service.storage
    me = storage.accounts.account(username="ada")["player_id"]
    [row] = storage.players.results_of(me)
    assert row["assisted"] == 1
    prof = ada.get("/api/profiles/ada").json()
    assert prof["overall"]["games"] == 1 and prof["chart"] == []  # a coach's game: not rated
    assert ids_earned(prof["achievements"]) == set()
    assert prof["recent"][0]["counted"] is False


def test_attack_forged_page_games_earn_no_achievement_and_count_nowhere_on_a_profile(app):
    browser_of(app, "Ada")
    storage = app.state.service.storage
    me = storage.accounts.account(username="ada")["player_id"]
    forged = {"score": 1575, "outcome": "win", "yahtzees": 13, "upper_bonus": 1}
    storage.players.add_offline_results(  # as if a forged record had passed the replay
        me, [{"id": f"g{i}", "opponents": "easy", **forged} for i in range(3)]
    )
    prof = browser_of(app, "Bob").get("/api/profiles/ada").json()
    assert prof["overall"]["games"] == 0 and prof["overall"]["best_score"] is None
    assert prof["recent"] == [] and prof["by_level"] == {}
    assert ids_earned(prof["achievements"]) == set()


def test_attack_a_hidden_profile_answers_as_no_account(app):
    ada, bob, guest = browser_of(app, "Ada"), browser_of(app, "Bob"), TestClient(app)
    solo_game(ada)
    assert bob.get("/api/profiles/ada").status_code == 200
    unknown = bob.get("/api/profiles/zed")
    assert unknown.status_code == 404 and unknown.json()["code"] == "no_profile"
    for visibility in ("nobody", "friends"):
        r = ada.post("/api/account/profile", json={"visibility": visibility})
        assert r.status_code == 200 and r.json() == {"visibility": visibility}
        for viewer in (bob, guest):
            hidden = viewer.get("/api/profiles/ada")
            assert hidden.status_code == unknown.status_code
            assert hidden.json() == {
                **unknown.json(),
                "error": unknown.json()["error"].replace("zed", "ada"),
            }
        mine = ada.get("/api/profiles/ada").json()
        assert mine["mine"] and mine["visibility"] == visibility and mine["overall"]["games"] == 1
    assert ada.post("/api/account/profile", json={"visibility": "public"}).status_code == 200
    assert guest.get("/api/profiles/ada").status_code == 200


def test_attack_only_an_account_sets_its_visibility_to_one_of_three(app):
    ada, guest = browser_of(app, "Ada"), browser_of(app, "Gus", account=False)
    for bad in ("everyone", "", None, 1, ["public"], "x" * 3000):
        r = ada.post("/api/account/profile", json={"visibility": bad})
        assert r.status_code == 400 and r.json()["code"] == "bad_visibility"
    r = guest.post("/api/account/profile", json={"visibility": "nobody"})
    assert r.status_code == 403 and r.json()["code"] == "no_account"
    assert (
        TestClient(app).post("/api/account/profile", json={"visibility": "nobody"}).status_code
        == 403
    )


def test_attack_a_deleted_accounts_profile_is_gone(app):
    ada, bob = browser_of(app, "Ada"), browser_of(app, "Bob")
    solo_game(ada)
    solo_game(bob)
    assert "ada" in {r["name"] for r in bob.get("/api/leaderboard").json()["top"]}
    assert ada.post("/api/account/delete", json={"password": PASSWORD}).status_code == 200
    gone = bob.get("/api/profiles/ada")
    assert gone.status_code == 404 and gone.json()["code"] == "no_profile"
    assert "ada" not in {r["name"] for r in bob.get("/api/leaderboard").json()["top"]}
    assert bob.get("/api/profiles/bob").json()["overall"]["games"] == 1


@pytest.mark.parametrize("name", ["ab", "x" * 25, "ada%20l", "%C3%A0da", "ada'--", "y" * 3000])
def test_attack_a_profiles_name_is_checked(app, name):
    r = TestClient(app).get(f"/api/profiles/{name}")
    assert r.status_code == 400 and r.json()["code"] == "bad_username", (name, r.text)


@pytest.mark.backends("sqlite")
def test_attack_profile_reads_are_limited_per_browser(db):
    app = create_app(db, limits=Limits(profiles_per_minute=5, profile_burst=5))
    with TestClient(app):
        ada, bob = browser_of(app, "Ada"), browser_of(app, "Bob")
        for _ in range(5):
            assert bob.get("/api/profiles/ada").status_code == 200
        r = bob.get("/api/profiles/ada")
        assert r.status_code == 429 and r.json()["code"] == "profile_budget"
        assert int(r.headers["retry-after"]) >= 1
        assert bob.get("/api/profiles/nobody_here").status_code == 429  # unknown names too
        assert ada.get("/api/profiles/ada").status_code == 200  # another browser's budget


def test_attack_a_profile_never_shows_a_table_code_but_to_its_owner(app):
    ada, bob = browser_of(app, "Ada"), browser_of(app, "Bob")
    code = ada.post("/api/tables", json={"seats": ["human", "easy"], "match": True}).json()["code"]
    play_out(ada, code)  # the first game of a match: the table plays on
    for viewer in (bob, TestClient(app)):
        r = viewer.get("/api/profiles/ada")
        assert r.status_code == 200 and code not in r.text
    mine = ada.get("/api/profiles/ada").json()
    assert mine["recent"][0]["game_id"] == f"{code}-0"


def test_a_seat_the_computer_played_in_part_earns_nothing(app):
    ada, bob = browser_of(app, "Ada"), browser_of(app, "Bob")
    body = {"seats": ["human", "friend"], "online": True, "turn_timer": 0}
    code = ada.post("/api/tables", json=body).json()["code"]
    assert bob.post(f"/api/tables/{code}/join", json={}).status_code == 200
    state = ada.post(f"/api/tables/{code}/start", json={"seat": 0}).json()
    assert state["current"] == 0
    # Ada leaves: the computer plays her seat while Bob is at the table, to the game's end
    assert ada.post(f"/api/tables/{code}/leave", json={"seat": 0}).status_code == 200
    assert play_out(bob, code)["over"]
    storage = app.state.service.storage
    assisted = {
        name: [
            r["assisted"]
            for r in storage.players.results_of(
                storage.accounts.account(username=name)["player_id"]
            )
        ]
        for name in ("ada", "bob")
    }
    assert assisted == {"ada": [1], "bob": [0]}
    prof = bob.get("/api/profiles/ada").json()
    assert prof["overall"]["games"] == 1 and ids_earned(prof["achievements"]) == set()
    assert prof["recent"][0]["counted"] is False


def test_a_count_of_one_is_singular_on_a_profile():
    """The profile's counts of games take plural forms (`tn`) in both catalogues."""
    static = Path(__file__).resolve().parents[2] / "yahtzee_env" / "web" / "static"
    js = (static / "js" / "profile.js").read_text(encoding="utf-8")
    for key in ("profile.rolls_intro", "profile.chart_label"):
        assert f'tn("{key}"' in js and f't("{key}"' not in js, key
    for lang, right, wrong in (("en", "1 game ", "1 games"), ("it", "1 partita", "1 partite")):
        words = json.loads((static / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
        one = words["profile.rolls_intro.one"].replace("{n}", "1")
        assert right in one and wrong not in one, (lang, one)
        assert "{n}" not in words["profile.chart_label.one"]
