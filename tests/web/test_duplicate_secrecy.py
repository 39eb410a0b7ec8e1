"""Issue 58, item 3: a duplicate table keeps the next dice secret. Every seat draws the same
dice for the same (turn, roll), so nothing a seat (or a spectator) receives may show it a die
of a roll it has not made: another seat's roll shows once it has made that roll, another
seat's scored box once it has scored that turn (`tables.secrecy`)."""

from __future__ import annotations

import json

import anyio
import pytest
from starlette.testclient import TestClient

SQLITE = pytest.mark.backends("sqlite")


def person(app, name):
    c = TestClient(app)
    assert c.post("/api/session", json={"name": name}).status_code == 200
    return c


def intent(c, code, state, seat, action):
    body = {"seat": seat, "action": action, "seq": state["seq"], "game": state["game"]}
    reply = c.post(f"/api/tables/{code}/act", json=body)
    assert reply.status_code == 200, reply.text
    return reply.json()


def receive(ws, seconds: float = 30.0) -> dict:
    """The socket's next JSON message, waited for at most ``seconds``: a message that never
    comes fails the test, saying so, instead of holding the run up."""

    async def next_message():
        with anyio.fail_after(seconds):
            return await ws._send_rx.receive()

    message = ws.portal.call(next_message)
    assert message["type"] == "websocket.send", message  # not closed
    return json.loads(message["text"])


def until_seq(ws, seq):
    """The socket's messages up to its state at ``seq`` (presence and counts between)."""
    got = []
    while True:
        msg = receive(ws)
        got.append(msg)
        if msg.get("type") in ("state", "ack") and msg["state"]["seq"] >= seq:
            return got


def text(dice) -> str:
    return json.dumps(list(dice), separators=(",", ":"))


def flat(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


def assert_turn_hidden(received, seat, turn, rolls):
    """No event of ``seat``'s ``turn`` for a roll in ``rolls`` (3: its score) shows dice."""
    for msg in received:
        state = msg.get("state", msg)
        for e in state.get("events", ()):
            if e["seat"] == seat and e.get("turn") == turn and e.get("roll") in rolls:
                assert e["type"] == "hidden", e
                assert not {"dice", "dice_before", "kept", "box", "points"} & set(e), e
                assert set(e["msg"]) == {"key", "name"}


@SQLITE
def test_attack_later_seat_never_receives_dice_it_has_not_rolled(app):
    """Adversary: the player of seat 1 (and a spectator of the table's watch link: the same
    player in another browser). Seat 0 plays its whole first turn (three rolls, every die
    re-rolled each time) while seat 1 listens on its socket and reads the state, the move log
    and the watch link; nothing shows seat 0's second and third rolls, nor its score, until
    seat 1 has made those rolls (or scored the turn)."""
    host, guest, stranger = person(app, "Ann"), person(app, "Bob"), TestClient(app)
    body = {"seats": ["human", "friend"], "online": True, "duplicate": True, "turn_timer": 0}
    created = host.post("/api/tables", json=body).json()
    code = created["code"]
    assert guest.post(f"/api/tables/{code}/join", json={}).json()["seat"] == 1
    state = host.post(f"/api/tables/{code}/start", json={"seat": 0}).json()
    assert state["duplicate"] and state["current"] == 0 and state["cup"] and state["dice"] == []
    watch = host.post(f"/api/tables/{code}/watch", json={"on": True}).json()["watch"]
    received, watched = [], []  # everything seat 1 and the spectator get
    with (
        guest.websocket_connect(f"/ws/{code}") as ws,
        stranger.websocket_connect(f"/ws/watch/{watch}") as spy,
    ):
        received.append(receive(ws))
        # the spectator's socket open (its first state read) before seat 1 says hello: a
        # presence change while it is still opening could race its first state
        watched.append(receive(spy))
        ws.send_json({"type": "hello", "id": 1})
        # seat 0: three rolls of turn 0 (the first from the cup, then re-rolling all), a score
        rolls = []
        for _ in range(3):
            state = intent(host, code, state, 0, {"type": "roll", "hold": []})
            rolls.append(tuple(state["dice"]))
            received += until_seq(ws, state["seq"])
            watched += until_seq(spy, state["seq"])
        box = max(state["options"], key=state["options"].get)
        state = intent(host, code, state, 0, {"type": "score", "box": box})
        received += until_seq(ws, state["seq"])
        watched += until_seq(spy, state["seq"])
        mine = guest.get(f"/api/tables/{code}").json()
        log = guest.get(f"/api/tables/{code}/moves").json()
        spied = stranger.get(f"/api/watch/{watch}").json()
        received += [mine, log]
        watched.append(spied)
        # seat 1 is to move on turn 0, its dice still in the cup
        assert mine["current"] == 1 and mine["cup"] and mine["dice"] == []
        assert_turn_hidden(received, 0, 0, (0, 1, 2, 3))
        assert_turn_hidden(watched, 0, 0, (0, 1, 2, 3))
        for dice in rolls:  # seat 1 has no dice yet: no list of five dice reached it
            assert text(dice) not in flat(received), dice
            assert text(dice) not in flat(watched), dice
        assert mine["cards"][0]["scores"][box] is None  # the box not shown yet
        assert mine["cards"][0]["total"] == 0
        assert all(e["type"] == "hidden" for e in log["events"] if e["seat"] == 0)
        assert spied["dice"] == []

        # seat 1 taps Roll, then re-rolls everything once: the same stream, the same dice;
        # seat 0's first two rolls show now, its third and its score not
        state = intent(guest, code, mine, 1, {"type": "roll", "hold": []})
        assert tuple(state["dice"]) == rolls[0]
        spied = stranger.get(f"/api/watch/{watch}").json()
        assert tuple(spied["dice"]) == rolls[0]  # seat 0 made that roll: the spectator sees it
        state = intent(guest, code, state, 1, {"type": "roll", "hold": []})
        assert tuple(state["dice"]) == rolls[1]
        received = until_seq(ws, state["seq"])
        log = guest.get(f"/api/tables/{code}/moves").json()
        shown = {e["roll"]: e for e in log["events"] if e["seat"] == 0}
        assert shown[0]["type"] == "roll" and tuple(shown[0]["dice"]) == rolls[0]
        assert shown[1]["type"] == "roll" and tuple(shown[1]["dice"]) == rolls[1]
        assert shown[2]["type"] == "hidden" and shown[3]["type"] == "hidden"
        assert_turn_hidden([state, *received, log], 0, 0, (2, 3))
        if rolls[2] not in rolls[:2]:
            assert text(rolls[2]) not in flat([state, *received, log])

        # seat 1 scores turn 0: all of seat 0's turn 0 shows, and its card
        box1 = max(state["options"], key=state["options"].get)
        state = intent(guest, code, state, 1, {"type": "score", "box": box1})
        until_seq(ws, state["seq"])
        assert state["current"] == 0 and state["cards"][0]["scores"][box] is not None
        log = guest.get(f"/api/tables/{code}/moves").json()
        turn0 = [e for e in log["events"] if e["turn"] == 0]
        assert all(e["type"] != "hidden" for e in turn0)
        assert [tuple(e["dice"]) for e in turn0 if e["seat"] == 0 and e["type"] == "roll"] == (
            rolls[::-1]
        )
        # seat 0 rolls turn 1: seat 1 does not see those dice (it has not rolled them)
        intent(host, code, state, 0, {"type": "roll", "hold": []})
        seen = guest.get(f"/api/tables/{code}").json()
        assert seen["dice"] == [] and seen["options"] == {}
        assert host.get(f"/api/tables/{code}").json()["dice"]


@SQLITE
def test_attack_api_client_with_seat_token_and_anonymous_reader(client, new_table, act):
    """Adversary: an API client holding seat 1's token (and anyone reading the table's
    state and move log without a seat). The token's replies show seat 1's own dice; a
    reader with no seat sees neither seat's turn before the other has played it."""
    code, tokens, state = new_table(client, seats=("human", "human"), duplicate=True)
    assert state["current"] == 0 and state["cup"]
    state = act(client, code, 0, tokens["0"], {"type": "roll", "hold": []}, state=state).json()
    first = tuple(state["dice"])
    state = act(client, code, 0, tokens["0"], {"type": "roll", "hold": []}, state=state).json()
    second = tuple(state["dice"])
    box = max(state["options"], key=state["options"].get)
    state = act(client, code, 0, tokens["0"], {"type": "score", "box": box}, state=state).json()
    assert state["current"] == 1 and state["cup"] and state["dice"] == []
    anon = client.get(f"/api/tables/{code}").json()  # no seat: the strictest view
    assert anon["cards"][0]["scores"][box] is None
    log = client.get(f"/api/tables/{code}/moves").json()
    assert {e["type"] for e in log["events"]} == {"hidden"}
    assert text(first) not in flat([anon, log]) and text(second) not in flat([anon, log])
    state = act(client, code, 1, tokens["1"], {"type": "roll", "hold": []}, state=anon).json()
    assert tuple(state["dice"]) == first  # seat 1's own roll: shown to it
    state = act(client, code, 1, tokens["1"], {"type": "roll", "hold": []}, state=state).json()
    assert tuple(state["dice"]) == second
    # seat 1 has made seat 0's rolls now: a reader with no seat sees them too
    events = {e["seq"]: e for e in client.get(f"/api/tables/{code}").json()["events"]}
    assert tuple(events[0]["dice"]) == first and tuple(events[1]["dice"]) == second
    assert events[2]["type"] == "hidden"  # seat 0's score: seat 1 has not scored turn 0


def test_solo_duplicate_against_levels_plays_to_the_end(client, new_table, play_out):
    """Duplicate play against the CPU levels still works: the CPU's turns are shown once
    the human has played them, and the end shows all."""
    code, tokens, state = new_table(client, seats=("human", "greedy", "easy"), duplicate=True)
    final = play_out(client, code, tokens["0"], state=state)
    assert final["over"] and not any(e["type"] == "hidden" for e in final["events"])
    assert all(c["total"] > 0 for c in final["cards"])
    log = client.get(f"/api/tables/{code}/moves").json()
    assert len(log["events"]) == final["seq"] and "hidden" not in flat(log)
