"""Memory of ``yahtzee serve`` under churn (issue 17): RSS at start, after 2,000 tables are
created, after 1,000 WebSockets are opened and closed, and after the sweeper has evicted
idle tables and a second 2,000 tables are created.

    nice -n 15 python experiments/rss_web.py            # ~2 minutes (waits for one sweep)

The server runs on 127.0.0.1 with a temporary database and ``--trust-proxy``: the tables
are spread over 200 client addresses (``X-Forwarded-For``), 20 each, under the cap of 50
unfinished tables an address may host. Linux only (reads ``/proc/PID/status``).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import socket
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from yahtzee_env.web.door.local_server import LocalServer


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """Process ``pid``'s memory in MiB: resident now (``VmRSS``), or another field of
    ``/proc/PID/status`` (``VmHWM``: its peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no {field}")


def create(url: str, address: str) -> str:
    body = json.dumps({"seats": ["human", "easy"], "name": "rss"}).encode()
    headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
    req = urllib.request.Request(f"{url}/api/tables", body, headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["code"]


def open_and_close(port: int, code: str, address: str) -> None:
    """A WebSocket handshake, the first frame (the state) read, then a close frame."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(
            (
                f"GET /ws/{code} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                f"Sec-WebSocket-Version: 13\r\nX-Forwarded-For: {address}\r\n\r\n"
            ).encode()
        )
        data = b""
        while b"\r\n\r\n" not in data or len(data) < data.index(b"\r\n\r\n") + 6:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        mask = os.urandom(4)
        payload = (1000).to_bytes(2, "big")
        close = bytes(b ^ mask[i] for i, b in enumerate(payload))
        s.sendall(bytes([0x88, 0x80 | 2]) + mask + close)
        time.sleep(0.01)


def make_tables(url: str, first_address: int, addresses: int, per_address: int) -> list[str]:
    jobs = [
        f"10.{(first_address + a) // 256}.{(first_address + a) % 256}.1"
        for a in range(addresses)
        for _ in range(per_address)
    ]
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda addr: create(url, addr), jobs))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--wait", type=float, default=65.0, help="s to wait for a sweep")
    parser.add_argument("--json", default=None)
    parser.add_argument("--log", default=None, help="keep the server's log in this file")
    args = parser.parse_args()
    per_address = 20
    addresses = args.tables // per_address
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(args.log) if args.log else None
        server = LocalServer(Path(tmp) / "rss.sqlite3", ["--trust-proxy"], log=log)
        server.start()
        try:
            pid = server.proc.pid
            time.sleep(3)  # the official coach table is prewarmed at start-up
            out = {"baseline_mib": rss_mib(pid)}
            t0 = time.perf_counter()
            codes = make_tables(server.url, 0, addresses, per_address)
            out["tables"] = len(codes)
            out["tables_s"] = round(time.perf_counter() - t0, 1)
            out["after_tables_mib"] = rss_mib(pid)
            t0 = time.perf_counter()

            def one_socket(i: int) -> None:
                address = f"10.200.{i // 256}.{i % 256}"
                open_and_close(server.port, codes[i % len(codes)], address)

            with ThreadPoolExecutor(8) as pool:
                list(pool.map(one_socket, range(args.sockets)))
            out["sockets"] = args.sockets
            out["sockets_s"] = round(time.perf_counter() - t0, 1)
            time.sleep(1)
            out["after_sockets_mib"] = rss_mib(pid)
            print(json.dumps(out, indent=1), flush=True)
            time.sleep(args.wait)  # the sweeper evicts idle tables beyond the 500 kept
            out["after_sweep_mib"] = rss_mib(pid)
            more = make_tables(server.url, addresses, addresses, per_address)
            out["more_tables"] = len(more)
            out["after_more_tables_mib"] = rss_mib(pid)
        finally:
            server.kill()
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.exit(main())
