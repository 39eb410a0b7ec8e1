"""The time bank (issue 62, item 5): an online table's seats each have a bank of seconds,
full at the start, that each of their turns first tops up by the increment (up to the cap)
and then spends; a bank that runs out times the turn out as the fixed clock does. The
server's clock is the test's (`clock`): nothing here waits for a deadline."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.tables.table import BANK_ADD_RANGE, TIME_BANKS, TURN_TIMER_RANGE

pytestmark = pytest.mark.usefixtures("clock")
POLL_S = 5.0
BANK = {"add": 20, "cap": 60}


def state_of(client, code):
    return client.get(f"/api/tables/{code}").json()


def bank_table(client, bank=None, seats=("human", "friend")):
    """A started online table of the host (seat 0) and a friend (seat 1) with a time bank."""
    body = {"seats": list(seats), "online": True, "time_bank": bank or BANK}
    reply = client.post("/api/tables", json=body)
    assert reply.status_code == 200, reply.text
    code, tokens = reply.json()["code"], {0: reply.json()["tokens"]["0"]}
    joined = client.post(f"/api/tables/{code}/join", json={"name": "Gina"}).json()
    tokens[joined["seat"]] = joined["token"]
    reply = client.post(f"/api/tables/{code}/start", json={"seat": 0, "token": tokens[0]})
    assert reply.status_code == 200, reply.text
    return code, tokens


def play_turn(client, act, code, seat, token):
    """The seat rolls and scores its best box: one whole turn."""
    state = state_of(client, code)
    if state.get("cup"):
        state = act(client, code, seat, token, {"type": "roll", "hold": []}, state=state).json()
    box = max(state["options"], key=state["options"].get)
    reply = act(client, code, seat, token, {"type": "score", "box": box})
    assert reply.status_code == 200, reply.text
    return reply.json()


def wait_for(predicate, what: str):
    deadline = time.monotonic() + POLL_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {POLL_S} s: {what}")


def test_the_lobby_offers_sane_banks(client):
    config = client.get("/api/config").json()
    assert config["time_banks"] == [list(b) for b in TIME_BANKS]
    low, _ = config["bank_add_range"]
    for add, cap in config["time_banks"]:
        assert low <= add <= cap <= TURN_TIMER_RANGE[1]
        reply = client.post(
            "/api/tables",
            json={
                "seats": ["human", "friend"],
                "online": True,
                "time_bank": {"add": add, "cap": cap},
            },
        )
        assert reply.status_code == 200, reply.text
        assert reply.json()["state"]["time_bank"] == {"add": add, "cap": cap}
        assert reply.json()["state"]["turn_timer"] == cap  # the longest a turn may last


def test_a_turn_spends_its_seats_bank_and_the_next_tops_it_up(client, clock, act):
    code, tokens = bank_table(client)
    state = state_of(client, code)
    # the first turn: the bank is full (the cap), the increment adds nothing past it
    assert state["current"] == 0 and state["time_left"] == pytest.approx(60)
    assert state["banks"] == [60, 60] and state["time_bank"] == BANK
    clock.now += 45  # the host thinks for 45 s: 15 left
    state = play_turn(client, act, code, 0, tokens[0])
    state = state_of(client, code)
    assert state["current"] == 1 and state["banks"] == [pytest.approx(15), 60]
    clock.now += 5  # the guest is quick: 55 left
    play_turn(client, act, code, 1, tokens[1])
    state = state_of(client, code)
    # the host's next turn: 15 + 20
    assert state["current"] == 0 and state["time_left"] == pytest.approx(35)
    assert state["deadline"] == pytest.approx(clock.now + 35)
    clock.now += 1
    play_turn(client, act, code, 0, tokens[0])
    state = state_of(client, code)
    # the guest's: 55 + 20, capped at 60
    assert state["current"] == 1 and state["time_left"] == pytest.approx(60)
    assert state["banks"] == [pytest.approx(34), pytest.approx(60)]


def test_an_empty_bank_times_the_turn_out(client, clock, act):
    """When the bank runs out the fixed clock's timeout applies: the computer plays the
    turn and the seat is away; back again, its bank has only the increment."""
    code, tokens = bank_table(client)
    clock.now += 59
    time.sleep(0.7)
    assert state_of(client, code)["current"] == 0  # a second left
    clock.now += 2
    state = wait_for(
        lambda: (s := state_of(client, code))["current"] == 1 and s, "the computer plays seat 0"
    )
    assert state["seats"][0]["away"] == "timeout" and state["banks"][0] == 0
    reply = client.post(f"/api/tables/{code}/back", json={"seat": 0, "token": tokens[0]})
    assert reply.status_code == 200, reply.text
    play_turn(client, act, code, 1, tokens[1])
    state = state_of(client, code)
    assert state["current"] == 0 and state["time_left"] == pytest.approx(BANK["add"])


def test_the_bank_survives_a_restart(db, clock, act):
    with TestClient(create_app(db, clock=clock)) as c:
        code, tokens = bank_table(c)
        clock.now += 50
        play_turn(c, act, code, 0, tokens[0])
        clock.now += 3
    clock.now += 10  # the server was down for 10 s, in the guest's turn (60 - 13 left)
    with TestClient(create_app(db, clock=clock)) as c:
        state = state_of(c, code)
        assert state["banks"] == [pytest.approx(10), pytest.approx(47)]
        play_turn(c, act, code, 1, tokens[1])
        state = state_of(c, code)
        assert state["current"] == 0 and state["time_left"] == pytest.approx(30)


def test_a_new_game_starts_with_full_banks(client, clock, act):
    code, tokens = bank_table(client)
    state = state_of(client, code)
    while not state["over"]:
        clock.now += 7
        state = play_turn(client, act, code, state["current"], tokens[state["current"]])
    for seat in (0, 1):
        state = act(client, code, seat, tokens[seat], {"type": "next"}).json()
    state = state_of(client, code)
    assert state["game"] == 1 and state["banks"] == [60, 60]
    assert state["time_left"] == pytest.approx(60)


@pytest.mark.backends("sqlite")
@pytest.mark.parametrize(
    "bank, field",
    [
        ({"add": BANK_ADD_RANGE[0] - 1, "cap": 60}, "time_bank.add"),
        ({"add": 20, "cap": TURN_TIMER_RANGE[1] + 1}, "time_bank.cap"),
        ({"add": 20, "cap": TURN_TIMER_RANGE[0] - 1}, "time_bank.cap"),
        ({"add": "20", "cap": 60}, "time_bank.add"),
        ({"add": 20.5, "cap": 60}, "time_bank.add"),
        ({"add": True, "cap": 60}, "time_bank.add"),
        ({"add": 30, "cap": 20}, "time_bank.cap"),
        ({"add": 20}, None),
        ({"add": 20, "cap": 60, "start": 9999}, None),
        ([20, 60], None),
    ],
)
def test_attack_a_bank_out_of_range_is_refused(client, bank, field):
    """No bank beyond the bounds (the cap is a fixed clock's longest turn, so that no bank
    keeps a table alive forever), and the error names the field."""
    reply = client.post(
        "/api/tables", json={"seats": ["human", "friend"], "online": True, "time_bank": bank}
    )
    assert reply.status_code == 400, reply.text
    body = reply.json()
    assert body["code"] == "bad_time_bank"
    assert "time_bank" in body["error"]
    if field:
        assert field in body["error"]


@pytest.mark.backends("sqlite")
def test_a_bank_is_for_online_tables_and_not_beside_a_fixed_clock(client):
    for body in (
        {"seats": ["human", "easy"], "time_bank": BANK},
        {"seats": ["human", "friend"], "online": True, "time_bank": BANK, "turn_timer": 60},
    ):
        reply = client.post("/api/tables", json=body)
        assert reply.status_code == 400 and reply.json()["code"] == "bad_time_bank", reply.text


def test_attack_a_client_cannot_extend_its_bank(client, clock, act):
    """Only the server's clock counts: times, banks or deadlines in a move are ignored."""
    code, tokens = bank_table(client)
    clock.now += 30
    state = state_of(client, code)
    forged = {"type": "roll", "hold": [], "time_left": 9999, "bank": 9999, "deadline": 1e12}
    act(client, code, 0, tokens[0], forged, state=state)
    state = state_of(client, code)
    assert state["time_left"] == pytest.approx(30) and state["banks"][0] == pytest.approx(30)
    client.post(
        f"/api/tables/{code}/back", json={"seat": 0, "token": tokens[0], "time_bank": {"add": 9}}
    )
    assert state_of(client, code)["time_left"] == pytest.approx(30)


def test_two_instances_on_one_database_share_the_banks(pg_url, clock):
    """The banks are stored with the deadline: a copy on another process (`Tables` B on the
    same PostgreSQL) that follows a move's notification, or reads the database, has the
    same banks as the process that made it, and spends from them in its turn."""
    from yahtzee_env.web.storage import open_storage
    from yahtzee_env.web.tables.authority import Tables

    sa, sb = open_storage(pg_url), open_storage(pg_url)
    heard: list[tuple] = []
    stop = sb.listen(lambda *note: heard.append(note))
    try:
        a, b = Tables(sa), Tables(sb)
        a.clock = b.clock = clock
        body = {"seats": ["human", "friend"], "online": True, "name": "Ann", "time_bank": BANK}
        table, tokens = a.create(body)
        code = table.code
        _, seat, guest = b.seating.join(code, {"name": "Gina"})
        a.seating.start(code, 0, tokens[0])
        b.load(code)
        time.sleep(0.5)  # B's LISTEN is in place (a missed note only fails the wait)
        clock.now += 40
        state = a.state(a.load(code))
        table, _ = a.act(code, 0, tokens[0], {"type": "roll", "hold": []}, seq=state["seq"])
        state = a.state(table)
        box = max(state["options"], key=state["options"].get)
        table, _ = a.act(code, 0, tokens[0], {"type": "score", "box": box}, seq=state["seq"])
        state = a.state(table)
        assert state["banks"] == [pytest.approx(20), 60]
        # B follows the notes of the roll and the score, each one revision on
        for rev in (state["rev"] - 1, state["rev"]):
            note = wait_for(lambda r=rev: [n for n in heard if n[1] == r], "the note")
            followed = b.replicas.follow(code, rev, note[0][3])
            assert followed is not None
        assert b.state(followed) == state
        assert b.state(Tables(sb).load(code)) == state  # a rebuild from the database too
        clock.now += 10  # the guest's turn, on B: 50 left of its 60
        table, _ = b.act(code, seat, guest, {"type": "roll", "hold": []}, seq=state["seq"])
        state = b.state(table)
        box = max(state["options"], key=state["options"].get)
        table, _ = b.act(code, seat, guest, {"type": "score", "box": box}, seq=state["seq"])
        state = a.state(a.replicas.refresh(code))
        assert state["banks"] == [pytest.approx(40), pytest.approx(50)]  # the host's: 20 + 20
        assert state["time_left"] == pytest.approx(40)
    finally:
        stop()
        sa.close()
        sb.close()
