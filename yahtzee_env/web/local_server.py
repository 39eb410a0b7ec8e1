"""``yahtzee serve`` as a child process on 127.0.0.1, for tests, benchmarks and notebooks.

`LocalServer` picks a free loopback port, starts the server on a given SQLite file, waits
until it answers, and kills it with SIGKILL (as a crash would: the tests and the load
benchmark check that every table resumes after it). Standard library only.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """``yahtzee serve --port PORT --db DB [ARGS]`` as a subprocess on 127.0.0.1; ``url`` is
    its address. `start` waits up to 30 s for ``/api/config`` to answer; `kill` is a SIGKILL.
    The server's stderr goes to ``DB.log`` (a file, not a pipe that a long run could fill)."""

    def __init__(self, db: Path, args: list[str] | tuple[str, ...] = ()) -> None:
        self.db, self.port, self.proc = Path(db), free_port(), None
        self.args = list(args)  # more `yahtzee serve` flags
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = self.db.with_name(self.db.name + ".log")

    def start(self) -> None:
        cmd = [sys.executable, "-m", "yahtzee_env", "serve", "--port", str(self.port)]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [*cmd, "--db", str(self.db), *self.args], stdout=subprocess.DEVNULL, stderr=log
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_bytes()[-2000:].decode(errors="replace")
                raise RuntimeError(f"server exited: {tail}")
            try:
                urllib.request.urlopen(f"{self.url}/api/config", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("server did not start in 30 s")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
