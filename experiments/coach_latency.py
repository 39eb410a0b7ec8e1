"""Everyone's latency while a coach table is solved (issue 31): ``/healthz`` round trips of a
``yahtzee serve`` that starts with an empty solver cache, and the first hint at a table of
another preset, asked two seconds in.

    nice -n 5 python experiments/coach_latency.py                 # this checkout
    nice -n 5 python experiments/coach_latency.py --code ../main  # another checkout's code

The server runs on 127.0.0.1 with a temporary database and a temporary solver cache
(``YAHTZEE_CACHE_DIR``), so that every preset is solved cold: by a child process here
(`web.coaches`), on a thread of the serving process before issue 31. ``/healthz`` is asked
every 20 ms for ``--seconds``; the report gives its median and 99th percentile, the first
hint's status and time, and how long until a hint answers 200.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from yahtzee_env.web.door.local_server import LocalServer


def post(url: str, body: dict) -> tuple[int, dict, float]:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read()), time.perf_counter() - started
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}"), time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", default=None, help="run the server from this checkout")
    parser.add_argument("--rules", default="free-joker", help="the hinted table's preset")
    parser.add_argument("--seconds", type=float, default=25.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["YAHTZEE_CACHE_DIR"] = str(Path(tmp) / "cache")  # nothing solved yet
        if args.code:  # `python -m yahtzee_env` finds the package of its working folder first
            os.environ["PYTHONPATH"] = str(Path(args.code).resolve())
            os.chdir(args.code)
        server = LocalServer(Path(tmp) / "lat.sqlite3")
        server.start()
        latencies: list[float] = []
        stop = threading.Event()

        def hammer() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                with urllib.request.urlopen(f"{server.url}/healthz", timeout=60) as r:
                    r.read()
                latencies.append(time.perf_counter() - started)
                time.sleep(0.02)

        try:
            code, table, _ = post(
                f"{server.url}/api/tables",
                {"seats": ["human", "easy"], "rules": args.rules, "coach": True},
            )
            assert code == 200, table
            body = {"seat": 0, "token": table["tokens"]["0"]}
            hint_url = f"{server.url}/api/tables/{table['code']}/hint"
            thread = threading.Thread(target=hammer, daemon=True)
            t0 = time.perf_counter()
            thread.start()
            time.sleep(2.0)
            status, reply, took = post(hint_url, body)
            out = {
                "code": args.code or ".",
                "first_hint_status": status,
                "first_hint_ms": round(took * 1000, 1),
                "first_hint_code": reply.get("code"),
            }
            ready_at = None
            while time.perf_counter() - t0 < args.seconds:
                if ready_at is None:
                    status, reply, _ = post(hint_url, body)
                    if status == 200:
                        ready_at = time.perf_counter() - t0
                time.sleep(1.0)
            stop.set()
            thread.join(5)
        finally:
            server.kill()
    ms = [x * 1000 for x in latencies]
    out.update(
        healthz_n=len(ms),
        healthz_p50_ms=round(statistics.median(ms), 1),
        healthz_p99_ms=round(percentile(ms, 0.99), 1),
        healthz_max_ms=round(max(ms), 1),
        hint_ready_s=None if ready_at is None else round(ready_at, 1),
    )
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.exit(main())
