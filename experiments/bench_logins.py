"""Sign-in under a burst (issue 46): the server's memory under N parallel sign-ins, and how
many guesses at one account's password are checked a minute when many addresses guess at
once.

    python experiments/bench_logins.py --json out/logins.json
    python experiments/bench_logins.py --server-tree ../old-checkout   # another checkout's server

1. ``--signins`` sign-ins at once (default 200), each from its own address and for its own
   unknown user name (so no per-name line or per-address budget holds them back: each
   costs one argon2 verification of the dummy hash). Reported: the server's resident memory
   before, its peak (``VmHWM``) and after, and the replies by status.
2. ``--guessers`` addresses (default 60) guess one account's password for ``--seconds``
   (default 60), each sending its next guess as soon as the last was answered. Reported:
   the guesses checked (answered 401) per minute, and the seconds the right password from a
   new address then takes to get in.

The server runs on 127.0.0.1 (``--trust-proxy``: the addresses are X-Forwarded-For) with a
temporary SQLite database, pinned to ``--server-cpus`` (default 0) while this process runs on
``--client-cpus`` (default 1). Linux only (reads ``/proc/PID/status``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from yahtzee_env.web.door.local_server import LocalServer

PASSWORD = "a long and unguessable passphrase"


def memory_mib(pid: int, field: str) -> float:
    """``VmRSS`` (resident now) or ``VmHWM`` (the peak) of process ``pid``, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def post(url: str, path: str, body: dict, address: str) -> int:
    """The status of a JSON POST from ``address`` (no cookies: a new browser each time)."""
    headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
    request = urllib.request.Request(url + path, json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=600) as reply:
            return reply.status
    except urllib.error.HTTPError as err:
        return err.code


def burst(server: LocalServer, n: int) -> dict:
    """``n`` sign-ins at once; the memory before, at its peak and after."""
    pid = server.proc.pid
    before = memory_mib(pid, "VmRSS")
    start = threading.Barrier(n)

    def one(i: int) -> int:
        start.wait()
        body = {"username": f"nobody{i}", "password": "wrong password here"}
        return post(server.url, "/api/account/signin", body, f"10.1.{i // 256}.{i % 256}")

    t0 = time.perf_counter()
    with ThreadPoolExecutor(n) as pool:
        statuses = Counter(pool.map(one, range(n)))
    took = time.perf_counter() - t0
    peak = memory_mib(pid, "VmHWM")
    time.sleep(5)
    return {
        "signins": n,
        "replies": {str(k): v for k, v in sorted(statuses.items())},
        "seconds": round(took, 1),
        "rss_before_mib": before,
        "peak_mib": peak,
        "peak_over_idle_mib": round(peak - before, 1),
        "rss_after_mib": memory_mib(pid, "VmRSS"),
    }


def guesses(server: LocalServer, addresses: int, seconds: float) -> dict:
    """``addresses`` guessers at one account for ``seconds``; then the owner's right password
    from a new browser and address."""
    stop = time.monotonic() + seconds
    statuses: Counter = Counter()
    lock = threading.Lock()

    def guesser(a: int) -> None:
        k = 0
        while time.monotonic() < stop:
            body = {"username": "ada", "password": f"guess {a} {k}"}
            status = post(server.url, "/api/account/signin", body, f"10.2.{a}.1")
            k += 1
            with lock:
                statuses[status] += 1

    t0 = time.perf_counter()
    with ThreadPoolExecutor(addresses) as pool:
        list(pool.map(guesser, range(addresses)))
    took = time.perf_counter() - t0
    t1 = time.perf_counter()
    owner = post(
        server.url, "/api/account/signin", {"username": "ada", "password": PASSWORD}, "10.3.0.1"
    )
    return {
        "guessers": addresses,
        "seconds": round(took, 1),
        "replies": {str(k): v for k, v in sorted(statuses.items())},
        "checked_per_minute": round(statuses[401] / took * 60, 1),
        "owner_status": owner,
        "owner_seconds": round(time.perf_counter() - t1, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signins", type=int, default=200)
    parser.add_argument("--guessers", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--server-tree", default=None, help="run this checkout's server")
    parser.add_argument("--server-cpus", default="0")
    parser.add_argument("--client-cpus", default="1")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    os.sched_setaffinity(0, {int(c) for c in args.client_cpus.split(",")})
    env = dict(os.environ)
    if args.server_tree:  # its package first, and not this folder's (no cwd on sys.path)
        env["PYTHONPATH"] = str(Path(args.server_tree).resolve())
        env["PYTHONSAFEPATH"] = "1"
    out: dict = {"server_tree": args.server_tree or "this checkout"}
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalServer(
            Path(tmp) / "logins.sqlite3",
            ["--trust-proxy"],
            cpus={int(c) for c in args.server_cpus.split(",")},
            env=env,
        )
        server.start()
        try:
            body = {"username": "ada", "password": PASSWORD}
            assert post(server.url, "/api/account/signup", body, "10.0.0.1") == 200
            time.sleep(3)  # the official coach table is prewarmed at start-up
            out["burst"] = burst(server, args.signins)
            print(json.dumps(out, indent=1), flush=True)
            out["guesses"] = guesses(server, args.guessers, args.seconds)
        finally:
            server.kill()
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.exit(main())
