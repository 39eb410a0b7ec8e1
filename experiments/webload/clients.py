"""The simulated players (`Player`: whole games against CPU seats, a table created over HTTP,
every move over its WebSocket; `load` runs a crowd of them) and the hostile clients beside
them (`SlowSockets` never read; `FreshConnections` open a new connection per request)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter


def post(url: str, body: dict, address: str | None = None) -> dict:
    headers = {"Content-Type": "application/json"}
    if address:
        headers["X-Forwarded-For"] = address
    req = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


async def post_async(url: str, body: dict, address: str | None = None, timeout: float = 30) -> dict:
    """`post` on the event loop, with no thread (issue 60, fifth round: a worker thread's turn
    at the interpreter's lock held the players' loop for up to its 5 ms switch interval,
    which the round trips timed then showed as the server's). HTTP/1.1, one request a
    connection; a status other than 2xx raises OSError, as `post`'s does."""
    parts = urllib.parse.urlsplit(url)
    data = json.dumps(body).encode()
    head = [
        f"POST {parts.path or '/'} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Content-Type: application/json",
        f"Content-Length: {len(data)}",
        "Connection: close",
        *([f"X-Forwarded-For: {address}"] if address else []),
    ]

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            writer.write("\r\n".join(head).encode() + b"\r\n\r\n" + data)
            return await reader.read()  # to the end: the server closes after its answer
        finally:
            writer.close()

    try:
        raw = await asyncio.wait_for(exchange(), timeout)
    except asyncio.TimeoutError as err:
        raise OSError(f"no answer to POST {parts.path} in {timeout} s") from err
    status_line, _, rest = raw.partition(b"\r\n")
    _headers, _, payload = rest.partition(b"\r\n\r\n")
    fields = status_line.split()
    if len(fields) < 2 or not fields[1].isdigit() or not 200 <= int(fields[1]) < 300:
        raise OSError(f"POST {parts.path}: {status_line.decode(errors='replace')}")
    return json.loads(payload)


def address_of(index: int) -> str:
    return f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"


def stuck_socket(port: int, code: str, address: str) -> socket.socket:
    """A WebSocket to table ``code`` that will never read (a 4 KiB receive buffer)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws/{code} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"X-Forwarded-For: {address}\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)  # the handshake's answer, and not one byte more
    sock.setblocking(False)
    return sock


def masked_text_frame(payload: bytes) -> bytes:
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x81, 0x80 | len(payload)]) + mask + body


class SlowSockets:
    """``n`` never-reading sockets on each table the watched players sit at: they ask for
    the state every ``every`` seconds and never read. Counts the sockets the server
    closed (a send fails once it has) and those still open at the end."""

    def __init__(self, port: int, n: int, players: list, ask: float = 0.0) -> None:
        self.port, self.n, self.players, self.ask = port, n, players, ask
        self.every = 1 / ask if ask else 0.1
        self.opened = self.closed_by_server = self.refused = 0
        self.stop = False

    def run(self) -> None:
        attached: dict[int, tuple[str, list[socket.socket]]] = {}
        frame = masked_text_frame(b'{"type": "state"}')
        index = 0
        while not self.stop:
            for p in self.players:
                code = p.current
                if code is None or attached.get(p.index, (None,))[0] == code:
                    continue
                for s in attached.pop(p.index, (None, []))[1]:
                    s.close()
                socks = []
                for _ in range(self.n):
                    index += 1
                    try:
                        socks.append(
                            stuck_socket(
                                self.port, code, f"172.16.{index // 256 % 256}.{index % 256}"
                            )
                        )
                        self.opened += 1
                    except OSError:
                        self.refused += 1
                attached[p.index] = (code, socks)
            for _code, socks in attached.values() if self.ask else ():
                for s in list(socks):
                    try:
                        s.send(frame)
                    except BlockingIOError:
                        pass  # our own send buffer is full: the server stopped reading us
                    except OSError:
                        self.closed_by_server += 1
                        socks.remove(s)
            time.sleep(self.every)
        for _code, socks in attached.values():
            for s in socks:
                s.close()


class FreshConnections:
    """``n`` threads from one address, each request on a new connection, as fast as they
    can: code guesses, table creations and config reads. Counts the answers by status."""

    def __init__(self, url: str, n: int) -> None:
        self.url, self.n = url, n
        self.statuses: Counter = Counter()
        self.stop = False

    def worker(self, i: int) -> None:
        rng = random.Random(i)
        alphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
        headers = {"X-Forwarded-For": "10.66.0.1", "Connection": "close"}
        k = 0
        while not self.stop:
            k += 1
            if k % 3 == 0:
                code = "".join(rng.choice(alphabet) for _ in range(8))
                req = urllib.request.Request(f"{self.url}/api/tables/{code}", headers=headers)
            elif k % 3 == 1:
                body = json.dumps({"seats": ["human", "easy"]}).encode()
                req = urllib.request.Request(
                    f"{self.url}/api/tables",
                    body,
                    {**headers, "Content-Type": "application/json"},
                )
            else:
                req = urllib.request.Request(f"{self.url}/api/config", headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    r.read()
                    self.statuses[r.status] += 1
            except urllib.error.HTTPError as err:
                self.statuses[err.code] += 1
            except OSError:
                self.statuses["error"] += 1

    def start(self) -> list[threading.Thread]:
        threads = [
            threading.Thread(target=self.worker, args=(i,), daemon=True) for i in range(self.n)
        ]
        for t in threads:
            t.start()
        return threads


def move_kind(state: dict, action: dict) -> str:
    """A player's move as the report counts it: ``tap`` (a turn's first roll, the dice in
    the cup), ``reroll`` or ``score`` (the turn's end; the CPU seats' turns run in its
    answer). A turn is one tap, its re-rolls and one score, so the CPU per turn compares
    servers whose turns have different moves (before issue 58 a turn had no tap)."""
    if state.get("cup"):
        return "tap"
    return "reroll" if action.get("type") == "roll" else "score"


class Player:
    """One simulated player: plays games until told to stop, recording round-trips."""

    def __init__(
        self,
        index: int,
        url: str,
        opponents: list[str],
        think: float,
        delay: float = 0.0,
        record_after: float = 0.0,
    ) -> None:
        self.delay, self.record_after = delay, record_after
        self.index, self.address = index, address_of(index)
        self.current: str | None = None  # the table being played
        self.rng = random.Random(index)
        self.url, self.opponents, self.think = url, opponents, think
        self.latencies: list[float] = []
        self.games = self.errors = 0
        self.error_codes: Counter = Counter()  # each error's code ("create": a table not made)
        self.tables: dict[str, tuple[int, str, list[int], bool]] = {}  # code -> state
        self.stop = False
        self.watch_url: str | None = None  # another server: watch my table there
        self.sent: dict[tuple[str, int], float] = {}  # (code, seq after the move) -> send time
        self.seen: dict[tuple[str, int], float] = {}  # (code, seq) -> arrival at the watcher
        self.watch_errors = 0
        self.bytes_in = 0  # bytes of the server's messages received while metered
        self.acks: list[float] = []  # when each recorded action's answer arrived
        self.ack_kinds: list[str] = []  # and its kind (`move_kind`), in the same order
        self.record_until = float("inf")  # the end of the metered window
        self.bytes_by_type: Counter = Counter()

    def received(self, raw) -> dict:
        msg = json.loads(raw)
        if self.record_after <= time.perf_counter() <= self.record_until:
            size = len(raw.encode() if isinstance(raw, str) else raw)
            self.bytes_in += size
            self.bytes_by_type[msg.get("type")] += size
        return msg

    async def watch(self, code: str) -> None:
        """A second socket on my table, at another server: when does each state arrive?"""
        import websockets

        url = self.watch_url.replace("http", "ws") + f"/ws/{code}"
        headers = {"X-Forwarded-For": address_of(100_000 + self.index)}
        try:
            async with websockets.connect(url, max_size=2**22, additional_headers=headers) as ws:
                async for raw in ws:
                    msg = self.received(raw)
                    if msg.get("type") == "state":
                        self.seen.setdefault((code, msg["state"]["seq"]), time.perf_counter())
        except (OSError, websockets.ConnectionClosed):
            self.watch_errors += 1

    async def create(self) -> tuple[str, str]:
        body = {"seats": ["human", *self.opponents], "name": "bench"}
        reply = await post_async(f"{self.url}/api/tables", body, self.address)
        return reply["code"], reply["tokens"]["0"]

    def choose(self, state: dict) -> dict:
        if state.get("cup"):  # a person's turn starts with the dice in the cup: the tap
            return {"type": "roll", "hold": []}
        if state["rolls_left"] > 0 and self.rng.random() < 0.6:
            return {
                "type": "roll",
                "hold": sorted(self.rng.sample(range(5), self.rng.randint(0, 4))),
            }
        options = state["options"]
        return {"type": "score", "box": max(options, key=options.get)}

    async def run(self) -> None:
        import websockets

        ws_url = self.url.replace("http", "ws")
        await asyncio.sleep(self.delay)  # players arrive over the ramp-up
        while not self.stop:
            try:
                code, token = await self.create()
            except OSError:
                self.errors += 1
                self.error_codes["create"] += 1
                return
            headers = {"X-Forwarded-For": self.address}
            async with websockets.connect(
                f"{ws_url}/ws/{code}", max_size=2**22, additional_headers=headers
            ) as ws:
                self.current = code
                watcher = None
                if self.watch_url is not None:
                    watcher = asyncio.create_task(self.watch(code))
                    await asyncio.sleep(0.05)  # let it subscribe before the first move
                state = self.received(await ws.recv())["state"]
                self.tables[code] = (state["version"], token, None)
                msg_id = 0
                while not state["over"] and not self.stop:
                    if self.think:
                        await asyncio.sleep(self.rng.uniform(0, 2 * self.think))
                    msg_id += 1
                    action = self.choose(state)
                    kind = move_kind(state, action)
                    self.tables[code] = (state["version"], token, action)  # in flight
                    t0 = time.perf_counter()
                    await ws.send(
                        json.dumps(
                            {
                                "type": "act",
                                "id": msg_id,
                                "seq": state["seq"],
                                "game": state["game"],
                                "seat": 0,
                                "token": token,
                                "action": action,
                            }
                        )
                    )
                    while True:
                        reply = self.received(await ws.recv())
                        if reply.get("id") == msg_id:
                            break
                    if t0 >= self.record_after:
                        self.latencies.append(time.perf_counter() - t0)
                        self.acks.append(time.perf_counter())
                        self.ack_kinds.append(kind)
                    if reply["type"] != "ack":
                        self.errors += 1
                        self.error_codes[str(reply.get("code"))] += 1
                        self.tables[code] = (state["version"], token, None)
                        continue
                    state = reply["state"]
                    self.tables[code] = (state["version"], token, None)
                    if watcher is not None and t0 >= self.record_after:
                        self.sent[(code, state["seq"])] = t0
                if watcher is not None:
                    await asyncio.sleep(0.3)  # the last push to the watcher
                    watcher.cancel()
                if state["over"]:
                    self.games += 1


async def load(
    url: str,
    players: int,
    seconds: float,
    opponents,
    think: float,
    kill=None,
    ramp: float = 0.0,
    hostile=None,
    urls: list[str] | None = None,
    watchers: int = 0,
    meter=None,
    before=None,
):
    """Run the crowd for ``seconds`` (round-trips are recorded after the ``ramp``-second
    arrival of the players), or until ``kill`` is called half-way. ``hostile(crowd)``
    starts the attackers and returns the function that stops them. ``meter()`` is called
    when the recording starts and when it ends (the server's spending between the two).
    ``before()``, a coroutine, is awaited before the first player arrives."""
    if before is not None:
        await before()
    t0 = time.perf_counter()
    urls = urls or [url]
    crowd = [
        Player(i, urls[i % len(urls)], opponents, think, ramp * i / players, t0 + ramp)
        for i in range(players)
    ]
    for p in crowd[:watchers]:  # the next server (the same one where there is one)
        p.watch_url = urls[(p.index + 1) % len(urls)]
    tasks = [asyncio.create_task(p.run()) for p in crowd]
    stop_hostile = hostile(crowd) if hostile else None
    start = time.perf_counter()
    killed_at = None
    metered = meter is None
    while time.perf_counter() - start < seconds:
        await asyncio.sleep(0.2)
        if not metered and time.perf_counter() >= t0 + ramp:
            await asyncio.to_thread(meter)
            metered = True
        if kill is not None and killed_at is None and time.perf_counter() - start > seconds / 2:
            kill()
            killed_at = time.perf_counter() - start
            break
    if meter is not None:
        await asyncio.to_thread(meter)
        for p in crowd:
            p.record_until = time.perf_counter()
    for p in crowd:
        p.stop = True
    if stop_hostile:
        stop_hostile()
    done, pending = await asyncio.wait(tasks, timeout=30)
    for t in pending:
        t.cancel()
    elapsed = killed_at if killed_at is not None else time.perf_counter() - start
    return crowd, elapsed, [t for t in done if t.exception() is not None]
