"""Several server processes on one PostgreSQL database (issue 20): a real PostgreSQL server
(the ``postgres_server`` fixture), real ``yahtzee serve`` processes on loopback.

- two `Tables` on one database: each rebuilds a table the other moved on, under the row lock;
- two instances: a host on A and a guest on B see each other's moves over their sockets;
- the same intent sent to both instances at once is applied once;
- ``kill -9`` of instance A mid-game: the host continues on B at the last acknowledged move;
- a change's notification carries what changed, and a copy one revision behind follows it;
- B's listening connection killed: B listens again and re-reads, no move is missed;
- ``--workers 2`` on PostgreSQL, refused on SQLite; ``--check-db``, ``--migrate``,
  ``/healthz``, ``/readyz``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

from replay import replay_row
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from yahtzee_env.web.door.local_server import LocalServer, free_port
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.storage import SCHEMA_VERSION, open_storage
from yahtzee_env.web.tables.authority import Tables

WAIT_S = 10  # the longest any reply or pushed state is awaited (never a timing assertion)


def call(url: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=WAIT_S) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def ok(url: str, body: dict | None = None) -> dict:
    status, reply = call(url, body)
    assert status == 200, (url, status, reply)
    return reply


@pytest.fixture
def pair(pg_url, tmp_path):
    """Two server instances, A and B, on one PostgreSQL database."""
    servers = [LocalServer(pg_url, log=tmp_path / f"{name}.log") for name in "ab"]
    for s in servers:
        s.start()
    yield servers
    for s in servers:
        s.kill()


def online_table(a: LocalServer, b: LocalServer, seats=("human", "friend")):
    """A host's online table made on A, a guest joined on B, started on A; their tokens."""
    made = ok(f"{a.url}/api/tables", {"seats": list(seats), "online": True, "name": "Host"})
    code = made["code"]
    joined = ok(f"{b.url}/api/tables/{code}/join", {"name": "Guest"})
    ok(f"{a.url}/api/tables/{code}/start", {"seat": 0, "token": made["tokens"]["0"]})
    return code, {0: made["tokens"]["0"], joined["seat"]: joined["token"]}


def receive_state(ws, until) -> dict:
    """The first pushed state for which ``until(state)`` holds (bounded by WAIT_S)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        left = deadline - time.monotonic()
        assert left > 0, "no such state was pushed"
        msg = json.loads(ws.recv(timeout=left))
        if msg["type"] in ("state", "ack") and until(msg["state"]):
            return msg["state"]


def replay_totals(url: str, code: str) -> list[int]:
    """The engine's totals for the stored table, replayed from its seed, dice and log."""
    storage = open_storage(url, migrate=False)
    row = storage.tables.load_table(code)
    storage.close()
    return replay_row(row)


def score_best(state: dict) -> dict:
    """The best-paying box; where the turn starts with the dice in the cup (a person's,
    issue 58 item 2), the tap on Roll that brings them out first."""
    if state.get("cup"):
        return {"type": "roll", "hold": []}
    return {"type": "score", "box": max(state["options"], key=state["options"].get)}


# ------------------------------------------------------------------ in one process
def test_two_tables_on_one_database_rebuild_what_the_other_moved(pg_url):
    """Two `Tables` (as two processes would hold them) on one database: each move is applied
    on top of the other's, never on a stale copy, and a stale seq is refused."""
    sa, sb = open_storage(pg_url), open_storage(pg_url)
    try:
        a, b = Tables(sa), Tables(sb)
        table, tokens = a.create({"seats": ["human", "easy"], "name": "Ann", "coach": True})
        code, token = table.code, tokens[0]
        table, _ = a.act(code, 0, token, {"type": "roll", "hold": []}, seq=0)  # out of the cup
        copy_b = b.load(code)  # B holds a copy at the same revision
        assert copy_b.rev == table.rev
        table, _ = a.act(code, 0, token, {"type": "roll", "hold": [0]}, seq=len(table.log))
        assert table.game.rolls_left == 1
        seq = len(table.log)
        # B's copy is behind: under the lock it rebuilds it first, then applies the score
        assert b.loaded[code].game.rolls_left == 2
        room_b, _ = b.act(code, 0, token, {"type": "score", "box": "chance"}, seq=seq)
        assert b.state(room_b)["cards"][0]["scores"]["chance"] is not None  # filled, on B
        # A's copy is now behind; an intent made from its old state is refused as stale
        with pytest.raises(WebError, match="moved on") as err:
            a.act(code, 0, token, {"type": "roll", "hold": []}, seq=seq)
        assert err.value.status == 409
        assert a.load(code).rev == room_b.rev  # and A reads the committed state
        assert len(a.load(code).log) == len(room_b.log)
        # a copy caught up move by move is the same as one rebuilt from the whole log
        for _ in range(3):
            state = b.state(b.load(code))
            if state["over"]:
                break
            if state["cup"]:  # the dice in the cup: the tap on Roll
                intent = {"type": "roll", "hold": []}
            else:
                intent = {"type": "score", "box": next(iter(state["options"]))}
            b.act(code, 0, token, intent, seq=state["seq"])
        caught_up = a.state(a.load(code))
        rebuilt = Tables(sa).state(Tables(sa).load(code))
        assert caught_up == rebuilt and caught_up["seq"] > seq
    finally:
        sa.close()
        sb.close()


def wait_for(predicate, what: str):
    """``predicate()`` once it is true (bounded by WAIT_S: never a timing assertion)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"waited {WAIT_S} s for {what}"
        time.sleep(0.02)


def test_a_copy_follows_a_change_from_its_notification(pg_url):
    """The notification of a change carries what changed (`Replicas.news`): a copy one revision
    behind follows it without reading the database, to the state a rebuild from the log
    gives; a copy further behind cannot, and reads the database instead (`Replicas.refresh`)."""
    sa, sb = open_storage(pg_url), open_storage(pg_url)
    heard: list[tuple] = []
    stop = sb.listen(lambda *note: heard.append(note))
    try:
        a, b = Tables(sa), Tables(sb)
        table, tokens = a.create({"seats": ["human", "easy", "easy"], "name": "Ann"})
        code, token = table.code, tokens[0]
        b.load(code)
        time.sleep(0.5)  # the listener's LISTEN is in place (a missed note only fails the wait)

        def move(state: dict) -> dict:
            action = (
                {"type": "roll", "hold": [0]} if state["rolls_left"] == 2 else score_best(state)
            )
            table, _ = a.act(code, 0, token, action, seq=state["seq"])
            return a.state(table)

        state = a.state(a.load(code))
        for _ in range(4):  # rolls, and scores followed by the CPU seats' whole turns
            state = move(state)
            note = wait_for(lambda r=state["rev"]: [n for n in heard if n[1] == r], "the note")
            code_, rev, origin, news = note[0]
            assert (code_, origin) == (code, a.instance) and news is not None
            followed = b.replicas.follow(code, rev, news)
            assert followed is not None and followed.rev == rev
            assert b.state(followed) == Tables(sb).state(Tables(sb).load(code)) == state
        assert len(state["events"]) > 4  # CPU turns were among the followed actions
        state = move(move(state))  # two changes: B's copy is two revisions behind
        note = wait_for(lambda r=state["rev"]: [n for n in heard if n[1] == r], "the note")
        assert b.replicas.follow(code, state["rev"], note[0][3]) is None
        assert b.state(b.replicas.refresh(code, state["rev"])) == state
    finally:
        stop()
        sa.close()
        sb.close()


def test_cpu_moves_a_dead_instance_left_are_played_by_another(pg_url):
    """A table whose start was committed by an instance that died before its CPU moves (no
    lease to wait for): the next instance to read it plays them, under the row lock, once."""
    sa, sb = open_storage(pg_url), open_storage(pg_url)
    try:
        a, b = Tables(sa), Tables(sb)
        for _ in range(20):  # a table where a CPU seat rolls to go first
            table, _tokens = a.create({"seats": ["human", "friend"], "online": True})
            table.seats[1].kind = "easy"  # as `start` fills a free seat
            first = table.begin_game(0)
            if first == 1:
                break
        assert first == 1
        # instance A commits the start, then dies before the CPU moves (their own commit)
        sa.tables.start_table(table.code, [s.row() for s in table.seats], first)
        assert sa.tables.load_table(table.code)["actions"] == {}
        seen = [b.load(table.code), Tables(sb).load(table.code)]  # B, then a third instance
        for r in seen:
            assert r.game.current == 0 and len(r.log) > 0  # the CPU's turn has been played
        assert len(sb.tables.load_table(table.code)["actions"][0]) == len(seen[0].log)  # once
        assert seen[1].log == seen[0].log
    finally:
        sa.close()
        sb.close()


def test_concurrent_migrations_apply_once(postgres_server):
    url = postgres_server.create_database("migrate_race")
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_storage(url).close()
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    storage = open_storage(url, migrate=False)
    assert storage.version == SCHEMA_VERSION
    assert storage.migrate() == []  # nothing left to apply
    storage.close()


# ------------------------------------------------------------------ two instances
def test_host_on_a_and_guest_on_b_see_each_others_moves(pair):
    a, b = pair
    code, tokens = online_table(a, b)
    ws_url = {s: s.url.replace("http", "ws") + f"/ws/{code}" for s in (a, b)}
    with connect(ws_url[a]) as host, connect(ws_url[b]) as guest:
        state = receive_state(host, lambda s: s["started"])
        receive_state(guest, lambda s: s["started"])
        sockets = {0: host, 1: guest}
        moves = 0
        while moves < 6 and not state["over"]:  # three turns each way
            mover = state["current"]
            other = sockets[1 - mover]
            if state["cup"]:  # the mover's tap on Roll first: its dice out of the cup
                tap = {"type": "act", "id": 100 + moves, "seat": mover, "token": tokens[mover]}
                tap.update(seq=state["seq"], action={"type": "roll", "hold": []})
                sockets[mover].send(json.dumps(tap))
                state = receive_state(sockets[mover], lambda s, m=mover: not s["cup"])
            sockets[mover].send(
                json.dumps(
                    {
                        "type": "act",
                        "id": moves,
                        "seat": mover,
                        "token": tokens[mover],
                        "seq": state["seq"],
                        "action": score_best(state),
                    }
                )
            )
            ack = receive_state(sockets[mover], lambda s, m=mover: s["current"] != m)
            # the other instance's socket gets the same state, pushed after the commit
            pushed = receive_state(other, lambda s, n=ack["seq"]: s["seq"] == n)
            assert pushed["cards"] == ack["cards"] and pushed["current"] == 1 - mover
            state = ack
            moves += 1
    assert moves == 6


def test_the_same_intent_sent_to_both_instances_is_applied_once(pair):
    a, b = pair
    made = ok(f"{a.url}/api/tables", {"seats": ["human", "easy"], "name": "Solo"})
    code, token = made["code"], made["tokens"]["0"]
    for _ in range(5):  # five races, each a re-roll (legal twice in a row: only seq stops it)
        state = ok(f"{a.url}/api/tables/{code}")
        if state["rolls_left"] == 0:
            ok(
                f"{a.url}/api/tables/{code}/act",
                {
                    "seat": 0,
                    "token": token,
                    "seq": state["seq"],
                    "action": score_best(state),
                },
            )
            state = ok(f"{a.url}/api/tables/{code}")
        if state["cup"]:  # the turn's dice in the cup: the tap on Roll first
            tap = {"seat": 0, "token": token, "seq": state["seq"], "game": state["game"]}
            ok(f"{a.url}/api/tables/{code}/act", {**tap, "action": {"type": "roll", "hold": []}})
            state = ok(f"{a.url}/api/tables/{code}")
        intent = {
            "seat": 0,
            "token": token,
            "seq": state["seq"],
            "game": state["game"],
            "action": {"type": "roll", "hold": [0, 1]},
        }
        replies: dict[str, tuple[int, dict]] = {}
        go = threading.Barrier(2)

        def send(server: LocalServer, intent=intent, go=go, replies=replies) -> None:
            go.wait()
            replies[server.url] = call(f"{server.url}/api/tables/{code}/act", intent)

        threads = [threading.Thread(target=send, args=(s,)) for s in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT_S * 2)
        statuses = sorted(status for status, _ in replies.values())
        assert statuses == [200, 409], replies
        refused = next(body for status, body in replies.values() if status == 409)
        assert "moved on" in refused["error"]
        after = ok(f"{b.url}/api/tables/{code}")
        assert after["seq"] == state["seq"] + 1  # one roll, not two
        assert after["rolls_left"] == state["rolls_left"] - 1
        assert ok(f"{a.url}/api/tables/{code}") == after


def test_kill_9_of_an_instance_the_host_continues_on_the_other(pair, pg_url):
    a, b = pair
    made = ok(f"{a.url}/api/tables", {"seats": ["human", "medium"], "name": "Host"})
    code, token = made["code"], made["tokens"]["0"]
    state = made["state"]
    with connect(a.url.replace("http", "ws") + f"/ws/{code}") as ws:
        state = receive_state(ws, lambda s: True)
        for i in range(7):  # a few acknowledged moves on A, over its socket
            action = (
                {"type": "roll", "hold": [0]} if state["rolls_left"] == 2 else score_best(state)
            )
            ws.send(
                json.dumps(
                    {
                        "type": "act",
                        "id": i,
                        "seat": 0,
                        "token": token,
                        "seq": state["seq"],
                        "action": action,
                    }
                )
            )
            while True:
                reply = json.loads(ws.recv(timeout=WAIT_S))
                if reply.get("id") == i:
                    break
            assert reply["type"] == "ack", reply
            state = reply["state"]
        a.kill()  # kill -9, mid-game
    assert a.proc.returncode == -9
    again = ok(f"{b.url}/api/tables/{code}")
    for key in ("game", "seq", "dice", "rolls_left", "current", "cards", "held"):
        assert again[key] == state[key], key
    while not again["over"]:  # and plays on to the end on B
        action = {"type": "roll", "hold": [0]} if again["rolls_left"] == 2 else score_best(again)
        again = ok(
            f"{b.url}/api/tables/{code}/act",
            {"seat": 0, "token": token, "seq": again["seq"], "action": action},
        )
    assert again["result"]["totals"] == replay_totals(pg_url, code)


def test_a_listener_cut_off_resyncs_and_no_move_is_missed(pair, pg_url):
    """B's LISTEN connection is killed (``pg_terminate_backend``, as a restart of PostgreSQL
    or a dropped connection would): B listens again and re-reads the tables it has sockets
    for, so a move made on A while B was not listening still reaches B's socket."""
    import psycopg

    a, b = pair
    made = ok(f"{a.url}/api/tables", {"seats": ["human", "easy"], "name": "Solo"})
    code, token = made["code"], made["tokens"]["0"]
    listener = f"yahtzee-listen {b.proc.pid}"

    def listener_pid(conn) -> int | None:
        row = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (listener,)
        ).fetchone()
        return row[0] if row else None

    def move(state: dict) -> dict:
        action = {"type": "roll", "hold": [0]} if state["rolls_left"] == 2 else score_best(state)
        body = {"seat": 0, "token": token, "seq": state["seq"], "action": action}
        return ok(f"{a.url}/api/tables/{code}/act", body)

    with (
        psycopg.connect(pg_url, autocommit=True) as db,
        connect(b.url.replace("http", "ws") + f"/ws/{code}") as ws,
    ):
        state = receive_state(ws, lambda s: True)
        wait_for(lambda: listener_pid(db), "B's listener")
        state = move(state)  # heard as usual
        receive_state(ws, lambda s, n=state["seq"]: s["seq"] == n)
        missed = False
        for _ in range(3):  # until a move falls in the gap (B reconnects after 0.5 s)
            pid = wait_for(lambda: listener_pid(db), "B's listener")
            db.execute("SELECT pg_terminate_backend(%s)", (pid,))
            wait_for(lambda p=pid: listener_pid(db) != p, "the listener's backend to go")
            state = move(state)  # committed and notified while B does not listen ...
            missed = listener_pid(db) is None
            # ... and yet it reaches B's socket, once B listens again and re-reads the table
            pushed = receive_state(ws, lambda s, n=state["seq"]: s["seq"] >= n)
            assert pushed["seq"] == state["seq"] and pushed["cards"] == state["cards"]
            if missed:
                break
        assert missed, "no move fell between the listener's loss and its return"
        assert wait_for(lambda: listener_pid(db), "B's listener back") != pid
        state = move(state)  # and B hears the next ones as before
        receive_state(ws, lambda s, n=state["seq"]: s["seq"] == n)
    assert "listening for other servers' changes again" in b.log.read_text()


def test_workers_on_postgres_and_refused_on_sqlite(pg_url, tmp_path):
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "yahtzee_env",
            "serve",
            "--workers",
            "2",
            "--db",
            str(tmp_path / "web.sqlite3"),
            "--port",
            str(free_port()),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert "--workers above 1 needs a PostgreSQL database" in refused.stderr
    assert "SQLite is one process's database" in refused.stderr
    server = LocalServer(pg_url, log=tmp_path / "workers.log", args=("--workers", "2"))
    server.start()
    try:
        workers = [  # uvicorn's supervisor spawns the two worker processes
            pid
            for pid in server.children()
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]
        assert len(workers) == 2
        made = ok(f"{server.url}/api/tables", {"seats": ["human", "easy"]})
        code, token = made["code"], made["tokens"]["0"]
        state = made["state"]
        for _ in range(6):  # every request may reach either process: they agree
            action = {"type": "roll", "hold": []} if state["rolls_left"] else score_best(state)
            state = ok(
                f"{server.url}/api/tables/{code}/act",
                {"seat": 0, "token": token, "seq": state["seq"], "action": action},
            )
        assert ok(f"{server.url}/api/tables/{code}")["seq"] == state["seq"]
        with connect(server.url.replace("http", "ws") + f"/ws/{code}") as ws:  # sockets too
            assert receive_state(ws, lambda s: True)["seq"] == state["seq"]
    finally:
        server.kill()  # the workers too


# ------------------------------------------------------------------ operating it
def serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "yahtzee_env", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_check_db_and_migrate(backend, postgres_server, tmp_path):
    db = (
        str(tmp_path / "web.sqlite3")
        if backend == "sqlite"
        else postgres_server.create_database(f"check_{backend}")
    )
    before = serve("--db", db, "--check-db")
    assert before.returncode == 1, before.stderr
    assert f"schema version 0, this program needs {SCHEMA_VERSION}" in before.stderr
    assert "--migrate" in before.stderr
    done = serve("--db", db, "--check-db", "--migrate")
    assert done.returncode == 0, done.stderr
    assert "applied migrations" in done.stdout and "schema current" in done.stdout
    assert f"{backend}, connected, schema version {SCHEMA_VERSION}" in done.stdout
    again = serve("--db", db, "--check-db")
    assert again.returncode == 0 and "applied" not in again.stdout


def test_check_db_names_an_unreachable_database():
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
    out = serve("--db", url, "--check-db")
    assert out.returncode == 2 and "cannot connect to postgresql://" in out.stderr


def test_healthz_and_readyz(pair, pg_url):
    a, _b = pair
    assert ok(f"{a.url}/healthz")["ok"] is True
    assert ok(f"{a.url}/readyz") == {"ready": True, "schema_version": SCHEMA_VERSION}
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:  # a newer program migrated ahead
        conn.execute("UPDATE schema_version SET version = version + 1")
    status, body = call(f"{a.url}/readyz")
    assert status == 503 and not body["ready"] and "newer" in body["error"]
    assert ok(f"{a.url}/healthz")["ok"] is True  # the process is still up


def test_a_move_heard_while_a_socket_opens_reaches_it(pg_url, tmp_path, monkeypatch):
    """A socket reads the table's state, then joins the instance's hub: a move made on the
    other instance in between used to reach none of that instance's sockets (the first of
    its table), so the page showed the older state until its next action. Instance B runs
    here under uvicorn, with its read of the table held until A's move is committed and B
    has heard it; the socket must still be brought to the new state."""
    import uvicorn

    from yahtzee_env.web.door.app import create_app

    a = LocalServer(pg_url, log=tmp_path / "a.log")
    a.start()
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(pg_url), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    b_url = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            try:
                return call(f"{b_url}/readyz")[0] == 200
            except urllib.error.URLError:
                return False

        wait_for(ready, "instance B ready")
        made = ok(f"{a.url}/api/tables", {"seats": ["human", "friend"], "online": True})
        code, token = made["code"], made["tokens"]["0"]
        joined = ok(f"{a.url}/api/tables/{code}/join", {"name": "Guest"})
        started = ok(f"{a.url}/api/tables/{code}/start", {"seat": 0, "token": token})
        assert joined["seat"] == 1 and started["current"] == 0
        moved = {}
        original = Tables.load

        def held_load(self, key):
            table = original(self, key)  # the state as it is now...
            if not moved and key == code and threading.current_thread() is not thread:
                moved["state"] = ok(  # ...then A commits a move, which B hears at once
                    f"{a.url}/api/tables/{code}/act",
                    {
                        "seat": 0,
                        "token": token,
                        "seq": started["seq"],
                        "action": {"type": "roll", "hold": []},  # the tap out of the cup
                    },
                )
                time.sleep(1.0)  # B's listener hears it while no socket of B has the table
            return table

        monkeypatch.setattr(Tables, "load", held_load)
        with connect(f"ws://127.0.0.1:{port}/ws/{code}") as ws:
            first = receive_state(ws, lambda s: True)
            assert moved, "B's socket did not read the table through Tables.load"
            assert first["seq"] < moved["state"]["seq"]  # it did read the older state
            caught_up = receive_state(ws, lambda s: s["seq"] >= moved["state"]["seq"])
            assert caught_up["rolls_left"] == moved["state"]["rolls_left"]
    finally:
        server.should_exit = True
        thread.join(timeout=WAIT_S)
        a.kill()


def test_a_turn_timer_of_a_dead_instance_is_kept_by_another(pair, pg_url):
    """The turn clock is a stored deadline, not a timer held by one process: after ``kill -9``
    of the instance that started the table, the other plays the absent seat's turn when its
    time is up (issue 20: timers the dead instance owned are taken over)."""
    a, b = pair
    body = {"seats": ["human", "friend"], "online": True, "name": "Host", "turn_timer": 10}
    made = ok(f"{a.url}/api/tables", body)
    code, token = made["code"], made["tokens"]["0"]
    ok(f"{b.url}/api/tables/{code}/join", {"name": "Guest"})
    started = ok(f"{a.url}/api/tables/{code}/start", {"seat": 0, "token": token})
    assert started["current"] == 0 and started["deadline"] is not None
    a.kill()  # the host's instance dies; the host does not come back
    with connect(b.url.replace("http", "ws") + f"/ws/{code}") as ws:
        deadline = time.monotonic() + started["turn_timer"] + 3 * WAIT_S
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "the dead instance's turn clock was never run out by B"
            msg = json.loads(ws.recv(timeout=left))
            if msg["type"] == "state" and msg["state"]["current"] == 1:
                break
    state = msg["state"]
    assert state["seats"][0]["away"] == "timeout"  # the computer played the host's turn
    assert state["cards"][0] != started["cards"][0]


def test_quick_match_pairs_players_on_two_instances(pair):
    """Issue 32: a stranger queued on A and one queued on B are seated at one table."""
    a, b = pair
    ann = ok(f"{a.url}/api/players", {"name": "Ann"})["token"]
    bob = ok(f"{b.url}/api/players", {"name": "Bob"})["token"]
    ask = {"seats": 2, "rules": "official", "wait": 120}
    assert ok(f"{a.url}/api/quick", {**ask, "player": ann})["state"] == "waiting"
    on_b = ok(f"{b.url}/api/quick", {**ask, "player": bob})
    assert on_b["state"] == "matched", on_b
    on_a = ok(f"{a.url}/api/quick?player={ann}")
    assert on_a["state"] == "matched" and on_a["code"] == on_b["code"]
    state = ok(f"{a.url}/api/tables/{on_a['code']}")
    assert state["started"] and [s["name"] for s in state["seats"]] == ["Ann", "Bob"]
    # each was read once: both are out of the queue, on either instance
    assert ok(f"{b.url}/api/quick?player={ann}") == {"state": "idle"}
    assert ok(f"{a.url}/api/quick?player={bob}") == {"state": "idle"}


def test_quick_match_seats_each_of_many_players_once_across_instances(pair):
    """Four players queued at once, two on each instance (all from one address: its cap is
    4): two tables of two, no one seated twice."""
    servers, N = pair, 4
    tokens = [ok(f"{servers[i % 2].url}/api/players", {"name": f"P{i}"})["token"] for i in range(N)]
    replies: dict[int, dict] = {}

    def ask(i: int) -> None:
        url = servers[i % 2].url
        replies[i] = ok(f"{url}/api/quick", {"seats": 2, "wait": 120, "player": tokens[i]})

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    seated: dict[int, tuple[str, int]] = {}
    deadline = time.monotonic() + WAIT_S
    while len(seated) < N and time.monotonic() < deadline:
        for i in range(N):
            if i in seated:
                continue
            r = replies[i] if replies[i]["state"] == "matched" else None
            if r is None:
                r = ok(f"{servers[(i + 1) % 2].url}/api/quick?player={tokens[i]}")
                replies[i] = r
            if r["state"] == "matched":
                seated[i] = (r["code"], r["seat"])
    assert len(seated) == N, replies
    tables: dict[str, list[int]] = {}
    for code, seat in seated.values():
        tables.setdefault(code, []).append(seat)
    assert sorted(sorted(s) for s in tables.values()) == [[0, 1]] * (N // 2)


def test_a_spectator_on_b_sees_a_move_made_on_a_until_the_link_is_off(pair):
    """Issue 32: the watch link's states reach a spectator whose socket is on the other
    instance, and the host turning the link off on A closes it on B."""
    a, b = pair
    made = ok(f"{a.url}/api/tables", {"seats": ["human", "easy"], "name": "Host"})
    code, token = made["code"], made["tokens"]["0"]
    watch = ok(f"{a.url}/api/tables/{code}/watch", {"on": True, "seat": 0, "token": token})
    ws_url = b.url.replace("http://", "ws://") + f"/ws/watch/{watch['watch']}"
    with connect(ws_url, open_timeout=WAIT_S) as ws:
        first = receive_state(ws, lambda s: True)
        assert first["code"] == watch["watch"] and first["seq"] == 0
        state = ok(f"{a.url}/api/tables/{code}")
        body = {"seat": 0, "token": token, "seq": 0, "game": 0}
        ok(f"{a.url}/api/tables/{code}/act", {**body, "action": {"type": "roll", "hold": []}})
        moved = receive_state(ws, lambda s: s["seq"] >= 1)
        assert moved["dice"] != state["dice"] or moved["rolls_left"] == state["rolls_left"] - 1
        assert code not in json.dumps(moved)
        ok(f"{a.url}/api/tables/{code}/watch", {"on": False, "seat": 0, "token": token})
        deadline = time.monotonic() + WAIT_S
        with pytest.raises(ConnectionClosed) as closed:  # B's check task (every 2 s)
            while time.monotonic() < deadline:
                ws.recv(timeout=deadline - time.monotonic())
        assert closed.value.rcvd.code == 4410
