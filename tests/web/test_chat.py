"""The table's people (issue 32) through Starlette's TestClient, on both backends: chat as
plain text (bounded, rate-limited, stored with the game and shown in its review), emotes,
reports with the last messages, blocked accounts (no join, no chat), the host removing a
player (the computer takes the seat); the move log; the review's labels."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient

from yahtzee_env.web.people.chat import CHAT_BURST, EMOTES, MAX_CHAT
from yahtzee_env.web.tables.review import LABELS, label_of

PASSWORD = "correct horse battery"


def pair(app, host, account=False, timer=0):
    """An online table of two seats: the host (``host``, the app's running client) and a
    guest (a second client); started. Returns the code, the guest client and the state."""
    if account:
        host.post("/api/session", json={"name": "Host"})
        reply = host.post("/api/account/signup", json={"username": "hosty", "password": PASSWORD})
        assert reply.status_code == 200, reply.text
    else:
        host.post("/api/session", json={"name": "Host"})
    body = {"seats": ["human", "friend"], "online": True, "turn_timer": timer}
    code = host.post("/api/tables", json=body).json()["code"]
    guest = TestClient(app)
    guest.post("/api/session", json={"name": "Gina"})
    if account:
        reply = guest.post("/api/account/signup", json={"username": "gina", "password": PASSWORD})
        assert reply.status_code == 200, reply.text
    assert guest.post(f"/api/tables/{code}/join", json={}).status_code == 200
    state = host.post(f"/api/tables/{code}/start", json={"seat": 0}).json()
    return code, guest, state


def say(client, code, seat, **body):
    return client.post(f"/api/tables/{code}/chat", json={"seat": seat, **body})


def test_chat_is_plain_text_bounded_and_pushed_to_the_sockets(app, db, act):
    with TestClient(app) as host:
        code, guest, _ = pair(app, host)
        with (
            host.websocket_connect(f"/ws/{code}") as ws,
            host.websocket_connect(f"/ws/{code}") as nobody,
        ):
            ws.receive_json()  # the state
            nobody.receive_json()  # a socket that never says hello for a seat: no chat
            ws.send_json({"type": "hello"})  # the host's seat, by the session
            while ws.receive_json()["type"] != "hello":
                pass
            reply = say(guest, code, 1, text="  <img src=x onerror=alert(1)>\u0007 hi  ")
            assert reply.status_code == 200, reply.text
            message = reply.json()["message"]
            assert message["body"] == "<img src=x onerror=alert(1)> hi"  # kept as text
            assert message["name"] == "Gina" and message["seat"] == 1 and "player_id" not in message
            pushed = ws.receive_json()
            while pushed["type"] != "chat":
                pushed = ws.receive_json()
            assert pushed["message"] == message
            # a move: its state is pushed to every socket, after anything queued before it
            now = host.get(f"/api/tables/{code}").json()
            mover = host if now["current"] == 0 else guest
            # (a person's turn starts with the dice in the cup: the move is then the tap)
            roll = {"type": "roll", "hold": [] if now["cup"] else [0]}
            reply = act(mover, code, now["current"], None, roll)
            assert reply.status_code == 200, reply.text
            while (seen := nobody.receive_json())["type"] != "state":
                assert seen["type"] != "chat", seen
        assert say(guest, code, 1, text="x" * (MAX_CHAT + 1)).json()["code"] == "chat_long"
        assert say(guest, code, 1, text=" \n ").json()["code"] == "chat_empty"
        assert say(guest, code, 1, text=["list"]).json()["code"] == "bad_chat"
        assert say(guest, code, 1, emote="dance").json()["code"] == "bad_emote"
        assert say(guest, code, 0, text="not my seat").status_code == 403
        stranger = TestClient(app)
        stranger.post("/api/session", json={"name": "Eve"})
        assert say(stranger, code, 1, text="hello").status_code == 403
        assert say(host, code, 0, emote=EMOTES[0]).status_code == 200
        rows = host.get(f"/api/tables/{code}/chat").json()["messages"]
        assert [(m["kind"], m["body"]) for m in rows][-1] == ("emote", EMOTES[0])
        after = host.get(f"/api/tables/{code}/chat?after={rows[0]['id']}").json()["messages"]
        assert len(after) == len(rows) - 1
        assert host.get(f"/api/tables/{code}/chat?after=-1").status_code == 400
        # issue 46: the code alone does not open the chat (a stranger, a fresh browser)
        assert stranger.get(f"/api/tables/{code}/chat").status_code == 403
        assert TestClient(app).get(f"/api/tables/{code}/chat").status_code == 403


def test_chat_is_rate_limited_per_person(app, db):
    with TestClient(app) as host:
        code, guest, _ = pair(app, host)
        answers = [say(guest, code, 1, text=f"m{i}").status_code for i in range(CHAT_BURST + 3)]
        assert answers[:CHAT_BURST] == [200] * CHAT_BURST
        assert 429 in answers[CHAT_BURST:]
        assert say(guest, code, 1, text="more").json()["code"] == "chat_budget"
        assert say(host, code, 0, text="the host still speaks").status_code == 200


def test_a_report_keeps_the_last_messages(app, db):
    with TestClient(app) as host:
        code, guest, _ = pair(app, host)
        say(guest, code, 1, text="you are bad at this")
        reply = host.post(f"/api/tables/{code}/report", json={"seat": 0, "target": 1})
        assert reply.status_code == 200, reply.text
        assert reply.json() == {"reported": 1, "new": True, "messages": 1}
        assert (
            host.post(f"/api/tables/{code}/report", json={"seat": 0, "target": 1}).json()["new"]
            is False
        )
        assert (
            host.post(f"/api/tables/{code}/report", json={"seat": 0, "target": 0}).status_code
            == 400
        )
        (report,) = app.state.service.storage.people.reports(code)
        assert report["target_name"] == "Gina"
        assert [m["body"] for m in report["messages"]] == ["you are bad at this"]


def test_a_blocked_account_cannot_chat_to_nor_join_the_blocker_and_is_not_told(app, db):
    """Issue 46: blocking someone told them ("a player at this table has blocked you").
    Now their messages look sent to them but reach nobody, and a table where the blocker
    sits answers as a full table does."""
    with TestClient(app) as host:
        code, guest, _ = pair(app, host, account=True)
        assert say(guest, code, 1, text="hi").status_code == 200
        reply = host.post(f"/api/tables/{code}/block", json={"seat": 0, "target": 1})
        assert reply.status_code == 200, reply.text
        with host.websocket_connect(f"/ws/{code}") as socket:
            socket.receive_json()  # the state
            socket.send_json({"type": "hello"})  # the host's seat: chat reaches seated sockets
            while socket.receive_json()["type"] != "hello":
                pass
            unheard = say(guest, code, 1, text="hi again")
            assert unheard.status_code == 200, unheard.text
            echo = unheard.json()["message"]
            assert echo["body"] == "hi again" and "unheard" not in echo
            assert say(host, code, 0, text="the blocker may still speak").status_code == 200
            pushed = socket.receive_json()  # the next push is the host's, not the guest's
            assert pushed["type"] == "chat" and pushed["message"]["seat"] == 0
        bodies = [m["body"] for m in host.get(f"/api/tables/{code}/chat").json()["messages"]]
        assert bodies == ["hi", "the blocker may still speak"]
        body = {"seats": ["human", "friend"], "online": True, "turn_timer": 0}
        second = host.post("/api/tables", json=body).json()["code"]
        refused = guest.post(f"/api/tables/{second}/join", json={})
        assert refused.status_code == 409 and refused.json()["code"] == "full"
        assert "blocked" not in refused.text
        assert host.post("/api/account/blocks", json={}).json()["blocked"][0]["username"] == "gina"
        target = host.post("/api/account/blocks", json={}).json()["blocked"][0]["player_id"]
        assert host.post("/api/account/unblock", json={"player_id": target}).status_code == 200
        assert guest.post(f"/api/tables/{second}/join", json={}).status_code == 200
        # a guest (no account) cannot block
        code2, guest2, _ = pair(app, TestClient(app))
        assert (
            guest2.post(f"/api/tables/{code2}/block", json={"seat": 1, "target": 0}).json()["code"]
            == "no_account"
        )


def test_attack_hidden_block_cannot_be_spotted_by_the_blocked(app, db):
    """Issue 57: after Block, the blocked account's message came back with id 2.5 (between
    the two stored before it) and its own re-read of the chat dropped it. From the blocked
    sender's side now nothing differs: its message has the next whole id, its socket gets
    it pushed as before, its re-reads (and the review) show it, and the ids of the table's
    later messages follow on; the blocker never reads it."""
    with TestClient(app) as host:
        code, guest, _ = pair(app, host, account=True)
        first = say(guest, code, 1, text="hi").json()["message"]
        second = say(host, code, 0, text="hello").json()["message"]
        assert (
            host.post(f"/api/tables/{code}/block", json={"seat": 0, "target": 1}).status_code == 200
        )
        with guest.websocket_connect(f"/ws/{code}") as socket:
            socket.receive_json()  # the state
            socket.send_json({"type": "hello"})  # the guest's seat, by its session
            while socket.receive_json()["type"] != "hello":
                pass
            reply = say(guest, code, 1, text="hi again")
            assert reply.status_code == 200, reply.text
            hidden = reply.json()["message"]
            later = say(host, code, 0, text="anyone?").json()["message"]
            # the author's own socket hears its message, then the next, as before a block
            assert socket.receive_json() == {"type": "chat", "message": hidden}
            assert socket.receive_json() == {"type": "chat", "message": later}
        # the same form and the next id of the sequence: what any message gets
        assert set(hidden) == set(first) == set(second)
        ids = [first["id"], second["id"], hidden["id"], later["id"]]
        assert all(type(i) is int for i in ids) and ids == list(range(ids[0], ids[0] + 4))
        sender = [m["body"] for m in guest.get(f"/api/tables/{code}/chat").json()["messages"]]
        assert sender == ["hi", "hello", "hi again", "anyone?"]
        after = guest.get(f"/api/tables/{code}/chat?after={second['id']}").json()["messages"]
        assert [m["id"] for m in after] == [hidden["id"], later["id"]]
        blocker = [m["body"] for m in host.get(f"/api/tables/{code}/chat").json()["messages"]]
        assert blocker == ["hi", "hello", "anyone?"]
        # what the blocker reports carries only what it heard
        report = host.post(f"/api/tables/{code}/report", json={"seat": 0, "target": 1}).json()
        assert report["messages"] == 3


def test_the_host_removes_a_player_and_the_computer_takes_the_seat(app, db):
    with TestClient(app) as host:
        code, guest, state = pair(app, host)
        assert (
            guest.post(f"/api/tables/{code}/kick", json={"seat": 1, "target": 0}).status_code == 403
        )
        reply = host.post(f"/api/tables/{code}/kick", json={"seat": 0, "target": 1})
        assert reply.status_code == 200, reply.text
        seat = reply.json()["seats"][1]
        assert seat["kind"] == "cpu" and seat["level"] == state["fill"]
        assert say(guest, code, 1, text="still here?").status_code == 403
        assert (
            host.post(f"/api/tables/{code}/kick", json={"seat": 0, "target": 1}).status_code == 409
        )
        # the game goes on: the host scores, the computer answers for seat 1
        state = reply.json()
        if state["cup"]:  # the host's turn starts with the dice in the cup: its tap on Roll
            body = {"seat": 0, "action": {"type": "roll", "hold": []}}
            body.update(seq=state["seq"], game=state["game"])
            state = host.post(f"/api/tables/{code}/act", json=body).json()
            assert len(state["dice"]) == 5 and not state["cup"]
        body = {"seat": 0, "action": {"type": "score", "box": max(state["options"])}}
        body.update(seq=state["seq"], game=state["game"])
        after = host.post(f"/api/tables/{code}/act", json=body).json()
        assert after["current"] == 0 and any(e["seat"] == 1 for e in after["events"])


def test_the_move_log_narrates_every_move_of_the_game_newest_first(client, new_table, play_out):
    code, tokens, state = new_table(client, seats=("human", "easy", "easy", "easy"))
    first = client.get(f"/api/tables/{code}/moves").json()
    assert len(first["events"]) == state["seq"]  # the CPUs' moves before ours, if any
    state = play_out(client, code, tokens["0"], state=state)
    log = client.get(f"/api/tables/{code}/moves").json()
    assert log["game"] == 0 and log["seq"] == state["seq"]
    events = log["events"]
    assert len(events) == state["seq"] > 64  # more than a state carries
    assert [e["seq"] for e in events] == list(range(state["seq"] - 1, -1, -1))
    assert all(e["msg"]["key"].startswith("narr.") for e in events)
    tail = {e["seq"]: e for e in state["events"]}
    for e in events:
        if e["seq"] in tail:
            assert e["msg"] == tail[e["seq"]]["msg"]
    assert client.get("/api/tables/NOSUCHAA/moves").status_code == 404


def test_labels_by_expected_points_given_up():
    bounds = dict(LABELS)
    assert label_of(0.0) == "best" and label_of(bounds["best"]) == "best"
    assert label_of(bounds["best"] + 0.001) == "good" and label_of(bounds["good"]) == "good"
    assert label_of(bounds["good"] + 0.01) == "inaccuracy"
    assert (
        label_of(bounds["mistake"]) == "mistake" and label_of(bounds["mistake"] + 0.01) == "blunder"
    )


def test_the_review_labels_each_decision_and_carries_the_chat(app, db, new_table, play_out):
    with TestClient(app) as client:
        code, tokens, state = new_table(client, seats=("human", "easy"))
        client.post(
            f"/api/tables/{code}/chat", json={"seat": 0, "token": tokens["0"], "text": "gl"}
        )
        play_out(client, code, tokens["0"], state=state)
        review = client.post(f"/api/games/{code}-0", json={"tokens": {"0": tokens["0"]}}).json()
    decisions = [d for turn in review["turns"] for d in turn["decisions"]]
    assert [d["n"] for d in decisions] == sorted(d["n"] for d in decisions)
    assert sorted(d["n"] for d in decisions) == list(range(len(decisions)))
    for d in decisions:
        assert d["label"] == label_of(d["loss"])
        assert d["best_expected"] >= d["expected"] - 1e-6
    for seat in ("0", "1"):
        mine = [d for t in review["turns"] if str(t["seat"]) == seat for d in t["decisions"]]
        assert sum(review["labels"][seat].values()) == len(mine)
        assert review["labels"][seat]["best"] == sum(d["label"] == "best" for d in mine)
    assert [x["label"] for x in review["thresholds"]] == [name for name, _ in LABELS]
    assert [(m["name"], m["body"]) for m in review["chat"]] == [(state["seats"][0]["name"], "gl")]
