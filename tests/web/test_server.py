"""``yahtzee serve`` as a real uvicorn child process on 127.0.0.1 (issue 17), where sockets
and timeouts matter: a half-sent request is dropped, hostile WebSocket frames get a close
code and no traceback, and sockets that never read do not hold up a table's moves."""

from __future__ import annotations

import base64
import json
import os
import socket
import sqlite3
import struct
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

from yahtzee_env.web.door.local_server import LocalServer

WAIT = 15.0  # s: the most any socket read waits


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """This module's server (in place of conftest's): one for the module, with a short
    header timeout and the loopback as a trusted proxy."""
    args = ["--header-timeout", "1", "--trust-proxy"]  # X-Forwarded-For from 127.0.0.1 counts
    srv = LocalServer(tmp_path_factory.mktemp("srv") / "web.sqlite3", args)
    srv.start()
    yield srv
    srv.kill()


def post(url: str, body: dict, timeout: float = WAIT) -> dict:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def create_table(server, seats=("human", "easy"), **extra) -> tuple[str, str, dict]:
    reply = post(f"{server.url}/api/tables", {"seats": list(seats), **extra})
    return reply["code"], reply["tokens"]["0"], reply["state"]


class RawSocket:
    """A WebSocket client written by hand, to send what a well-behaved library will not
    (binary, invalid UTF-8, oversize frames) and to not read at all."""

    def __init__(
        self, server, code: str, rcvbuf: int | None = None, address: str | None = None
    ) -> None:
        self.sock = socket.socket()
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(WAIT)
        self.sock.connect(("127.0.0.1", server.port))
        key = base64.b64encode(os.urandom(16)).decode()
        forwarded = f"X-Forwarded-For: {address}\r\n" if address else ""
        self.sock.sendall(
            (
                f"GET /ws/{code} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{forwarded}\r\n"
            ).encode()
        )
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self._recv()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head

    def _recv(self) -> bytes:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed")
        return data

    def send_frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            head = bytes([0x80 | opcode, 0x80 | n])
        elif n < 65536:
            head = bytes([0x80 | opcode, 0x80 | 126]) + struct.pack("!H", n)
        else:
            head = bytes([0x80 | opcode, 0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + body)

    def _take(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self.buffer += self._recv()
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def frame(self) -> tuple[int, bytes]:
        b0, b1 = self._take(2)
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", self._take(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", self._take(8))
        return b0 & 0x0F, self._take(n)

    def close_code(self) -> tuple[int, str]:
        """Read frames up to the server's close frame: its (code, reason)."""
        while True:
            opcode, payload = self.frame()
            if opcode == 8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                return code, payload[2:].decode(errors="replace")

    def close(self) -> None:
        self.sock.close()


def log_text(server) -> str:
    return server.log.read_text(errors="replace")


# ------------------------------------------------------------------ 8. slowloris
def test_a_half_sent_request_is_dropped(server):
    slow = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT)
    idle = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT)
    try:
        slow.sendall(b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        time.sleep(0.3)
        slow.sendall(b"a")  # a trickle does not reset the deadline of the request head
        assert slow.recv(1024) == b""  # closed by the server, not by our WAIT timeout
        assert idle.recv(1024) == b""  # a connection that never sends a byte goes too
    finally:
        slow.close()
        idle.close()
    with urllib.request.urlopen(f"{server.url}/api/config", timeout=WAIT) as r:
        assert r.status == 200  # while whole requests are served


def test_a_rebound_host_name_is_refused(server):
    """On loopback, ``yahtzee serve`` answers only the loopback names (DNS rebinding)."""
    for host, status in [("rebind.evil.example", 400), ("localhost", 200), ("127.0.0.1", 200)]:
        req = urllib.request.Request(f"{server.url}/api/config", headers={"Host": host})
        try:
            with urllib.request.urlopen(req, timeout=WAIT) as r:
                got = r.status
        except urllib.error.HTTPError as err:
            got = err.code
            assert json.loads(err.read())["code"] == "bad_host"
        assert got == status, host


# ------------------------------------------------------------------ 9. hostile frames
@pytest.mark.parametrize(
    ("opcode", "payload", "close"),
    [
        (0x2, b"\x00\x01\x02", 1003),  # binary frame
        (0x1, b'{"type": "ping", "x": "\xff\xfe"}', 1007),  # invalid UTF-8 in a text frame
        (0x1, b"x" * 70_000, 1009),  # over the 64 KiB frame limit
    ],
    ids=["binary", "invalid-utf8", "oversize"],
)
def test_hostile_frames_get_a_close_code_and_no_traceback(server, opcode, payload, close):
    code, _token, _ = create_table(server)
    ws = RawSocket(server, code)
    try:
        _opcode, first = ws.frame()
        assert json.loads(first)["type"] == "state"
        ws.send_frame(opcode, payload)
        assert ws.close_code()[0] == close
    finally:
        ws.close()
    with urllib.request.urlopen(f"{server.url}/api/tables/{code}", timeout=WAIT) as r:
        assert r.status == 200
    assert "Traceback" not in log_text(server)


def test_a_bad_request_logs_one_line(server):
    before = log_text(server).count("\n")
    req = urllib.request.Request(f"{server.url}/api/tables", b"[[[", {"Content-Type": "text/plain"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=WAIT)
    assert refused.value.code == 415
    time.sleep(0.2)
    lines = log_text(server).splitlines()[before:]
    assert len(lines) == 1 and "refused 415" in lines[0]


# ------------------------------------------------------------------ 2. sockets that never read
def play(server, code, token, state, moves: int) -> dict:
    """``moves`` moves of seat 0 (rolls, then the first open box; next game when over)."""
    for _ in range(moves):
        body = {"seat": 0, "token": token, "seq": state["seq"], "game": state["game"]}
        if state["over"]:
            action = {"type": "next"}
        elif state["rolls_left"] > 0:
            action = {"type": "roll", "hold": []}
        else:
            action = {"type": "score", "box": next(iter(state["options"]))}
        for _ in range(100):  # an honest client backs off when told to slow down
            try:
                state = post(f"{server.url}/api/tables/{code}/act", {**body, "action": action})
                break
            except urllib.error.HTTPError as err:
                if err.code != 429:
                    raise
                time.sleep(0.1)
    return state


def test_sockets_that_never_read_hold_up_no_move(server):
    """Three clients (three addresses) on a table ask for its state again and again and
    never read the answers, until the server's buffers to them are full: the table's
    moves are still answered (each within the client's timeout: a request handler that
    awaited their sockets would hang there), and the server drops the three: closed with
    4008, then cut off (reset) if they still do not read."""
    code, token, state = create_table(server, seats=("human", "easy"), match=True)
    state = play(server, code, token, state, 24)  # a long event list: a big state
    stuck = [RawSocket(server, code, rcvbuf=4096, address=f"10.0.0.{i}") for i in (1, 2, 3)]
    try:
        asking = list(stuck)
        for n in range(1500):  # bounded: ~8 s of asking at the rate limit
            for ws in list(asking):
                try:
                    ws.send_frame(0x1, b'{"type": "state"}')
                except OSError:  # reset: the server has already dropped it
                    asking.remove(ws)
            if n % 100 == 99:
                time.sleep(0.5)
        state = play(server, code, token, state, 20)
        assert state["seq"] >= 0
        for ws in stuck:
            try:
                code_, reason = ws.close_code()
                assert code_ == 4008 and "too slow" in reason, (code_, reason)
            except ConnectionError:  # reset or ended by the server, its last bytes unread
                pass  # (a socket the server kept would time out here: TimeoutError)
    finally:
        for ws in stuck:
            ws.close()
    assert "Traceback" not in log_text(server)


def test_a_turn_whose_time_ran_out_while_the_server_was_down_is_played_at_start_up(tmp_path):
    """Issue 18: the turn timer is a stored deadline, not a task. The server is killed
    (SIGKILL) during a human's 10 s turn and comes back after the deadline: it plays that
    turn for them at start-up, with nobody asking."""
    db = tmp_path / "web.sqlite3"
    srv = LocalServer(db)
    srv.start()
    try:
        reply = post(
            f"{srv.url}/api/tables",
            {"seats": ["human", "friend", "easy"], "online": True, "turn_timer": 10},
        )
        code, token = reply["code"], reply["tokens"]["0"]
        post(f"{srv.url}/api/tables/{code}/join", {"name": "Gina"})
        state = post(f"{srv.url}/api/tables/{code}/start", {"seat": 0, "token": token})
        assert state["current"] == 0 and state["deadline"] is not None
    finally:
        srv.kill()
    time.sleep(max(0.0, state["deadline"] - time.time()) + 0.5)  # the deadline passes
    srv = LocalServer(db)
    srv.start()
    try:
        con = sqlite3.connect(db)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:  # read the database: no request loads the table
            (seq,) = con.execute(
                "SELECT COUNT(*) FROM actions WHERE code = ? AND seat = 0", (code,)
            ).fetchone()
            if seq:
                break
            time.sleep(0.2)
        (away,) = con.execute(
            "SELECT away FROM seats WHERE code = ? AND seat = 0", (code,)
        ).fetchone()
        con.close()
        assert seq >= 1 and away == "timeout"
        with urllib.request.urlopen(f"{srv.url}/api/tables/{code}", timeout=WAIT) as r:
            state = json.loads(r.read())
        assert state["current"] == 1 and state["seats"][0]["away"] == "timeout"
    finally:
        srv.kill()


def test_sockets_opened_and_closed_leave_nothing_held(tmp_path):
    """Issue 57: 1,000 sockets opened and closed left the server's RSS 30 MiB higher,
    though the docs said a closed socket leaves nothing: each socket's protocol (its
    connection, its buffers, its ASGI scope) was held for 5 s by its release timer even when
    the peer had gone. Under uvicorn in this process, with the server's own protocols:
    after 300 sockets of a table opened and closed (half of them seated), no WebSocket
    protocol is alive, no timer holds one, and every per-connection count of the server
    (hub, slots, fan-out, spectators, the rate limiters once swept) is back to nothing."""
    import gc
    import threading

    import uvicorn
    from websockets.sync.client import connect

    from yahtzee_env.web.door.app import create_app
    from yahtzee_env.web.door.local_server import free_port
    from yahtzee_env.web.door.server import websocket_protocol
    from yahtzee_env.web.limits import Limits

    protocol = websocket_protocol()
    if protocol is None:
        pytest.skip("this uvicorn has no sans-I/O WebSocket protocol")
    port = free_port()
    app = create_app(
        tmp_path / "web.sqlite3",
        limits=Limits(rate=1e6, burst=1e6, token_rate=1e6, token_burst=10**6),
    )
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws=protocol)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + WAIT
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        made = post(f"{url}/api/tables", {"seats": ["human", "easy"]})
        code, token = made["code"], made["tokens"]["0"]
        for i in range(300):
            with connect(f"ws://127.0.0.1:{port}/ws/{code}", open_timeout=WAIT) as ws:
                assert json.loads(ws.recv(timeout=WAIT))["type"] == "state"
                if i % 2:
                    ws.send(json.dumps({"type": "hello", "seat": 0, "token": token}))
                    assert json.loads(ws.recv(timeout=WAIT))["type"] == "hello"
        while server.server_state.connections and time.monotonic() < deadline:
            time.sleep(0.05)  # the last close reaches the server
        service = app.state.service

        def left() -> dict:
            service.per_address.forget_full()  # what the sweep does
            gc.collect()
            alive = [o for o in gc.get_objects() if isinstance(o, protocol)]
            return {
                "protocols": len(alive),
                "connections": len(server.server_state.connections),
                "hub": service.hub.count(),
                "slots": (service.slots.total, service.slots.by_address, service.slots.by_table),
                "fanout": (service.fanout.opening, service.fanout.missed),
                "watchers": service.spectators.watchers,
            }

        nothing = {
            "protocols": 0,
            "connections": 0,
            "hub": 0,
            "slots": (0, {}, {}),
            "fanout": ({}, {}),
            "watchers": {},
        }
        settle = time.monotonic() + 1.0  # the loop's last callbacks of the last close
        while (got := left()) != nothing and time.monotonic() < settle:
            time.sleep(0.05)
        assert got == nothing  # a release timer held each closed one for 5 s
    finally:
        server.should_exit = True
        thread.join(timeout=WAIT)


def test_the_sockets_mailbox_keeps_order_and_wakes_its_reader():
    """`server.Mailbox` stands in for uvicorn's `asyncio.Queue` of a socket's events:
    first in, first out; a waiting ``get`` wakes on the next ``put_nowait``; a cancelled
    ``get`` loses nothing."""
    import asyncio

    from yahtzee_env.web.door.server import Mailbox

    async def scenario():
        box = Mailbox()
        assert box.empty() and box.qsize() == 0
        box.put_nowait("a")
        box.put_nowait("b")
        assert [await box.get(), await box.get()] == ["a", "b"] and box.empty()
        waiting = asyncio.ensure_future(box.get())
        await asyncio.sleep(0)
        assert not waiting.done()
        box.put_nowait("c")
        assert await asyncio.wait_for(waiting, 1) == "c"
        cancelled = asyncio.ensure_future(box.get())
        await asyncio.sleep(0)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        box.put_nowait("d")  # nobody waits: kept for the next reader
        assert box.waiter is None and await box.get() == "d"

    asyncio.run(scenario())


def test_the_sockets_writable_flag_holds_writers_until_set():
    """`server.Flag` stands in for uvicorn's `asyncio.Event` (writable): ``wait`` returns at
    once while set, waits while cleared, and every waiter wakes on ``set``."""
    import asyncio

    from yahtzee_env.web.door.server import Flag

    async def scenario():
        flag = Flag(True)
        assert flag.is_set() and await flag.wait() is True
        flag.clear()
        waiters = [asyncio.ensure_future(flag.wait()) for _ in range(3)]
        await asyncio.sleep(0)
        assert not any(w.done() for w in waiters)
        gone = waiters.pop()
        gone.cancel()
        await asyncio.sleep(0)
        assert len(flag.waiters) == 2  # a cancelled waiter leaves the list
        flag.set()
        assert await asyncio.wait_for(asyncio.gather(*waiters), 1) == [True, True]
        assert flag.waiters is None

    asyncio.run(scenario())


def test_a_reply_is_written_by_its_own_socket_in_order_and_a_peer_behind_is_queued():
    """`hub.Client.reply` (issue 60, seventh round): the answer to a socket's message is
    written from its receive loop, with no sender task, when nothing waits before it and
    the transport takes more; pushes made while it writes go out after it, in order; a
    peer behind (the writable flag cleared) gets it queued, behind what waits, and its
    queue still fills up and closes it (4008) as before."""
    import asyncio

    from yahtzee_env.web.door.hub import CLOSE_SLOW, WRITABLE, Client
    from yahtzee_env.web.door.server import Flag

    class Socket:
        def __init__(self) -> None:
            self.writable = Flag(True)
            self.scope = {"extensions": {WRITABLE: self.writable}}
            self.sent: list[str] = []
            self.gate: asyncio.Event | None = None

        async def send_text(self, text: str) -> None:
            await self.writable.wait()
            if self.gate is not None:
                await self.gate.wait()
            self.sent.append(text)

    async def scenario():
        ws = Socket()
        client = Client(ws, "ABCD", "1.2.3.4", queue_size=3)
        tasks = len(asyncio.all_tasks())
        await client.reply({"type": "pong", "id": 1})
        assert ws.sent == ['{"type":"pong","id":1}'] and client.sender is None
        assert len(asyncio.all_tasks()) == tasks  # no sender task was made
        ws.gate = asyncio.Event()  # the next write takes a while
        replying = asyncio.ensure_future(client.reply("ack"))
        await asyncio.sleep(0)
        client.push("state 1")  # another change's push, while the ack is being written
        client.push("state 2")
        assert client.sender is replying  # queued behind the reply, no task of its own
        ws.gate.set()
        await asyncio.wait_for(replying, 1)
        assert ws.sent[1:] == ["ack", "state 1", "state 2"] and client.sender is None
        ws.gate = None
        ws.writable.clear()  # the peer is behind: its transport takes no more
        await client.reply("ack 2")
        assert client.queue == ["ack 2"] and client.sender is not None
        for n in range(3):
            await client.reply(f"ack {n + 3}")
        assert client.closing == (CLOSE_SLOW, client.closing[1])  # its queue filled up
        client.end()

    asyncio.run(scenario())


def test_sockets_take_the_short_way_in_and_other_paths_still_reach_the_router(tmp_path):
    """`app.SocketLane`: a table's socket and a watch link's socket reach their handlers
    past the router (their state, and a watch link's refusal, as before); a socket on a
    path no route has is still closed by the router; the forwarded address of a trusted
    proxy is the socket's address (the lane sits after the proxy's middleware)."""
    from starlette.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    from yahtzee_env.web.door.app import SocketLane, create_app

    app = create_app(tmp_path / "lane.sqlite3", trust_proxy="*")
    stack = [m.cls for m in app.user_middleware]
    assert stack.index(SocketLane) == 1  # after the proxy's middleware, before the guard
    with TestClient(app) as client:
        code = client.post("/api/tables", json={"seats": ["human", "easy"]}).json()["code"]
        headers = {"x-forwarded-for": "203.0.113.7"}
        with client.websocket_connect(f"/ws/{code}", headers=headers) as ws:
            assert ws.receive_json()["type"] == "state"
            (client_socket,) = app.state.service.hub.clients[code]
            assert client_socket.address == "203.0.113.7"
        with client.websocket_connect("/ws/watch/nosuchlink") as ws:
            assert ws.receive_json()["code"] == "unknown_table"  # the watch handler's refusal
        with pytest.raises(WebSocketDisconnect), client.websocket_connect("/nowhere") as ws:
            ws.receive_json()
