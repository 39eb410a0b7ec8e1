"""The web server under attack and under load (issue 17), through Starlette's TestClient:
one action per intent, sockets that never read, socket slots, work off the event loop,
cross-site requests, security headers, limits by client, bounded resources, malformed
input. The real-uvicorn cases (slowloris, raw WebSocket frames) are in
``test_server.py``; the page's side in ``test_browser.py``."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
import time

import anyio
import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from yahtzee_env.web.door.app import STATIC_DIR, create_app
from yahtzee_env.web.door.guard import RefusalLog
from yahtzee_env.web.door.hub import CLOSE_BINARY, CLOSE_GONE, CLOSE_SLOW, Client, Hub
from yahtzee_env.web.door.service import Service, settle
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.storage import open_storage

# The front door and the server's bounds are the same on either storage: SQLite only, but
# the tests whose answer the storage gives (what is logged, held, capped) run on both.
pytestmark = pytest.mark.backends("sqlite")
BOTH = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def online_table(new_table):
    """``online_table(client)``: an online table with the host and a friend seated, started."""

    def make(client):
        code, tokens, _ = new_table(client, seats=("human", "friend"), online=True)
        friend = client.post(f"/api/tables/{code}/join", json={"name": "Bea"}).json()
        state = client.post(f"/api/tables/{code}/start", json={"seat": 0, "token": tokens["0"]})
        return code, {0: tokens["0"], 1: friend["token"]}, state.json()

    return make


def logged_actions(db, code) -> int:
    storage = open_storage(db, migrate=False)
    try:
        return sum(len(game) for game in storage.tables.load_table(code)["actions"].values())
    finally:
        storage.close()


# ------------------------------------------------------------------ 1. one action per intent
@BOTH
def test_a_repeated_roll_spends_one_roll(client, db, new_table, act, roll_first):
    code, tokens, state = new_table(client)
    state = roll_first(client, code, 0, tokens["0"], state)  # the dice out of the cup
    roll = {"type": "roll", "hold": [0]}
    first = act(client, code, 0, tokens["0"], roll, state=state)
    again = act(client, code, 0, tokens["0"], roll, state=state)  # the same intent, sent twice
    assert first.status_code == 200 and first.json()["rolls_left"] == 1
    assert again.status_code == 409
    assert again.json() == {
        "error": "the table has moved on: reload its state",
        "code": "stale_seq",
    }
    now = client.get(f"/api/tables/{code}").json()
    assert now["rolls_left"] == 1 and now["version"] == first.json()["version"]
    assert logged_actions(db, code) == len(now["events"])


def test_an_intent_needs_its_seq(client, new_table):
    code, tokens, state = new_table(client)
    body = {"seat": 0, "token": tokens["0"], "action": {"type": "roll", "hold": []}}
    reply = client.post(f"/api/tables/{code}/act", json=body)
    assert reply.status_code == 400 and reply.json()["code"] == "seq_required"
    reply = client.post(f"/api/tables/{code}/act", json={**body, "seq": "0"})
    assert reply.status_code == 400
    assert client.get(f"/api/tables/{code}").json()["version"] == state["version"]


@BOTH
def test_a_repeated_next_starts_one_game(client, new_table, act):
    code, tokens, state = new_table(client, seats=("human", "greedy"))
    while not state["over"]:
        if state["cup"]:  # the dice in the cup: the tap on Roll first
            state = act(client, code, 0, tokens["0"], {"type": "roll", "hold": []}, state=state)
            state = state.json()
            continue
        box = max(state["options"], key=state["options"].get)
        state = act(client, code, 0, tokens["0"], {"type": "score", "box": box}, state=state).json()
    nxt = act(client, code, 0, tokens["0"], {"type": "next"}, state=state)
    twice = act(client, code, 0, tokens["0"], {"type": "next"}, state=state)
    assert nxt.status_code == 200 and nxt.json()["game"] == 1
    assert twice.status_code == 409 and twice.json()["code"] == "stale_seq"
    assert client.get(f"/api/tables/{code}").json()["game"] == 1


def test_a_stale_websocket_intent_is_refused(client, online_table):
    code, tokens, state = online_table(client)
    mover = state["current"]
    with client.websocket_connect(f"/ws/{code}") as ws:
        ws.receive_json()
        move = {"type": "act", "seat": mover, "token": tokens[mover], "seq": state["seq"]}
        move["action"] = {"type": "roll", "hold": []}
        ws.send_json({**move, "id": 1})
        assert ws.receive_json()["type"] == "ack"
        ws.send_json({**move, "id": 2})
        reply = ws.receive_json()
        assert reply["type"] == "error" and reply["id"] == 2 and reply["code"] == "stale_seq"


@BOTH
def test_a_double_join_takes_one_seat(client, new_table):
    code, _tokens, _ = new_table(client, seats=("human", "friend", "friend"), online=True)
    player = client.post("/api/players", json={"name": "Bea"}).json()["token"]
    first = client.post(f"/api/tables/{code}/join", json={"player": player})
    again = client.post(f"/api/tables/{code}/join", json={"player": player})
    assert first.status_code == 200
    assert again.status_code == 409 and again.json()["code"] == "already_seated"
    seats = client.get(f"/api/tables/{code}").json()["seats"]
    assert [s["kind"] for s in seats] == ["human", "human", "friend"]


# ------------------------------------------------------------------ 2. broadcasting never blocks
class NeverReads:
    """A socket whose every send waits forever (a client that stopped reading)."""

    def __init__(self) -> None:
        self.sent = 0

    async def send_text(self, text: str) -> None:
        self.sent += 1
        await anyio.sleep_forever()


class Reads:
    def __init__(self) -> None:
        self.got: list[str] = []

    async def send_text(self, text: str) -> None:
        self.got.append(text)


def test_a_socket_that_never_reads_is_closed_and_blocks_nobody():
    async def scenario():
        hub = Hub()
        stuck = Client(NeverReads(), "T", "1.2.3.4", queue_size=4)
        fine = Client(Reads(), "T", "5.6.7.8", queue_size=4)
        for c in (stuck, fine):
            hub.add(c)
        for i in range(10):
            with anyio.fail_after(1):  # returns at once: it awaits no socket
                hub.broadcast("T", {"n": i})
            await anyio.sleep(0.01)  # the senders run
        await anyio.sleep(0.05)
        idle = fine.sender is None  # its queue written out, its sender ended
        for c in (stuck, fine):
            c.end()
        return stuck, fine, idle

    stuck, fine, idle = anyio.run(scenario)
    assert stuck.closing is not None and stuck.closing[0] == CLOSE_SLOW
    assert "too slow" in stuck.closing[1]
    assert stuck.ws.sent == 1  # one send started, and never finished
    assert [json.loads(t)["n"] for t in fine.ws.got] == list(range(10))
    assert fine.closing is None
    assert idle, "an idle socket holds no sender task (issue 60)"


# ------------------------------------------------------------------ 3. socket slots
def test_socket_slots_refuse_watchers_but_never_a_seated_player(db, online_table):
    limits = Limits(sockets_per_table=2, hello_timeout=0.5)
    with TestClient(create_app(db, limits=limits)) as c:
        code, tokens, state = online_table(c)
        with c.websocket_connect(f"/ws/{code}") as a, c.websocket_connect(f"/ws/{code}") as b:
            a.receive_json(), b.receive_json()
            watcher = c.websocket_connect(f"/ws/{code}")  # the third is refused
            with watcher as ws, pytest.raises(WebSocketDisconnect) as refused:
                ws.receive_json()
            assert refused.value.code == 4429 and "too many watchers" in refused.value.reason
            with c.websocket_connect(f"/ws/{code}") as seated:  # a seat token gets in
                seated.send_json({"type": "hello", "seat": 1, "token": tokens[1]})
                assert seated.receive_json() == {"type": "hello", "seat": 1}
                assert seated.receive_json()["state"]["version"] == state["version"]
                with c.websocket_connect(f"/ws/{code}") as forged:
                    forged.send_json({"type": "hello", "seat": 1, "token": "forged"})
                    with pytest.raises(WebSocketDisconnect) as refused:
                        forged.receive_json()
                    assert refused.value.code == 4429
        assert c.app.state.service.slots.total == 0 and c.app.state.service.hub.count() == 0


def test_socket_slots_per_address(db, new_table):
    limits = Limits(sockets_per_client=1, hello_timeout=0.2)
    with TestClient(create_app(db, limits=limits)) as c:
        code, _tokens, _ = new_table(c)
        other, _tokens, _ = new_table(c)
        with c.websocket_connect(f"/ws/{code}") as a:
            a.receive_json()
            b = c.websocket_connect(f"/ws/{other}")  # another table, same client
            with b as ws, pytest.raises(WebSocketDisconnect) as refused:
                ws.receive_json()
            assert refused.value.code == 4429 and "from you" in refused.value.reason


def test_closed_sockets_are_released(client, new_table):
    code, tokens, _ = new_table(client)
    for i in range(30):
        with client.websocket_connect(f"/ws/{code}") as ws:
            ws.receive_json()
            if i % 2:
                ws.send_json({"type": "hello", "seat": 0, "token": tokens["0"]})
                assert ws.receive_json()["type"] == "hello"
    slots = client.app.state.service.slots
    assert (slots.total, slots.by_address, slots.by_table) == (0, {}, {})
    assert client.app.state.service.hub.count() == 0


# ------------------------------------------------------------------ 4. work off the event loop
def test_a_slow_coach_holds_no_other_table(db, new_table, act, roll_first):
    with TestClient(create_app(db)) as c:
        slow, slow_tokens, _ = new_table(c, coach=True)
        other, other_tokens, other_state = new_table(c)
        roll_first(c, slow, 0, slow_tokens["0"])  # both dice out of the cup: a hint is for
        other_state = roll_first(c, other, 0, other_tokens["0"], other_state)  # dice down
        tables = c.app.state.service.tables
        original = tables.coach
        release, hint_done = threading.Event(), threading.Event()

        def slow_coach(rules):  # the coach's first solve of a preset
            release.wait(timeout=10)
            return original(rules)

        tables.coach = slow_coach
        replies = {}

        def ask_hint():
            body = {"seat": 0, "token": slow_tokens["0"]}
            replies["hint"] = c.post(f"/api/tables/{slow}/hint", json=body)
            hint_done.set()

        asker = threading.Thread(target=ask_hint)
        asker.start()
        try:
            time.sleep(0.2)  # the hint request is in its worker thread now
            reply = act(
                c, other, 0, other_tokens["0"], {"type": "roll", "hold": []}, state=other_state
            )
            seen = c.get(f"/api/tables/{other}").json()
            done_before = hint_done.is_set()
        finally:
            release.set()
            asker.join(30)
        assert reply.status_code == 200 and seen["rolls_left"] == 1
        assert not done_before  # the other table's moves did not wait for the solve
        assert replies["hint"].status_code == 200 and replies["hint"].json()["options"]


def test_the_official_coach_is_prewarmed(db):
    with TestClient(create_app(db, prewarm=True)) as c:
        tables = c.app.state.service.tables
        for _ in range(600):  # bounded: at most a minute for a first solve
            if tables.coach_ready("official"):
                break
            time.sleep(0.1)
        assert tables.coach_ready("official")


# ------------------------------------------------------------------ 5. no cross-site moves
@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
def test_state_changes_must_be_json(client, db, content_type):
    body = json.dumps({"seats": ["human", "easy"]})
    headers = {"Content-Type": content_type} if content_type else {}
    reply = client.post("/api/tables", content=body, headers=headers)
    assert reply.status_code == 415 and reply.json()["code"] == "unsupported_media_type"
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM tables").fetchone()[0] == 0
    con.close()


def test_other_origins_are_refused(db, new_table):
    with TestClient(create_app(db, allowed_origins=["https://game.example"])) as c:
        body = {"seats": ["human", "easy"]}
        for origin, status in [
            ("http://evil.example", 403),
            ("null", 403),
            ("http://testserver", 200),  # the server's own
            ("https://game.example", 200),  # --allowed-origin
        ]:
            reply = c.post("/api/tables", json=body, headers={"Origin": origin})
            assert reply.status_code == status, origin
        reply = c.post("/api/tables", json=body, headers={"Sec-Fetch-Site": "cross-site"})
        assert reply.status_code == 403 and reply.json()["code"] == "cross_site"
        code, tokens, state = new_table(c)
        evil = {"Origin": "http://evil.example"}
        move = {"seat": 0, "token": tokens["0"], "seq": state["seq"], "action": {"type": "next"}}
        assert c.post(f"/api/tables/{code}/act", json=move, headers=evil).status_code == 403
        cross = c.websocket_connect(f"/ws/{code}", headers=evil)
        with cross as ws, pytest.raises(WebSocketDisconnect) as refused:
            ws.receive_json()
        assert refused.value.code == 4403
        with c.websocket_connect(f"/ws/{code}", headers={"Origin": "http://testserver"}) as ws:
            assert ws.receive_json()["type"] == "state"


def test_other_host_names_are_refused(db, new_table):
    """DNS rebinding: a page of evil.example whose name resolves to this loopback server is
    its own origin there; only the allowed Host names are answered (400, sockets 4403)."""
    hosts = ["localhost", "127.0.0.1", "::1", "*.game.example"]
    with TestClient(create_app(db, allowed_hosts=hosts), base_url="http://localhost:8000") as c:
        code, tokens, state = new_table(c)
        for host, status in [
            ("evil.example:8000", 400),
            ("localhost.evil.example", 400),
            ("game.example", 400),  # only its subdomains
            ("", 400),
            ("127.0.0.1:8000", 200),
            ("[::1]:8000", 200),
            ("LOCALHOST", 200),
            ("www.game.example", 200),
        ]:
            reply = c.get(f"/api/tables/{code}", headers={"Host": host})
            assert reply.status_code == status, host
            if status == 400:
                assert reply.json()["code"] == "bad_host"
                assert "is not served here" in reply.json()["error"] or not host
        rebound = {"Host": "evil.example:8000", "Origin": "http://evil.example:8000"}
        move = {"seat": 0, "token": tokens["0"], "seq": state["seq"], "action": {"type": "roll"}}
        reply = c.post(f"/api/tables/{code}/act", json=move, headers=rebound)
        assert reply.status_code == 400 and reply.json()["code"] == "bad_host"
        assert c.get(f"/api/tables/{code}").json()["seq"] == state["seq"]  # nothing moved
        socket = c.websocket_connect(f"/ws/{code}", headers=rebound)
        with socket as ws, pytest.raises(WebSocketDisconnect) as refused:
            ws.receive_json()
        assert refused.value.code == 4403
        with c.websocket_connect(f"/ws/{code}", headers={"Host": "localhost:8000"}) as ws:
            assert ws.receive_json()["type"] == "state"
    with TestClient(create_app(db)) as c:  # default: any name
        assert c.get("/", headers={"Host": "evil.example"}).status_code == 200


def test_serve_allows_the_loopback_names_by_default():
    import argparse

    from yahtzee_env.commands import serve

    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    hosts = serve.allowed_hosts
    assert hosts(parser.parse_args([])) == ["127.0.0.1", "::1", "localhost"]
    assert hosts(parser.parse_args(["--host", "::1"])) == ["127.0.0.1", "::1", "localhost"]
    with_origin = parser.parse_args(["--allowed-origin", "https://Yahtzee.example:8443"])
    assert "yahtzee.example" in hosts(with_origin)
    assert hosts(parser.parse_args(["--host", "0.0.0.0"])) is None  # names unknown: any
    public = parser.parse_args(["--host", "0.0.0.0", "--allowed-host", "game.example"])
    assert hosts(public) == ["game.example"]
    assert hosts(parser.parse_args(["--allowed-host", "*"])) == [
        "*",
        "127.0.0.1",
        "::1",
        "localhost",
    ]


def test_seat_tokens_die_with_their_table(db, new_table):
    with TestClient(create_app(db)) as c:
        code, tokens, _ = new_table(c, seats=("human", "friend"), online=True)
        con = sqlite3.connect(db)
        con.execute("UPDATE tables SET updated = updated - 2 * 86400 WHERE code = ?", (code,))
        con.commit()
        con.close()
        assert c.portal.call(c.app.state.service.sweep) == [code]
        reply = c.post(f"/api/tables/{code}/start", json={"seat": 0, "token": tokens["0"]})
        assert reply.status_code == 404
        con = sqlite3.connect(db)
        assert con.execute("SELECT COUNT(*) FROM seats WHERE code = ?", (code,)).fetchone()[0] == 0
        con.close()


def test_the_page_never_puts_a_token_in_a_url():
    script = "\n".join(p.read_text() for p in sorted((STATIC_DIR / "js").glob("*.js")))
    assert not re.search(r"[?&]token=", script)
    (socket_url,) = re.findall(r"new WebSocket\(([^)]*)\)", script)
    assert "?" not in socket_url and "token" not in socket_url


# ------------------------------------------------------------------ 6. security headers
def test_security_headers_on_every_response(client, new_table):
    code, _tokens, _ = new_table(client)
    for path in [
        "/",
        f"/t/{code}",
        "/static/js/main.js",
        "/static/style.css",
        "/api/config",
        f"/api/tables/{code}",
        "/api/tables/ZZZZZZZZ",
        "/nowhere",
    ]:
        reply = client.get(path)
        csp = reply.headers.get("content-security-policy", "")
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
        assert "unsafe-inline" not in csp
        assert reply.headers["x-content-type-options"] == "nosniff", path
        assert reply.headers["referrer-policy"] == "no-referrer", path
        if path.startswith("/api/"):
            assert reply.headers["cache-control"] == "no-store", path


def test_the_page_is_native_modules_that_are_all_there(client):
    """The page is ES modules loaded from the page's own origin (no build step, no inline
    script): every module one imports is served, as JavaScript."""
    html = (STATIC_DIR / "index.html").read_text()
    assert re.findall(r"<script[^>]*>", html) == ['<script type="module" src="/static/js/main.js">']
    js = STATIC_DIR / "js"
    modules = sorted(js.rglob("*.js"))  # the table's parts (js/table/), the game's too
    imported = {"main.js"}
    for path in modules:
        for name in re.findall(r'from "(\.\.?/[\w/.-]+\.js)"', path.read_text()):
            imported.add((path.parent / name).resolve().relative_to(js.resolve()).as_posix())
    assert imported == {p.relative_to(js).as_posix() for p in modules}  # none missing, none unused
    for name in sorted(imported):
        reply = client.get(f"/static/js/{name}")
        assert reply.status_code == 200, name
        assert "javascript" in reply.headers["content-type"], name


def test_the_page_has_no_inline_script_or_handler():
    html = (STATIC_DIR / "index.html").read_text()
    assert not re.search(r"\son[a-z]+\s*=", html, re.I)
    for tag in re.findall(r"<script[^>]*>", html, re.I):
        assert "src=" in tag
    assert not re.search(r"<script[^>]*>\s*[^<\s]", html, re.I)
    assert 'style="' not in html and "javascript:" not in html


# ------------------------------------------------------------------ 7. limits by client
def test_gets_are_rate_limited_by_address(db):
    with TestClient(create_app(db, limits=Limits(rate=1, burst=5))) as c:
        codes = [c.get("/api/config").status_code for _ in range(12)]
        assert codes[:5] == [200] * 5 and 429 in codes
        # the page's files have a bucket of their own, many times larger (issue 46)
        assert c.get("/static/js/main.js").status_code == 200
    with TestClient(create_app(db, limits=Limits(page_rate=1, page_burst=5))) as c:
        codes = [c.get("/static/js/main.js").status_code for _ in range(12)]
        assert codes[:5] == [200] * 5 and 429 in codes
        assert c.get("/api/config").status_code == 200


def test_forwarded_address_only_with_trust_proxy(db, tmp_path):
    def statuses(app, addresses):
        with TestClient(app) as c:
            return [
                c.get("/api/config", headers={"X-Forwarded-For": a}).status_code for a in addresses
            ]

    addresses = ["1.1.1.1"] * 3 + ["2.2.2.2"]
    trusted = statuses(
        create_app(db, limits=Limits(rate=0.01, burst=3), trust_proxy="*"), addresses
    )
    assert trusted == [200, 200, 200, 200]  # a new address has its own bucket
    ignored = statuses(
        create_app(tmp_path / "b.sqlite3", limits=Limits(rate=0.01, burst=3)), addresses
    )
    assert ignored == [200, 200, 200, 429]  # X-Forwarded-For is not trusted by default


def test_moves_are_rate_limited_by_token(db, new_table, act, roll_first):
    limits = Limits(token_rate=0.01, token_burst=4)
    with TestClient(create_app(db, limits=limits)) as c:
        code, tokens, state = new_table(c)
        state = roll_first(c, code, 0, tokens["0"], state)  # the tap out of the cup: one of 4
        codes = []
        for _ in range(5):
            reply = act(c, code, 0, tokens["0"], {"type": "roll", "hold": []}, state=state)
            codes.append(reply.status_code)
            state = reply.json() if reply.status_code == 200 else state
        assert codes[:3] == [200, 200, 409] and codes[3:] == [429, 429]


def test_failed_code_lookups_have_a_small_budget(client, new_table):
    code, _tokens, _ = new_table(client)
    misses = [
        client.get(f"/api/tables/{'A' * 7}{ch}").status_code for ch in "BCDEFGHJKMNPQRSTUVWXY"
    ]
    assert misses[:20] == [404] * 20 and misses[20] == 429
    reply = client.get(f"/api/tables/{code}")  # even a right guess waits now
    assert reply.status_code == 429 and reply.json()["code"] == "lookup_budget"
    with client.websocket_connect(f"/ws/{code}") as ws:
        assert ws.receive_json()["code"] == "lookup_budget"


# ------------------------------------------------------------------ 8. bounded resources
@BOTH
def test_open_tables_are_capped_per_player_and_address(db):
    with TestClient(create_app(db, limits=Limits(tables_per_player=2, tables_per_address=3))) as c:
        player = c.post("/api/players", json={"name": "Ada"}).json()["token"]
        body = {"seats": ["human", "easy"], "player": player}
        codes = [c.post("/api/tables", json=body).status_code for _ in range(3)]
        assert codes == [200, 200, 409]
        assert c.post("/api/tables", json=body).json()["code"] == "too_many_tables"
        anonymous = [c.post("/api/tables", json={"seats": ["human", "easy"]}) for _ in range(2)]
        assert [r.status_code for r in anonymous] == [200, 409]  # the address hosts 3 now


@BOTH
def test_idle_tables_leave_memory_and_come_back(db, new_table, act, roll_first):
    with TestClient(create_app(db, limits=Limits(idle_evict_s=0))) as c:
        code, tokens, state = new_table(c)
        state = roll_first(c, code, 0, tokens["0"], state)  # the dice out of the cup
        state = act(c, code, 0, tokens["0"], {"type": "roll", "hold": [1]}, state=state).json()
        assert c.portal.call(settle, c.app.state.service) == [code]
        assert code not in c.app.state.service.tables.loaded
        again = c.get(f"/api/tables/{code}").json()
        for key in ("dice", "rolls_left", "held", "seq", "cards"):
            assert again[key] == state[key], key
        assert (
            act(
                c, code, 0, tokens["0"], {"type": "score", "box": "chance"}, state=again
            ).status_code
            == 200
        )


def test_a_table_gone_meanwhile_is_no_error_to_evict(db, new_table):
    """A worker thread may drop a table from memory (a failed change, a reload) while the
    loop walks them to evict: the walk takes what is left, and raises nothing."""
    with TestClient(create_app(db)) as c:
        tables = c.app.state.service.tables
        code, _, _ = new_table(c)
        other, _, _ = new_table(c)

        def busy(name):  # as a worker thread would, between the walk's look and its drop
            tables.loaded.pop(name, None)
            return False

        assert tables.evict(idle_s=600, keep=0, busy=busy) == []
        assert not tables.loaded
        assert c.get(f"/api/tables/{code}").status_code == 200  # back from the database
        assert c.get(f"/api/tables/{other}").status_code == 200


def test_a_failing_sweep_leaves_the_server_up(db, new_table, act, roll_first, monkeypatch, caplog):
    """A sweep (the background chore that evicts and expires tables) that raises is logged
    and runs again at its next round: it never ends the server's life under its players
    (issue 33: an error in a background task closed the storage, and every move and every
    new table after it failed while the server still answered)."""
    calls = []

    async def sweep(self):
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("a table that a worker thread dropped")
        return []

    monkeypatch.setattr(Service, "sweep", sweep)
    with (
        caplog.at_level(logging.ERROR),
        TestClient(create_app(db, limits=Limits(sweep_every_s=0.05))) as c,
    ):
        code, tokens, state = new_table(c)
        deadline = time.monotonic() + 10
        while len(calls) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(calls) >= 3, "the sweeper stopped after its error"
        state = roll_first(c, code, 0, tokens["0"], state)  # the dice out of the cup
        reply = act(c, code, 0, tokens["0"], {"type": "roll", "hold": [0]}, state=state)
        assert reply.status_code == 200, reply.text  # the storage is still open
        assert reply.json()["rolls_left"] == state["rolls_left"] - 1
        assert c.post("/api/tables", json={"seats": ["human", "easy"]}).status_code == 200
    assert any("sweep" in r.getMessage() and r.exc_info for r in caplog.records)


def test_a_finished_tables_leaves_memory_sooner_and_no_table_in_play_is_dropped(
    db, new_table, play_out
):
    """Issue 60: every few seconds (`service.settle`, and at the sweep) a table whose game is
    over and that idled past `Limits.finished_evict_s` leaves memory (it reloads if someone
    comes back), while a table in play idle as long stays; and the cap holds as many tables
    as there are sockets, so 1,000 players' tables are not dropped and rebuilt at each
    sweep, as 500 were."""
    assert Limits().tables_in_memory >= Limits().sockets_total
    with TestClient(create_app(db, limits=Limits(finished_evict_s=30))) as c:
        over, tokens, _ = new_table(c)
        play_out(c, over, tokens["0"])
        playing, _, _ = new_table(c)
        tables = c.app.state.service.tables
        for code in (over, playing):
            tables.loaded[code].used -= 45  # both idle 45 s
        c.portal.call(settle, c.app.state.service)
        assert over not in tables.loaded and playing in tables.loaded
        assert c.get(f"/api/tables/{over}").json()["over"]  # reloaded as it was


def test_evicting_walks_only_the_tables_that_may_leave(db, new_table, play_out):
    """Issue 60, fifth round: the tables in memory are in the order of their last use, so the
    walk that evicts (every 2 s, on the event loop: it took up to 25 ms over 1,300 tables)
    stops at the first table used too recently to leave, with the cap met; what it evicts
    is what the whole walk evicted."""
    limits = Limits(finished_evict_s=30, idle_evict_s=600, tables_in_memory=100)
    with TestClient(create_app(db, limits=limits)) as c:
        tables = c.app.state.service.tables
        old, tokens, _ = new_table(c)
        play_out(c, old, tokens["0"])
        stale, _, _ = new_table(c)
        recent = [new_table(c)[0] for _ in range(6)]
        assert list(tables.loaded) == [old, stale, *recent]
        tables.loaded[old].used -= 700  # finished long ago
        tables.loaded[stale].used -= 650  # in play, idle past idle_evict_s
        looked = []

        def busy(code):
            looked.append(code)
            return False

        gone = tables.evict(600, 100, busy, 30)
        assert gone == [old, stale] and list(tables.loaded) == recent
        assert looked == [old, stale, recent[0]]  # the first recent one ends the walk
        # over the cap, the least recently used leave, recent or not
        assert tables.evict(600, 4, lambda code: False, 30) == recent[:2]


@BOTH
def test_in_memory_tables_are_capped(db, new_table):
    with TestClient(create_app(db, limits=Limits(tables_in_memory=3))) as c:
        codes = [new_table(c)[0] for _ in range(5)]
        c.portal.call(settle, c.app.state.service)
        assert list(c.app.state.service.tables.loaded) == codes[2:]  # the least recently used went


def test_tables_expire(db, new_table):
    with TestClient(create_app(db, limits=Limits(expire_idle_s=3600))) as c:
        waiting, _, _ = new_table(c, seats=("human", "friend"), online=True)
        idle, _, _ = new_table(c)
        recent, _, _ = new_table(c)
        con = sqlite3.connect(db)
        ago = {waiting: 2 * 86_400, idle: 7200, recent: 60}
        for code, seconds in ago.items():
            con.execute("UPDATE tables SET updated = updated - ? WHERE code = ?", (seconds, code))
        con.commit()
        con.close()
        with c.websocket_connect(f"/ws/{idle}") as ws:
            ws.receive_json()
            assert sorted(c.portal.call(c.app.state.service.sweep)) == sorted([waiting, idle])
            with pytest.raises(WebSocketDisconnect) as gone:
                ws.receive_json()
            assert gone.value.code == CLOSE_GONE
        assert c.get(f"/api/tables/{idle}").status_code == 404
        assert c.get(f"/api/tables/{recent}").status_code == 200


def test_a_never_started_table_lasts_a_day(db, new_table):
    with TestClient(create_app(db)) as c:
        code, _, _ = new_table(c, seats=("human", "friend"), online=True)
        con = sqlite3.connect(db)
        con.execute("UPDATE tables SET updated = updated - 3600 WHERE code = ?", (code,))
        con.commit()
        con.close()
        assert c.portal.call(c.app.state.service.sweep) == []


# ------------------------------------------------------------------ 9. malformed input
JUNK = [None, True, -1, 10**30, 1.5, "x" * 300, [], [[[]]], {}, {"a": {"b": [1]}}, "\u0000"]


@pytest.mark.parametrize("junk", JUNK, ids=repr)
def test_wrong_types_get_a_4xx(client, caplog, junk, new_table):
    code, tokens, _ = new_table(client, seats=("human", "friend"), online=True)
    token = tokens["0"]
    posts = [
        ("/api/players", {"name": junk}),
        ("/api/stats", {"player": junk}),
        ("/api/tables", {"seats": junk}),
        ("/api/tables", {"seats": ["human", junk]}),
        ("/api/tables", {"seats": ["human", "easy"], "rules": junk}),
        ("/api/tables", {"seats": ["human", "easy"], "fill": junk}),
        ("/api/tables", {"seats": ["human", "easy"], "online": junk, "match": junk}),
        ("/api/tables", {"seats": ["human", "easy"], "name": junk, "player": junk}),
        (f"/api/tables/{code}/join", {"name": junk, "player": junk}),
        (f"/api/tables/{code}/start", {"seat": junk, "token": token}),
        (f"/api/tables/{code}/start", {"seat": 0, "token": junk}),
        (f"/api/tables/{code}/act", {"seat": 0, "token": token, "seq": junk, "action": junk}),
        (f"/api/tables/{code}/act", {"seat": junk, "token": token, "seq": 0, "game": junk}),
        (f"/api/tables/{code}/hint", {"seat": junk, "token": junk}),
    ]
    with caplog.at_level(logging.WARNING):
        for path, body in posts:
            reply = client.post(path, json=body)
            assert reply.status_code < 500, (path, body)
            if reply.status_code >= 400:
                assert "code" in reply.json() and reply.json()["error"]
    assert not [r for r in caplog.records if r.exc_info], "a traceback for a client error"


@pytest.mark.parametrize("since", ["9" * 5000, "-1", "1e3", "0x10", "", " 1", "1.0", "99999999999"])
def test_bad_since_is_a_400(client, since, new_table):
    code, _tokens, _ = new_table(client)
    reply = client.get(f"/api/tables/{code}", params={"since": since})
    assert reply.status_code == 400 and "since" in reply.json()["error"]


@pytest.mark.parametrize(
    "body",
    [
        "[" * 2000 + "]" * 2000,
        '{"a":' * 600 + "1" + "}" * 600,
        "[]",
        '"x"',
        "1",
        "null",
        "\xff\xfe",
        '{"seats": ["human", "easy"]',
        '{"a": NaN}',
    ],
    ids=["deep-list", "deep-object", "list", "string", "number", "null", "binary", "cut", "nan"],
)
def test_bad_json_is_a_400(client, caplog, body):
    with caplog.at_level(logging.WARNING):
        reply = client.post(
            "/api/tables",
            content=body.encode("latin-1"),
            headers={"Content-Type": "application/json"},
        )
    assert 400 <= reply.status_code < 500 and reply.json()["code"] == "bad_request"
    assert len([r for r in caplog.records if "refused" in r.getMessage()]) <= 1
    assert not [r for r in caplog.records if r.exc_info]


def test_bad_websocket_messages(client, new_table):
    code, tokens, _ = new_table(client)
    with client.websocket_connect(f"/ws/{code}") as ws:
        ws.receive_json()
        for raw in [
            "[" * 2000 + "]" * 2000,
            "[1]",
            "nope",
            json.dumps({"type": ["act"]}),
            json.dumps({"type": "act", "seq": 10**40, "seat": 0, "token": tokens["0"]}),
            json.dumps({"type": "hint", "id": {"x": 1}}),
            '{"type": "ping", "id": NaN}',  # strict JSON: NaN is no number
            "x" * 5000,
        ]:
            ws.send_text(raw)
            reply = ws.receive_json()
            assert reply["type"] == "error" and 400 <= reply["status"] < 500, raw[:40]
        ws.send_json({"type": "ping", "id": "still-here"})
        assert ws.receive_json() == {"type": "pong", "id": "still-here"}
        ws.send_bytes(b"\x00\x01binary")
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == CLOSE_BINARY


def test_the_refusal_log_is_rate_bounded(monkeypatch, caplog):
    clock = [1000.0]
    monkeypatch.setattr("yahtzee_env.web.limits.time.monotonic", lambda: clock[0])
    log = RefusalLog(rate=5, burst=20)
    with caplog.at_level(logging.WARNING, logger="yahtzee_env.web"):
        for _ in range(200):
            log.refused(400, "POST /api/tables", "1.2.3.4", "malformed JSON")
        assert len(caplog.records) == 20
        clock[0] += 1
        log.refused(400, "POST /api/tables", "1.2.3.4", "malformed JSON")
    assert "180 more refusals not logged" in caplog.records[-1].getMessage()
