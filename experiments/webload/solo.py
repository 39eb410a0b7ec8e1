"""The server's CPU per solo game against a level, dealt by the server or played in the page
(issue 50; `experiments/bench_solo.py` is its command).

Two ways to play the same solo game (a human seat and a level's seat, official rules):

- ``server``: as the page plays a table the server deals: ``POST /api/tables``, the table's
  state once (as the page does when it opens the table), then every move of the human seat
  (``POST /api/tables/CODE/act``) until the game is over; the server rolls the dice and
  computes the level's moves.
- ``in_page``: as the page plays it with "Play in this page" (`static/js/offline.js`): the
  game runs on the client, with the Python engine and the same level (the page's engine and
  levels are held equal to these by ``tests/web/test_offline_equality.py``), and the
  finished game is one ``POST /api/offline-games`` that the server replays and records.

The human seat plays one simple rule in both: keep the dice of its most common face (the
higher on a tie) and roll while it may and they are not all kept, then fill the box that
pays most. Each game has a session (a player) and a client address of its own (the server
runs with ``--trust-proxy``), made before the measured window: a real player has a session
whichever way they play, and the per-address and per-player limits stay out of the way.

What is measured is the server process's CPU time (user + system) over each block of
games, not wall time: the machine may be shared. Two accounts of it: the server's own
(``getrusage``, through ``GET /api/bench-stats``, which ``yahtzee serve --bench-stats``
turns on; nanosecond-grained), and the kernel's (``/proc/PID/stat``, in 10 ms ticks: a
check on the first). The server is pinned to one CPU and this client to another where
there are two. The server's idle CPU (its sweeper and turn clock) is measured over a quiet
interval, reported, and subtracted (its rate times the block's wall time) in ``net``;
the two ``bench-stats`` reads at a block's edges are in its figure (under a millisecond).
The database's round trips, statements and transactions per game come from the same
account (`storage.Trips`).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from http.cookies import SimpleCookie
from pathlib import Path

import numpy as np

from webload.measures import bench_stats
from yahtzee_env.game.cpu import cpu_action
from yahtzee_env.game.dice import ROLL_OUTCOMES
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_TURNS, ROLLS_PER_TURN, Game
from yahtzee_env.game.rules import BOX_NAMES
from yahtzee_env.policies.resolve import resolve_policy
from yahtzee_env.web.door.local_server import LocalServer
from yahtzee_env.web.people.accounts import SESSION_COOKIE
from yahtzee_env.web.tables.offline_games import ReplayDraws, dealt

RULES = "official"


def human_move(dice, rolls_left: int, options: dict[str, int]) -> tuple[str, object]:
    """The human seat's rule: ``("roll", positions kept)`` or ``("score", box)``."""
    counts = Counter(dice)
    face = max(counts, key=lambda f: (counts[f], f))
    keep = [i for i, d in enumerate(dice) if d == face]
    if rolls_left > 0 and len(keep) < len(dice):
        return "roll", keep
    return "score", max(options, key=options.get)  # the first of the best, in box order


class Client:
    """One player's keep-alive connection to the server, from an address of its own."""

    def __init__(self, port: int, address: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
        self.requests = 0

    def call(self, path: str, body: dict | None = None) -> dict:
        method = "GET" if body is None else "POST"
        data = None if body is None else json.dumps(body).encode()
        for _ in range(30):  # a player over its rate waits as it is told (Retry-After), as
            self.conn.request(method, path, data, self.headers)  # the page does
            reply = self.conn.getresponse()
            text = reply.read()
            self.requests += 1
            if reply.status != 429:
                break
            time.sleep(float(reply.headers.get("Retry-After") or 1))
        if reply.status != 200:
            raise RuntimeError(f"{method} {path}: {reply.status} {text[:200]!r}")
        for header in reply.headers.get_all("Set-Cookie") or []:
            cookie = SimpleCookie(header)
            if SESSION_COOKIE in cookie:
                self.headers["Cookie"] = f"{SESSION_COOKIE}={cookie[SESSION_COOKIE].value}"
        return json.loads(text)

    def close(self) -> None:
        self.conn.close()


def address_of(index: int) -> str:
    return f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"


def play_server_dealt(client: Client, level: str) -> int:
    """One game on a table the server deals; the human seat's total."""
    reply = client.call("/api/tables", {"seats": ["human", level], "rules": RULES})
    code, token = reply["code"], reply["tokens"].get("0")  # none: the session's seat
    state = client.call(f"/api/tables/{code}")
    while not state["over"]:
        if state.get("cup"):  # the turn starts with the dice in the cup: the tap on Roll
            kind, what = "roll", []
        else:
            kind, what = human_move(state["dice"], state["rolls_left"], state["options"])
        action = (
            {"type": "roll", "hold": what} if kind == "roll" else {"type": "score", "box": what}
        )
        body = {
            "seat": 0,
            "action": action,
            "seq": state["seq"],
            **({"token": token} if token else {}),
        }
        state = client.call(f"/api/tables/{code}/act", {**body, "game": state["game"]})
    return state["cards"][0]["total"]


def in_page_record(seed: int, level: str, policy) -> dict:
    """One game played on the client as the page plays it: the record the page sends."""
    draws = np.random.default_rng(seed).integers(0, ROLL_OUTCOMES, 2 * NUM_TURNS * ROLLS_PER_TURN)
    game = Game(RULES, 2)
    game.reset(ReplayDraws(draws.tolist()))
    actions = []
    while not game.over:
        if game.current == 0:
            legal, points = game.box_options()
            options = {BOX_NAMES[b]: int(points[b]) for b in range(len(BOX_NAMES)) if legal[b]}
            kind, what = human_move(list(game.dice), game.rolls_left, options)
            if kind == "roll":
                action = sum(1 << i for i in what)
            else:
                action = BOX_ACTION_OFFSET + BOX_NAMES.index(what)
        else:
            action = cpu_action(game, 1, policy)
        actions.append([game.current, int(action)])
        game.step(action)
    return {
        "id": f"bench-{seed}",
        "played": "in_page",
        "rules": RULES,
        "seats": ["human", level],
        "draws": draws[: dealt(game)].tolist(),
        "actions": actions,
    }


def play_in_page(client: Client, record: dict) -> int:
    reply = client.call("/api/offline-games", {"games": [record]})
    if reply["stored"] != [record["id"]]:
        raise RuntimeError(f"the server did not store the game: {reply}")
    return 0


def pin(cpus: set[int]) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus)


def measure(args: argparse.Namespace) -> dict:
    available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    two = len(available) >= 2
    server_cpus = {available[0]} if two else None
    client_cpus = {available[1]} if two else None
    policy = resolve_policy(args.level)
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalServer(
            Path(tmp) / "solo.sqlite3", ["--trust-proxy", "--bench-stats"], cpus=server_cpus
        )
        server.start()
        try:
            if client_cpus:
                pin(client_cpus)
            games = args.games
            blocks = []
            index = 0
            # sessions first, one per game (outside the measured window)
            per_mode = {}
            for mode in ("server", "in_page"):
                per_mode[mode] = []
                for _ in range((args.warmup + games) * args.rounds):
                    index += 1
                    client = Client(server.port, address_of(index))
                    client.call("/api/session", {"name": f"b{index}"})
                    client.close()  # the game opens a connection of its own (keep-alive)
                    per_mode[mode].append(client)
            # the in-page games, played on the client before the window (a player's device)
            records = [
                in_page_record(args.seed + i, args.level, policy)
                for i in range(len(per_mode["in_page"]))
            ]
            time.sleep(1.0)
            t0, c0 = time.monotonic(), bench_stats(server.url)["cpu_s"]
            time.sleep(args.idle)
            idle_rate = (bench_stats(server.url)["cpu_s"] - c0) / (time.monotonic() - t0)
            totals = {"server": [], "in_page": []}
            for r in range(args.rounds):
                for mode in ("server", "in_page"):
                    clients = per_mode[mode][r * (args.warmup + games) :][: args.warmup + games]
                    recs = records[r * (args.warmup + games) :][: args.warmup + games]
                    for i in range(args.warmup):  # the level loaded, the caches warm
                        play(mode, clients[i], recs[i], args.level)
                    asked0 = sum(c.requests for c in clients)
                    before = bench_stats(server.url)
                    t0, k0 = time.monotonic(), server.cpu_seconds()
                    for i in range(args.warmup, args.warmup + games):
                        totals[mode].append(play(mode, clients[i], recs[i], args.level))
                    wall, kernel = time.monotonic() - t0, server.cpu_seconds() - k0
                    after = bench_stats(server.url)
                    cpu = after["cpu_s"] - before["cpu_s"]
                    db = {
                        k: round((after["db"][k] - before["db"][k]) / games, 2) for k in after["db"]
                    }
                    asked = sum(c.requests for c in clients) - asked0
                    blocks.append(
                        {
                            "round": r,
                            "mode": mode,
                            "games": games,
                            "server_cpu_s": round(cpu, 4),
                            "wall_s": round(wall, 3),
                            "requests": asked,
                            "cpu_ms_per_game": round(1000 * cpu / games, 3),
                            "kernel_cpu_ms_per_game": round(1000 * kernel / games, 3),
                            "db_per_game": db,
                            "net_cpu_ms_per_game": round(
                                1000 * max(cpu - idle_rate * wall, 0.0) / games, 3
                            ),
                        }
                    )
                    print(json.dumps(blocks[-1]), file=sys.stderr)
            for clients in per_mode.values():
                for c in clients:
                    c.close()
        finally:
            server.kill()
    summary = {}
    for mode in ("server", "in_page"):
        mine = [b for b in blocks if b["mode"] == mode]
        per_game = [b["cpu_ms_per_game"] for b in mine]
        net = [b["net_cpu_ms_per_game"] for b in mine]
        summary[mode] = {
            "games": sum(b["games"] for b in mine),
            "cpu_ms_per_game": round(float(np.mean(per_game)), 3),
            "cpu_ms_per_game_by_round": per_game,
            "net_cpu_ms_per_game": round(float(np.mean(net)), 3),
            "kernel_cpu_ms_per_game": round(
                float(np.mean([b["kernel_cpu_ms_per_game"] for b in mine])), 3
            ),
            "requests_per_game": round(
                sum(b["requests"] for b in mine) / sum(b["games"] for b in mine), 2
            ),
            "db_per_game": {
                k: round(float(np.mean([b["db_per_game"][k] for b in mine])), 2)
                for k in mine[0]["db_per_game"]
            },
        }
    summary["ratio_server_to_in_page"] = round(
        summary["server"]["net_cpu_ms_per_game"]
        / max(summary["in_page"]["net_cpu_ms_per_game"], 1e-9),
        1,
    )
    return {
        "command": "python experiments/bench_solo.py " + " ".join(sys.argv[1:]),
        "what": "CPU time of the server process (user + system; getrusage through "
        "/api/bench-stats, and /proc/PID/stat as a check) per solo game against the level: "
        "dealt by the server, or played in the page and only recorded; CPU time, not wall time",
        "level": args.level,
        "rules": RULES,
        "games_per_block": args.games,
        "warmup_per_block": args.warmup,
        "rounds": args.rounds,
        "seed": args.seed,
        "pinned": {"server": sorted(server_cpus or []), "client": sorted(client_cpus or [])},
        "idle_server_cpu_ms_per_s": round(1000 * idle_rate, 3),
        "human_mean_total_server_dealt": round(float(np.mean(totals["server"])), 1),
        "summary": summary,
        "blocks": blocks,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        },
    }


def play(mode: str, client: Client, record: dict, level: str) -> int:
    return play_server_dealt(client, level) if mode == "server" else play_in_page(client, record)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--level", default="hard", help="the computer's level (an offline one)")
    parser.add_argument("--games", type=int, default=50, help="measured games per mode and round")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured games before each block")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (each: both modes, in turn)")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of the idle measurement")
    parser.add_argument("--seed", type=int, default=0, help="the in-page games' dice")
    parser.add_argument("--out", type=Path, help="write the JSON report here too")
    args = parser.parse_args(argv)
    report = measure(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
