"""The run's course and the verdict (issue 60): the machine and Python that ran it, server
0's memory and the servers' CPU time per move at every ``--every`` seconds of the load (the
curve of a long run: what grows with the games stored), each CPU's load over the same
intervals from ``/proc/stat`` (the other cores' work beside the server's), idle watcher
sockets (``--sockets``), and a one-line verdict against the targets."""

from __future__ import annotations

import asyncio
import os
import platform
import threading
import time

from webload.clients import address_of, post
from webload.measures import cpu_ticks, rss_mb

TARGETS = {"p99_ms": 50.0, "p999_ms": 150.0, "errors": 0, "rss_growth": 0.10}


def machine() -> dict:
    """The Python, the CPU model and the cores this ran on."""
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as lines:
            for line in lines:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu_model": model or platform.processor() or None,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
    }


def cpu_times() -> dict[int, tuple[int, int]]:
    """Per CPU, ``(busy, total)`` jiffies since boot (``/proc/stat``; empty elsewhere)."""
    out = {}
    for cpu, ticks in cpu_ticks().items():
        idle = ticks[3] + ticks[4]  # idle, iowait
        out[cpu] = (sum(ticks) - idle, sum(ticks))
    return out


def busy_share(before: dict, after: dict) -> dict[int, float]:
    """Each CPU's busy share between two `cpu_times` readings."""
    out = {}
    for cpu, (busy, total) in after.items():
        b0, t0 = before.get(cpu, (busy, total))
        out[cpu] = round((busy - b0) / (total - t0), 3) if total > t0 else 0.0
    return out


class Curve:
    """Samples the servers every ``every`` seconds while the load runs (a thread): server
    0's RSS, the servers' CPU seconds, the moves acknowledged so far, every CPU's jiffies;
    `rows` gives the intervals (CPU per move and moves a second each)."""

    def __init__(self, servers: list, every: float) -> None:
        self.servers, self.every = servers, every
        self.samples: list[dict] = []
        self.crowd: list = []
        self._stop = threading.Event()
        self.thread: threading.Thread | None = None

    def sample(self) -> None:
        self.samples.append(
            {
                "t": time.perf_counter(),
                "rss_mb": rss_mb(self.servers[0].proc.pid)["now"],
                "cpu_s": sum(srv.cpu_seconds() for srv in self.servers),
                "moves": sum(len(p.acks) for p in self.crowd),
                "cpus": cpu_times(),
            }
        )

    def __call__(self, crowd: list):
        """Start sampling (called by the load with its crowd); returns the stop."""
        self.crowd = crowd
        self.sample()

        def run():
            while not self._stop.wait(self.every):
                self.sample()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

        def stop():
            self._stop.set()
            self.thread.join(30)
            self.sample()

        return stop

    def rows(self) -> list[dict]:
        """One row per interval: its end (s from the start), server 0's RSS then, the
        servers' CPU ms per acknowledged move and the moves a second in it, each CPU's busy
        share."""
        out, first = [], self.samples[0]["t"] if self.samples else 0.0
        for a, b in zip(self.samples, self.samples[1:], strict=False):
            moves = b["moves"] - a["moves"]
            out.append(
                {
                    "at_s": round(b["t"] - first, 1),
                    "rss_mb": b["rss_mb"],
                    "cpu_ms_per_move": round(1000 * (b["cpu_s"] - a["cpu_s"]) / moves, 3)
                    if moves
                    else None,
                    "moves_per_s": round(moves / max(b["t"] - a["t"], 1e-9), 1),
                    "cpu_busy": busy_share(a["cpus"], b["cpus"]),
                }
            )
        return out


def other_cores_busy(rows: list[dict], server_cpus) -> dict:
    """The mean busy share over the run of each CPU the servers were not pinned to (every
    CPU, when they were not pinned)."""
    cpus: dict[int, list[float]] = {}
    for row in rows:
        for cpu, share in row["cpu_busy"].items():
            if not server_cpus or cpu not in server_cpus:
                cpus.setdefault(cpu, []).append(share)
    return {cpu: round(sum(v) / len(v), 3) for cpu, v in sorted(cpus.items())}


def rss_growth(rows: list[dict], after_s: float = 60.0) -> float | None:
    """Server 0's RSS growth from the first sample at or after ``after_s`` (the first
    minute: start-up and warm-up) to the last; from the first sample if the run was
    shorter."""
    rss = [(r["at_s"], r["rss_mb"]) for r in rows if r["rss_mb"]]
    if len(rss) < 2:
        return None
    base = next((m for t, m in rss if t >= after_s and (t, m) != rss[-1]), rss[0][1])
    return round(rss[-1][1] / base - 1, 4)


def verdict(result: dict, growth: float | None) -> str:
    """One line: PASS or FAIL against `TARGETS`, with the numbers."""

    def within(key: str) -> bool:  # None: too few moves to say (the run was too short)
        return result.get(key) is not None and result[key] <= TARGETS[key]

    checks = [
        (f"p99 {result.get('p99_ms')} ms <= {TARGETS['p99_ms']:g}", within("p99_ms")),
        (f"p99.9 {result.get('p999_ms')} ms <= {TARGETS['p999_ms']:g}", within("p999_ms")),
        (f"errors {result.get('errors')} == 0", result.get("errors") == 0),
        (f"RSS growth after the first minute {growth} < {TARGETS['rss_growth']:g}",
         growth is not None and growth < TARGETS["rss_growth"]),
    ]  # fmt: skip
    failed = [text for text, ok in checks if not ok]
    head = "PASS" if not failed else "FAIL"
    said = [text + (" (no)" if text in failed else "") for text, _ in checks]
    return f"verdict: {head}: " + "; ".join(said)


class IdleSockets:
    """``count`` watcher sockets that stay open and idle (``--sockets``: the 5,000-connected
    run), each from its own address, 30 to a table made for them: what a server holds for
    people who watch and do not play. ``opened`` and ``refused`` count them; with the
    server's ``pid``, ``rss_mb`` is its memory just before the first opens and once the last
    has opened (with its tables made before either), so ``kb_per_socket`` is what an idle
    watcher costs (issue 60: under 20 KB). They open before the players arrive (`opening`,
    awaited by the load): the players' warm-up is not charged to them, and their 3,000
    handshakes in two seconds fall outside the players' window (a flash crowd is another
    test: ``--fresh-connections``)."""

    PER_TABLE = 30

    def __init__(self, url: str, count: int, pid: int | None = None) -> None:
        self.url, self.count, self.pid = url, count, pid
        self.opened = self.refused = 0
        self.tasks: list[asyncio.Task] = []
        self.rss: list[float] = []  # MiB: before the first opens, once the last has

    def report(self) -> dict:
        out = {"asked": self.count, "opened": self.opened, "refused": self.refused}
        if len(self.rss) == 2 and self.opened:
            out["rss_mb"] = self.rss
            out["kb_per_socket"] = round((self.rss[1] - self.rss[0]) * 1024 / self.opened, 1)
        return out

    def _rss(self) -> None:
        if self.pid is not None:
            self.rss.append(rss_mb(self.pid)["now"])

    async def hold(self, code: str, index: int, ready: asyncio.Event) -> None:
        import websockets

        headers = {"X-Forwarded-For": address_of(200_000 + index)}
        url = self.url.replace("http", "ws") + f"/ws/{code}"
        try:
            async with websockets.connect(url, max_size=2**22, additional_headers=headers) as ws:
                self.opened += 1
                self._settled(ready)
                async for _ in ws:
                    pass
        except (OSError, asyncio.TimeoutError, websockets.WebSocketException):
            self.refused += 1
            self._settled(ready)

    def _settled(self, ready: asyncio.Event) -> None:
        if self.opened + self.refused == self.count:
            ready.set()

    async def opening(self) -> None:
        """Make the sockets' tables and open the sockets (on the load's event loop; they
        stay open until the stop that `__call__` returns)."""
        tables = -(-self.count // self.PER_TABLE)
        codes = []
        for i in range(tables):
            body = {"seats": ["human", "easy"], "name": "watched"}
            where = address_of(300_000 + i)
            made = await asyncio.to_thread(post, f"{self.url}/api/tables", body, where)
            codes.append(made["code"])
        ready = asyncio.Event()
        self._rss()
        for i in range(self.count):
            hold = self.hold(codes[i // self.PER_TABLE], i, ready)
            self.tasks.append(asyncio.create_task(hold))
            if i % 100 == 99:
                await asyncio.sleep(0.05)
        await ready.wait()
        await asyncio.sleep(1.0)  # the last hellos answered
        self._rss()

    def __call__(self, crowd: list):
        """The sockets' stop (they were opened before the crowd: `opening`)."""

        def stop():
            for task in self.tasks:
                task.cancel()

        return stop
