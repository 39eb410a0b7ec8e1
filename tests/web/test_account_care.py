"""Account care (issue 32) through Starlette's TestClient, on both storage backends: change
the password, recovery codes (shown once at sign-up, stored hashed, each working once,
regenerated), delete the account (its games stay under "deleted player"), export its data;
and the storage of what is new (migration 6)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")
pytest.importorskip("argon2", reason="needs the web extra (argon2-cffi)")

import visitors
from starlette.testclient import TestClient
from visitors import PASSWORD

import yahtzee_env.web.storage.people as people
from yahtzee_env.web.people.account_care import RECOVERY_CODES, clean_code
from yahtzee_env.web.storage import open_storage

NEW_PASSWORD = "staple gun orbit lamp"


def sign_up(client, username="ada_l", name="Ada"):
    return visitors.sign_up(client, username, name)


def sign_in(client, username="ada_l", password=PASSWORD):
    return client.post("/api/account/signin", json={"username": username, "password": password})


def score_out(client, code, state, seat=0):
    while not state["over"]:
        if state["cup"]:  # the turn starts with the dice in the cup: the tap on Roll
            body = {"seat": seat, "action": {"type": "roll", "hold": []}}
        else:
            box = max(state["options"], key=state["options"].get)
            body = {"seat": seat, "action": {"type": "score", "box": box}}
        body.update(seq=state["seq"], game=state["game"])
        reply = client.post(f"/api/tables/{code}/act", json=body)
        assert reply.status_code == 200, reply.text
        state = reply.json()
    return state


def test_recovery_codes_are_shown_once_stored_hashed_and_work_once(app, db):
    with TestClient(app) as client:
        codes = sign_up(client)["recovery_codes"]
        assert len(codes) == len(set(codes)) == RECOVERY_CODES
        assert all(clean_code(c) and len(c) == 14 for c in codes)
        assert "recovery_codes" not in client.get("/api/session").json()  # never again
        storage = app.state.service.storage
        rows = storage._query("SELECT selector, code_hash FROM recovery_codes")
        assert len(rows) == RECOVERY_CODES
        stored = " ".join(r["code_hash"] for r in rows)
        assert all(r["code_hash"].startswith("$argon2id$") for r in rows)
        assert not any(c.replace("-", "") in stored or c in stored for c in codes)
        other = TestClient(app)  # another device (the app already runs), password forgotten
        body = {"username": "ADA_L", "code": codes[0].lower(), "password": NEW_PASSWORD}
        reply = other.post("/api/account/recover", json=body)
        assert reply.status_code == 200, reply.text
        assert reply.json()["account"] == "ada_l"
        assert reply.json()["recovery_codes_left"] == RECOVERY_CODES - 1
        assert other.get("/api/session").json()["account"] == "ada_l"
        again = other.post("/api/account/recover", json={**body, "password": "another long one"})
        assert again.status_code == 401 and again.json()["code"] == "bad_recovery"
        assert sign_in(other, password=PASSWORD).status_code == 401  # the old one is gone
        assert sign_in(other, password=NEW_PASSWORD).status_code == 200


def test_a_recovery_fails_alike_for_a_wrong_code_and_an_unknown_user(client):
    sign_up(client)
    for username, code in [("ada_l", "AAAA-BBBB-CCCC"), ("nobody_here", "AAAA-BBBB-CCCC")]:
        body = {"username": username, "code": code, "password": NEW_PASSWORD}
        reply = client.post("/api/account/recover", json=body)
        assert reply.status_code == 401 and reply.json()["code"] == "bad_recovery", reply.text
    reply = client.post("/api/account/recover", json={"username": 7, "code": "x", "password": ""})
    assert reply.status_code == 400


def test_wrong_recovery_codes_hold_back_their_address_not_the_password(client, clock):
    sign_up(client)
    storage = client.app.state.service.storage
    limits = client.app.state.service.limits
    body = {"username": "Ada_L", "code": "AAAA-BBBB-CCCC", "password": NEW_PASSWORD}
    stranger = TestClient(client.app)  # a browser that never signed in to the account
    replies = [stranger.post("/api/account/recover", json=body) for _ in range(4)]
    free = limits.login_free_failures
    assert [r.status_code for r in replies] == [401] * (free + 1) + [429] * (3 - free)
    assert replies[-1].json()["code"] == "login_wait"  # this address waits for its next one
    assert int(replies[-1].headers["retry-after"]) >= 1
    (row,) = storage.logins.tries("ada_l")  # counted in the database, as a recovery's
    assert row["kind"] == "recovery" and row["failures"] == free + 1
    # the password is checked apart: this browser (known) and another one both sign in
    assert sign_in(client).status_code == 200
    assert sign_in(TestClient(client.app)).status_code == 200


def test_new_recovery_codes_end_the_old_ones(client):
    old = sign_up(client)["recovery_codes"]
    wrong = client.post("/api/account/recovery-codes", json={"password": "not my password"})
    assert wrong.status_code == 403 and wrong.json()["code"] == "wrong_password"
    reply = client.post("/api/account/recovery-codes", json={"password": PASSWORD})
    assert reply.status_code == 200, reply.text
    new = reply.json()["recovery_codes"]
    assert len(new) == RECOVERY_CODES and not set(new) & set(old)
    body = {"username": "ada_l", "code": old[1], "password": NEW_PASSWORD}
    assert client.post("/api/account/recover", json=body).status_code == 401
    assert client.post("/api/account/recover", json={**body, "code": new[1]}).status_code == 200


def test_change_password_checks_the_current_one_and_signs_out_the_others(app):
    with TestClient(app) as phone:
        laptop = TestClient(app)  # another device (the app already runs)
        sign_up(phone)
        assert sign_in(laptop).status_code == 200
        body = {"current": "not the password", "password": NEW_PASSWORD}
        reply = phone.post("/api/account/password", json=body)
        assert reply.status_code == 403 and reply.json()["code"] == "wrong_password"
        short = phone.post("/api/account/password", json={"current": PASSWORD, "password": "x"})
        assert short.json()["code"] == "password_short"
        reply = phone.post(
            "/api/account/password", json={"current": PASSWORD, "password": NEW_PASSWORD}
        )
        assert reply.status_code == 200, reply.text
        assert phone.get("/api/session").json()["account"] == "ada_l"  # this device stays in
        assert laptop.get("/api/session").json()["account"] is None  # the others are out
        assert sign_in(laptop).status_code == 401
        assert sign_in(laptop, password=NEW_PASSWORD).status_code == 200


def test_a_guest_has_no_account_to_care_for(client):
    client.post("/api/session", json={"name": "Guest"})
    for path, body in [("password", {"current": "a", "password": NEW_PASSWORD}), ("delete", {})]:
        reply = client.post(f"/api/account/{path}", json=body)
        assert reply.status_code == 403 and reply.json()["code"] == "no_account"
    assert client.get("/api/account/export").status_code == 403


def test_export_holds_the_account_s_rows_and_no_secret(client):
    sign_up(client)
    reply = client.post("/api/tables", json={"seats": ["human", "easy"]})
    code, state = reply.json()["code"], reply.json()["state"]
    score_out(client, code, state)
    reply = client.get("/api/account/export")
    assert reply.status_code == 200, reply.text
    assert "attachment" in reply.headers["content-disposition"]
    data = reply.json()
    assert data["account"]["username"] == "ada_l" and data["player"]["name"] == "Ada"
    assert len(data["results"]) == 1 and data["results"][0]["code"] == code
    assert [s["code"] for s in data["seats"]] == [code]
    assert data["recovery_codes_left"] == RECOVERY_CODES
    text = json.dumps(data)
    assert "argon2" not in text and "token" not in text and "hash" not in text


def test_delete_removes_the_account_and_keeps_the_games_under_deleted_player(app, db):
    with TestClient(app) as ada:
        bob = TestClient(app)  # another person (the app already runs)
        sign_up(ada)
        reply = ada.post(
            "/api/tables", json={"seats": ["human", "friend"], "online": True, "turn_timer": 0}
        )
        code = reply.json()["code"]
        bob.post("/api/session", json={"name": "Bob"})
        assert bob.post(f"/api/tables/{code}/join", json={}).status_code == 200
        state = ada.post(f"/api/tables/{code}/start", json={"seat": 0}).json()
        chat = ada.post(f"/api/tables/{code}/chat", json={"seat": 0, "text": "hi Bob"})
        assert chat.status_code == 200, chat.text
        if state["cup"]:  # the host's dice in the cup: the tap on Roll first
            tap = {"seat": 0, "action": {"type": "roll", "hold": []}}
            tap.update(seq=state["seq"], game=state["game"])
            state = ada.post(f"/api/tables/{code}/act", json=tap).json()
        body = {"seat": 0, "action": {"type": "score", "box": max(state["options"])}}
        body.update(seq=state["seq"], game=state["game"])
        assert ada.post(f"/api/tables/{code}/act", json=body).status_code == 200
        storage = app.state.service.storage
        me = storage.accounts.account(username="ada_l")["player_id"]
        storage._tx(  # a rating and a rated game of the account: its data, deleted with it
            [
                (
                    "INSERT INTO ratings (player_id, mu, sigma, games, updated) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (me, 26.0, 7.0, 1, 0.0),
                ),
                (
                    "INSERT INTO rated_games (code, idx, player_id, mu_before, mu_after, finished) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    ("OLD", 0, me, 25.0, 26.0, 0.0),
                ),
            ]
        )
        wrong = ada.post("/api/account/delete", json={"password": "not the password"})
        assert wrong.status_code == 403
        reply = ada.post("/api/account/delete", json={"password": PASSWORD})
        assert reply.status_code == 200, reply.text
        assert ada.get("/api/session").json() == {"player": None, "account": None}
        assert sign_in(ada).status_code == 401
        state = bob.get(f"/api/tables/{code}").json()
        assert state["seats"][0]["name"] == people.DELETED_NAME
        assert state["seats"][0]["away"] == "left"  # the computer plays the seat on
        messages = bob.get(f"/api/tables/{code}/chat").json()["messages"]
        assert [(m["name"], m["body"]) for m in messages] == [(people.DELETED_NAME, "hi Bob")]
        # the game goes on for Bob, the computer playing the deleted seat
        state = score_out(bob, code, state, seat=1) if state["current"] == 1 else state
        assert storage._query("SELECT COUNT(*) AS n FROM accounts")[0]["n"] == 0
        assert storage._query("SELECT COUNT(*) AS n FROM recovery_codes")[0]["n"] == 0
        for name in ("ratings", "rated_games", "queue"):
            assert storage._query(f"SELECT COUNT(*) AS n FROM {name}")[0]["n"] == 0, name
        assert storage.accounts.account(username="ada_l") is None
        assert sign_up(TestClient(app))["account"] == "ada_l"  # the user name is free again


# ------------------------------------------------------------------ storage, both backends
def test_people_storage_round_trips(db):
    s = open_storage(db)
    try:
        ada, bob = s.players.create_player("Ada", "ta"), s.players.create_player("Bob", "tb")
        s.accounts.create_account(ada, "ada", "$argon2id$x")
        s.accounts.create_account(bob, "bob", "$argon2id$y")
        s.accounts.replace_recovery_codes(ada, [("AAAA", "h1"), ("BBBB", "h2")])
        assert s.accounts.recovery_codes_left(ada) == 2
        assert s.accounts.recovery_code(ada, "AAAA")["code_hash"] == "h1"
        assert s.accounts.use_recovery_code(ada, "AAAA") is True
        assert s.accounts.use_recovery_code(ada, "AAAA") is False  # once
        assert s.accounts.recovery_code(ada, "AAAA") is None
        s.accounts.replace_recovery_codes(ada, [("CCCC", "h3")])
        assert (
            s.accounts.recovery_code(ada, "BBBB") is None
            and s.accounts.recovery_codes_left(ada) == 1
        )
        first = s.people.add_chat(
            {
                "code": "T1",
                "idx": 0,
                "seat": 0,
                "player_id": ada,
                "name": "Ada",
                "kind": "text",
                "body": "<b>hi</b>",
            },
        )
        s.people.add_chat(
            {
                "code": "T1",
                "idx": 1,
                "seat": 1,
                "player_id": bob,
                "name": "Bob",
                "kind": "emote",
                "body": "wow",
            },
        )
        assert [m["body"] for m in s.people.chat_of("T1")] == ["<b>hi</b>", "wow"]
        assert [m["body"] for m in s.people.chat_of("T1", after=first["id"])] == ["wow"]
        assert [m["body"] for m in s.people.chat_of("T1", idx=0)] == ["<b>hi</b>"]
        assert s.people.chat_count("T1", 1) == 1
        report = {"code": "T1", "reporter_id": bob, "reporter_seat": 1, "target_id": ada}
        report.update(target_seat=0, target_name="Ada", messages=s.people.chat_of("T1"))
        assert s.people.add_report(report) is True
        assert s.people.add_report(report) is False  # once per reporter and target
        (stored,) = s.people.reports("T1")
        assert stored["target_name"] == "Ada" and stored["messages"][0]["body"] == "<b>hi</b>"
        s.people.block(bob, ada)
        s.people.block(bob, ada)  # idempotent
        assert s.people.is_blocked(ada, [bob]) and not s.people.is_blocked(bob, [ada])
        assert s.people.blocks_of(bob) == [{"player_id": ada, "username": "ada"}]
        s.people.delete_account(ada, "fresh-hash")
        assert (
            s.accounts.account(player_id=ada) is None
            and s.players.player_by_id(ada)["name"] == people.DELETED_NAME
        )
        assert s.people.blocks_of(bob) == [] and s.accounts.recovery_codes_left(ada) == 0
        assert s.people.chat_of("T1")[0]["name"] == people.DELETED_NAME
        assert s.people.reports()[0]["target_id"] is None
        unblocked = s.people.export(bob)
        assert unblocked["account"]["username"] == "bob" and unblocked["chat"][0]["body"] == "wow"
    finally:
        s.close()
