"""Online tables with real people (issue 18), through Starlette's TestClient: presence from
the sockets, turn timers whose deadline is stored (and survives a restart), the computer
playing for away players, the host's controls, leaving and coming back, the play-again
vote, and who rolls first."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient

from yahtzee_env.web.door.app import create_app

POLL_S = 5.0  # generous bound for what the clock task does every 0.5 s


# every test's app runs on a wall clock the test moves (`clock`): no deadline passes by itself
pytestmark = pytest.mark.usefixtures("clock")


def state_of(client, code):
    return client.get(f"/api/tables/{code}").json()


@pytest.fixture
def score_best(act):
    """``score_best(client, code, seat, token)``: the seat scores its best-paying box."""

    def score(client, code, seat, token):
        state = state_of(client, code)
        if state.get("cup"):  # a person's turn starts with the dice in the cup: tap Roll
            state = act(client, code, seat, token, {"type": "roll", "hold": []}, state=state).json()
        options = state["options"]
        box = max(options, key=options.get)
        reply = act(client, code, seat, token, {"type": "score", "box": box})
        assert reply.status_code == 200, reply.text
        return reply.json()

    return score


def online_table(client, seats=("human", "friend", "easy"), started=True, **extra):
    """An online table of the host (seat 0) and a friend who joined seat 1."""
    reply = client.post("/api/tables", json={"seats": list(seats), "online": True, **extra})
    assert reply.status_code == 200, reply.text
    code, tokens = reply.json()["code"], {0: reply.json()["tokens"]["0"]}
    if "friend" in seats:
        joined = client.post(f"/api/tables/{code}/join", json={"name": "Gina"}).json()
        tokens[joined["seat"]] = joined["token"]
    if started:
        reply = client.post(f"/api/tables/{code}/start", json={"seat": 0, "token": tokens[0]})
        assert reply.status_code == 200, reply.text
    return code, tokens


def post(client, code, what, **body):
    return client.post(f"/api/tables/{code}/{what}", json=body)


def wait_for(predicate, what: str):
    deadline = time.monotonic() + POLL_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {POLL_S} s: {what}")


def filled(state, seat) -> int:
    return sum(v is not None for v in state["cards"][seat]["scores"].values())


# ------------------------------------------------------------------ presence
def test_presence_follows_the_seated_sockets(client):
    code, tokens = online_table(client)
    seats = state_of(client, code)["seats"]
    assert [s["connected"] for s in seats] == [False, False, True]  # a CPU is always there
    with client.websocket_connect(f"/ws/{code}") as watcher:
        watcher.receive_json()
        with client.websocket_connect(f"/ws/{code}") as guest:
            guest.receive_json()
            guest.send_json({"type": "hello", "seat": 1, "token": tokens[1]})
            assert guest.receive_json()["type"] == "hello"
            assert watcher.receive_json() == {"type": "presence", "connected": [1]}
            seats = state_of(client, code)["seats"]
            assert [s["connected"] for s in seats] == [False, True, True]
        # the guest closed the tab: everybody hears it at once
        assert watcher.receive_json() == {"type": "presence", "connected": []}
    assert [s["connected"] for s in state_of(client, code)["seats"]][:2] == [False, False]


# ------------------------------------------------------------------ who starts
def test_you_roll_first_solo_and_the_host_online(client):
    for _ in range(6):  # the old random draw would have put a CPU first in most of these
        reply = client.post("/api/tables", json={"seats": ["human", "hard", "easy", "medium"]})
        state = reply.json()["state"]
        assert state["first"] == 0 and state["current"] == 0 and state["events"] == []
    code, _tokens = online_table(client, seats=("human", "friend", "hard", "easy"))
    state = state_of(client, code)
    assert state["first"] == 0 and state["current"] == 0 and state["events"] == []


def test_later_games_of_a_match_pass_the_start(client, act, score_best):
    reply = client.post("/api/tables", json={"seats": ["human", "easy"], "match": True})
    code, token = reply.json()["code"], reply.json()["tokens"]["0"]
    state = reply.json()["state"]
    while not state["over"]:
        state = score_best(client, code, 0, token)
    state = act(client, code, 0, token, {"type": "next"}).json()
    assert state["game"] == 1 and state["first"] == 1


# ------------------------------------------------------------------ turn timer
@pytest.mark.parametrize(
    ("timer", "ok"),
    [
        (0, True),
        (10, True),
        (3600, True),
        (3 * 86_400, True),  # a turn-based table: up to 3 days a move (issue 32)
        (9, False),
        (3 * 86_400 + 1, False),
        (True, False),
        ("60", False),
    ],
)
def test_the_turn_timer_accepts_0_or_10_s_to_3_days(client, timer, ok):
    reply = client.post(
        "/api/tables", json={"seats": ["human", "friend"], "online": True, "turn_timer": timer}
    )
    assert reply.status_code == (200 if ok else 400), reply.text
    if not ok:
        assert reply.json()["code"] == "bad_turn_timer"


def test_solo_tables_have_no_timer_by_default(client):
    state = client.post("/api/tables", json={"seats": ["human", "easy"]}).json()["state"]
    assert state["turn_timer"] == 0 and state["deadline"] is None
    code, _ = online_table(client)
    state = state_of(client, code)
    assert state["turn_timer"] > 0 and state["deadline"] is not None


def test_a_timed_out_turn_is_played_by_the_computer(client, clock, score_best):
    code, tokens = online_table(client, turn_timer=10)
    state = state_of(client, code)
    assert state["current"] == 0 and state["deadline"] == pytest.approx(clock.now + 10)
    assert state["cup"]  # the host's dice in the cup: nobody taps Roll
    clock.now += 9  # not yet
    time.sleep(0.7)
    assert state_of(client, code)["seq"] == state["seq"]
    clock.now += 2
    state = wait_for(
        lambda: (s := state_of(client, code))["current"] == 1 and s, "the computer plays seat 0"
    )
    assert filled(state, 0) == 1 and state["seats"][0]["away"] == "timeout"
    # the computer rolled for the host's seat by itself: no tap of a first roll in its turn
    keys = [e["msg"]["key"] for e in state_of(client, code)["events"] if e["seat"] == 0]
    assert keys and "narr.first_roll" not in keys
    assert state["deadline"] == pytest.approx(clock.now + 10)  # the guest's turn has its own
    # the host's next turn is the computer's too, while away: the guest plays on
    state = score_best(client, code, 1, tokens[1])
    assert state["current"] == 1 and filled(state, 0) == 2
    # the host comes back: from their next turn on, they decide
    state = post(client, code, "back", seat=0, token=tokens[0]).json()
    assert state["seats"][0]["away"] is None
    state = score_best(client, code, 1, tokens[1])
    assert state["current"] == 0 and filled(state, 0) == 2


def test_the_timer_survives_a_restart(db, clock):
    """The deadline passes while the server is down: the turn is played at start-up."""
    with TestClient(create_app(db, clock=clock)) as c:
        code, _tokens = online_table(c, turn_timer=30)
        before = state_of(c, code)
        assert before["current"] == 0
    clock.now += 60  # the server was down for a minute
    with TestClient(create_app(db, clock=clock)) as c:
        state = wait_for(
            lambda: (s := state_of(c, code))["current"] == 1 and s, "the late turn played"
        )
        assert filled(state, 0) == 1 and state["seats"][0]["away"] == "timeout"
        assert state["deadline"] == pytest.approx(clock.now + 30)


def test_an_unexpired_deadline_survives_a_restart(db, clock):
    with TestClient(create_app(db, clock=clock)) as c:
        code, _ = online_table(c, turn_timer=30)
        deadline = state_of(c, code)["deadline"]
    clock.now += 10
    with TestClient(create_app(db, clock=clock)) as c:
        state = state_of(c, code)
        assert state["deadline"] == pytest.approx(deadline) and state["current"] == 0
        assert state["time_left"] == pytest.approx(20, abs=0.2)


def test_nobody_at_the_table_pauses_it(client, clock):
    """When every human is away the computer does not play the game out for them."""
    code, tokens = online_table(client, turn_timer=10)
    clock.now += 11
    wait_for(lambda: state_of(client, code)["current"] == 1, "seat 0 timed out")
    clock.now += 11
    state = wait_for(
        lambda: (s := state_of(client, code))["seats"][1]["away"] == "timeout" and s,
        "seat 1 timed out",
    )
    assert state["deadline"] is None and not state["over"]
    assert filled(state, 0) == 1 and filled(state, 1) == 1
    state = post(client, code, "back", seat=1, token=tokens[1]).json()  # the guest returns
    assert state["current"] == 1 and state["seats"][1]["away"] is None


# ------------------------------------------------------------------ the host's controls
def test_the_host_hands_an_absent_seat_to_the_computer(client, score_best):
    code, tokens = online_table(client)
    state = score_best(client, code, 0, tokens[0])
    assert state["current"] == 1
    refused = post(client, code, "hand", target=1, seat=1, token=tokens[1])
    assert refused.status_code == 403  # only the host
    with client.websocket_connect(f"/ws/{code}") as guest:
        guest.receive_json()
        guest.send_json({"type": "hello", "seat": 1, "token": tokens[1]})
        guest.receive_json()
        present = post(client, code, "hand", target=1, seat=0, token=tokens[0])
        assert present.status_code == 409 and present.json()["code"] == "player_present"
    state = post(client, code, "hand", target=1, seat=0, token=tokens[0]).json()
    assert state["seats"][1]["away"] == "host" and state["current"] == 0
    assert filled(state, 1) == 1  # the computer played the guest's turn
    # the guest reconnects: the seat is theirs again
    with client.websocket_connect(f"/ws/{code}") as guest:
        guest.receive_json()
        guest.send_json({"type": "hello", "seat": 1, "token": tokens[1]})
        guest.receive_json()
        assert state_of(client, code)["seats"][1]["away"] is None


def test_the_host_removes_a_seat_before_the_start(client):
    reply = client.post(
        "/api/tables", json={"seats": ["human", "friend", "friend"], "online": True}
    )
    code, token = reply.json()["code"], reply.json()["tokens"]["0"]
    state = post(client, code, "remove", target=2, seat=0, token=token).json()
    assert [s["kind"] for s in state["seats"]] == ["human", "friend"]
    refused = post(client, code, "remove", target=1, seat=0, token=token)
    assert refused.status_code == 409 and refused.json()["code"] == "min_seats"
    state = post(client, code, "hand", target=1, seat=0, token=token).json()
    assert state["seats"][1]["kind"] == "cpu" and state["seats"][1]["level"] == "medium"
    post(client, code, "start", seat=0, token=token)
    assert post(client, code, "remove", target=1, seat=0, token=token).status_code == 409


def test_leave_and_take_the_seat_back(client, score_best):
    code, tokens = online_table(client, started=False)
    state = post(client, code, "leave", seat=1, token=tokens[1]).json()
    assert state["seats"][1]["kind"] == "friend" and not state["seats"][1]["taken"]
    joined = client.post(f"/api/tables/{code}/join", json={"name": "Gina"}).json()
    tokens[1] = joined["token"]
    post(client, code, "start", seat=0, token=tokens[0])
    state = score_best(client, code, 0, tokens[0])
    assert state["current"] == 1
    state = post(client, code, "leave", seat=1, token=tokens[1]).json()
    assert state["seats"][1]["away"] == "left" and state["current"] == 0
    # reconnecting alone does not undo leaving; asking does
    with client.websocket_connect(f"/ws/{code}") as guest:
        guest.receive_json()
        guest.send_json({"type": "hello", "seat": 1, "token": tokens[1]})
        guest.receive_json()
    assert state_of(client, code)["seats"][1]["away"] == "left"
    state = post(client, code, "back", seat=1, token=tokens[1]).json()
    assert state["seats"][1]["away"] is None


def reply_to(ws, msg_id):
    """The socket's reply to its message ``msg_id`` (states and presence skipped)."""
    while True:
        msg = ws.receive_json()
        if msg.get("id") == msg_id:
            return msg


def test_the_seat_actions_come_in_by_either_door(client):
    """One handler per intent: a seat action sent over the table's socket does what its
    route does, and is refused as its route refuses it (the same code)."""
    code, tokens = online_table(client, started=False)
    host_says = {"seat": 0, "token": tokens[0]}
    with client.websocket_connect(f"/ws/{code}") as host:
        host.receive_json()
        refused = post(client, code, "leave", **host_says)
        host.send_json({"type": "leave", "id": 1, **host_says})
        reply = reply_to(host, 1)
        assert reply["type"] == "error" and reply["status"] == refused.status_code == 409
        assert reply["code"] == refused.json()["code"] == "host_leaves"
        host.send_json({"type": "start", "id": 2, **host_says})
        reply = reply_to(host, 2)
        assert reply["type"] == "ack" and reply["state"]["started"]
        host.send_json({"type": "hand", "id": 3, "target": 1, **host_says})
        assert reply_to(host, 3)["state"]["seats"][1]["away"] == "host"
    assert state_of(client, code)["seats"][1]["away"] == "host"
    guest_says = {"seat": 1, "token": tokens[1]}
    with client.websocket_connect(f"/ws/{code}") as guest:
        guest.receive_json()
        guest.send_json({"type": "leave", "id": 4, **guest_says})
        assert reply_to(guest, 4)["state"]["seats"][1]["away"] == "left"
        guest.send_json({"type": "back", "id": 5, **guest_says})
        assert reply_to(guest, 5)["state"]["seats"][1]["away"] is None
    assert state_of(client, code)["seats"][1]["away"] is None


# ------------------------------------------------------------------ play again
@pytest.fixture
def finish_game(score_best):
    """``finish_game(client, code, tokens)``: every seat scores its best box to the end."""

    def finish(client, code, tokens):
        state = state_of(client, code)
        while not state["over"]:
            state = score_best(client, code, state["current"], tokens[state["current"]])
        return state

    return finish


def test_play_again_needs_every_vote(client, act, finish_game):
    code, tokens = online_table(client, seats=("human", "friend"))
    state = finish_game(client, code, tokens)
    assert state["votes"] == [] and state["voters"] == [0, 1]
    assert next(r["place"] for r in state["result"]["ranking"]) == 1
    state = act(client, code, 0, tokens[0], {"type": "next"}).json()
    assert state["over"] and state["game"] == 0 and state["votes"] == [0]
    state = act(client, code, 0, tokens[0], {"type": "next"}).json()  # a repeat: one vote
    assert state["over"] and state["votes"] == [0]
    state = act(client, code, 1, tokens[1], {"type": "next"}).json()
    assert not state["over"] and state["game"] == 1 and state["first"] == 0


def test_the_vote_times_out_for_those_who_did_not_confirm(client, clock, act, finish_game):
    code, tokens = online_table(client, seats=("human", "friend"), turn_timer=10)
    finish_game(client, code, tokens)
    act(client, code, 1, tokens[1], {"type": "next"})
    clock.now += 11
    state = wait_for(
        lambda: (s := state_of(client, code))["game"] == 1 and s, "the next game started"
    )
    assert state["seats"][0]["away"] == "timeout" and state["seats"][1]["away"] is None
    assert state["current"] == 1  # the computer played the host's first turn


def test_with_no_vote_at_all_no_game_starts(client, clock, finish_game):
    code, tokens = online_table(client, seats=("human", "friend"), turn_timer=10)
    finish_game(client, code, tokens)
    clock.now += 11
    wait_for(lambda: state_of(client, code)["deadline"] is None, "the vote's clock stopped")
    state = state_of(client, code)
    assert state["over"] and state["game"] == 0


def test_names_at_a_table_are_unique(client):
    reply = client.post(
        "/api/tables",
        json={"seats": ["human", "friend", "friend", "hard"], "online": True, "name": "Ada"},
    )
    code = reply.json()["code"]
    client.post(f"/api/tables/{code}/join", json={"name": "ada"})
    state = client.post(f"/api/tables/{code}/join", json={"name": "hard"}).json()["state"]
    names = [s["name"] for s in state["seats"]]
    assert names[:3] == ["Ada", "ada 2", "hard 2"]
    assert len({n.casefold() for n in names}) == len(names)
    assert state["seats"][3]["level"] == "hard" and "number" not in state["seats"][3]
    reply = client.post("/api/tables", json={"seats": ["human", "hard", "hard", "easy"]})
    seats = reply.json()["state"]["seats"]
    assert [s.get("number") for s in seats[1:]] == [1, 2, None]  # "Hard 1", "Hard 2", "Easy"
