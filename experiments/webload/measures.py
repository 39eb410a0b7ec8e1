"""What the servers spent over the measured window: CPU (the kernel's accounting of the
server processes, ``/proc/PID/stat``, and the server's own through ``GET /api/bench-stats``),
threads, memory, loopback bytes, the database's round trips per move; the round trips'
percentiles and the slowest moves beside what stalled them. `Meter` reads them all at the
window's edges."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rss_web import rss_mib  # experiments/: the scripts run from it

try:  # measures this load generator's own collector; older versions of the package lack it
    from yahtzee_env.web.door import memory
except ImportError:  # (this script measures the server of an earlier commit too)
    memory = None


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
    kinds = Counter(  # each metered move by its kind (`clients.move_kind`)
        kind for p in crowd for at, kind in zip(p.acks, p.ack_kinds, strict=True) if t0 <= at <= t1
    )
    moves = sum(kinds.values())
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
    out["moves_by_kind"] = dict(kinds)
    if kinds["score"]:  # a turn: its tap, re-rolls and score (the CPU seats' turns in it)
        out["server_cpu_ms_per_turn"] = round(out["server_cpu_s"] * 1000 / kinds["score"], 3)
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
            if "collected" in g0:  # the cyclic garbage each generation found, per move
                found = zip(g0["collected"], g1["collected"], strict=True)
                out["gc_pauses"]["collected_per_move"] = [round((b - a) / per, 3) for a, b in found]
                out["gc_pauses"]["frozen"] = [g0["frozen"], g1["frozen"]]
            stalls = {}
            if "pauses_since" in g1:
                for gen, name in enumerate(("gc_young", "gc_middle", "gc_full")):
                    stalls[name] = [(e, w) for e, g, w, _c in g1["pauses_since"] if g == gen]
            holds = after["stats"][0].get("checkpoint_holds_since")
            if holds is not None:
                stalls["wal_checkpoint_lock"] = [tuple(h) for h in holds]
            if "client_gc" in after:  # this load generator's own pauses
                stalls["client_gc"] = [(e, w) for e, _g, w, _c in after["client_gc"]]
            stalls.update(after.get("stalls", {}))  # its loop running late, the CPUs stolen
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


def cpu_ticks() -> dict[int, list[int]]:
    """Per CPU, its first eight ``/proc/stat`` counters since boot, in jiffies (user, nice,
    system, idle, iowait, irq, softirq, steal); empty where there is no such file."""
    out = {}
    try:
        with open("/proc/stat", encoding="utf-8") as lines:
            for line in lines:
                name, *fields = line.split()
                if name.startswith("cpu") and name != "cpu" and len(fields) >= 8:
                    out[int(name[3:])] = [int(x) for x in fields[:8]]
    except OSError:
        pass
    return out


class Stalls:
    """What may stand beside a slow move that no server reports (issue 60, fifth round): this
    load generator's own event loop running late (``client_loop``: a 2 ms sleep that woke 5 ms
    or more late delays every round trip it would have timed) and the time the machine's
    hypervisor took from the servers' CPUs (``steal``: ``/proc/stat``'s steal jiffies of
    ``cpus``, read every 50 ms; a jiffy is 10 ms, so a span is at least that). Called with
    the crowd (a `beside` hook, in the load's event loop), it starts both and returns their
    stop; `since` gives ``name -> [(end, seconds), ...]`` on `time.perf_counter`'s clock."""

    LATE, EVERY = 0.005, 0.002

    def __init__(self, cpus: set[int] | None) -> None:
        self.cpus = cpus
        self.spans: dict[str, list[tuple[float, float]]] = {"client_loop": [], "steal": []}
        self.stopped = False

    def __call__(self, crowd) -> Callable[[], None]:
        task = asyncio.get_running_loop().create_task(self.loop_lag())
        thread = threading.Thread(target=self.steal, daemon=True)
        thread.start()

        def stop() -> None:
            self.stopped = True
            task.cancel()
            thread.join(1)

        return stop

    async def loop_lag(self) -> None:
        while not self.stopped:
            start = time.perf_counter()
            await asyncio.sleep(self.EVERY)
            now = time.perf_counter()
            late = now - start - self.EVERY
            if late >= self.LATE:
                self.spans["client_loop"].append((now, late))

    def stolen(self) -> int | None:
        """The steal jiffies of ``cpus`` (every CPU where None) so far."""
        ticks = cpu_ticks()
        if not ticks:
            return None
        return sum(t[7] for cpu, t in ticks.items() if self.cpus is None or cpu in self.cpus)

    def steal(self) -> None:
        tick = 1.0 / os.sysconf("SC_CLK_TCK")
        last = self.stolen()
        while not self.stopped and last is not None:
            time.sleep(0.05)
            now = self.stolen()
            if now is None:
                return
            if now > last:
                self.spans["steal"].append((time.perf_counter(), (now - last) * tick))
            last = now

    def since(self, start: float) -> dict[str, list[tuple[float, float]]]:
        return {k: [s for s in list(v) if s[0] >= start] for k, v in self.spans.items()}


class Meter:
    """Reads what the servers have spent, at each edge of the measured window (the load
    calls it): ``rows`` of ``(time.perf_counter(), readings)``. At the first reading it
    starts the profilers asked for (``--profile``: py-spy; ``--perf``: Linux perf) on
    server 0 for the window's length (``procs``, waited for by `finish`)."""

    def __init__(
        self, args, servers: list, postmaster: int | None, client_gc, stalls: Stalls | None = None
    ) -> None:
        self.args, self.servers, self.postmaster = args, servers, postmaster
        self.client_gc, self.stalls = client_gc, stalls
        self.rows: list = []
        self.procs: list = []

    def __call__(self) -> None:
        if not self.rows:
            self.profile()
        servers, rows = self.servers, self.rows
        pid = servers[0].proc.pid
        row = {
            "cpu_s": [srv.cpu_seconds() for srv in servers],
            "user_sys_s": user_sys(pid),
            "rss_mb": rss_mb(pid),
            "loopback_bytes": loopback_bytes(),
            "stats": [  # a server older than its collector's account has no "gc"
                bench_stats(srv.url, window_start(rows[0][1]["stats"][i]) if rows else None)
                for i, srv in enumerate(servers)
            ],
            "threads": {"pid": pid, "cpu": thread_cpu(pid)},
        }
        if self.postmaster is not None:
            row["pg_cpu_s"] = process_cpu(self.postmaster, children=True)
        row["client_cpu_s"] = time.process_time()
        if rows and self.client_gc is not None:
            row["client_gc"] = self.client_gc.since(rows[0][0])
        if rows and self.stalls is not None:
            row["stalls"] = self.stalls.since(rows[0][0])
        rows.append((time.perf_counter(), row))

    def profile(self) -> None:
        args, pid, seconds = self.args, str(self.servers[0].proc.pid), str(int(self.args.seconds))
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        if args.profile:
            exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
            which = ["--threads", "--nonblocking"] if args.profile_threads else ["--gil"]
            self.procs.append(
                subprocess.Popen(
                    [exe, "record", "--pid", pid, "--format", "raw",
                     "--rate", str(args.profile_rate), *which,
                     "--duration", seconds, "--output", args.profile],
                    **quiet,
                )
            )  # fmt: skip
        if args.perf:
            self.procs.append(
                subprocess.Popen(
                    ["perf", "record", "-g", "-F", str(args.profile_rate), "-e", "cpu-clock",
                     "-p", pid, "-o", args.perf, "--", "sleep", seconds],
                    **quiet,
                )
            )  # fmt: skip

    def finish(self) -> None:
        for proc in self.procs:
            proc.wait(60)
