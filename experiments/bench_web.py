"""Load benchmark of ``yahtzee serve`` over the real protocol on loopback (issue 11).

N simulated players, each playing whole games against CPU seats: a table is created over
HTTP, then every move goes over the table's WebSocket (``act`` -> ``ack``). Reports games
per second and the p50/p99 round-trip of an action (send -> ack, which the server sends
only after the action and the CPU moves after it are committed to SQLite).

Hostile cases beside the honest players (issue 17):

- ``--slow-sockets N``: N clients (each from its own address) open a socket on each of the
  first ``--slow-tables`` players' tables and never read a byte (their receive buffer is
  4 KiB); with ``--slow-ask R`` they also ask for the table's full state R times a second
  (and still never read), so the server's buffers to them fill within seconds, not hours.
  The server closes them (4008) once their send queue is full; the honest players' round
  trips on the attacked tables are reported apart.
- ``--fresh-connections``: ``--attackers`` clients from one address send requests as fast as
  they can, each on a new connection (code guesses, table creations, config reads), which
  a per-connection limit would not stop; the limits by address refuse them (429), and the
  report counts their answers by status.

Every simulated client has its own address (the server runs with ``--trust-proxy`` and the
clients send ``X-Forwarded-For``), as real players behind their own connections would.

Then the crash check: the server is killed with SIGKILL in the middle of the load and
restarted on the same database; every table must be at the last action its player saw
acknowledged (or one past it, if that player had an action in flight when the server died:
committed, never acknowledged), never behind.

Several servers on one PostgreSQL database (issue 20): ``--db postgresql://USER@HOST:PORT/DB``
(or ``--db local-postgres``: a private PostgreSQL cluster in a temporary folder, Debian's
initdb and pg_ctl) and ``--servers N``: N ``yahtzee serve`` processes, player i on server
i mod N. With N > 1, ``--watchers W`` of the players have a second socket on their table at
the next server, and the report gives the fan-out: from a move's send on one server to its
state arriving at the other server's socket. The crash check then kills server 0 and reads
every table from server 1, without a restart.

The server alone (issue 33): ``--server-cpus 0 --client-cpus 1`` pins the servers (and a
``--db local-postgres`` cluster) and this load generator to separate CPUs; the report's
``server`` part gives, over the measured window, the servers' CPU time per acknowledged move
(by the kernel's accounting of the server processes, ``/proc/PID/stat``, and by the
server's own ``getrusage`` through ``GET /api/bench-stats``, which ``yahtzee serve
--bench-stats`` turns on), moves a second, the database round trips, statements and
transactions per move (counted by the storage layer, `storage.Trips`), and the bytes of the
server's messages per move (as text, and on the wire: the loopback interface's bytes, both
ways, frames and compression included); p50/p99/p99.9 of the round trips. ``--profile FILE`` samples
server 0 with py-spy (the thread holding the GIL; with ``--profile-threads``, every thread
on a CPU, without stopping the server) over the window and reports its top frames;
``--perf FILE`` samples it with Linux perf (CPU time of every thread, the kernel and the C
libraries included) and reports its top objects and symbols, each also in milliseconds per
move; ``server.server0_threads`` splits server 0's CPU time per move between its event loop
and its other threads. ``server.beside_the_slow_moves`` sets the window's slowest moves
(at or above its p99) beside what stalled them: server 0's collector pauses by generation,
SQLite's checkpoint holding the storage's lock, and this load generator's own collector
pauses; ``server.client_cpu_share`` is this load generator's share of its CPU (a busy one's
own queue is in the round trips it measures); ``server.server0_rss_mb`` is server 0's
memory at the window's start and end and its peak (``/proc/PID/status``). The load
generator's own collector is frozen and off during the load unless ``--client-gc``: its
pauses would stop every simulated player at once (real players are on machines of their
own) and be counted as the server's.
``--no-crash`` skips the ``kill -9`` check.

    python experiments/bench_web.py --players 1000 --think 1.0 --ramp 5 \
        --server-cpus 0 --client-cpus 1
    nice -n 15 python experiments/bench_web.py --players 200 --seconds 20
    nice -n 15 python experiments/bench_web.py --players 200 --db local-postgres --servers 2
    nice -n 15 python experiments/bench_web.py --players 200 --seconds 20 --slow-sockets 10
    nice -n 15 python experiments/bench_web.py --players 200 --seconds 20 --fresh-connections

Everything runs on 127.0.0.1 with a temporary database; it stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import gc
import json
import os
import random
import resource
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import numpy as np
from rss_web import rss_mib  # this folder's: the scripts run from it

from yahtzee_env.web.door.local_server import LocalServer

try:  # measures this load generator's own collector; older versions of the package lack it
    from yahtzee_env.web.door import memory
except ImportError:  # (this script measures the server of an earlier commit too)
    memory = None

LOCAL_POSTGRES = "local-postgres"


def post(url: str, body: dict, address: str | None = None) -> dict:
    headers = {"Content-Type": "application/json"}
    if address:
        headers["X-Forwarded-For"] = address
    req = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


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
        self.tables: dict[str, tuple[int, str, list[int], bool]] = {}  # code -> state
        self.stop = False
        self.watch_url: str | None = None  # another server: watch my table there
        self.sent: dict[tuple[str, int], float] = {}  # (code, seq after the move) -> send time
        self.seen: dict[tuple[str, int], float] = {}  # (code, seq) -> arrival at the watcher
        self.watch_errors = 0
        self.bytes_in = 0  # bytes of the server's messages received while metered
        self.acks: list[float] = []  # when each recorded action's answer arrived
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
        reply = await asyncio.to_thread(post, f"{self.url}/api/tables", body, self.address)
        return reply["code"], reply["tokens"]["0"]

    def choose(self, state: dict) -> dict:
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
                    if reply["type"] != "ack":
                        self.errors += 1
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
):
    """Run the crowd for ``seconds`` (round-trips are recorded after the ``ramp``-second
    arrival of the players), or until ``kill`` is called half-way. ``hostile(crowd)``
    starts the attackers and returns the function that stops them. ``meter()`` is called
    when the recording starts and when it ends (the server's spending between the two)."""
    t0 = time.perf_counter()
    urls = urls or [url]
    crowd = [
        Player(i, urls[i % len(urls)], opponents, think, ramp * i / players, t0 + ramp)
        for i in range(players)
    ]
    if len(urls) > 1:
        for p in crowd[:watchers]:
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


def cpu_list(text: str) -> set[int]:
    """``0`` or ``0,1`` or ``0-3``: a set of CPU numbers."""
    cpus: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def loopback_bytes() -> int | None:
    """Bytes sent over the loopback interface so far (``/proc/net/dev``; the whole machine's:
    the server's messages, the players', and the database's where it is on loopback)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/net/dev").read_text().splitlines():
            name, _, counters = line.partition(":")
            if name.strip() == "lo":
                return int(counters.split()[8])  # transmit bytes
    return None


def rss_mb(pid: int) -> dict:
    """Process ``pid``'s memory now (``VmRSS``) and at its peak (``VmHWM``), in MiB."""
    return {"now": rss_mib(pid), "peak": rss_mib(pid, "VmHWM")}


def user_sys(pid: int) -> tuple[float, float]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def process_cpu(pid: int, children: bool = False) -> float:
    """CPU seconds (user + system) of process ``pid`` (and, with ``children``, of its
    children: PostgreSQL's backends under the postmaster) by the kernel's accounting."""
    pids = [pid]
    if children:
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError):
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    pids.append(int(stat.parent.name))
    total = 0.0
    for p in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) of each thread of process ``pid`` (``/proc/PID/task``;
    the thread whose id is the pid is the main thread: the server's event loop)."""
    out: dict[int, float] = {}
    for stat in Path(f"/proc/{pid}/task").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            out[int(stat.parent.name)] = (int(fields[11]) + int(fields[12])) / os.sysconf(
                "SC_CLK_TCK"
            )
    return out


def threads_per_move(before: dict, after: dict, process_s: float, per: int) -> dict:
    """Server 0's CPU time per move by thread: the event loop (the main thread) and the
    others (worker threads, the storage's checkpointer, PostgreSQL's listener): the
    process's time less the loop's (a worker thread that ended in the window is gone from
    ``/proc/PID/task``, its time is not), and the busiest of those still there."""
    spent = {tid: after["cpu"].get(tid, 0.0) - before["cpu"].get(tid, 0.0) for tid in after["cpu"]}
    loop = spent.pop(before["pid"], 0.0)
    others = sorted((v for v in spent.values() if v > 0), reverse=True)
    return {
        "event_loop_ms": round(loop * 1000 / per, 3),
        "other_threads_ms": round((process_s - loop) * 1000 / per, 3),
        "other_threads_busiest_ms": [round(v * 1000 / per, 3) for v in others[:8]],
    }


def bench_stats(url: str, since: float | None = None) -> dict:
    """The server's own account of what it spent (``yahtzee serve --bench-stats``); with
    ``since`` (the server's clock, from an earlier account), its longest collector pauses
    after it."""
    query = "" if since is None else f"?since={since!r}"
    req = urllib.request.Request(
        f"{url}/api/bench-stats{query}", headers={"X-Forwarded-For": "10.99.0.1"}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def window_start(stats: dict) -> float | None:
    """The server's clock at an earlier account (`bench_stats`), where it tells it."""
    return stats.get("gc", {}).get("now")


def percentiles(values_ms) -> dict:
    if not len(values_ms):
        return {"p50_ms": None, "p99_ms": None, "p999_ms": None}
    p50, p99, p999 = np.percentile(values_ms, [50, 99, 99.9])
    return {
        "p50_ms": round(float(p50), 2),
        "p99_ms": round(float(p99), 2),
        "p999_ms": round(float(p999), 2),
    }


def beside_the_slow_moves(crowd: list, t0: float, t1: float, stalls: dict) -> dict:
    """What the slowest moves of the window (those at or above its p99) had beside them:
    for each kind of stall (``name -> [(end, seconds), ...]`` on this machine's monotonic
    clock, which the servers' `time.monotonic` and this process's `time.perf_counter`
    share), how many stalls of at least 5 ms came in the window, and the share of the slow
    moves and of all moves whose round trip overlapped one (``during``) or began within
    250 ms after one ended (``after``: the queue a stall leaves behind it)."""
    ends = np.array([at for p in crowd for at in p.acks], dtype=float)
    lat = np.array([x for p in crowd for x in p.latencies], dtype=float)
    keep = (ends >= t0) & (ends <= t1)
    ends, lat = ends[keep], lat[keep]
    if not lat.size:
        return {}
    starts = ends - lat
    slow = lat >= np.percentile(lat, 99)
    out = {"slow_moves": int(slow.sum()), "slow_from_ms": round(float(lat[slow].min()) * 1000, 1)}
    anything = np.zeros(lat.size, dtype=bool)
    for name, spans in stalls.items():
        spans = [(end, spent) for end, spent in spans if spent >= 0.005 and t0 <= end <= t1]
        during = np.zeros(lat.size, dtype=bool)
        after = np.zeros(lat.size, dtype=bool)
        for end, spent in spans:
            during |= (starts <= end) & (ends >= end - spent)
            after |= (starts > end) & (starts <= end + 0.25)
        anything |= during | after
        out[name] = {
            "stalls": len(spans),
            "total_ms": round(1000 * sum(spent for _, spent in spans), 1),
            "longest_ms": round(1000 * max((spent for _, spent in spans), default=0.0), 1),
            "slow_during": round(float(during[slow].mean()), 3),
            "slow_after": round(float((after & ~during)[slow].mean()), 3),
            "all_during": round(float(during.mean()), 3),
            "all_after": round(float((after & ~during).mean()), 3),
        }
    out["slow_beside_none"] = round(float((~anything)[slow].mean()), 3)
    return out


def spending(meters: list, crowd: list, pg_cpu: bool) -> dict:
    """The servers' spending per acknowledged move in the metered window."""
    (t0, before), (t1, after) = meters[0], meters[-1]
    moves = sum(1 for p in crowd for at in p.acks if t0 <= at <= t1)
    per = max(moves, 1)
    out = {
        "metered_s": round(t1 - t0, 2),
        "moves": moves,
        "moves_per_s": round(moves / max(t1 - t0, 1e-9), 1),
        "server_cpu_s": round(sum(after["cpu_s"]) - sum(before["cpu_s"]), 3),
        "bytes_per_move": round(sum(p.bytes_in for p in crowd) / per, 1),
    }
    by_type = sum((p.bytes_by_type for p in crowd), Counter())
    out["bytes_per_move_by_type"] = {k: round(v / per, 1) for k, v in by_type.items()}
    if before.get("loopback_bytes") is not None and after.get("loopback_bytes") is not None:
        # on the wire, both ways, frames and compression included (the machine's loopback)
        wire = after["loopback_bytes"] - before["loopback_bytes"]
        out["loopback_bytes_per_move"] = round(wire / per, 1)
    out["server_cpu_ms_per_move"] = round(out["server_cpu_s"] * 1000 / per, 3)
    (u0, s0), (u1, s1) = before["user_sys_s"], after["user_sys_s"]
    out["server0_user_sys_ms_per_move"] = [
        round((u1 - u0) * 1000 / per, 3),
        round((s1 - s0) * 1000 / per, 3),
    ]
    self_cpu = sum(a["cpu_s"] for a in after["stats"]) - sum(b["cpu_s"] for b in before["stats"])
    out["server_self_cpu_ms_per_move"] = round(self_cpu * 1000 / per, 3)
    db = {k: 0 for k in before["stats"][0]["db"]}
    for a, b in zip(after["stats"], before["stats"], strict=True):
        for k in db:
            db[k] += a["db"][k] - b["db"][k]
    out["db_per_move"] = {k: round(v / per, 2) for k, v in db.items()}
    if "moves" in before["stats"][0]:  # where the server ran the changes (on its loop or not)
        runs = {
            k: sum(
                a["moves"][k] - b["moves"][k]
                for a, b in zip(after["stats"], before["stats"], strict=True)
            )
            for k in ("inline", "threaded", "busy_db", "inline_s")
        }
        if "gc" in before["stats"][0]:  # the collector's pauses of server 0 in the window
            g0, g1 = before["stats"][0]["gc"], after["stats"][0]["gc"]
            out["gc_pauses"] = {
                "count": [b - a for a, b in zip(g0["count"], g1["count"], strict=True)],
                "ms_per_move": round(1000 * (sum(g1["total_s"]) - sum(g0["total_s"])) / per, 3),
                "max_ms_ever": [round(1000 * x, 1) for x in g1["max_s"]],
                "max_ms": [round(1000 * x, 1) for x in g1.get("max_s_since", g1["max_s"])],
            }
            if "cpu_s" in g0:  # the collecting thread's CPU time: the collector's own work
                out["gc_pauses"]["cpu_ms_per_move"] = round(
                    1000 * (sum(g1["cpu_s"]) - sum(g0["cpu_s"])) / per, 3
                )
            stalls = {}
            if "pauses_since" in g1:
                for gen, name in enumerate(("gc_young", "gc_middle", "gc_full")):
                    stalls[name] = [(e, w) for e, g, w, _c in g1["pauses_since"] if g == gen]
            holds = after["stats"][0].get("checkpoint_holds_since")
            if holds is not None:
                stalls["wal_checkpoint_lock"] = [tuple(h) for h in holds]
            if "client_gc" in after:  # this load generator's own pauses
                stalls["client_gc"] = [(e, w) for e, _g, w, _c in after["client_gc"]]
            if stalls:
                out["beside_the_slow_moves"] = beside_the_slow_moves(crowd, t0, t1, stalls)
        out["changes"] = {
            "on_loop": runs["inline"],
            "in_threads": runs["threaded"],
            "in_threads_db_busy": runs["busy_db"],
            "on_loop_ms_mean": round(1000 * runs["inline_s"] / max(runs["inline"], 1), 3),
            "on_loop_ms_max": round(1000 * after["stats"][0]["moves"]["inline_max_s"], 2),
        }
    if "rss_mb" in before:  # server 0's memory at the window's start and end, and its peak
        out["server0_rss_mb"] = {
            "start": before["rss_mb"].get("now"),
            "end": after["rss_mb"].get("now"),
            "peak": after["rss_mb"].get("peak"),
        }
    if "threads" in before:
        out["server0_threads"] = threads_per_move(
            before["threads"], after["threads"], (u1 - u0) + (s1 - s0), per
        )
    if "client_cpu_s" in before:  # this load generator's share of its CPU: a busy one's
        # own queue is in the round trips it measures
        out["client_cpu_share"] = round(
            (after["client_cpu_s"] - before["client_cpu_s"]) / max(t1 - t0, 1e-9), 3
        )
    if pg_cpu:
        out["postgres_cpu_ms_per_move"] = round(
            (after["pg_cpu_s"] - before["pg_cpu_s"]) * 1000 / per, 3
        )
    return out


def profile_top(path: Path, top: int = 15, cpu_ms_per_move: float | None = None) -> dict:
    """The top frames of a py-spy ``--format raw`` profile (collapsed stacks): by samples
    on the stack (inclusive) and at its top (self), as shares of all samples. A profile
    of every thread (``--profile-threads``) has the thread as its first frame: the
    samples are also counted by thread, and with ``cpu_ms_per_move`` (the server's CPU
    time per move, by the kernel) each share is also given as milliseconds per move."""
    inclusive: Counter = Counter()
    leaf: Counter = Counter()
    threads: Counter = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        parts = stack.split(";")
        if parts[0].startswith("thread ("):
            threads[parts.pop(0)] += n
        if not parts:
            continue
        frames = [
            f.split(" (")[0] + " (" + f.split(" (")[-1].split(":")[0].rsplit("/", 1)[-1] + ")"
            for f in parts
        ]
        leaf[frames[-1]] += n
        for f in set(frames):
            inclusive[f] += n

    def share(c: Counter) -> list:
        rows = []
        for f, n in c.most_common(top):
            row = [f, round(100 * n / max(total, 1), 1)]
            if cpu_ms_per_move is not None:
                row.append(round(cpu_ms_per_move * n / max(total, 1), 4))
            rows.append(row)
        return rows

    out = {"samples": total, "self_pct": share(leaf), "inclusive_pct": share(inclusive)}
    if threads:
        out["threads_pct"] = share(threads)
    return out


def perf_top(path: Path, cpu_ms_per_move: float, top: int = 25) -> dict:
    """The top shared objects and symbols of a ``perf record`` file by their samples (CPU
    time: each sample is a thread on a CPU), as shares and as milliseconds per move."""
    import subprocess

    def table(sort: str) -> list:
        text = subprocess.run(
            ["perf", "report", "-i", str(path), "--stdio", "--no-children", "--sort", sort,
             "--percent-limit", "0.3"],
            capture_output=True, text=True, check=False,
        ).stdout  # fmt: skip
        rows = []
        for line in text.splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[0].endswith("%") and not line.startswith("#"):
                pct = float(parts[0].rstrip("%"))
                rows.append(
                    [" ".join(parts[1].split()), pct, round(cpu_ms_per_move * pct / 100, 4)]
                )
        return rows[:top]

    return {"by_object": table("dso"), "by_symbol": table("dso,sym")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--opponents", default="medium", help="CPU seats, comma-separated")
    parser.add_argument(
        "--think", type=float, default=0.0, help="mean think time between a player's moves (s)"
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=2.0,
        help="players arrive evenly over this many seconds; round-trips are measured after it",
    )
    parser.add_argument(
        "--slow-sockets",
        type=int,
        default=0,
        metavar="N",
        help="N never-reading sockets on each of the first --slow-tables players' tables",
    )
    parser.add_argument("--slow-tables", type=int, default=10)
    parser.add_argument(
        "--slow-ask",
        type=float,
        default=0.0,
        metavar="R",
        help="the slow sockets also ask for the state R times a second (never reading it)",
    )
    parser.add_argument(
        "--fresh-connections",
        action="store_true",
        help="--attackers clients from one address, a new connection per request",
    )
    parser.add_argument("--attackers", type=int, default=4)
    parser.add_argument(
        "--db",
        default=None,
        help="a postgresql:// URL (a database the benchmark may fill), or 'local-postgres' for "
        "a private PostgreSQL cluster in a temporary folder (default: a temporary SQLite file)",
    )
    parser.add_argument(
        "--servers", type=int, default=1, help="yahtzee serve processes on the database"
    )
    parser.add_argument(
        "--watchers",
        type=int,
        default=50,
        help="with --servers above 1: players whose table is also watched from the next server",
    )
    parser.add_argument(
        "--server-cpus",
        type=cpu_list,
        default=None,
        metavar="CPUS",
        help="pin the servers (and a --db local-postgres cluster) to these CPUs (0 or 0,1)",
    )
    parser.add_argument(
        "--client-cpus",
        type=cpu_list,
        default=None,
        metavar="CPUS",
        help="pin this load generator to these CPUs",
    )
    parser.add_argument(
        "--no-crash", action="store_true", help="skip the kill -9 check after the load"
    )
    parser.add_argument(
        "--batch-moves", action="store_true", help="run the servers with --batch-moves"
    )
    parser.add_argument(
        "--serve-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more `yahtzee serve` option for the servers (repeatable), such as "
        "--serve-arg=--ws-deflate or --serve-arg=--moves-in-threads",
    )
    parser.add_argument(
        "--profile",
        default=None,
        metavar="FILE",
        help="sample server 0 with py-spy (pip install py-spy) over the metered window "
        "(collapsed stacks to FILE; "
        "the top frames go in the report)",
    )
    parser.add_argument(
        "--profile-threads",
        action="store_true",
        help="with --profile: sample every thread of server 0 while it runs on a CPU "
        "(py-spy without --gil, idle threads left out: each sample is a thread on a CPU, so "
        "the shares are of CPU time, worker threads included), not only the GIL's holder",
    )
    parser.add_argument(
        "--perf",
        default=None,
        metavar="FILE",
        help="sample server 0 with Linux perf (cpu-clock, every thread, the kernel and the "
        "C code included: sqlite3, uvloop, orjson, numpy) over the metered window; the "
        "top shared objects and symbols by CPU go in the report",
    )
    parser.add_argument(
        "--profile-rate", type=int, default=250, help="py-spy's samples a second per thread"
    )
    parser.add_argument(
        "--client-gc",
        action="store_true",
        help="leave this load generator's own garbage collector on during the load (by "
        "default it is frozen and off then: its pauses, tens of ms for a thousand players in "
        "one process, would stop every simulated player at once and be counted as the "
        "server's round trips)",
    )
    parser.add_argument("--json", default=None, help="write the numbers here")
    args = parser.parse_args()
    if args.servers > 1 and args.db is None:
        parser.error("--servers above 1 needs --db postgresql://... or --db local-postgres")
    opponents = args.opponents.split(",")
    attack: dict = {}

    def hostile(crowd):
        stops = []
        if args.slow_sockets:
            slow = SlowSockets(
                server.port, args.slow_sockets, crowd[: args.slow_tables], args.slow_ask
            )
            thread = threading.Thread(target=slow.run, daemon=True)
            thread.start()
            attack["slow"] = slow

            def stop_slow():
                slow.stop = True
                thread.join(30)

            stops.append(stop_slow)
        if args.fresh_connections:
            fresh = FreshConnections(server.url, args.attackers)
            threads = fresh.start()
            attack["fresh"] = fresh

            def stop_fresh():
                fresh.stop = True
                for t in threads:
                    t.join(30)

            stops.append(stop_fresh)
        return lambda: [stop() for stop in stops]

    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        db: str | Path = Path(tmp) / "bench.sqlite3"
        backend = "sqlite"
        own_cpus = os.sched_getaffinity(0)
        pg = None
        if args.db == LOCAL_POSTGRES:
            from yahtzee_env.web.door.local_postgres import LocalPostgres

            if args.server_cpus:  # the cluster's processes inherit the affinity
                os.sched_setaffinity(0, args.server_cpus)
            pg = stack.enter_context(LocalPostgres())
            os.sched_setaffinity(0, own_cpus)
            db, backend = pg.create_database("bench"), "postgresql (private cluster)"
        elif args.db is not None:
            db, backend = args.db, "postgresql"
        servers = [
            LocalServer(
                db,
                [
                    "--trust-proxy",
                    "--bench-stats",
                    *(["--batch-moves"] if args.batch_moves else []),
                    *args.serve_arg,
                ],
                log=Path(tmp) / f"server{i}.log",
                cpus=args.server_cpus,
            )
            for i in range(args.servers)
        ]
        if args.client_cpus:
            os.sched_setaffinity(0, args.client_cpus)
        postmaster = None
        if pg is not None:
            postmaster = int((pg.dir / "data" / "postmaster.pid").read_text().split()[0])
        meters: list = []
        spy: list = []
        client_gc = memory.GcPauses() if memory else None  # this load generator's own pauses
        if client_gc is not None:
            client_gc.start()
            stack.callback(client_gc.stop)

        def meter():
            if args.profile and not meters:
                import shutil
                import subprocess

                exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
                which = ["--threads", "--nonblocking"] if args.profile_threads else ["--gil"]
                spy.append(
                    subprocess.Popen(
                        [exe, "record", "--pid", str(servers[0].proc.pid), "--format", "raw",
                         "--rate", str(args.profile_rate), *which,
                         "--duration", str(int(args.seconds)), "--output", args.profile],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    )
                )  # fmt: skip
            if args.perf and not meters:
                import subprocess

                spy.append(
                    subprocess.Popen(
                        ["perf", "record", "-g", "-F", str(args.profile_rate), "-e", "cpu-clock",
                         "-p", str(servers[0].proc.pid), "-o", args.perf, "--", "sleep",
                         str(int(args.seconds))],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    )
                )  # fmt: skip
            row = {
                "cpu_s": [srv.cpu_seconds() for srv in servers],
                "user_sys_s": user_sys(servers[0].proc.pid),
                "rss_mb": rss_mb(servers[0].proc.pid),
                "loopback_bytes": loopback_bytes(),
                "stats": [  # a server older than its collector's account has no "gc"
                    bench_stats(srv.url, window_start(meters[0][1]["stats"][i]) if meters else None)
                    for i, srv in enumerate(servers)
                ],
                "threads": {
                    "pid": servers[0].proc.pid,
                    "cpu": thread_cpu(servers[0].proc.pid),
                },
            }
            if postmaster is not None:
                row["pg_cpu_s"] = process_cpu(postmaster, children=True)
            row["client_cpu_s"] = time.process_time()
            if meters and client_gc is not None:
                row["client_gc"] = client_gc.since(meters[0][0])
            meters.append((time.perf_counter(), row))

        for srv in servers:
            stack.callback(srv.kill)
            srv.start()
        server = servers[0]
        urls = [srv.url for srv in servers]
        # ---- phase 1: load
        if not args.client_gc:  # the players are a thousand machines, not one collector
            gc.collect()
            gc.freeze()
            gc.disable()
            stack.callback(gc.enable)
        crowd, elapsed, crashed = asyncio.run(
            load(
                server.url,
                args.players,
                args.ramp + args.seconds,
                opponents,
                args.think,
                None,
                args.ramp,
                hostile if (args.slow_sockets or args.fresh_connections) else None,
                urls,
                args.watchers,
                meter,
            )
        )
        lat = np.array([x for p in crowd for x in p.latencies]) * 1000
        games = sum(p.games for p in crowd)
        errors = sum(p.errors for p in crowd) + len(crashed)
        result = {
            "db": backend,
            "servers": args.servers,
            "players": args.players,
            "seconds": round(elapsed, 2),
            "opponents": opponents,
            "think_s": args.think,
            "ramp_s": args.ramp,
            "actions": int(lat.size),
            "games": games,
            "games_per_s": round(games / elapsed, 2),
            "actions_per_s": round(lat.size / elapsed, 1),
            **percentiles(lat),
            "errors": errors,
            "command": " ".join(sys.argv[1:]),
            "batch_moves": args.batch_moves,
            "serve_args": args.serve_arg,
            "server_cpus": sorted(args.server_cpus) if args.server_cpus else None,
            "client_cpus": sorted(args.client_cpus) if args.client_cpus else None,
            "client_gc": args.client_gc,
            "client_max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "server": spending(meters, crowd, postmaster is not None),
        }
        for proc in spy:
            proc.wait(60)
        if args.perf:
            result["perf"] = perf_top(Path(args.perf), result["server"]["server_cpu_ms_per_move"])
        if args.profile:
            result["profile"] = profile_top(
                Path(args.profile),
                cpu_ms_per_move=result["server"]["server_cpu_ms_per_move"]
                if args.profile_threads and args.servers == 1
                else None,
            )
        if args.servers > 1:
            fan = []
            for p in crowd:  # a move's state, or a newer one (pushes coalesce), at the watcher
                for (code, seq), t in p.sent.items():
                    later = [at for (c, s), at in p.seen.items() if c == code and s >= seq]
                    if later:
                        fan.append(min(later) - t)
            fan_ms = np.array(fan) * 1000
            expected = sum(len(p.sent) for p in crowd)
            result["fanout"] = {
                "watched_players": min(args.watchers, args.players),
                "moves": expected,
                "arrived": int(fan_ms.size),
                **percentiles(fan_ms),
                "max_ms": round(float(fan_ms.max()), 2) if fan_ms.size else None,
                "watch_errors": sum(p.watch_errors for p in crowd),
            }
        if "slow" in attack:
            slow = attack["slow"]
            hit = np.array([x for p in crowd[: args.slow_tables] for x in p.latencies]) * 1000
            result["slow_sockets"] = {
                "per_table": args.slow_sockets,
                "ask_per_s": args.slow_ask,
                "tables": args.slow_tables,
                "opened": slow.opened,
                "refused_at_connect": slow.refused,
                "closed_by_server": slow.closed_by_server,
                "attacked_actions": int(hit.size),
                "attacked_p50_ms": round(float(np.percentile(hit, 50)), 2) if hit.size else None,
                "attacked_p99_ms": round(float(np.percentile(hit, 99)), 2) if hit.size else None,
            }
        if "fresh" in attack:
            statuses = attack["fresh"].statuses
            result["fresh_connections"] = {
                "attackers": args.attackers,
                "requests": sum(statuses.values()),
                "by_status": {str(k): v for k, v in sorted(statuses.items(), key=str)},
            }
        print(json.dumps(result, indent=1), flush=True)
        if args.no_crash:
            if args.json:
                Path(args.json).write_text(json.dumps(result, indent=1))
            return 0
        # ---- phase 2: kill -9 mid-load; restart (one server) or read from the next one
        crowd, _, _ = asyncio.run(
            load(
                server.url,
                args.players,
                max(4.0, args.seconds / 2),
                opponents,
                args.think,
                server.kill,
                urls=urls,
            )
        )
        if len(servers) == 1:
            server.start()
        else:
            server = servers[1]  # the survivor serves every table, the dead one's too
        exact = ahead = behind = 0
        for p in crowd:
            for code, (version, _token, in_flight) in p.tables.items():
                req = urllib.request.Request(
                    f"{server.url}/api/tables/{code}", headers={"X-Forwarded-For": p.address}
                )
                now = json.loads(urllib.request.urlopen(req).read())
                if now["version"] == version:
                    exact += 1
                elif now["version"] > version and in_flight is not None:
                    ahead += 1  # committed, but the ack never reached the player
                else:
                    behind += 1
        for srv in servers:
            srv.kill()
        result["crash"] = {
            "killed": "the server, then restarted"
            if len(servers) == 1
            else f"server 0 of {len(servers)}; tables read from server 1",
            "tables": exact + ahead + behind,
            "at_last_ack": exact,
            "in_flight_committed": ahead,
            "lost_or_wrong": behind,
        }
        print(json.dumps(result["crash"], indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1))
    return 0 if behind == 0 else 1


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.exit(main())
