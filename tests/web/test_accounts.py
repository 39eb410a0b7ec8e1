"""Sessions and accounts of the web game (issue 18), through Starlette's TestClient: the
session cookie's attributes, seats bound to the session (no token for scripts to read),
sign up adopting the guest's games, signing in on another device, the bounds on sign-ins
(no lockout by strangers: more in test_lockout.py), no user enumeration, the password
rules, sign out everywhere, and no cross-site use."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")
pytest.importorskip("argon2", reason="needs the web extra (argon2-cffi)")

from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.people.accounts import BAD_LOGIN, SESSION_COOKIE
from yahtzee_env.web.people.logins import DEVICE_COOKIE

PASSWORD = "correct horse battery"


def guest(client, name="Ada"):
    reply = client.post("/api/session", json={"name": name})
    assert reply.status_code == 200, reply.text
    return reply


def cookie_attributes(reply) -> dict[str, str | bool]:
    header = next(v for k, v in reply.headers.multi_items() if k == "set-cookie")
    parts = [p.strip() for p in header.split(";")]
    name, _, value = parts[0].partition("=")
    attrs: dict[str, str | bool] = {"name": name, "value": value}
    for p in parts[1:]:
        key, eq, val = p.partition("=")
        attrs[key.lower()] = val if eq else True
    return attrs


def play_solo_game(client) -> str:
    reply = client.post("/api/tables", json={"seats": ["human", "easy"]})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["tokens"] == {} and body["mine"] == [0]  # nothing for a script to read
    code, state = body["code"], body["state"]
    while not state["over"]:
        if state["cup"]:  # the turn starts with the dice in the cup: the tap on Roll
            action = {"type": "roll", "hold": []}
        else:
            action = {"type": "score", "box": max(state["options"], key=state["options"].get)}
        body = {
            "seat": 0,
            "action": action,
            "seq": state["seq"],
            "game": state["game"],
        }
        reply = client.post(f"/api/tables/{code}/act", json=body)
        assert reply.status_code == 200, reply.text
        state = reply.json()
    return code


def games_played(client) -> int:
    return client.post("/api/stats", json={}).json()["overall"]["games"]


# ------------------------------------------------------------------ the cookie
def test_the_session_cookie_is_httponly_and_samesite_strict(client):
    attrs = cookie_attributes(guest(client))
    assert attrs["name"] == SESSION_COOKIE and len(attrs["value"]) >= 32
    assert attrs["httponly"] is True and attrs["samesite"].lower() == "strict"
    assert attrs["path"] == "/" and "secure" not in attrs  # plain http: no Secure
    assert client.get("/api/session").json()["player"]["name"] == "Ada"


def test_the_session_cookie_is_secure_over_https(app):
    with TestClient(app, base_url="https://testserver") as c:
        attrs = cookie_attributes(guest(c))
        assert attrs["secure"] is True and attrs["httponly"] is True


def test_seats_are_bound_to_the_session(app):
    with TestClient(app) as owner, TestClient(app) as other:
        guest(owner)
        reply = owner.post("/api/tables", json={"seats": ["human", "easy"]})
        code, state = reply.json()["code"], reply.json()["state"]
        intent = {
            "seat": 0,
            "action": {"type": "roll", "hold": []},
            "seq": state["seq"],
            "game": state["game"],
        }
        assert other.post(f"/api/tables/{code}/act", json=intent).status_code == 403
        guest(other, "Eve")  # a session of its own is not this seat's either
        refused = other.post(f"/api/tables/{code}/act", json=intent)
        assert refused.status_code == 403 and refused.json()["code"] == "not_your_seat"
        assert owner.post(f"/api/tables/{code}/act", json=intent).status_code == 200
        assert owner.get(f"/api/tables/{code}").json()["mine"] == [0]
        assert other.get(f"/api/tables/{code}").json()["mine"] == []


# ------------------------------------------------------------------ accounts
def test_sign_up_keeps_the_guest_games_and_another_device_sees_them(app):
    with TestClient(app) as phone, TestClient(app) as laptop:
        guest(phone)
        play_solo_game(phone)
        open_table = phone.post("/api/tables", json={"seats": ["human", "hard"]}).json()["code"]
        reply = phone.post("/api/account/signup", json={"username": "Ada_L", "password": PASSWORD})
        assert reply.status_code == 200, reply.text
        assert reply.json()["account"] == "ada_l" and reply.json()["player"]["name"] == "Ada"
        assert games_played(phone) == 1
        assert laptop.get("/api/session").json()["player"] is None
        reply = laptop.post("/api/account/signin", json={"username": "ADA_L", "password": PASSWORD})
        assert reply.status_code == 200, reply.text
        assert games_played(laptop) == 1
        tables = laptop.get("/api/me/tables").json()["tables"]
        assert [t["code"] for t in tables] == [open_table] and tables[0]["seats"] == [0]
        state = laptop.get(f"/api/tables/{open_table}").json()
        assert state["mine"] == [0]  # the seat follows the account


def test_signing_in_brings_a_guests_games_along(app):
    with TestClient(app) as c:
        c.post("/api/account/signup", json={"username": "gina", "password": PASSWORD})
        c.post("/api/account/signout", json={})
        guest(c, "Gina")
        play_solo_game(c)
        c.post("/api/account/signin", json={"username": "gina", "password": PASSWORD})
        assert games_played(c) == 1


def test_a_wrong_password_and_an_unknown_user_answer_alike(client, app):
    client.post("/api/account/signup", json={"username": "ada", "password": PASSWORD})
    client.post("/api/account/signout", json={})
    real = app.state.service.accounts.hasher
    verified = []

    class CountingHasher:  # argon2's PasswordHasher has __slots__: wrap it
        def verify(self, hash_, password):
            verified.append(hash_)
            return real.verify(hash_, password)

        def __getattr__(self, name):
            return getattr(real, name)

    app.state.service.accounts.hasher = CountingHasher()
    wrong = client.post("/api/account/signin", json={"username": "ada", "password": "x" * 12})
    unknown = client.post("/api/account/signin", json={"username": "bob", "password": "x" * 12})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json() == {"error": BAD_LOGIN, "code": "bad_login"}
    assert "set-cookie" not in wrong.headers and "set-cookie" not in unknown.headers
    # the same work: one argon2id verification each, of hashes with the same parameters
    assert len(verified) == 2
    assert verified[0].rsplit("$", 2)[0] == verified[1].rsplit("$", 2)[0]


def test_sign_ins_bound_a_name_and_never_lock_its_owner_out(db, clock):
    # issue 31: ten wrong passwords from ten addresses locked the owner out for a minute;
    # issue 57: nothing waits in a line, the counts are in the database (`logins`)
    limits = Limits(login_burst=10, logins_per_minute=5)
    app = create_app(db, trust_proxy="*", limits=limits, clock=clock)

    def sign_in(c, address, password, name="ada"):
        started = time.monotonic()
        reply = c.post(
            "/api/account/signin",
            json={"username": name, "password": password},
            headers={"x-forwarded-for": address},
        )
        return reply, time.monotonic() - started

    with TestClient(app) as owner, TestClient(app) as stranger:
        owner.post(
            "/api/account/signup",
            json={"username": "ada", "password": PASSWORD},
            headers={"x-forwarded-for": "10.0.0.1"},
        )
        assert owner.cookies.get(DEVICE_COOKIE)  # this browser is known now
        replies = [sign_in(stranger, f"10.0.1.{i}", "guess" * 3)[0] for i in range(10)]
        # addresses new to the name: a burst is checked, the others refused at once
        burst = limits.name_checks_burst
        assert [r.status_code for r in replies] == [401] * burst + [429] * (10 - burst)
        assert {r.json()["code"] for r in replies[burst:]} == {"name_budget"}
        assert all(int(r.headers["retry-after"]) >= 1 for r in replies[burst:])
        # the owner's own browser (its device cookie) is neither refused nor slowed
        reply, took = sign_in(owner, "10.0.0.1", PASSWORD)
        assert reply.status_code == 200 and took < 5
        # the strangers loop (back before their Retry-After): every address has tried the
        # name now, and a minute on the owner's right password from a new browser and
        # address signs in at once, while the strangers' addresses are held back
        for step in (5, 60):
            clock.now += step
            for i in range(10):
                reply = sign_in(stranger, f"10.0.1.{i}", "guess" * 3)[0]
                assert reply.status_code in (401, 429)
        reply, took = sign_in(TestClient(app), "10.0.2.1", PASSWORD)
        assert reply.status_code == 200 and took < 5
        # one address is held to its (network-sized) budget, with Retry-After
        codes = [sign_in(stranger, "10.0.3.1", "guess" * 3, f"user{i}")[0] for i in range(11)]
        assert [r.status_code for r in codes[:10]] == [401] * 10
        assert codes[-1].status_code == 429 and codes[-1].json()["code"] == "login_budget"
        assert int(codes[-1].headers["retry-after"]) >= 1
        assert codes[-1].json()["params"]["retry_after"] >= 1
        assert "your network" in codes[-1].json()["error"]
        # another user from a fresh address is not held up
        reply = stranger.post(
            "/api/account/signin",
            json={"username": "bob", "password": PASSWORD},
            headers={"x-forwarded-for": "10.0.0.4"},
        )
        assert reply.status_code == 401


@pytest.mark.parametrize(
    ("username", "password", "code"),
    [
        ("ada", "short", "password_short"),
        ("ada", "1234567890", "password_common"),
        ("ada", "Password123", "password_common"),
        ("ada", "my name is ada!", "password_common"),
        ("a", PASSWORD, "bad_username"),
        ("<b>ada</b>", PASSWORD, "bad_username"),
        ("ada", 1234567890, "bad_password"),
    ],
)
def test_password_and_user_name_rules(client, username, password, code):
    reply = client.post("/api/account/signup", json={"username": username, "password": password})
    assert reply.status_code == 400 and reply.json()["code"] == code


def test_a_user_name_is_taken_once(app):
    with TestClient(app) as a, TestClient(app) as b:
        assert a.post(
            "/api/account/signup", json={"username": "ada", "password": PASSWORD}
        ).is_success
        reply = b.post("/api/account/signup", json={"username": "ADA", "password": PASSWORD})
        assert reply.status_code == 409 and reply.json()["code"] == "username_taken"


def test_sign_in_gives_a_new_session_id(app):
    with TestClient(app) as c, TestClient(app) as stale:
        old = cookie_attributes(guest(c))["value"]
        c.post("/api/account/signup", json={"username": "ada", "password": PASSWORD})
        new = c.cookies.get(SESSION_COOKIE)
        assert new and new != old
        stale.cookies.set(SESSION_COOKIE, old)
        assert stale.get("/api/session").json()["player"] is None


def test_sign_out_everywhere(app):
    with TestClient(app) as phone, TestClient(app) as laptop:
        phone.post("/api/account/signup", json={"username": "ada", "password": PASSWORD})
        laptop.post("/api/account/signin", json={"username": "ada", "password": PASSWORD})
        assert laptop.get("/api/session").json()["account"] == "ada"
        phone.post("/api/account/signout", json={"everywhere": True})
        assert laptop.get("/api/session").json()["player"] is None
        assert phone.get("/api/session").json()["player"] is None


def test_the_session_cannot_be_used_cross_site(client):
    guest(client)
    reply = client.post("/api/tables", json={"seats": ["human", "easy"]})
    code, state = reply.json()["code"], reply.json()["state"]
    intent = {
        "seat": 0,
        "action": {"type": "roll", "hold": []},
        "seq": state["seq"],
        "game": state["game"],
    }
    evil = {"origin": "https://evil.example"}
    for path, body in [
        (f"/api/tables/{code}/act", intent),
        (f"/api/tables/{code}/leave", {}),
        ("/api/account/signout", {"everywhere": True}),
        ("/api/tables", {"seats": ["human", "easy"]}),
    ]:
        reply = client.post(path, json=body, headers=evil)
        assert reply.status_code == 403 and reply.json()["code"] == "cross_site", path
    assert client.get(f"/api/tables/{code}").json()["seq"] == state["seq"]  # nothing moved
    assert client.get("/api/session").json()["player"]["name"] == "Ada"  # still signed in
    with client.websocket_connect(f"/ws/{code}", headers=evil) as ws:
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4403


def test_old_sessions_expire(client, app):
    guest(client)
    storage = app.state.service.storage
    assert storage.accounts.expire_sessions(86_400) == 0
    assert storage.accounts.expire_sessions(86_400, now=time.time() + 200 * 86_400) == 1
    assert client.get("/api/session").json()["player"] is None
