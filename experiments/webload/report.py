"""The report's parts: the profiles' top frames (py-spy, perf), the fan-out to watchers
(on another server or the same one), the attacks' outcome."""

from __future__ import annotations

import bisect
import os
import resource
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from webload.measures import percentiles, spending


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


def load_result(args, backend: str, crowd: list, elapsed: float, crashed, meters) -> dict:
    """The load phase's numbers: games and moves a second, the round trips' percentiles,
    the errors, what ran, and what the servers spent (`measures.spending`)."""
    opponents = args.opponents.split(",")
    lat = np.array([x for p in crowd for x in p.latencies]) * 1000
    games = sum(p.games for p in crowd)
    return {
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
        "errors": sum(p.errors for p in crowd) + len(crashed),
        "error_codes": dict(sum((p.error_codes for p in crowd), Counter())),
        "command": " ".join(sys.argv[1:]),
        "batch_moves": args.batch_moves,
        "serve_args": args.serve_arg,
        "server_cpus": sorted(args.server_cpus) if args.server_cpus else None,
        "client_cpus": sorted(args.client_cpus) if args.client_cpus else None,
        "client_gc": args.client_gc,
        "client_max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "server": spending(meters, crowd, any("pg_cpu_s" in row for _, row in meters)),
    }


def profiles(args, result: dict) -> None:
    """The profiles' top frames, into ``result`` (``--perf``, ``--profile``)."""
    per_move = result["server"]["server_cpu_ms_per_move"]
    if args.perf:
        result["perf"] = perf_top(Path(args.perf), per_move)
    if args.profile:
        one = args.profile_threads and args.servers == 1
        result["profile"] = profile_top(
            Path(args.profile), cpu_ms_per_move=per_move if one else None
        )


def fanout(args, crowd: list) -> dict:
    """From a move's send (by its player) to its state (or a newer one: pushes coalesce) at
    the watcher's socket: on the next server, or on the same one where there is one. Only
    the moves sent once the watcher had its first state count (``before_watching`` the
    others: a move made while the watcher's socket still opened reaches it with its first
    state, which times the opening, not the push)."""
    fan, early = [], 0
    for p in crowd:
        seen: dict[str, tuple[float, list[int], list[float]]] = {}
        arrivals_of: dict[str, list[tuple[int, float]]] = {}
        for (code, seq), at in p.seen.items():
            arrivals_of.setdefault(code, []).append((seq, at))
        for code, arrivals in arrivals_of.items():  # the first arrival at or after each seq
            arrivals.sort()
            first = [at for _, at in arrivals]
            for k in range(len(first) - 2, -1, -1):
                first[k] = min(first[k], first[k + 1])
            seen[code] = (first[0], [seq for seq, _ in arrivals], first)
        for (code, seq), t in p.sent.items():
            if code not in seen:
                continue
            opened, seqs, first = seen[code]
            if t < opened:
                early += 1
                continue
            k = bisect.bisect_left(seqs, seq)
            if k < len(seqs):
                fan.append(first[k] - t)
    fan_ms = np.array(fan) * 1000
    return {
        "watched_players": min(args.watchers, args.players),
        "moves": sum(len(p.sent) for p in crowd),
        "arrived": int(fan_ms.size),
        "before_watching": early,
        **percentiles(fan_ms),
        "max_ms": round(float(fan_ms.max()), 2) if fan_ms.size else None,
        "watch_errors": sum(p.watch_errors for p in crowd),
    }


def attacks(args, crowd: list, attack: dict) -> dict:
    """What the slow sockets and the fresh connections met, and what the honest players at
    the attacked tables did meanwhile."""
    out = {}
    if "slow" in attack:
        slow = attack["slow"]
        hit = np.array([x for p in crowd[: args.slow_tables] for x in p.latencies]) * 1000
        out["slow_sockets"] = {
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
        out["fresh_connections"] = {
            "attackers": args.attackers,
            "requests": sum(statuses.values()),
            "by_status": {str(k): v for k, v in sorted(statuses.items(), key=str)},
        }
    return out
