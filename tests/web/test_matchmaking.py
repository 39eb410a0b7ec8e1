"""A place to play (issue 32), over the API on both storage backends: quick match (pairing,
the wait, cancelling, one queue per player, the caps), open tables, ratings (openskill
Plackett-Luce; CPU levels fixed; guests, coaches, one account's or one browser's seats not
rated; abandoning is a loss) and spectators (a read-only link the host turns off)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("openskill", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

import visitors
from starlette.testclient import TestClient
from visitors import PASSWORD, send

from yahtzee_env.web.people.matchmaking import STALE_S
from yahtzee_env.web.people.ratings import PROVISIONAL_GAMES, cpu_ratings, ranks_of, shown
from yahtzee_env.web.storage import open_storage


def stranger(app, name: str, account: bool = False) -> TestClient:
    """A second browser on the same server: its own cookies (a guest session, or an account)."""
    return visitors.account(app, name.lower(), name) if account else visitors.guest(app, name)


def play_out_session(c: TestClient, code: str, state: dict | None = None) -> dict:
    """Play the session's seats to the game's end (a re-roll keeping die 0, then the best box)."""
    state = state or c.get(f"/api/tables/{code}").json()
    while not state["over"]:
        seat, seq, game = state["current"], state["seq"], state["game"]
        if state["cup"]:  # a person's turn starts with the dice in the cup: the tap on Roll
            action = {"type": "roll", "hold": []}
        elif state["rolls_left"] == 2:
            action = {"type": "roll", "hold": [0]}
        else:
            action = {"type": "score", "box": max(state["options"], key=state["options"].get)}
        body = {"seat": seat, "seq": seq, "game": game, "action": action}
        r = send(c, f"/api/tables/{code}/act", body)  # the player's token bucket: 20 a second
        assert r.status_code == 200, r.text
        state = r.json()
    return state


def queue_rows(db) -> int:
    s = open_storage(db)
    try:
        return s._query("SELECT COUNT(*) AS n FROM queue")[0]["n"]
    finally:
        s.close()


# ------------------------------------------------------------------ quick match
def test_two_strangers_asking_for_the_same_game_are_seated_together(client, app, db):
    a, b = stranger(app, "Ann"), stranger(app, "Bob")
    ask = {"seats": 2, "rules": "official", "fill": "easy", "wait": 60}
    first = a.post("/api/quick", json=ask).json()
    assert first["state"] == "waiting" and first["waiting"] == 1 and 0 < first["wait_left"] <= 60
    matched_b = b.post("/api/quick", json=ask).json()
    assert matched_b["state"] == "matched", matched_b
    matched_a = a.get("/api/quick").json()
    assert matched_a["state"] == "matched" and matched_a["code"] == matched_b["code"]
    assert {matched_a["seat"], matched_b["seat"]} == {0, 1}
    state = a.get(f"/api/tables/{matched_a['code']}").json()
    assert state["started"] and state["online"]
    assert [s["kind"] for s in state["seats"]] == ["human", "human"]
    assert [s["name"] for s in state["seats"]] == ["Ann", "Bob"]
    assert state["mine"] == [matched_a["seat"]]
    # the matched rows are gone once read: nothing is kept of the request
    assert queue_rows(db) == 0
    assert a.get("/api/quick").json() == {"state": "idle"}


def test_other_requests_are_not_paired(client, app):
    a, b = stranger(app, "Ann"), stranger(app, "Bob")
    assert a.post("/api/quick", json={"seats": 2, "rules": "official"}).json()["state"] == "waiting"
    assert b.post("/api/quick", json={"seats": 3, "rules": "official"}).json()["state"] == "waiting"
    c = stranger(app, "Cid")
    assert c.post("/api/quick", json={"seats": 2, "rules": "no-joker"}).json()["state"] == "waiting"
    assert a.get("/api/quick").json()["state"] == "waiting"


def test_after_the_wait_the_computer_takes_the_free_seats_at_the_chosen_level(app, db, clock):
    with TestClient(app) as a:
        a.post("/api/session", json={"name": "Ann"})
        reply = a.post("/api/quick", json={"seats": 3, "fill": "hard", "wait": 10}).json()
        assert reply["state"] == "waiting"
        clock.now += 5
        assert a.get("/api/quick").json()["state"] == "waiting"
        clock.now += 6
        matched = a.get("/api/quick").json()
        assert matched["state"] == "matched" and matched["seat"] == 0
        state = a.get(f"/api/tables/{matched['code']}").json()
        assert [s["kind"] for s in state["seats"]] == ["human", "cpu", "cpu"]
        assert [s.get("level") for s in state["seats"][1:]] == ["hard", "hard"]


def test_a_player_is_in_one_queue_and_cancelling_leaves_no_trace(client, app, db):
    a = stranger(app, "Ann")
    assert a.post("/api/quick", json={"seats": 2}).status_code == 200
    again = a.post("/api/quick", json={"seats": 3})
    assert again.status_code == 409 and again.json()["code"] == "already_queued"
    assert queue_rows(db) == 1
    assert a.post("/api/quick/cancel", json={}).json() == {"state": "idle"}
    assert queue_rows(db) == 0
    assert a.get("/api/quick").json() == {"state": "idle"}
    # a cancelled player is never seated: a newcomer waits alone
    b = stranger(app, "Bob")
    assert b.post("/api/quick", json={"seats": 2}).json()["state"] == "waiting"


def test_a_player_who_stops_polling_is_not_seated_and_is_swept(app, db, clock):
    with TestClient(app) as server:
        a, b = stranger(app, "Ann"), stranger(app, "Bob")
        a.post("/api/quick", json={"seats": 2, "wait": 300})
        clock.now += STALE_S + 1  # Ann closed her tab
        assert b.post("/api/quick", json={"seats": 2, "wait": 300}).json()["state"] == "waiting"
        clock.now += STALE_S * 4 + 1
        assert server.app.state.service.matchmaker.sweep() >= 1
        assert a.get("/api/quick").json() == {"state": "idle"}


def test_the_queue_is_bounded_per_address_and_in_all(app, db):
    from yahtzee_env.web.limits import Limits

    service = app.state.service
    service.matchmaker.per_address = 2
    people = [stranger(app, f"P{i}") for i in range(3)]
    for p, seats in zip(people[:2], (3, 4), strict=True):
        assert p.post("/api/quick", json={"seats": seats}).status_code == 200
    third = people[2].post("/api/quick", json={"seats": 2})
    assert third.status_code == 429 and third.json()["code"] == "queue_address"
    service.matchmaker.per_address, service.matchmaker.total = 10, 2
    full = people[2].post("/api/quick", json={"seats": 2})
    assert full.status_code == 503 and full.json()["code"] == "queue_full"
    assert Limits().queue_per_address >= 20  # tens of a school wait at once
    assert "your network" in third.json()["error"]


@pytest.mark.parametrize(
    "body, code",
    [
        ({"seats": 5}, "bad_seats"),
        ({"seats": "2"}, "bad_seats"),
        ({"seats": 2, "wait": 3}, "bad_wait"),
        ({"seats": 2, "wait": 10**9}, "bad_wait"),
        ({"seats": 2, "rules": "chess"}, "bad_request"),
        ({"seats": 2, "fill": "godlike"}, "bad_request"),
    ],
)
@pytest.mark.backends("sqlite")
def test_a_bad_request_is_refused_by_name(client, body, code):
    client.post("/api/session", json={"name": "Ann"})
    r = client.post("/api/quick", json=body)
    assert r.status_code == 400 and r.json()["code"] == code, r.text


@pytest.mark.backends("sqlite")
def test_quick_match_needs_a_player(client):
    r = client.post("/api/quick", json={"seats": 2})
    assert r.status_code == 403 and r.json()["code"] == "player_token"


# ------------------------------------------------------------------ open tables
def test_a_listed_table_shows_in_the_lobby_and_a_stranger_joins_it(client, app):
    host = stranger(app, "Host")
    made = host.post(
        "/api/tables", json={"seats": ["human", "friend", "friend"], "online": True}
    ).json()
    code = made["code"]
    assert client.get("/api/open-tables").json() == {"tables": []}
    assert host.post(f"/api/tables/{code}/list", json={"on": True}).json()["listed"] is True
    [entry] = client.get("/api/open-tables").json()["tables"]
    assert entry == {
        "code": code,
        "rules": "official",
        "host": "Host",
        "seats": 3,
        "free": 2,
        "cpus": [],
        "turn_timer": 120,
        "match": False,
    }
    guest = stranger(app, "Guest")
    assert guest.post(f"/api/tables/{code}/join", json={}).status_code == 200
    assert client.get("/api/open-tables").json()["tables"][0]["free"] == 1
    host.post(f"/api/tables/{code}/start", json={"seat": 0})
    assert client.get("/api/open-tables").json() == {"tables": []}  # started: gone


def test_only_the_host_lists_and_only_a_few_at_once(client, app):
    host, other = stranger(app, "Host"), stranger(app, "Other")
    codes = [
        host.post("/api/tables", json={"seats": ["human", "friend"], "online": True}).json()["code"]
        for _ in range(3)
    ]
    r = other.post(f"/api/tables/{codes[0]}/list", json={"on": True})
    assert r.status_code == 403
    for code in codes[:2]:
        assert host.post(f"/api/tables/{code}/list", json={"on": True}).status_code == 200
    r = host.post(f"/api/tables/{codes[2]}/list", json={"on": True})
    assert r.status_code == 429 and r.json()["code"] == "too_many_listed"
    assert host.post(f"/api/tables/{codes[0]}/list", json={"on": "yes"}).status_code == 400
    solo = host.post("/api/tables", json={"seats": ["human", "easy"]}).json()["code"]
    r = host.post(f"/api/tables/{solo}/list", json={"on": True})
    assert r.status_code == 409 and r.json()["code"] == "not_listable"


# ------------------------------------------------------------------ ratings
def test_ranks_put_abandoners_last():
    assert ranks_of([200, 250, 200], set()) == [2, 1, 2]
    assert ranks_of([300, 250, 200], {0}) == [4, 1, 2]


def test_the_cpu_levels_are_calibrated_in_order():
    levels = cpu_ratings()
    assert {"easy", "medium", "hard"} <= set(levels)
    assert levels["easy"]["mu"] < levels["medium"]["mu"] < levels["hard"]["mu"]


def test_a_rated_game_against_the_computer_moves_the_accounts_rating(client, app):
    me = stranger(app, "Rater", account=True)
    before = me.get("/api/session").json()["rating"]
    assert before["rating"] == shown(25.0) and before["games"] == 0 and before["provisional"]
    code = me.post("/api/tables", json={"seats": ["human", "easy"]}).json()["code"]
    end = play_out_session(me, code)
    after = me.get("/api/session").json()["rating"]
    assert after["games"] == 1 and after["rating"] != before["rating"]
    assert after["sigma"] < before["sigma"]
    won = end["result"]["winners"] == [0]
    assert (after["mu"] > before["mu"]) == won
    board = client.get("/api/leaderboard").json()
    assert board["top"][0]["name"] == "rater" and board["top"][0]["provisional"]
    assert board["provisional_games"] == PROVISIONAL_GAMES
    assert {c["level"] for c in board["cpu"]} >= {"easy", "hard"}
    assert me.get("/api/leaderboard").json()["me"]["place"] == 1


def test_guests_and_coached_games_are_not_rated(client, app, db):
    guest = stranger(app, "Guest")
    code = guest.post("/api/tables", json={"seats": ["human", "easy"]}).json()["code"]
    play_out_session(guest, code)
    me = stranger(app, "Coached", account=True)
    code = me.post("/api/tables", json={"seats": ["human", "easy"], "coach": True}).json()["code"]
    play_out_session(me, code)
    assert me.get("/api/session").json()["rating"]["games"] == 0
    s = open_storage(db)
    try:
        assert s._query("SELECT COUNT(*) AS n FROM ratings")[0]["n"] == 0
    finally:
        s.close()


def test_seats_of_one_account_never_rate_each_other(client, app):
    me = stranger(app, "Twin", account=True)
    code = me.post("/api/tables", json={"seats": ["human", "human"]}).json()["code"]
    play_out_session(me, code)
    assert me.get("/api/session").json()["rating"]["games"] == 0


def test_seats_of_one_browser_never_rate_each_other(client, app):
    """Two accounts taking seats from one browser (signing out and in between)."""
    c = stranger(app, "Alpha", account=True)
    code = c.post("/api/tables", json={"seats": ["human", "friend"], "online": True}).json()["code"]
    c.post("/api/account/signout", json={})
    c.post("/api/session", json={"name": "Beta"})
    c.post("/api/account/signup", json={"username": "beta", "password": PASSWORD})
    assert c.post(f"/api/tables/{code}/join", json={}).status_code == 200
    # Alpha's seat: back in as Alpha to start (the device cookie stays)
    c.post("/api/account/signout", json={})
    c.post("/api/account/signin", json={"username": "alpha", "password": PASSWORD})
    c.post(f"/api/tables/{code}/start", json={"seat": 0})
    c.post(f"/api/tables/{code}/leave", json={})  # the computer plays Alpha's seat out
    c.post("/api/account/signout", json={})
    c.post("/api/account/signin", json={"username": "beta", "password": PASSWORD})
    play_out_session(c, code)
    assert c.get("/api/session").json()["rating"]["games"] == 0


def test_abandoning_a_rated_game_counts_as_a_loss(client, app):
    a, b = stranger(app, "Quitter", account=True), stranger(app, "Stayer", account=True)
    code = a.post("/api/tables", json={"seats": ["human", "friend"], "online": True}).json()["code"]
    assert b.post(f"/api/tables/{code}/join", json={}).status_code == 200
    a.post(f"/api/tables/{code}/start", json={"seat": 0})
    assert a.post(f"/api/tables/{code}/leave", json={}).status_code == 200
    end = play_out_session(b, code)
    quitter = a.get("/api/session").json()["rating"]
    stayer = b.get("/api/session").json()["rating"]
    assert quitter["games"] == stayer["games"] == 1
    assert quitter["mu"] < 25 < stayer["mu"], (end["result"], quitter, stayer)


# ------------------------------------------------------------------ spectators
def test_a_watch_link_shows_the_table_without_its_code_until_the_host_turns_it_off(client, app):
    host = stranger(app, "Host")
    made = host.post("/api/tables", json={"seats": ["human", "easy"]}).json()
    code = made["code"]
    other = stranger(app, "Nosy")
    assert other.post(f"/api/tables/{code}/watch", json={"on": True}).status_code == 403
    watch = host.post(f"/api/tables/{code}/watch", json={"on": True}).json()["watch"]
    assert watch and code not in watch
    seen = client.get(f"/api/watch/{watch}").json()
    assert seen["code"] == watch and seen["watching"] is True and "mine" not in seen
    assert code not in str(seen)
    # the same id while it is on
    assert host.post(f"/api/tables/{code}/watch", json={"on": True}).json()["watch"] == watch
    assert host.post(f"/api/tables/{code}/watch", json={"on": False}).json()["watch"] is None
    gone = client.get(f"/api/watch/{watch}")
    assert gone.status_code == 404 and gone.json()["code"] == "unknown_watch"


def test_a_spectator_sees_a_move_live_and_can_neither_act_nor_chat(client, app):
    host = stranger(app, "Host")
    made = host.post("/api/tables", json={"seats": ["human", "easy"]}).json()
    code, state = made["code"], made["state"]
    watch = host.post(f"/api/tables/{code}/watch", json={"on": True}).json()["watch"]
    with client.websocket_connect(f"/ws/watch/{watch}") as ws:
        first = ws.receive_json()
        assert first["type"] == "state" and first["state"]["code"] == watch
        assert host.get(f"/api/tables/{code}").json()["spectators"] == 1
        body = {
            "seat": 0,
            "seq": state["seq"],
            "game": state["game"],
            "action": {"type": "roll", "hold": []},
        }
        assert host.post(f"/api/tables/{code}/act", json=body).status_code == 200
        pushed = ws.receive_json()
        assert pushed["type"] == "state" and pushed["state"]["seq"] == state["seq"] + 1
        assert code not in str(pushed)
        for intent in (
            {"type": "act", "seat": 0, "action": {"type": "roll"}},
            {"type": "chat", "text": "hi"},
            {"type": "hello"},
        ):
            ws.send_json({**intent, "id": 7})
            refused = ws.receive_json()
            assert refused["type"] == "error" and refused["code"] == "spectator", refused
        ws.send_json({"type": "ping", "id": 8})
        assert ws.receive_json() == {"type": "pong", "id": 8}
    assert host.get(f"/api/tables/{code}").json()["spectators"] == 0


@pytest.mark.backends("sqlite")
def test_turning_the_link_off_closes_the_spectators(client, app):
    from starlette.websockets import WebSocketDisconnect

    host = stranger(app, "Host")
    code = host.post("/api/tables", json={"seats": ["human", "easy"]}).json()["code"]
    watch = host.post(f"/api/tables/{code}/watch", json={"on": True}).json()["watch"]
    with client.websocket_connect(f"/ws/watch/{watch}") as ws:
        ws.receive_json()
        host.post(f"/api/tables/{code}/watch", json={"on": False})
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                ws.receive_json()
        assert closed.value.code == 4410
    r = client.get("/api/watch/not-a-link!")
    assert r.status_code == 404


def test_the_page_can_say_what_leaving_costs_before_it_leaves(client, app):
    """Issue 46: leaving a solo game was a silent rated loss (-212 for a new account). The
    page asks `GET /api/tables/CODE/rated` first: whether the game rates you and what
    leaving now costs, the very change that leaving then makes."""
    me = stranger(app, "Careful", account=True)
    code = me.post("/api/tables", json={"seats": ["human", "easy"]}).json()["code"]
    cost = me.get(f"/api/tables/{code}/rated").json()
    assert cost["rated"] is True and cost["after"] < cost["before"]
    assert me.post(f"/api/tables/{code}/leave", json={}).status_code == 200
    assert me.get("/api/session").json()["rating"]["rating"] == cost["after"]
    assert me.get(f"/api/tables/{code}/rated").json() == {"rated": False}  # rated already
    guest = stranger(app, "Guest")  # no account: nothing is rated
    solo = guest.post("/api/tables", json={"seats": ["human", "easy"]}).json()["code"]
    assert guest.get(f"/api/tables/{solo}/rated").json() == {"rated": False}
    coached = me.post("/api/tables", json={"seats": ["human", "easy"], "coach": True})
    assert me.get(f"/api/tables/{coached.json()['code']}/rated").json() == {"rated": False}


def test_leaving_a_rated_game_against_the_computer_is_a_loss_at_once(client, app):
    """Leaving is rated when it happens: a player cannot dodge a loss by leaving a game
    nobody else will finish (against the computer alone the game stops when all leave)."""
    me = stranger(app, "Dodger", account=True)
    code = me.post("/api/tables", json={"seats": ["human", "easy"], "online": True}).json()["code"]
    me.post(f"/api/tables/{code}/start", json={"seat": 0})
    assert me.post(f"/api/tables/{code}/leave", json={}).status_code == 200
    rating = me.get("/api/session").json()["rating"]
    assert rating["games"] == 1 and rating["mu"] < 25
    # taking the seat back and finishing does not rate the game again
    assert me.post(f"/api/tables/{code}/back", json={}).status_code == 200
    play_out_session(me, code)
    again = me.get("/api/session").json()["rating"]
    assert again["games"] == 1 and again["mu"] == pytest.approx(rating["mu"])


def test_a_host_of_too_many_tables_locks_nobody_out_of_the_queue(app, db):
    """The oldest waiting player hosts the table; one who may not host another (the per-player
    cap) is refused up front, and one who reached the cap while waiting leaves the queue
    instead of blocking the players behind."""
    tables = app.state.service.tables
    a, b, c = stranger(app, "Ann"), stranger(app, "Bob"), stranger(app, "Cid")
    tables.tables_per_player = 1
    a.post("/api/tables", json={"seats": ["human", "friend"], "online": True})
    refused = a.post("/api/quick", json={"seats": 2})
    assert refused.status_code == 409 and refused.json()["code"] == "too_many_tables"
    assert b.post("/api/quick", json={"seats": 2}).json()["state"] == "waiting"
    b.post("/api/tables", json={"seats": ["human", "friend"], "online": True})  # now at the cap
    matched = c.post("/api/quick", json={"seats": 2}).json()
    assert matched["state"] == "waiting"  # Bob could not host: he left, Cid waits
    assert b.get("/api/quick").json() == {"state": "idle"}


@pytest.mark.backends("sqlite")
def test_guessing_watch_links_spends_the_lookup_budget(client):
    for _ in range(25):
        r = client.get("/api/watch/abcdefghijklmnop")
    assert r.status_code == 429 and r.json()["code"] == "lookup_budget"
