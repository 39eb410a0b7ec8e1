"""Issue 46's seams on the server: a turn-based table is never deleted while its clock runs,
and how long each kind of table is kept (docs/web_server.md, "When a table goes")."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("httpx", reason="TestClient needs httpx")

from starlette.testclient import TestClient

from yahtzee_env.web.door.app import create_app
from yahtzee_env.web.limits import Limits

HOUR, DAY = 3600.0, 86_400.0
BOTH = pytest.mark.backends("sqlite", "postgresql")


def quiet_app(db, clock):
    """The app on the test's ``clock``, its background clock and sweep held back (they would
    race the test's own `tick` and `sweep` once the clock jumps)."""
    return create_app(db, clock=clock, limits=Limits(clock_every_s=1e9, sweep_every_s=1e9))


def online_table(client, turn_timer: int):
    """A started online table of two people (the host at seat 0, a friend at seat 1)."""
    reply = client.post(
        "/api/tables",
        json={"seats": ["human", "friend"], "online": True, "turn_timer": turn_timer},
    )
    assert reply.status_code == 200, reply.text
    code, host = reply.json()["code"], reply.json()["tokens"]["0"]
    guest = client.post(f"/api/tables/{code}/join", json={"name": "Gina"}).json()["token"]
    assert client.post(f"/api/tables/{code}/start", json={"seat": 0, "token": host}).is_success
    return code, host, guest


def sweep(client) -> list[str]:
    return client.portal.call(client.app.state.service.sweep)


def tick(client) -> list[str]:
    return client.portal.call(client.app.state.service.tick)


def state_of(client, code):
    reply = client.get(f"/api/tables/{code}")
    assert reply.status_code == 200, reply.text
    return reply.json()


def move(client, code, seat, token):
    """The seat scores its best-paying box (a whole turn in one decision), after its tap on
    Roll where its turn starts with the dice in the cup."""
    state = state_of(client, code)
    if state["cup"]:
        tap = {"seat": seat, "token": token, "seq": state["seq"]}
        reply = client.post(
            f"/api/tables/{code}/act", json={**tap, "action": {"type": "roll", "hold": []}}
        )
        assert reply.status_code == 200, reply.text
    options = state_of(client, code)["options"]
    box = max(options, key=options.get)
    seq = state_of(client, code)["seq"]
    reply = client.post(
        f"/api/tables/{code}/act",
        json={"seat": seat, "token": token, "seq": seq, "action": {"type": "score", "box": box}},
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


@BOTH
def test_a_one_day_table_idle_for_13_hours_is_kept(db, clock):
    with TestClient(quiet_app(db, clock)) as c:
        code, host, _guest = online_table(c, turn_timer=int(DAY))
        move(c, code, 0, host)  # the host moved; the guest has a day
        clock.now += 13 * HOUR
        assert sweep(c) == [] and tick(c) == []
        state = state_of(c, code)
        assert state["current"] == 1 and not state["over"]
        assert state["deadline"] == pytest.approx(clock.now + 11 * HOUR, abs=5)


@BOTH
def test_past_its_deadline_the_computer_plays_the_turn_and_the_table_stays(db, clock):
    """Past the deadline the computer plays the late turn (the seat is away) and the clock
    passes to the next player; when every person is away the table pauses, and it goes
    only after the clock times its people without a move (two days for a 1-day table of
    two), never at the 12-hour abandon time."""
    with TestClient(quiet_app(db, clock)) as c:
        code, host, _guest = online_table(c, turn_timer=int(DAY))
        move(c, code, 0, host)
        clock.now += 25 * HOUR  # the guest let the day pass
        assert tick(c) == [code]
        state = state_of(c, code)
        assert state["seats"][1]["away"] == "timeout" and state["current"] == 0
        assert state["deadline"] == pytest.approx(clock.now + DAY, abs=5)
        assert sweep(c) == []
        clock.now += 25 * HOUR  # the host lets it pass too: nobody is left, the table pauses
        assert tick(c) == [code]
        state = state_of(c, code)
        assert state["deadline"] is None and not state["over"]
        clock.now += 13 * HOUR  # past the abandon time, not past 2 x the clock: kept
        assert sweep(c) == []
        assert state_of(c, code)["seats"][0]["away"] == "timeout"
        clock.now += 2 * DAY  # two whole clocks without a move: it goes
        assert sweep(c) == [code]
        assert c.get(f"/api/tables/{code}").status_code == 404


@BOTH
def test_the_result_counts_the_turns_the_computer_played_for_a_person(db, clock):
    """ "Hai vinto di 8" for a guest the computer played 12 of 13 turns for: the result
    carries, per seat, the turns the computer finished for a person (away, timed out), kept
    with the log (a server started again on the same database says the same)."""
    with TestClient(quiet_app(db, clock)) as c:
        code, host, guest = online_table(c, turn_timer=int(DAY))
        move(c, code, 0, host)  # the host plays one turn, then leaves
        reply = c.post(f"/api/tables/{code}/leave", json={"seat": 0, "token": host})
        assert reply.status_code == 200, reply.text
        state = state_of(c, code)
        while not state["over"]:
            state = move(c, code, 1, guest)
        assert state["result"]["cpu_turns"] == [12, 0]
    with TestClient(quiet_app(db, clock)) as again:
        assert state_of(again, code)["result"]["cpu_turns"] == [12, 0]


@BOTH
def test_how_long_each_kind_of_table_is_kept(db, clock, new_table, play_out):
    """The rules docs/web_server.md states: a table never started goes after a day; an unfinished
    game against the computer, or online without a clock, after a week (both players may
    come back to it); an online game with a 2-minute clock 12 hours after its last move; a
    finished one after 30 days."""
    limits = Limits()
    assert limits.expire_unstarted_s == DAY and limits.expire_solo_s == 7 * DAY
    assert limits.expire_abandoned_s == 12 * HOUR and limits.expire_idle_s == 30 * DAY
    with TestClient(quiet_app(db, clock)) as c:
        solo, _, _ = new_table(c)
        done, done_tokens, _ = new_table(c)
        play_out(c, done, done_tokens["0"])
        unclocked, _host, _guest = online_table(c, turn_timer=0)
        quick, _host, _guest = online_table(c, turn_timer=120)
        clock.now += 11 * HOUR
        assert sweep(c) == []
        clock.now += 2 * HOUR
        assert sweep(c) == [quick]
        assert state_of(c, unclocked)["started"]  # 13 hours without a move: still there
        clock.now += 6 * DAY + 12 * HOUR  # a week and an hour
        assert sorted(sweep(c)) == sorted([solo, unclocked])
        clock.now += 24 * DAY
        assert sweep(c) == [done]


# ------------------------------------------------------------------ sign-in under a burst
PASSWORD = "correct horse battery"


def test_the_hash_gate_runs_a_few_at_once_and_refuses_past_its_line():
    """At most ``workers`` hashes run at once, ``queue`` more wait; the rest get 503 with a
    Retry-After (the memory of a burst is bounded by the gate, not by the thread pool)."""
    import threading

    import anyio

    from yahtzee_env.web.errors import WebError
    from yahtzee_env.web.people.logins import HashGate

    gate = HashGate(workers=2, queue=3)
    release, lock = threading.Event(), threading.Lock()
    running = {"now": 0, "most": 0}

    def work(i):
        with lock:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
        release.wait(10)
        with lock:
            running["now"] -= 1
        return i

    async def main():
        done, refused = [], []

        async def one(i):
            try:
                done.append(await gate.run(work, i))
            except WebError as err:
                refused.append(err)

        async with anyio.create_task_group() as tg:
            for i in range(10):
                tg.start_soon(one, i)
            await anyio.wait_all_tasks_blocked()  # every task is in the gate or refused
            assert gate.pending == 5
            release.set()
        return done, refused

    done, refused = anyio.run(main)
    assert running["most"] == 2 and sorted(done) == [0, 1, 2, 3, 4]
    assert len(refused) == 5
    assert all(e.status == 503 and e.code == "busy" for e in refused)
    assert all(e.params["retry_after"] >= 1 for e in refused)
    assert gate.pending == 0


def test_guesses_at_one_name_are_refused_at_once_and_a_known_device_goes_through(db):
    """Guesses at one account from many addresses at once: a few are checked, the rest
    refused at once (nothing waits in a line); another name is not held up, the owner's
    known browser is neither refused nor slowed, and no lease is left behind."""
    from concurrent.futures import ThreadPoolExecutor

    app = create_app(db, trust_proxy="*", limits=Limits(hash_workers=8))
    service = app.state.service

    def sign_in(c, name, password, address):
        return c.post(
            "/api/account/signin",
            json={"username": name, "password": password},
            headers={"x-forwarded-for": address},
        )

    with TestClient(app) as owner, TestClient(app) as stranger, TestClient(app) as bob:
        for c, name in ((owner, "ada"), (bob, "bob")):  # the owner's browser is known
            reply = c.post("/api/account/signup", json={"username": name, "password": PASSWORD})
            assert reply.status_code == 200, reply.text
        with ThreadPoolExecutor(12) as pool:
            guesses = [
                pool.submit(sign_in, stranger, "ada", f"guess number {i}", f"10.0.1.{i}")
                for i in range(10)
            ]
            other = pool.submit(sign_in, stranger, "bob", PASSWORD, "10.0.2.1")
            mine = pool.submit(sign_in, owner, "ada", PASSWORD, "10.0.0.1")
            codes = sorted(g.result().status_code for g in guesses)
            assert other.result().status_code == 200 and mine.result().status_code == 200
        burst = service.limits.name_checks_burst
        assert codes == [401] * burst + [429] * (10 - burst)
        rows = service.storage.logins.tries("ada")
        assert len(rows) == 10  # every address counted, in the database
        assert sum(r["failures"] for r in rows) == burst  # every checked guess, none lost
        assert all(r["busy_until"] == 0 for r in rows)  # no lease held once answered


def test_one_check_per_name_and_address_in_flight(tmp_path):
    """A second check of a name from the same address while one is in flight is refused at
    once (429 ``name_busy``); another address, or another kind of secret, goes ahead; the
    lease ends with the check."""
    import anyio

    from yahtzee_env.web.errors import WebError
    from yahtzee_env.web.people.logins import RECOVERY, LoginGate
    from yahtzee_env.web.storage import open_storage

    storage = open_storage(tmp_path / "web.sqlite3")
    gate = LoginGate(storage, Limits())

    async def main():
        async with gate.turn("ada", "10.0.0.1"):
            try:
                async with gate.turn("ada", "10.0.0.1"):
                    raise AssertionError("a second check from one address got in")
            except WebError as err:
                assert err.status == 429 and err.code == "name_busy"
                assert err.params["retry_after"] >= 1
            async with gate.turn("ada", "10.0.0.2"):  # another address
                pass
            async with gate.turn("ada", "10.0.0.1", RECOVERY):  # a recovery code
                pass
        async with gate.turn("ada", "10.0.0.1"):  # the lease ended with the check
            pass

    try:
        anyio.run(main)
        assert storage.logins.tries("ada") == []  # successes: nothing kept
    finally:
        storage.close()


# ------------------------------------------------------------------ limits keyed on who
def guest(app, name: str) -> TestClient:
    """A browser with a guest session (its cookie) of its own."""
    c = TestClient(app)
    assert c.post("/api/session", json={"name": name}).status_code == 200
    return c


def test_unknown_codes_count_per_browser_with_a_network_backstop(db, new_table):
    limits = Limits(
        lookup_burst=3, lookups_per_minute=0.01, network_lookup_burst=7,
        network_lookups_per_minute=0.01,
    )  # fmt: skip
    app = create_app(db, limits=limits)
    with TestClient(app) as host:
        code, _, _ = new_table(host)
        ana, bea, cid = guest(app, "Ana"), guest(app, "Bea"), guest(app, "Cid")
        for _ in range(3):
            assert ana.get("/api/tables/ZZZZZZZZ").status_code == 404
        refused = ana.get(f"/api/tables/{code}")
        assert refused.status_code == 429 and refused.json()["code"] == "lookup_budget"
        assert "this browser" in refused.json()["error"]
        # another browser behind the same address is not held up by Ana's guesses
        assert bea.get(f"/api/tables/{code}").status_code == 200
        for _ in range(3):
            assert bea.get("/api/tables/ZZZZZZZZ").status_code == 404
        assert cid.get("/api/tables/ZZZZZZZZ").status_code == 404  # the 7th of the address
        backstop = cid.get(f"/api/tables/{code}")
        assert backstop.status_code == 429
        assert backstop.json()["code"] == "network_lookup_budget"
        assert "your network" in backstop.json()["error"]
        assert int(backstop.headers["retry-after"]) >= 1


def test_the_pages_files_are_outside_the_request_budget_and_revalidated(db):
    """A first visit's ~30 files do not spend the address's request budget (eight first
    visits at once from one address were refused), and they are revalidated (ETag)."""
    from yahtzee_env.web.door.app import STATIC_DIR

    files = ["/", *(f"/static/{p.relative_to(STATIC_DIR)}" for p in STATIC_DIR.rglob("*.*"))]
    app = create_app(db, limits=Limits(rate=0.1, burst=5))
    with TestClient(app) as c:
        for _ in range(3):
            for path in files:
                reply = c.get(path)
                assert reply.status_code == 200, path
                assert reply.headers["cache-control"] == "no-cache", path
        etag = c.get("/static/style.css").headers["etag"]
        assert c.get("/static/style.css", headers={"if-none-match": etag}).status_code == 304
        assert c.get("/api/config").status_code == 200  # the request budget is untouched
        assert c.get("/api/config").headers["cache-control"] == "no-store"


def test_a_first_visit_has_no_player_and_gets_no_refusal(db):
    with TestClient(create_app(db)) as c:
        reply = c.get("/api/quick")
        assert reply.status_code == 200 and reply.json() == {"state": "idle"}


def test_the_per_address_caps_are_sized_for_a_school():
    limits = Limits()
    assert limits.players_per_hour >= 300 and limits.player_burst >= 100
    assert limits.queue_per_address >= 20
    assert limits.network_lookup_burst >= 10 * limits.lookup_burst


def test_an_open_table_needs_a_free_seat(db):
    """Listing a table whose every other seat is the computer made a table nobody could
    see in the list; now the listing is refused, saying why."""
    with TestClient(create_app(db)) as c:
        c.post("/api/session", json={"name": "Host"})
        body = {"seats": ["human", "easy", "medium"], "online": True}
        code = c.post("/api/tables", json=body).json()["code"]
        refused = c.post(f"/api/tables/{code}/list", json={"on": True})
        assert refused.status_code == 409 and refused.json()["code"] == "no_free_seat"
        assert "free seat" in refused.json()["error"]
        body = {"seats": ["human", "friend", "easy"], "online": True}
        code = c.post("/api/tables", json=body).json()["code"]
        assert c.post(f"/api/tables/{code}/list", json={"on": True}).json()["listed"] is True
        assert [t["code"] for t in c.get("/api/open-tables").json()["tables"]] == [code]
