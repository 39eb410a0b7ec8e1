"""Load benchmark of ``yahtzee serve`` over the real protocol on loopback (issue 11).

N simulated players, each playing whole games against CPU seats: a table is created over
HTTP, then every move goes over the table's WebSocket (``act`` -> ``ack``). Reports games
per second and the p50/p99 round-trip of an action (send -> ack, which the server sends
only after the action and the CPU moves after it are committed to SQLite).

Then the crash check: the server is killed with SIGKILL in the middle of the load and
restarted on the same database; every table must be at the last action its player saw
acknowledged (or one past it, if that player had an action in flight when the server died:
committed, never acknowledged), never behind.

    nice -n 15 python experiments/bench_web.py --players 200 --seconds 20

Everything runs on 127.0.0.1 with a temporary database; it stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

from yahtzee_env.web.local_server import LocalServer


def post(url: str, body: dict) -> dict:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


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
        self.rng = random.Random(index)
        self.url, self.opponents, self.think = url, opponents, think
        self.latencies: list[float] = []
        self.games = self.errors = 0
        self.tables: dict[str, tuple[int, str, list[int], bool]] = {}  # code -> state
        self.stop = False

    async def create(self) -> tuple[str, str]:
        body = {"seats": ["human", *self.opponents], "name": "bench"}
        reply = await asyncio.to_thread(post, f"{self.url}/api/tables", body)
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
            async with websockets.connect(f"{ws_url}/ws/{code}", max_size=2**22) as ws:
                state = json.loads(await ws.recv())["state"]
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
                                "seat": 0,
                                "token": token,
                                "action": action,
                            }
                        )
                    )
                    while True:
                        reply = json.loads(await ws.recv())
                        if reply.get("id") == msg_id:
                            break
                    if t0 >= self.record_after:
                        self.latencies.append(time.perf_counter() - t0)
                    if reply["type"] != "ack":
                        self.errors += 1
                        self.tables[code] = (state["version"], token, None)
                        continue
                    state = reply["state"]
                    self.tables[code] = (state["version"], token, None)
                if state["over"]:
                    self.games += 1


async def load(
    url: str, players: int, seconds: float, opponents, think: float, kill=None, ramp: float = 0.0
):
    """Run the crowd for ``seconds`` (round-trips are recorded after the ``ramp``-second
    arrival of the players), or until ``kill`` is called half-way."""
    t0 = time.perf_counter()
    crowd = [
        Player(i, url, opponents, think, ramp * i / players, t0 + ramp) for i in range(players)
    ]
    tasks = [asyncio.create_task(p.run()) for p in crowd]
    start = time.perf_counter()
    killed_at = None
    while time.perf_counter() - start < seconds:
        await asyncio.sleep(0.2)
        if kill is not None and killed_at is None and time.perf_counter() - start > seconds / 2:
            kill()
            killed_at = time.perf_counter() - start
            break
    for p in crowd:
        p.stop = True
    done, pending = await asyncio.wait(tasks, timeout=30)
    for t in pending:
        t.cancel()
    elapsed = killed_at if killed_at is not None else time.perf_counter() - start
    return crowd, elapsed, [t for t in done if t.exception() is not None]


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
    parser.add_argument("--json", default=None, help="write the numbers here")
    args = parser.parse_args()
    opponents = args.opponents.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalServer(Path(tmp) / "bench.sqlite3")
        server.start()
        # ---- phase 1: load
        crowd, elapsed, crashed = asyncio.run(
            load(
                server.url,
                args.players,
                args.ramp + args.seconds,
                opponents,
                args.think,
                None,
                args.ramp,
            )
        )
        lat = np.array([x for p in crowd for x in p.latencies]) * 1000
        games = sum(p.games for p in crowd)
        errors = sum(p.errors for p in crowd) + len(crashed)
        result = {
            "players": args.players,
            "seconds": round(elapsed, 2),
            "opponents": opponents,
            "think_s": args.think,
            "ramp_s": args.ramp,
            "actions": int(lat.size),
            "games": games,
            "games_per_s": round(games / elapsed, 2),
            "actions_per_s": round(lat.size / elapsed, 1),
            "p50_ms": round(float(np.percentile(lat, 50)), 2) if lat.size else None,
            "p99_ms": round(float(np.percentile(lat, 99)), 2) if lat.size else None,
            "errors": errors,
        }
        print(json.dumps(result, indent=1), flush=True)
        # ---- phase 2: kill -9 mid-load, restart, check every table
        crowd, _, _ = asyncio.run(
            load(
                server.url,
                args.players,
                max(4.0, args.seconds / 2),
                opponents,
                args.think,
                server.kill,
            )
        )
        server.start()
        exact = ahead = behind = 0
        for p in crowd:
            for code, (version, _token, in_flight) in p.tables.items():
                now = json.loads(urllib.request.urlopen(f"{server.url}/api/tables/{code}").read())
                if now["version"] == version:
                    exact += 1
                elif now["version"] > version and in_flight is not None:
                    ahead += 1  # committed, but the ack never reached the player
                else:
                    behind += 1
        server.kill()
        result["crash"] = {
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
