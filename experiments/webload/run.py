"""One benchmark run: the servers started (pinned where asked), the load and its report, and
the crash check (``kill -9`` mid-load, then every table read back)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import tempfile
import threading
import urllib.request
from pathlib import Path

from webload.clients import FreshConnections, SlowSockets, load
from webload.curve import Curve, IdleSockets, machine, other_cores_busy, rss_growth, verdict
from webload.measures import Meter, Stalls, memory
from webload.report import attacks, fanout, load_result, profiles
from yahtzee_env.web.door.local_server import LocalServer

LOCAL_POSTGRES = "local-postgres"


class Hostile:
    """The hostile clients asked for, started beside the crowd (the load calls it with the
    crowd; it returns their stop); ``attack`` keeps them for the report."""

    def __init__(self, args, server) -> None:
        self.args, self.server, self.attack = args, server, {}

    def __call__(self, crowd):
        args, stops = self.args, []
        if args.slow_sockets:
            slow = SlowSockets(
                self.server.port, args.slow_sockets, crowd[: args.slow_tables], args.slow_ask
            )
            thread = threading.Thread(target=slow.run, daemon=True)
            thread.start()
            self.attack["slow"] = slow

            def stop_slow():
                slow.stop = True
                thread.join(30)

            stops.append(stop_slow)
        if args.fresh_connections:
            fresh = FreshConnections(self.server.url, args.attackers)
            threads = fresh.start()
            self.attack["fresh"] = fresh

            def stop_fresh():
                fresh.stop = True
                for t in threads:
                    t.join(30)

            stops.append(stop_fresh)
        return lambda: [stop() for stop in stops]


def database(args, stack: contextlib.ExitStack, tmp: str):
    """The database the servers share, its kind for the report, and the private cluster's
    postmaster pid (``--db local-postgres``: started on the servers' CPUs)."""
    if args.db == LOCAL_POSTGRES:
        from yahtzee_env.web.door.local_postgres import LocalPostgres

        own_cpus = os.sched_getaffinity(0)
        if args.server_cpus:  # the cluster's processes inherit the affinity
            os.sched_setaffinity(0, args.server_cpus)
        pg = stack.enter_context(LocalPostgres())
        os.sched_setaffinity(0, own_cpus)
        postmaster = int((pg.dir / "data" / "postmaster.pid").read_text().split()[0])
        return pg.create_database("bench"), "postgresql (private cluster)", postmaster
    if args.db is not None:
        return args.db, "postgresql", None
    return Path(tmp) / "bench.sqlite3", "sqlite", None


def start_servers(args, stack: contextlib.ExitStack, tmp: str, db) -> list[LocalServer]:
    """``--servers`` servers on ``db`` (killed when ``stack`` closes); this process moves to
    ``--client-cpus`` first."""
    flags = ["--trust-proxy", "--bench-stats", *(["--batch-moves"] if args.batch_moves else [])]
    wanted = args.players + (args.watchers or 0) + args.sockets + 100  # and some room
    if wanted > 2000:  # the server's default cap on open sockets (`yahtzee serve --max-sockets`)
        flags += ["--max-sockets", str(wanted)]
    servers = [
        LocalServer(
            db,
            [*flags, *args.serve_arg],
            log=Path(tmp) / f"server{i}.log",
            cpus=args.server_cpus,
            port=args.port + i if args.port else 0,  # 0: each a free port
        )
        for i in range(args.servers)
    ]
    if args.client_cpus:  # this load generator's CPUs, the servers started after it
        os.sched_setaffinity(0, args.client_cpus)
    for srv in servers:
        stack.callback(srv.kill)
        srv.start()
    return servers


def crash_check(args, servers: list[LocalServer]) -> dict:
    """Kill server 0 with SIGKILL mid-load; restart it (one server) or read from the next
    one: every table must be at the last action its player saw acknowledged (or one past,
    if that player had one in flight: committed, never acknowledged), never behind."""
    server, urls = servers[0], [srv.url for srv in servers]
    opponents = args.opponents.split(",")
    seconds = max(4.0, args.seconds / 2)
    crowd, _, _ = asyncio.run(
        load(server.url, args.players, seconds, opponents, args.think, server.kill, urls=urls)
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
    return {
        "killed": "the server, then restarted"
        if len(servers) == 1
        else f"server 0 of {len(servers)}; tables read from server 1",
        "tables": exact + ahead + behind,
        "at_last_ack": exact,
        "in_flight_committed": ahead,
        "lost_or_wrong": behind,
    }


def run(args) -> int:
    """The benchmark of ``args`` (`bench_web.py`'s options): its report printed (and
    written to ``--json``); 1 if the crash check found a table behind."""
    if args.watchers is None:  # watchers by default between servers only
        args.watchers = 50 if args.servers > 1 else 0
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        db, backend, postmaster = database(args, stack, tmp)
        servers = start_servers(args, stack, tmp, db)
        client_gc = memory.GcPauses() if memory else None  # this load generator's own pauses
        if client_gc is not None:
            client_gc.start()
            stack.callback(client_gc.stop)
        stalls = Stalls(set(args.server_cpus) if args.server_cpus else None)
        meter = Meter(args, servers, postmaster, client_gc, stalls)
        hostile = Hostile(args, servers[0])
        curve = Curve(servers, args.every)
        idle = IdleSockets(servers[0].url, args.sockets, servers[0].proc.pid)
        hooks = [curve, stalls, *([idle] if args.sockets else [])]
        if args.slow_sockets or args.fresh_connections:
            hooks.append(hostile)

        def beside(crowd):  # started with the crowd; returns their stop
            stops = [hook(crowd) for hook in hooks]
            return lambda: [stop() for stop in stops]

        if not args.client_gc:  # the players are a thousand machines, not one collector
            gc.collect()
            gc.freeze()
            gc.disable()
            stack.callback(gc.enable)
        crowd, elapsed, crashed = asyncio.run(
            load(
                servers[0].url,
                args.players,
                args.ramp + args.seconds,
                args.opponents.split(","),
                args.think,
                None,
                args.ramp,
                beside,
                [srv.url for srv in servers],
                args.watchers,
                meter,
                idle.opening if args.sockets else None,
            )
        )
        result = load_result(args, backend, crowd, elapsed, crashed, meter.rows)
        result["ports"] = [srv.port for srv in servers]  # --port, or the free ones taken
        result["machine"] = machine()
        result["curve"] = curve.rows()  # every --every seconds: RSS, CPU per move, each CPU
        result["other_cores_busy"] = other_cores_busy(result["curve"], args.server_cpus)
        result["rss_growth_after_first_minute"] = growth = rss_growth(result["curve"])
        if args.sockets:
            result["idle_sockets"] = idle.report()
        result["verdict"] = verdict(result, growth)
        meter.finish()
        profiles(args, result)
        if args.watchers:
            result["fanout"] = fanout(args, crowd)
        result.update(attacks(args, crowd, hostile.attack))
        print(json.dumps(result, indent=1), flush=True)
        print(result["verdict"], flush=True)
        if not args.no_crash:
            result["crash"] = crash_check(args, servers)
            print(json.dumps(result["crash"], indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1))
    return 0 if args.no_crash or result["crash"]["lost_or_wrong"] == 0 else 1
